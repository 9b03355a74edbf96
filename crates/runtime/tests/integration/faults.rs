//! Runtime faults with real threads: a client that dies holding packets, a
//! client that stops draining, a back-end whose sends fail, an arbiter
//! restarted with another scheduler. In each, the other clients keep their
//! service and the runtime's accounts ([`ArbiterHandle::accounts`]) place
//! every packet: `submitted = rejected + granted + queued + reclaimed`,
//! checked against counts taken independently (the client's own stats, the
//! packets a back-end saw, a paused arbiter's backlog).

use crate::serial::serial;
use fairway_core::{Drr, Packet, Qfq};
use fairway_runtime::*;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn config(rate_bps: u64) -> RuntimeConfig {
    RuntimeConfig {
        rate_bps,
        mode: ArbiterMode::BusyPoll,
        kick: KickMode::Notify,
        ..RuntimeConfig::default()
    }
}

fn small_queue() -> ClientConfig {
    ClientConfig {
        queue_len: 31,
        ..Default::default()
    }
}

fn drr() -> impl FnOnce(fairway_core::Capacity, fairway_core::Limits) -> Box<Drr<u32>> {
    |c, l| Box::new(Drr::with_options(c, l, None))
}

/// The identity, and that no count exceeds what it is part of.
fn balanced(a: &PacketAccounts) -> bool {
    a.submitted == a.rejected + a.granted + a.queued + a.reclaimed
        && a.granted >= a.transmitted + a.send_failed
}

/// Waits (at most 10 s) until `done(accounts)`.
fn wait_for(arb: &ArbiterHandle, what: &str, done: impl Fn(&RuntimeAccounts) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let a = arb.accounts();
        if done(&a) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting: {what}: {a:?}"
        );
        std::thread::yield_now();
    }
}

/// Keeps `client` submitting and draining until `sink` has seen `n` more
/// packets; fails after 10 s ("lost its service").
fn serve(client: &mut Client<u32>, sink: &mut CountingBackend, n: u64) {
    let target = sink.packets + n;
    let deadline = Instant::now() + Duration::from_secs(10);
    while sink.packets < target {
        assert!(
            Instant::now() < deadline,
            "the surviving client stalled at {} of {target} packets",
            sink.packets
        );
        while client.submit(100).is_ok() {}
        client.drain_now(sink);
    }
}

#[test]
fn a_client_thread_that_panics_holding_packets_does_not_stall_the_others() {
    let _serial = serial();
    // 1 Mbit/s: the dead client's 60 000-byte packets take 480 ms each, so
    // it still has packets in the scheduler when it dies, and when the
    // arbiter notices, however long a loaded machine makes that take (its
    // queue holds seconds of them).
    let mut b = RuntimeBuilder::new(config(1_000_000)).unwrap();
    let big = ClientConfig {
        max_len: 60_000,
        ..small_queue()
    };
    let mut doomed = b.add_client::<u32>(big).unwrap();
    let mut good = b.add_client::<u32>(small_queue()).unwrap();
    let arb = b.spawn_send(drr()).unwrap();

    // The doomed client fills its queue, waits until the arbiter granted
    // some of it, drains nothing, reports its counters and panics with
    // every packet still in hand.
    let (tx, rx) = mpsc::channel();
    let doomed_thread = std::thread::spawn(move || {
        while doomed.submit(60_000).is_ok() {}
        let deadline = Instant::now() + Duration::from_secs(10);
        while doomed.stats().granted == 0 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        tx.send(doomed.stats()).unwrap();
        panic!("client thread dies holding its packets");
    });
    assert!(doomed_thread.join().is_err(), "meant to panic");
    let s = rx.recv().unwrap();
    assert!(s.accepted > 0 && s.granted > 0, "{s:?}");
    assert_eq!(s.accepted, s.granted + s.queued, "{s:?}");

    // The arbiter sees it depart and reclaims everything not granted.
    wait_for(&arb, "departure", |a| a.departed[0]);
    let d = arb.accounts().clients[0];
    assert!(balanced(&d), "{d:?}");
    assert_eq!(d.queued, 0, "a departed client holds nothing: {d:?}");
    assert_eq!(
        d.submitted, s.offered,
        "the runtime kept the dead client's count"
    );
    assert_eq!(d.rejected, s.rejected_full + s.rejected_invalid);
    assert!(d.granted >= s.granted, "{d:?} {s:?}");
    assert!(
        d.reclaimed > 0,
        "the slow link left packets to reclaim: {d:?}"
    );
    assert_eq!(d.granted + d.reclaimed, s.accepted, "{d:?} {s:?}");
    // Granted and never drained: dropped with the client, visible here.
    assert_eq!(d.undrained(), d.granted);

    // The other client keeps its service (at 100 B = 800 µs per packet).
    let mut sink = CountingBackend::default();
    serve(&mut good, &mut sink, 200);
    let g = arb.accounts().clients[1];
    assert!(balanced(&g), "{g:?}");
    assert_eq!(g.transmitted, sink.packets);
    let stats = arb.stop().expect("arbiter still healthy");
    assert_eq!(stats.reclaimed, d.reclaimed);
}

#[test]
fn a_client_that_exits_before_the_arbiter_read_its_queue_is_fully_reclaimed() {
    let _serial = serial();
    // The client submits and leaves before any arbiter runs: none of its
    // packets was ever read, and all must be counted as reclaimed.
    let mut b = RuntimeBuilder::new(config(1_000_000_000_000)).unwrap();
    let mut gone = b.add_client::<u32>(small_queue()).unwrap();
    let mut good = b.add_client::<u32>(small_queue()).unwrap();
    for _ in 0..10 {
        gone.submit(100).unwrap();
    }
    drop(gone);
    let arb = b.spawn_send(drr()).unwrap();
    wait_for(&arb, "departure", |a| a.departed[0]);
    let d = arb.accounts().clients[0];
    assert_eq!(
        (d.submitted, d.granted, d.queued, d.reclaimed),
        (10, 0, 0, 10),
        "{d:?}"
    );
    let mut sink = CountingBackend::default();
    serve(&mut good, &mut sink, 1_000);
    assert_eq!(arb.stop().unwrap().reclaimed, 10);
}

#[test]
fn a_client_that_stops_draining_holds_only_its_queue_and_the_others_keep_their_service() {
    let _serial = serial();
    let mut b = RuntimeBuilder::new(config(1_000_000_000_000)).unwrap();
    let mut stalled = b.add_client::<u32>(small_queue()).unwrap();
    let mut good = b.add_client::<u32>(small_queue()).unwrap();
    let arb = b.spawn_send(drr()).unwrap();

    // It submits until its queue is full of grants it never drains; every
    // further submit is refused (backpressure) and handed back.
    while stalled.submit(100).is_ok() {}
    wait_for(&arb, "grants", |a| a.clients[0].granted == 31);
    for _ in 0..100 {
        assert_eq!(stalled.submit(100).unwrap_err().kind, SubmitErrorKind::Full);
    }
    let mut sink = CountingBackend::default();
    serve(&mut good, &mut sink, 20_000);

    let s = arb.accounts().clients[0];
    assert!(balanced(&s), "{s:?}");
    assert_eq!(
        (s.granted, s.queued, s.undrained(), s.rejected),
        (31, 0, 31, 101),
        "{s:?}"
    );
    assert_eq!(s.submitted, stalled.stats().offered);
    // Draining again, it gets exactly what it was granted, and service.
    let mut mine = CountingBackend::default();
    assert_eq!(stalled.drain_now(&mut mine), 31);
    serve(&mut stalled, &mut mine, 1_000);
    let s = arb.accounts().clients[0];
    assert!(balanced(&s), "{s:?}");
    assert_eq!(s.transmitted, mine.packets);
    arb.stop().unwrap();
}

#[test]
fn a_back_end_whose_sends_fail_counts_each_packet_and_the_others_keep_their_service() {
    let _serial = serial();
    let mut b = RuntimeBuilder::new(config(1_000_000_000_000)).unwrap();
    let mut faulty = b.add_client::<u32>(small_queue()).unwrap();
    let mut good = b.add_client::<u32>(small_queue()).unwrap();
    let arb = b.spawn_send(drr()).unwrap();

    let mut broken = FailingBackend::new(CountingBackend::default());
    let switch = broken.switch();
    switch.store(true, Ordering::Relaxed); // the buffer is full
    let mut good_sink = CountingBackend::default();
    let deadline = Instant::now() + Duration::from_secs(10);
    while broken.failed < 5_000 {
        assert!(Instant::now() < deadline, "{} failures", broken.failed);
        while faulty.submit(100).is_ok() {}
        faulty.drain_now(&mut broken);
        good.drain_now(&mut good_sink);
        let _ = good.submit(100);
    }
    serve(&mut good, &mut good_sink, 20_000);
    switch.store(false, Ordering::Relaxed); // the buffer has room again
    let failed_while_full = broken.failed;
    while broken.inner.packets < 1_000 {
        assert!(Instant::now() < deadline + Duration::from_secs(10));
        while faulty.submit(100).is_ok() {}
        faulty.drain_now(&mut broken);
    }
    assert_eq!(
        broken.failed, failed_while_full,
        "sends fail only on command"
    );

    let f = faulty.stats();
    let a = arb.accounts().clients[0];
    assert!(balanced(&a), "{a:?}");
    // Each refused send is counted once, by the client and by the runtime,
    // and none is counted as transmitted.
    assert_eq!(
        (f.send_failed, a.send_failed),
        (broken.failed, broken.failed)
    );
    assert_eq!(
        (f.transmitted, a.transmitted),
        (broken.inner.packets, broken.inner.packets)
    );
    let g = arb.accounts().clients[1];
    assert_eq!((g.send_failed, g.transmitted), (0, good_sink.packets));
    arb.stop().unwrap();
}

#[test]
fn a_real_socket_error_is_counted_as_a_failed_send() {
    let _serial = serial();
    // A datagram above UDP's 65 507-byte limit over IPv4: the kernel
    // refuses it (EMSGSIZE), every time.
    let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut udp = UdpBackend::connect(peer.local_addr().unwrap()).unwrap();
    let mut b = RuntimeBuilder::new(config(1_000_000_000_000)).unwrap();
    let big = ClientConfig {
        max_len: 65_520,
        queue_len: 7,
        ..Default::default()
    };
    let mut c = b.add_client::<Vec<u8>>(big).unwrap();
    let arb = b.spawn_send(drr()).unwrap();
    c.submit(vec![1u8; 65_520]).unwrap();
    c.submit(vec![2u8; 100]).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while c.stats().transmitted + c.stats().send_failed < 2 {
        assert!(Instant::now() < deadline);
        c.drain_now(&mut udp);
    }
    assert_eq!((udp.sent, udp.errors), (1, 1));
    let s = c.stats();
    assert_eq!((s.transmitted, s.send_failed), (1, 1));
    let mut buf = [0u8; 200];
    assert_eq!(peer.recv(&mut buf).unwrap(), 100, "the good one arrived");
    let a = arb.accounts().clients[0];
    assert!(balanced(&a) && a.send_failed == 1, "{a:?}");
    arb.stop().unwrap();
}

/// A packet carrying its client's sequence number.
#[derive(Debug)]
struct Seq {
    len: u32,
    seq: u64,
}
impl Packet for Seq {
    fn len(&self) -> u32 {
        self.len
    }
}

/// Records sequence numbers as transmitted.
#[derive(Default)]
struct Record(Vec<u64>);
impl Backend<Seq> for Record {
    fn transmit(&mut self, p: Seq) {
        self.0.push(p.seq);
    }
}

/// Exactly `0..n`, in order: nothing lost, duplicated or reordered.
fn in_order(seqs: &[u64], n: u64) -> Result<(), String> {
    if seqs.len() as u64 != n {
        return Err(format!("{} packets, expected {n}", seqs.len()));
    }
    match seqs.iter().enumerate().find(|&(i, &s)| s != i as u64) {
        Some((i, s)) => Err(format!("position {i} holds packet {s}")),
        None => Ok(()),
    }
}

#[test]
fn the_order_check_fails_on_a_lost_a_duplicated_or_a_reordered_packet() {
    assert!(in_order(&[0, 1, 2], 3).is_ok());
    assert!(in_order(&[0, 2], 3).is_err());
    assert!(in_order(&[0, 1, 1], 3).is_err());
    assert!(in_order(&[0, 2, 1], 3).is_err());
}

#[test]
fn an_arbiter_restarted_with_another_scheduler_loses_and_duplicates_nothing() {
    let _serial = serial();
    // 10 Mbit/s and 1000-byte packets (800 µs each): the clients hold a
    // backlog in the scheduler when the arbiter is paused.
    let mut b = RuntimeBuilder::new(config(10_000_000)).unwrap();
    let weights = [1, 2, 3];
    let mut clients: Vec<Client<Seq>> = weights
        .iter()
        .map(|&weight| {
            let cfg = ClientConfig {
                weight,
                queue_len: 63,
                ..Default::default()
            };
            b.add_client::<Seq>(cfg).unwrap()
        })
        .collect();
    let arb = b.spawn_send(drr()).unwrap();
    let mut next = [0u64; 3];
    let mut sinks: Vec<Record> = (0..3).map(|_| Record::default()).collect();
    let fill = |clients: &mut [Client<Seq>], next: &mut [u64; 3]| {
        for (c, n) in clients.iter_mut().zip(next.iter_mut()) {
            while c.submit(Seq { len: 1000, seq: *n }).is_ok() {
                *n += 1;
            }
        }
    };
    fill(&mut clients, &mut next);
    wait_for(&arb, "some grants", |a| a.total().granted >= 3);
    for (c, s) in clients.iter_mut().zip(&mut sinks) {
        c.drain_now(s);
    }

    let paused = arb.pause().map_err(|(e, _)| e).unwrap();
    // What the paused arbiter holds is what the accounts say is queued: two
    // counts taken on different sides (the scheduler and queues, and the
    // clients' submits minus the arbiter's grants).
    let before = paused.accounts();
    let mut held = 0;
    for i in 0..3 {
        let a = before.clients[i];
        assert!(balanced(&a), "client {i}: {a:?}");
        assert_eq!(paused.backlog(i).len() as u64, a.queued, "client {i}");
        assert!(paused.backlog(i).iter().all(|&l| l == 1000));
        held += a.queued;
    }
    assert!(held > 100, "the pause caught a backlog: {held}");
    // The clients go on while the arbiter is away: drains and submits.
    for (c, s) in clients.iter_mut().zip(&mut sinks) {
        c.drain_now(s);
    }
    fill(&mut clients, &mut next);

    // Restart with QFQ: the backlog goes first, each flow in its order.
    let arb = paused
        .spawn_send(|c, l| Box::new(Qfq::<u32>::with_limits(c, l)))
        .map_err(|e| e.error)
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        for (c, s) in clients.iter_mut().zip(&mut sinks) {
            c.drain_now(s);
        }
        if (0..3).all(|i| sinks[i].0.len() as u64 == next[i]) {
            break;
        }
        assert!(Instant::now() < deadline, "{:?}", arb.accounts());
        std::thread::sleep(Duration::from_millis(1));
    }
    for i in 0..3 {
        in_order(&sinks[i].0, next[i]).unwrap_or_else(|e| panic!("client {i}: {e}"));
        let a = arb.accounts().clients[i];
        assert!(balanced(&a), "{a:?}");
        assert_eq!((a.queued, a.reclaimed), (0, 0));
        assert_eq!(a.transmitted, next[i]);
    }
    let stats = arb.stop().unwrap();
    assert_eq!((stats.restarts, stats.requeued), (1, held));
    assert_eq!(stats.decisions, next.iter().sum::<u64>());
}

#[test]
fn a_restart_that_fails_hands_the_paused_runtime_back_intact() {
    let _serial = serial();
    let mut b = RuntimeBuilder::new(config(10_000_000)).unwrap();
    let mut c = b.add_client::<u32>(ClientConfig::default()).unwrap();
    let arb = b.spawn_send(drr()).unwrap();
    for _ in 0..20 {
        c.submit(1000).unwrap();
    }
    let paused = arb.pause().map_err(|(e, _)| e).unwrap();
    let held = paused.backlog(0).to_vec();
    // A scheduler too small for the clients refuses their flows.
    let err = paused
        .spawn_send(|_, l| {
            Box::new(Drr::<u32>::with_options(
                fairway_core::Capacity::new(0, 1),
                l,
                None,
            ))
        })
        .unwrap_err();
    assert!(
        matches!(err.error, RuntimeError::Flow { client: 0, .. }),
        "{:?}",
        err.error
    );
    let paused = err.paused.expect("handed back");
    assert_eq!(paused.backlog(0), held.as_slice());
    // ... and a constructor that panics on the arbiter thread, too.
    let err = paused
        .spawn(|_, _| -> Box<Drr<u32>> { panic!("no scheduler today") })
        .unwrap_err();
    let paused = err.paused.expect("handed back");
    assert_eq!(paused.backlog(0), held.as_slice());
    let arb = paused.spawn_send(drr()).map_err(|e| e.error).unwrap();
    let mut sink = CountingBackend::default();
    let deadline = Instant::now() + Duration::from_secs(10);
    while sink.packets < 20 {
        assert!(Instant::now() < deadline);
        c.drain_now(&mut sink);
    }
    assert!(balanced(&arb.accounts().clients[0]));
    arb.stop().unwrap();
}

#[test]
fn pausing_a_client_scan_arbiter_is_refused_and_leaves_it_running() {
    let _serial = serial();
    let cfg = RuntimeConfig {
        mode: ArbiterMode::Sleep,
        kick: KickMode::ClientScan { run_for_ns: 1_000 },
        ..config(1_000_000_000_000)
    };
    let mut b = RuntimeBuilder::new(cfg).unwrap();
    let mut c = b.add_client::<u32>(ClientConfig::default()).unwrap();
    let arb = b.spawn_send(drr()).unwrap();
    let (e, arb) = arb.pause().unwrap_err();
    assert!(matches!(e, RuntimeError::PauseNeedsNotifyKick));
    let mut sink = CountingBackend::default();
    serve(&mut c, &mut sink, 1_000);
    arb.stop().unwrap();
}
