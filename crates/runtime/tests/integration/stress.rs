//! Real-thread tests of the runtime (the PSPAT paper §3): every packet granted
//! exactly once and in per-client order, backpressure, stalled and departed
//! clients, the rate limit and weights, and both sleep/kick variants.

use crate::serial::serial;
use fairway_core::{Drr, Packet, Wf2qPlus};
use fairway_runtime::*;
use std::net::UdpSocket;
use std::time::{Duration, Instant};

/// A packet carrying its client's sequence number.
#[derive(Debug, PartialEq, Eq)]
struct Seq {
    len: u32,
    seq: u64,
}
impl Packet for Seq {
    fn len(&self) -> u32 {
        self.len
    }
}

/// Checks that packets come out in submit order, none twice or missing.
#[derive(Default)]
struct InOrder {
    next: u64,
}
impl Backend<Seq> for InOrder {
    fn transmit(&mut self, p: Seq) {
        assert_eq!(p.seq, self.next, "lost, duplicated or reordered packet");
        self.next += 1;
    }
}

fn drr() -> impl FnOnce(fairway_core::Capacity, fairway_core::Limits) -> Box<Drr<u32>> {
    |c, l| Box::new(Drr::with_options(c, l, None))
}

fn config(mode: ArbiterMode, kick: KickMode) -> RuntimeConfig {
    RuntimeConfig {
        rate_bps: 1_000_000_000_000,
        mode,
        kick,
        ..RuntimeConfig::default()
    }
}

/// Each client sends `n` packets (bursts separated by `pause`), drains
/// until all are back, and returns its stats.
fn run_clients(
    cfg: RuntimeConfig,
    clients: usize,
    n: u64,
    pause: Option<Duration>,
) -> (Vec<ClientStats>, ArbiterStats) {
    let mut b = RuntimeBuilder::new(cfg).unwrap();
    let cs: Vec<Client<Seq>> = (0..clients)
        .map(|_| {
            b.add_client(ClientConfig {
                queue_len: 63,
                ..Default::default()
            })
            .unwrap()
        })
        .collect();
    let arb = b.spawn_send(drr()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let stats: Vec<ClientStats> = std::thread::scope(|s| {
        let hs: Vec<_> = cs
            .into_iter()
            .map(|mut c| {
                s.spawn(move || {
                    let mut be = InOrder::default();
                    let mut seq = 0;
                    while be.next < n {
                        assert!(Instant::now() < deadline, "stuck at {} of {n}", be.next);
                        for _ in 0..8 {
                            if seq == n {
                                break;
                            }
                            match c.submit(Seq { len: 100, seq }) {
                                Ok(()) => seq += 1,
                                Err(e) => {
                                    assert_eq!(e.kind, SubmitErrorKind::Full);
                                    assert_eq!(e.packet.seq, seq, "the client keeps its packet");
                                    break;
                                }
                            }
                        }
                        c.drain_now(&mut be);
                        if let Some(p) = pause {
                            std::thread::sleep(p);
                        }
                    }
                    c.stats()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let a = arb.stop().unwrap();
    for s in &stats {
        assert_eq!(s.offered, s.accepted + s.rejected_full + s.rejected_invalid);
        assert_eq!(s.accepted, n);
        assert_eq!(s.accepted, s.granted + s.queued);
        assert_eq!(s.transmitted, n);
    }
    assert_eq!(a.decisions, n * clients as u64);
    (stats, a)
}

#[test]
fn busy_arbiter_grants_every_packet_once_in_order() {
    let _serial = serial();
    run_clients(
        config(ArbiterMode::BusyPoll, KickMode::Notify),
        3,
        300_000,
        None,
    );
}

#[test]
fn sleeping_arbiter_with_notify_kick_loses_no_wakeup() {
    let _serial = serial();
    let mut cfg = config(ArbiterMode::Sleep, KickMode::Notify);
    cfg.min_awake = Duration::from_micros(5);
    let (_, a) = run_clients(cfg, 2, 3_000, Some(Duration::from_micros(200)));
    assert!(a.blocks > 0, "the arbiter never slept: {a:?}");
}

#[test]
fn sleeping_arbiter_with_client_scan_kick_loses_no_wakeup() {
    let _serial = serial();
    let mut cfg = config(
        ArbiterMode::Sleep,
        KickMode::ClientScan { run_for_ns: 2_000 },
    );
    cfg.min_awake = Duration::from_micros(5);
    let (_, a) = run_clients(cfg, 2, 3_000, Some(Duration::from_micros(200)));
    assert!(a.client_scans > 0, "clients never ran the scheduler: {a:?}");
}

#[test]
fn client_scan_needs_a_send_scheduler_with_spawn() {
    let _serial = serial();
    let mut b = RuntimeBuilder::new(config(
        ArbiterMode::Sleep,
        KickMode::ClientScan { run_for_ns: 1_000 },
    ))
    .unwrap();
    let _c = b.add_client::<u32>(ClientConfig::default()).unwrap();
    let r = b.spawn(|c, l| {
        fairway_core::SchedSpec::parse("drr")
            .unwrap()
            .build::<u32>(c, l)
    });
    assert!(matches!(r, Err(RuntimeError::ClientScanNeedsSendScheduler)));
}

#[test]
fn invalid_configuration_is_a_typed_error() {
    let _serial = serial();
    assert!(matches!(
        RuntimeBuilder::new(RuntimeConfig {
            rate_bps: 10,
            ..Default::default()
        }),
        Err(RuntimeError::RateTooLow(10))
    ));
    let mut b = RuntimeBuilder::new(RuntimeConfig::default()).unwrap();
    assert!(matches!(
        b.add_client::<u32>(ClientConfig {
            queue_len: 0,
            ..Default::default()
        }),
        Err(RuntimeError::BadQueueLen(0))
    ));
    let _c = b
        .add_client::<u32>(ClientConfig {
            weight: 0,
            ..Default::default()
        })
        .unwrap();
    assert!(matches!(
        b.spawn_send(drr()),
        Err(RuntimeError::Flow { client: 0, .. })
    ));
}

#[test]
fn full_queue_is_backpressure_and_accounting_adds_up() {
    let _serial = serial();
    // 1 Mbit/s, 1000-byte packets: one grant per 8 ms.
    let cfg = RuntimeConfig {
        rate_bps: 1_000_000,
        ..RuntimeConfig::default()
    };
    let mut b = RuntimeBuilder::new(cfg).unwrap();
    let mut c = b
        .add_client::<u32>(ClientConfig {
            queue_len: 7,
            max_len: 1000,
            weight: 1,
        })
        .unwrap();
    let arb = b.spawn_send(drr()).unwrap();
    let start = Instant::now();
    for _ in 0..7 {
        c.submit(1000).unwrap();
    }
    let e = c.submit(999).unwrap_err();
    assert_eq!((e.kind, e.packet), (SubmitErrorKind::Full, 999));
    let e = c.submit(1001).unwrap_err();
    assert_eq!(
        e.kind,
        SubmitErrorKind::TooLong {
            len: 1001,
            max_len: 1000
        }
    );
    assert_eq!(c.submit(0).unwrap_err().kind, SubmitErrorKind::EmptyPacket);
    // Wait for the first grants (however long a loaded machine keeps the
    // arbiter off the CPU), then check the pacing against the time that
    // really passed: one grant per 8 ms, plus the first.
    std::thread::sleep(Duration::from_millis(20));
    let deadline = Instant::now() + Duration::from_secs(10);
    while c.stats().granted == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut tx = CountingBackend::default();
    c.drain_now(&mut tx);
    let s = c.stats();
    let elapsed_ms = start.elapsed().as_millis() as u64;
    assert_eq!((s.offered, s.rejected_full, s.rejected_invalid), (10, 1, 2));
    assert_eq!(s.accepted, s.granted + s.queued);
    assert!(s.granted >= 1, "no grant in 10 s: {s:?}");
    assert!(
        s.granted <= 2 + elapsed_ms / 8,
        "the link paces grants: {s:?} in {elapsed_ms} ms"
    );
    assert_eq!(tx.packets, s.transmitted);
    assert_eq!(tx.bytes, 1000 * s.transmitted);
    arb.stop().unwrap();
}

/// What holds however the machine is loaded: never above the link rate,
/// weights 3:1 among backlogged clients.
#[test]
fn link_rate_and_weights_are_respected() {
    rate_and_weights(false);
}

/// The link is also kept busy: at least 80 % of the rate is sent. Only on a
/// machine with time to spare for the arbiter (the slow tier's), since a
/// starved arbiter thread sends less.
#[test]
#[ignore = "slow tier: wall-clock throughput, fails on an overloaded machine"]
fn link_rate_is_used() {
    rate_and_weights(true);
}

fn rate_and_weights(check_utilisation: bool) {
    let _serial = serial();
    // 20 Mbit/s with 1000-byte packets: 2500 packets/s; weights 1 and 3.
    // Queues of 1023 never run dry within the run, so both flows stay
    // backlogged even if this thread is descheduled for a while.
    let cfg = RuntimeConfig {
        rate_bps: 20_000_000,
        ..RuntimeConfig::default()
    };
    let mut b = RuntimeBuilder::new(cfg).unwrap();
    let mut cs: Vec<Client<u32>> = [1, 3]
        .iter()
        .map(|&w| {
            b.add_client(ClientConfig {
                weight: w,
                max_len: 1000,
                queue_len: 1023,
            })
            .unwrap()
        })
        .collect();
    // The link's clock starts when the arbiter does: time from before the
    // spawn, or the grants made while it starts exceed the bound.
    let start = Instant::now();
    let arb = b
        .spawn_send(|c, l| Box::new(Wf2qPlus::<u32>::with_limits(c, l)))
        .unwrap();
    let run = Duration::from_millis(400);
    let mut tx = [CountingBackend::default(), CountingBackend::default()];
    while start.elapsed() < run {
        for (c, t) in cs.iter_mut().zip(tx.iter_mut()) {
            while c.submit(1000).is_ok() {}
            c.drain(t);
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let total = (tx[0].packets + tx[1].packets) as f64;
    let expected = 2_500.0 * elapsed;
    // Never above the rate (plus the one packet a round may overrun).
    assert!(total <= expected + 2.0, "{total} > {expected}");
    if check_utilisation {
        assert!(total >= 0.8 * expected, "{total} << {expected}");
    }
    let ratio = tx[1].packets as f64 / tx[0].packets as f64;
    assert!(
        (2.7..3.3).contains(&ratio),
        "weight 3 vs 1 got ratio {ratio}"
    );
    arb.stop().unwrap();
}

#[test]
fn stalled_and_departed_clients_do_not_stall_others() {
    let _serial = serial();
    let mut b = RuntimeBuilder::new(config(ArbiterMode::BusyPoll, KickMode::Notify)).unwrap();
    let mut stalled = b
        .add_client::<u32>(ClientConfig {
            queue_len: 15,
            ..Default::default()
        })
        .unwrap();
    let mut leaving = b
        .add_client::<u32>(ClientConfig {
            queue_len: 15,
            ..Default::default()
        })
        .unwrap();
    let mut good = b
        .add_client::<u32>(ClientConfig {
            queue_len: 15,
            ..Default::default()
        })
        .unwrap();
    let arb = b.spawn_send(drr()).unwrap();
    // The stalled client fills its queue and never drains again.
    while stalled.submit(100).is_ok() {}
    while leaving.submit(100).is_ok() {}
    drop(leaving);
    let mut tx = CountingBackend::default();
    let deadline = Instant::now() + Duration::from_secs(10);
    while tx.packets < 100_000 {
        assert!(
            Instant::now() < deadline,
            "good client stalled at {}",
            tx.packets
        );
        while good.submit(100).is_ok() {}
        good.drain_now(&mut tx);
    }
    assert_eq!(stalled.submit(100).unwrap_err().kind, SubmitErrorKind::Full);
    let s = stalled.stats();
    assert_eq!(s.accepted, s.granted + s.queued);
    assert_eq!(s.transmitted, 0);
    let a = arb.stop().unwrap();
    assert!(a.decisions >= 100_000);
}

/// A datagram payload.
#[derive(Debug)]
struct Datagram(Vec<u8>);
impl Packet for Datagram {
    fn len(&self) -> u32 {
        self.0.len() as u32
    }
}
impl AsRef<[u8]> for Datagram {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

#[test]
fn udp_backend_sends_to_loopback() {
    let _serial = serial();
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut be = UdpBackend::connect(rx.local_addr().unwrap()).unwrap();
    let mut b = RuntimeBuilder::new(RuntimeConfig::default()).unwrap();
    let mut c = b.add_client::<Datagram>(ClientConfig::default()).unwrap();
    let arb = b.spawn_send(drr()).unwrap();
    for i in 0..5u8 {
        c.submit(Datagram(vec![i; 64])).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while be.sent < 5 && Instant::now() < deadline {
        c.drain_now(&mut be);
    }
    assert_eq!((be.sent, be.errors), (5, 0));
    let mut buf = [0u8; 128];
    for i in 0..5u8 {
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], &[i; 64][..]);
    }
    arb.stop().unwrap();
}

#[test]
fn stop_wakes_a_blocked_arbiter() {
    let _serial = serial();
    let cfg = config(ArbiterMode::Sleep, KickMode::Notify);
    let mut b = RuntimeBuilder::new(cfg).unwrap();
    let _c = b.add_client::<u32>(ClientConfig::default()).unwrap();
    let arb = b.spawn_send(drr()).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let a = arb.stop().unwrap();
    assert!(a.blocks >= 1, "{a:?}");
}

#[test]
fn realtime_priority_is_validated_then_applied_or_refused_with_a_typed_error() {
    let _serial = serial();
    for bad in [0, 100] {
        let r = RuntimeBuilder::new(RuntimeConfig {
            realtime_priority: Some(bad),
            ..RuntimeConfig::default()
        });
        assert!(matches!(r, Err(RuntimeError::BadPriority(p)) if p == bad));
    }
    // A sleeping arbiter, so a real-time thread does not hog a core.
    let cfg = RuntimeConfig {
        mode: ArbiterMode::Sleep,
        realtime_priority: Some(1),
        ..RuntimeConfig::default()
    };
    let mut b = RuntimeBuilder::new(cfg).unwrap();
    let mut c = b.add_client::<u32>(ClientConfig::default()).unwrap();
    match b.spawn(drr()) {
        Ok(arbiter) => {
            for _ in 0..100 {
                c.submit(100).unwrap();
            }
            let mut sink = CountingBackend::default();
            let deadline = Instant::now() + Duration::from_secs(10);
            while sink.packets < 100 && Instant::now() < deadline {
                c.drain_now(&mut sink);
            }
            assert_eq!(sink.packets, 100);
            arbiter.stop().unwrap();
        }
        // Without CAP_SYS_NICE: refused, typed, and nothing was started.
        Err(RuntimeError::Realtime(e)) => {
            assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}")
        }
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// The PSPAT paper §3: "clients or dispatcher threads" transmit. Three clients
/// submit from their own threads; one dispatcher thread drains all three
/// (split clients). Every packet arrives once, in order per client, and
/// the counters of both halves add up.
#[test]
fn a_dispatcher_thread_drains_split_clients() {
    let _serial = serial();
    let mut b = RuntimeBuilder::new(config(ArbiterMode::BusyPoll, KickMode::Notify)).unwrap();
    let n = 20_000u64;
    let mut submitters = Vec::new();
    let mut drainers = Vec::new();
    for _ in 0..3 {
        let c = b
            .add_client::<Seq>(ClientConfig {
                queue_len: 63,
                ..ClientConfig::default()
            })
            .unwrap();
        let (s, d) = c.split();
        submitters.push(s);
        drainers.push(d);
    }
    let arbiter = b.spawn(drr()).unwrap();
    let dispatcher = std::thread::spawn(move || {
        let mut sinks: Vec<InOrder> = drainers.iter().map(|_| InOrder::default()).collect();
        let deadline = Instant::now() + Duration::from_secs(60);
        while sinks.iter().any(|s| s.next < n) && Instant::now() < deadline {
            for (d, sink) in drainers.iter_mut().zip(&mut sinks) {
                d.drain_now(sink);
            }
        }
        let stats: Vec<ClientStats> = drainers.iter().map(|d| d.stats()).collect();
        (sinks.iter().map(|s| s.next).collect::<Vec<_>>(), stats)
    });
    let senders: Vec<_> = submitters
        .into_iter()
        .map(|mut s| {
            std::thread::spawn(move || {
                let mut seq = 0;
                while seq < n {
                    match s.submit(Seq { len: 100, seq }) {
                        Ok(()) => seq += 1,
                        Err(e) => {
                            assert_eq!(e.kind, SubmitErrorKind::Full);
                            std::thread::yield_now();
                        }
                    }
                }
                s.stats()
            })
        })
        .collect();
    let sent: Vec<ClientStats> = senders.into_iter().map(|h| h.join().unwrap()).collect();
    let (received, drained) = dispatcher.join().unwrap();
    arbiter.stop().unwrap();
    assert_eq!(received, vec![n; 3]);
    for (s, d) in sent.iter().zip(&drained) {
        assert_eq!(s.accepted, n);
        assert_eq!(s.offered, s.accepted + s.rejected_full);
        assert_eq!((d.granted, d.transmitted), (n, n));
    }
}
