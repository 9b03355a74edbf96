//! `fairway shape` with `io = "xdp"` (AF_XDP, a build with the `ebpf`
//! feature) forwards frames both ways byte for byte, VLAN-tagged ones
//! (802.1Q, and 802.1ad with an inner 802.1Q tag) with their tags, and
//! accounts for every frame: each one the shaper received was sent or
//! counted dropped with a reason, and the receivers got every one sent.
//! An interface whose MTU AF_XDP cannot carry is refused in one line at
//! start. Namespaces sender — shaper — receiver over veth (`shape_netns`,
//! prefix `sx`); frames sent and read with packet sockets. Without the
//! `ebpf` feature, the check refuses `io = "xdp"` in one line saying how to build it.

#[cfg(not(feature = "ebpf"))]
#[test]
fn without_ebpf_the_check_refuses_io_xdp_saying_how_to_build() {
    let path = format!("{}/shape-sx-xdp.toml", env!("CARGO_TARGET_TMPDIR"));
    let text = "[interfaces]\ninternet = \"eth0\"\nsubscribers = \"eth1\"\n\
                rate = { download = \"1gbit\", upload = \"1gbit\" }\nio = \"xdp\"\n";
    std::fs::write(&path, text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(["shape", "--check", "--config", &path])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let first = err.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!(
            "{path}:5:6: io = \"xdp\": allowed \"ring\" or \"frame\": this fairway was built \
             without eBPF support, which io = \"xdp\" (AF_XDP) needs: build with --features \
             ebpf (needs clang)"
        ),
        "{err}"
    );
    assert_eq!(
        err.lines().count(),
        2,
        "the problem and the summary line: {err}"
    );
}

#[cfg(feature = "ebpf")]
mod namespaces {
    use super::super::shape_netns::{
        enter, ip, receive_frames, refused_start, root_or_skip, udp_frame, Netns, Shaper,
    };
    use fairway_shaper::datapath::port;
    use fairway_shaper::plan::FrameIo;
    use std::process::Command;
    use std::time::Duration;

    /// The namespaces `Netns::build("sx", …)` makes.
    const NS: [&str; 3] = ["sx-s", "sx-x", "sx-r"];
    /// Small frames sent each way besides the three below.
    const BULK: usize = 500;

    /// A UDP frame of `len` bytes with `tags`, from `src` to `dst`
    /// (last bytes of 10.80.0.x), its payload marked with `mark`.
    fn udp(len: usize, tags: &[[u8; 4]], src: u8, dst: u8, mark: u16) -> Vec<u8> {
        udp_frame(len, tags, [10, 80, 0], src, dst, mark)
    }

    /// The frames sent one way: an 802.1Q-tagged frame (VLAN 100,
    /// priority 1), an 802.1ad-tagged one with an inner 802.1Q tag, a
    /// full 1514-byte frame, and [`BULK`] 100-byte frames.
    fn frames(src: u8, dst: u8) -> Vec<Vec<u8>> {
        let mut v = vec![
            udp(200, &[[0x81, 0x00, 0x20, 0x64]], src, dst, 0),
            udp(
                300,
                &[[0x88, 0xa8, 0x00, 0x07], [0x81, 0x00, 0x00, 0x2a]],
                src,
                dst,
                0,
            ),
            udp(1514, &[], src, dst, 0),
        ];
        v.extend((0..BULK).map(|k| udp(100, &[], src, dst, k as u16)));
        v
    }

    fn send(ns: &'static str, dev: &'static str, frames: Vec<Vec<u8>>) {
        std::thread::spawn(move || {
            enter(ns);
            let mut p = port::open(dev, FrameIo::Frame).expect("sender's port");
            // A few at a time, so that no queue on the way overflows.
            for chunk in frames.chunks(20) {
                let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
                let mut ok = vec![false; refs.len()];
                p.send(&refs, &mut ok);
                assert!(ok.iter().all(|&o| o), "sent {ok:?}");
                std::thread::sleep(Duration::from_millis(2));
            }
        })
        .join()
        .unwrap();
    }

    /// A receiver on `dev` in `ns`, reading up to `n` frames (tags put
    /// back) within `wait`.
    fn receiver(
        ns: &'static str,
        dev: &'static str,
        n: usize,
        wait: Duration,
    ) -> std::thread::JoinHandle<Vec<Vec<u8>>> {
        std::thread::spawn(move || {
            enter(ns);
            receive_frames(dev, n, wait)
        })
    }

    fn config(name: &str) -> std::path::PathBuf {
        let config = std::env::temp_dir().join(format!("sx-{name}.toml"));
        let text = "[interfaces]\ninternet = \"sx-in\"\nsubscribers = \"sx-out\"\n\
                    rate = { download = \"1gbit\", upload = \"1gbit\" }\nio = \"xdp\"\n\n\
                    [[circuit]]\nid = \"c\"\nrate = { download = \"100mbit\", upload = \"100mbit\" }\n\n\
                    [[device]]\nid = \"d\"\ncircuit = \"c\"\nipv4 = [\"10.80.0.2\"]\n";
        std::fs::write(&config, text).unwrap();
        config
    }

    /// Both directions through the shaper; its exit output.
    fn both_ways() -> String {
        let config = config("both");
        let mut shaper = Shaper::start(NS[1], &config, &[]);
        let line = shaper.line();
        if line.is_empty() {
            panic!("the shaper did not start: {}", shaper.stderr());
        }
        assert!(line.contains("shaping sx-in -> sx-out"), "{line}");
        for dev in ["sx-in", "sx-out"] {
            assert!(attached(dev), "no XDP program on {dev}");
        }
        let down = frames(1, 2);
        let up = frames(2, 1);
        let wait = Duration::from_secs(10);
        let at_receiver = receiver(NS[2], "sx-r0", down.len(), wait);
        let at_sender = receiver(NS[0], "sx-s0", up.len(), wait);
        // The receivers' sockets are bound before anything is sent.
        std::thread::sleep(Duration::from_millis(300));
        send(NS[0], "sx-s0", down.clone());
        send(NS[2], "sx-r0", up.clone());
        let got_down = at_receiver.join().unwrap();
        let got_up = at_sender.join().unwrap();
        let (status, rest, err) = shaper.stop();
        let _ = std::fs::remove_file(&config);
        assert!(status.success(), "{status}: {err}\n{rest}");
        for (way, mut got, mut sent) in [("download", got_down, down), ("upload", got_up, up)] {
            assert_eq!(got.len(), sent.len(), "{way}: frames received\n{rest}");
            // Classes leave in their own order: compared sorted.
            got.sort();
            sent.sort();
            for (g, s) in got.iter().zip(&sent) {
                assert!(
                    g == s,
                    "{way}: a frame changed: {:02x?}",
                    &g[..g.len().min(24)]
                );
            }
        }
        rest
    }

    /// The exit table's total row: every frame received was sent or
    /// dropped with a reason, and at least the test's frames passed.
    fn every_frame_accounted(rest: &str) {
        let total = rest
            .lines()
            .find(|l| l.trim_start().starts_with("total "))
            .unwrap_or_else(|| panic!("no total row:\n{rest}"));
        let cols: Vec<u64> = total
            .split_whitespace()
            .skip(1)
            .map(|v| v.parse().unwrap())
            .collect();
        let header = rest
            .lines()
            .find(|l| l.contains("received") && l.contains("sent"))
            .unwrap_or_else(|| panic!("no header:\n{rest}"));
        let names: Vec<&str> = header.split_whitespace().skip(2).collect();
        let col = |name: &str| {
            let i = names
                .iter()
                .position(|n| *n == name)
                .unwrap_or_else(|| panic!("no column {name}: {header}"));
            cols[i]
        };
        let want = 2 * (BULK as u64 + 3);
        assert!(col("received") >= want, "{rest}");
        let reasons = [
            "codel", "overflow", "toolarge", "noslot", "sendfail", "removed",
        ];
        let dropped: u64 = reasons.iter().map(|r| col(r)).sum();
        assert_eq!(
            col("received"),
            col("sent") + dropped + col("queued"),
            "{rest}"
        );
        // Light traffic far below the circuit's max: nothing dropped.
        assert_eq!(col("sent"), col("received"), "{rest}");
        assert!(!rest.contains("dropped by the kernel"), "{rest}");
    }

    /// An MTU of 4000 needs 4022-byte frames, above the 3840 bytes of a
    /// 4096-byte UMEM frame: one line, exit 1, nothing attached.
    fn too_large_an_mtu() {
        ip("-n sx-x link set sx-in mtu 4000");
        let config = config("mtu");
        let err = refused_start(NS[1], &config);
        let _ = std::fs::remove_file(&config);
        assert!(
            err.starts_with(
                "fairway: error: interface \"sx-in\": AF_XDP frame size: MTU 4000 needs frames \
                 of 4022 bytes (MTU, Ethernet header, two VLAN tags), above the 3840 bytes"
            ),
            "{err}"
        );
        assert!(!attached("sx-in"), "a program left attached");
    }

    /// Whether an XDP program is attached to `dev` of the shaper's
    /// namespace.
    fn attached(dev: &str) -> bool {
        let out = Command::new("ip")
            .args(["-n", NS[1], "link", "show", dev])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).contains(" xdp")
    }

    #[test]
    #[ignore = "slow tier: root, namespaces, a build with the ebpf feature"]
    fn frames_cross_io_xdp_both_ways_tagged_and_all_accounted() {
        if !root_or_skip("frames_cross_io_xdp_both_ways_tagged_and_all_accounted") {
            return;
        }
        let _ns = Netns::build("sx", None, None);
        let rest = both_ways();
        println!("io = xdp:\n{rest}");
        every_frame_accounted(&rest);
        // The shaper detached its programs when it stopped.
        assert!(!attached("sx-in") && !attached("sx-out"));
        too_large_an_mtu();
    }
}
