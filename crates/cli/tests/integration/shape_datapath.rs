//! `fairway shape --config FILE` on real frames: namespaces sender —
//! shaper — receiver joined by two veth pairs (the shaper's namespace
//! holds both inner ends), UDP from the sender at three times a circuit's
//! max for three seconds. The receiver must see the circuit's max within
//! 3 %, and the shaper's exit totals must account for every frame: sent
//! by the sender = received by the shaper = received by the receiver +
//! the shaper's drops + what it still held. Slow tier: root, iproute2.

use super::shape_netns::{enter, root_or_skip, send_udp, Netns, Shaper};
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MAX_BPS: u64 = 10_000_000;
const PAYLOAD: usize = 1000;
/// Ethernet (14) + IPv4 (20) + UDP (8) headers: what the shaper charges.
const FRAME: u64 = PAYLOAD as u64 + 42;
const SECONDS: u64 = 3;

const CONFIG: &str = r#"
[interfaces]
internet = "fws-in"
subscribers = "fws-out"
rate = { download = "100mbit", upload = "100mbit" }

[[circuit]]
id = "sub1"
name = "Subscriber 1"
rate = { download = "10mbit", upload = "10mbit" }

[[device]]
id = "sub1-cpe"
circuit = "sub1"
ipv4 = ["10.77.0.2"]

[default_class]
rate = { download = "50mbit", upload = "50mbit" }
"#;

/// Receives on 10.77.0.2:9000 until `stop`: datagrams and the time
/// between the second and the last.
fn receiver(ns: String, stop: Arc<AtomicBool>, ready: Arc<AtomicBool>) -> (u64, Duration) {
    enter(&ns);
    let sock = UdpSocket::bind("10.77.0.2:9000").expect("bind receiver");
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    ready.store(true, Ordering::SeqCst);
    let mut buf = [0u8; 2048];
    let (mut n, mut first, mut last) = (0u64, None, Instant::now());
    while !stop.load(Ordering::SeqCst) {
        if sock.recv(&mut buf).is_ok() {
            n += 1;
            last = Instant::now();
            // From the second datagram: the first, sent alone before a
            // pause, is not part of the rate.
            if n == 2 {
                first = Some(last);
            }
        }
    }
    (n, first.map_or(Duration::ZERO, |f| last - f))
}

#[test]
#[ignore = "slow tier: root, namespaces"]
fn a_circuits_max_is_held_and_every_frame_accounted_for() {
    if !root_or_skip("a_circuits_max_is_held_and_every_frame_accounted_for") {
        return;
    }
    let ns = Netns::build("fws", None, Some("10.77.0"));
    let config =
        std::env::temp_dir().join(format!("fairway-shape-test-{}.toml", std::process::id()));
    std::fs::write(&config, CONFIG).unwrap();
    let mut shaper = Shaper::start(ns.middle(), &config, &[]);
    let line = shaper.line();
    assert!(line.contains("shaping fws-in -> fws-out"), "{line}");
    let (stop, ready) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let rx = {
        let (ns, stop, ready) = (ns.receiver().to_string(), stop.clone(), ready.clone());
        std::thread::spawn(move || receiver(ns, stop, ready))
    };
    while !ready.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let tx = {
        let ns = ns.sender().to_string();
        std::thread::spawn(move || {
            send_udp(
                &ns,
                "10.77.0.1",
                "10.77.0.2:9000",
                PAYLOAD,
                3 * MAX_BPS,
                SECONDS,
            )
        })
    };
    let sent = tx.join().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::SeqCst);
    let (got, window) = rx.join().unwrap();
    let (status, rest, err) = shaper.stop();
    let _ = std::fs::remove_file(&config);
    assert!(status.success(), "{status}: {err}\n{rest}");
    println!("{line}{rest}");
    let row: Vec<u64> = rest
        .lines()
        .find(|l| l.starts_with("download") && l.contains("circuit sub1"))
        .unwrap_or_else(|| panic!("no circuit row:\n{rest}"))
        .split_whitespace()
        .skip(3)
        .map(|v| v.parse().unwrap())
        .collect();
    // received, bytes, sent, bytes, codel, overflow, toolarge, noslot,
    // sendfail, removed, queued
    let (received, forwarded, queued) = (row[0], row[2], row[10]);
    let dropped: u64 = row[4..10].iter().sum();
    // Frames 3..=got arrived in the window (the second opens it).
    let rate = got.saturating_sub(2) as f64 * FRAME as f64 * 8.0 / window.as_secs_f64();
    let error = (rate - MAX_BPS as f64) / MAX_BPS as f64 * 100.0;
    println!(
        "sent {sent}, shaper received {received}, forwarded {forwarded}, dropped {dropped}, \
         queued {queued}; receiver got {got} at {rate:.0} bit/s ({error:+.2} % of the max)"
    );
    assert!(
        error.abs() <= 3.0,
        "rate {rate:.0} bit/s, {error:+.2} % off"
    );
    assert!(dropped > 0, "the overload must cause drops");
    assert_eq!(received, sent, "every datagram sent reached the shaper");
    assert_eq!(received, forwarded + dropped + queued);
    assert_eq!(forwarded, got, "every frame forwarded arrived");
}
