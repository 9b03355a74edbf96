//! Real packets through the namespace testbed (Linux, root): the UDP
//! back-end, the receiver's accounting and the testbed's removal.
#![cfg(target_os = "linux")]

use fairway_runtime::net::testbed::{namespace_exists, RECEIVER_IP};
use fairway_runtime::net::*;
use std::time::Duration;

fn root_or_skip(name: &str) -> bool {
    if !is_root() {
        println!("{name}: skipped, needs root");
        return false;
    }
    let tools = ["ip", "tc"]
        .iter()
        .all(|t| std::process::Command::new(t).arg("-V").output().is_ok());
    if !tools {
        println!("{name}: skipped, needs iproute2 (ip, tc)");
        return false;
    }
    true
}

/// Sends `per_flow` datagrams on each of `flows` sockets and returns
/// (sent, received + socket drops + kernel drops outside sockets).
fn send_and_count(
    tb: &Testbed,
    flows: usize,
    per_flow: u64,
    watched: Vec<usize>,
) -> (u64, u64, ReceiverReport) {
    let before = tb.kernel_drops().unwrap();
    let socks = tb
        .in_receiver_ns(|| ReceiverSockets::bind(RECEIVER_IP, 41000, flows, None))
        .unwrap()
        .unwrap();
    let addrs: Vec<_> = (0..flows).map(|i| socks.addr(i)).collect();
    let rx = Receiver::spawn(socks, watched, None, None).unwrap();
    let mut senders: Vec<UdpSender> = tb
        .in_sender_ns(|| {
            addrs
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    UdpSender::connect(
                        *a,
                        32,
                        Some(Testbed::htb_priority(i)),
                        Duration::from_millis(50),
                    )
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap()
        .unwrap();
    let mut seq = 0;
    while seq < per_flow {
        for (i, s) in senders.iter_mut().enumerate() {
            let batch: Vec<Datagram> = (seq..(seq + 32).min(per_flow))
                .map(|q| Datagram::new(i as u16, q, monotonic_ns()))
                .collect();
            s.send_now(&batch);
        }
        seq += 32;
    }
    std::thread::sleep(Duration::from_millis(50));
    let report = rx.finish().unwrap();
    let drops = tb.kernel_drops().unwrap().since(&before);
    let sent: u64 = senders.iter().map(|s| s.counters().sent).sum();
    let refused: u64 = senders.iter().map(|s| s.counters().refused).sum();
    assert_eq!(sent + refused, flows as u64 * per_flow);
    // The namespace-wide counter agrees with the per-socket ones.
    assert_eq!(drops.udp_rcvbuf_errors, report.socket_drops(), "{drops:?}");
    (
        sent,
        report.received() + report.socket_drops() + drops.outside_sockets(),
        report,
    )
}

#[test]
fn every_datagram_is_received_or_counted_dropped_and_the_testbed_goes_away() {
    if !root_or_skip("every_datagram_is_received_or_counted_dropped") {
        return;
    }
    let tb = Testbed::create().unwrap();
    let (s_ns, r_ns) = (tb.sender_ns().to_string(), tb.receiver_ns().to_string());
    assert!(namespace_exists(&s_ns) && namespace_exists(&r_ns));
    // Enough to overflow the unread sockets: drops must show up counted.
    let (sent, accounted, report) = send_and_count(&tb, 3, 20_000, vec![0]);
    assert_eq!(sent, accounted);
    assert!(
        report.socket_drops() > 0,
        "the test should overflow a socket"
    );
    let h = report.flows[0].delays.as_ref().unwrap();
    assert!(!h.is_empty() && report.flows[1].delays.is_none());
    // Same with HTB on the egress device.
    tb.set_htb(&[HtbClass { weight: 1 }; 3], 10_000_000_000, FRAME_LEN)
        .unwrap();
    let (sent, accounted, _) = send_and_count(&tb, 3, 5_000, vec![]);
    assert_eq!(sent, accounted);
    drop(tb);
    assert!(!namespace_exists(&s_ns) && !namespace_exists(&r_ns));
}
