//! `fairway shape` forwards frames byte for byte with both frame I/O
//! back-ends (`io = "ring"` and `io = "frame"`): a VLAN-tagged frame
//! leaves with its tag (the kernel strips it on the way in, the shaper
//! puts it back), and on interfaces of MTU 9000 a 9014-byte frame is
//! shaped, not dropped as too large; at an MTU of 65535 the frame pool
//! is refused in one line before it is allocated. Namespaces sender —
//! shaper — receiver over veth (`shape_netns`, prefix `fwr-t`); frames
//! sent and read with packet sockets. Slow tier: root, iproute2.

use super::shape_netns::{
    enter, ip, receive_frames, refused_start, root_or_skip, udp_frame, Netns, Shaper,
};
use fairway_shaper::datapath::port;
use fairway_shaper::plan::FrameIo;
use std::time::Duration;

/// The namespaces `Netns::build("fwr-t", …)` makes.
const NS: [&str; 3] = ["fwr-t-s", "fwr-t-x", "fwr-t-r"];

/// The frames sent, by length: a tagged UDP frame (VLAN 100, priority
/// 1), an 802.1ad-tagged frame with an inner 802.1Q tag, a 9014-byte UDP
/// frame (a 9000-byte IP packet).
fn frames() -> Vec<Vec<u8>> {
    let udp = |len, tags: &[[u8; 4]]| udp_frame(len, tags, [10, 79, 0], 1, 2, 0);
    vec![
        udp(200, &[[0x81, 0x00, 0x20, 0x64]]),
        udp(300, &[[0x88, 0xa8, 0x00, 0x07], [0x81, 0x00, 0x00, 0x2a]]),
        udp(9014, &[]),
    ]
}

fn send(frames: &[Vec<u8>]) {
    enter(NS[0]);
    let mut p = port::open("fwr-t-s0", FrameIo::Frame).expect("sender's port");
    let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
    let mut ok = vec![false; refs.len()];
    p.send(&refs, &mut ok);
    assert!(ok.iter().all(|&o| o), "sent {ok:?}");
}

/// What the receiver reads within `wait`, tags put back.
fn receive(n: usize, wait: Duration) -> Vec<Vec<u8>> {
    enter(NS[2]);
    receive_frames("fwr-t-r0", n, wait)
}

fn through(io: &str) {
    let config = std::env::temp_dir().join(format!("fwr-t-{io}.toml"));
    let text = format!(
        "[interfaces]\ninternet = \"fwr-t-in\"\nsubscribers = \"fwr-t-out\"\n\
         rate = {{ download = \"1gbit\", upload = \"1gbit\" }}\nio = \"{io}\"\n\n\
         [[circuit]]\nid = \"c\"\nrate = {{ download = \"100mbit\", upload = \"100mbit\" }}\n\n\
         [[device]]\nid = \"d\"\ncircuit = \"c\"\nipv4 = [\"10.79.0.2\"]\n"
    );
    std::fs::write(&config, text).unwrap();
    let mut shaper = Shaper::start(NS[1], &config, &[]);
    let line = shaper.line();
    assert!(
        line.contains("shaping fwr-t-in -> fwr-t-out"),
        "{io}: {line}"
    );
    let sent = frames();
    let receiver = std::thread::spawn(|| receive(3, Duration::from_secs(5)));
    // The receiver's socket is bound before anything is sent.
    std::thread::sleep(Duration::from_millis(300));
    let s = sent.clone();
    std::thread::spawn(move || send(&s)).join().unwrap();
    let mut got = receiver.join().unwrap();
    let (status, rest, err) = shaper.stop();
    let _ = std::fs::remove_file(&config);
    assert!(status.success(), "{io}: {status}: {err}\n{rest}");
    println!("io = {io}:\n{line}{rest}");
    assert_eq!(got.len(), sent.len(), "{io}: frames received\n{rest}");
    // Tagged frames may classify otherwise than untagged ones, and
    // classes leave in their own order: compared by length.
    got.sort_by_key(Vec::len);
    for (g, s) in got.iter().zip(&sent) {
        assert_eq!(g.len(), s.len(), "{io}: a frame's length");
        assert!(g == s, "{io}: a frame changed: {:02x?}", &g[..20]);
    }
    let total = rest
        .lines()
        .find(|l| l.trim_start().starts_with("total "))
        .unwrap_or_else(|| panic!("{io}: no total row:\n{rest}"));
    let cols: Vec<u64> = total
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap())
        .collect();
    // received, bytes, sent, bytes, codel, overflow, toolarge, ...
    assert!(cols[0] >= 3 && cols[2] == cols[0], "{io}: {total}");
    assert_eq!(cols[6], 0, "{io}: too large: {total}");
}

#[test]
#[ignore = "slow tier: root, namespaces"]
fn tagged_and_jumbo_frames_leave_as_they_came_with_both_back_ends() {
    if !root_or_skip("tagged_and_jumbo_frames_leave_as_they_came_with_both_back_ends") {
        return;
    }
    let _ns = Netns::build("fwr-t", Some(9000), None);
    for io in ["ring", "frame"] {
        through(io);
    }
    too_large_a_pool();
}

/// At an MTU of 65535 the pool (16,384 slots of 65,600 bytes) passes its
/// 1 GiB limit: one line, exit 1, before anything is allocated.
fn too_large_a_pool() {
    ip("-n fwr-t-x link set fwr-t-in mtu 65535");
    let config = std::env::temp_dir().join("fwr-t-mtu.toml");
    let text = "[interfaces]\ninternet = \"fwr-t-in\"\nsubscribers = \"fwr-t-out\"\n\
                rate = { download = \"1gbit\", upload = \"1gbit\" }\n";
    std::fs::write(&config, text).unwrap();
    let err = refused_start(NS[1], &config);
    let _ = std::fs::remove_file(&config);
    assert!(
        err.starts_with("fairway: error: the frame pool would take 1074790400 bytes (16384 slots of 65600 bytes for an MTU of 65535), above the limit of 1073741824 bytes"),
        "{err}"
    );
}
