//! `[interfaces] io`: the data path's frame I/O back-end, `ring` unless
//! given, anything else refused at its value with the allowed list;
//! `xdp` only in a build with the `ebpf` feature, refused by the others
//! in one line saying how to build it.

use crate::support::{path, problems, shaper};
use fairway_shaper::datapath::engine::Engine;
use fairway_shaper::datapath::pool::Pool;
use fairway_shaper::plan::{Dir, FrameIo};

fn interfaces(io: &str) -> String {
    format!(
        "[interfaces]\ninternet = \"eth0\"\nsubscribers = \"eth1\"\nrate = {{ download = \"1gbit\", upload = \"1gbit\" }}\n{io}"
    )
}

#[test]
fn io_is_ring_unless_given_and_unknown_values_are_refused() {
    for (line, want) in [
        ("", FrameIo::Ring),
        ("io = \"ring\"\n", FrameIo::Ring),
        ("io = \"frame\"\n", FrameIo::Frame),
    ] {
        let ck = shaper("io", &interfaces(line)).unwrap();
        assert_eq!(ck.plan.interfaces.unwrap().io, want, "{line}");
    }
    for bad in ["XDP", "Ring", ""] {
        let e = problems(shaper("io_bad", &interfaces(&format!("io = \"{bad}\"\n"))));
        let f = path("io_bad.toml");
        assert_eq!(e.len(), 1, "{e:#?}");
        let want = format!("{f}:5:6: io = \"{bad}\": allowed \"ring\" (TPACKET_V3 receive ring");
        assert!(e[0].starts_with(&want), "{e:#?}");
        assert!(
            e[0].ends_with(
                "\"frame\" (one system call per frame) or \"xdp\" (AF_XDP sockets, in a \
                 build with eBPF support)"
            ),
            "{e:#?}"
        );
    }
}

#[test]
fn io_xdp_is_taken_with_ebpf_and_refused_without_saying_how_to_build() {
    let got = shaper("io_xdp", &interfaces("io = \"xdp\"\n"));
    if cfg!(feature = "ebpf") {
        assert_eq!(got.unwrap().plan.interfaces.unwrap().io, FrameIo::Xdp);
        return;
    }
    let e = problems(got);
    assert_eq!(e.len(), 1, "{e:#?}");
    let f = path("io_xdp.toml");
    assert_eq!(
        e[0],
        format!(
            "{f}:5:6: io = \"xdp\": allowed \"ring\" or \"frame\": this fairway was built \
             without eBPF support, which io = \"xdp\" (AF_XDP) needs: build with --features \
             ebpf (needs clang)"
        )
    );
}

/// Frames of `lens` bytes (not IP: they pass unshaped) through an engine
/// with `pool`: (sent, dropped as too large).
fn through(pool: Option<Pool>, lens: &[usize]) -> (u64, u64) {
    let ck = shaper("io_jumbo", &interfaces("")).unwrap();
    let mut e = match pool {
        Some(p) => Engine::with_pool(&ck, 0, p).unwrap(),
        None => Engine::new(&ck, 0).unwrap(),
    };
    for &len in lens {
        let mut f = vec![0u8; len];
        f[12..14].copy_from_slice(&[0x88, 0xb5]);
        assert!(e.receive(Dir::Download, 0, |buf| {
            let n = len.min(buf.len());
            buf[..n].copy_from_slice(&f[..n]);
            Some(len)
        }));
    }
    while let Some(out) = e.next(0) {
        assert_eq!(e.frame(out.frame).len(), out.frame.len as usize);
        e.sent(out, true);
    }
    let (t, _) = e.report().total();
    assert_eq!(t.received.packets, lens.len() as u64);
    (t.sent.packets, t.too_large.packets)
}

#[test]
fn jumbo_frames_up_to_the_mtu_pass_and_only_longer_ones_are_too_large() {
    // MTU 9000: up to 9000 + 14 + two 4-byte tags.
    let pool = Pool::new(64, 9000).unwrap();
    assert_eq!(through(Some(pool), &[60, 1522, 9000, 9022, 9023]), (4, 1));
    // Without an interface: Ethernet's MTU.
    assert_eq!(through(None, &[60, 1522, 1523, 9022]), (2, 2));
}
