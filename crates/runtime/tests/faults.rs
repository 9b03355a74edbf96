//! Runtime faults with real threads: a client thread that panics while it
//! holds submitted and granted packets must not stop the arbiter or the
//! other clients' service, and its accounting up to the panic adds up
//! (accepted = granted + queued).

use fairway_core::Drr;
use fairway_runtime::*;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The machine has 2 cores and a busy-polling arbiter: one test at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_client_thread_that_panics_holding_packets_does_not_stall_the_others() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cfg = RuntimeConfig {
        rate_bps: 1_000_000_000_000,
        mode: ArbiterMode::BusyPoll,
        kick: KickMode::Notify,
        ..RuntimeConfig::default()
    };
    let mut b = RuntimeBuilder::new(cfg).unwrap();
    let mut doomed = b
        .add_client::<u32>(ClientConfig {
            queue_len: 31,
            ..Default::default()
        })
        .unwrap();
    let mut good = b
        .add_client::<u32>(ClientConfig {
            queue_len: 31,
            ..Default::default()
        })
        .unwrap();
    let arb = b
        .spawn_send(|c, l| Box::new(Drr::<u32>::with_options(c, l, None)))
        .unwrap();

    // The doomed client fills its queue, waits until the arbiter granted
    // some of it, drains nothing, reports its counters and panics with
    // every packet still in hand.
    let (tx, rx) = mpsc::channel();
    let doomed_thread = std::thread::spawn(move || {
        while doomed.submit(100).is_ok() {}
        let deadline = Instant::now() + Duration::from_secs(10);
        while doomed.stats().granted == 0 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        tx.send(doomed.stats()).unwrap();
        panic!("client thread dies holding its packets");
    });
    let joined = doomed_thread.join();
    assert!(joined.is_err(), "the client thread was meant to panic");
    let s = rx.recv().unwrap();
    assert!(s.accepted > 0 && s.granted > 0, "{s:?}");
    assert_eq!(s.accepted, s.granted + s.queued, "{s:?}");
    assert_eq!(s.transmitted, 0);

    // The other client keeps its service.
    let mut sink = CountingBackend::default();
    let deadline = Instant::now() + Duration::from_secs(10);
    while sink.packets < 50_000 {
        assert!(
            Instant::now() < deadline,
            "the surviving client stalled at {} packets",
            sink.packets
        );
        while good.submit(100).is_ok() {}
        good.drain_now(&mut sink);
    }
    let g = good.stats();
    assert_eq!(g.accepted, g.granted + g.queued, "{g:?}");
    assert_eq!(g.transmitted, sink.packets);
    // The arbiter survived the client's death and stops cleanly.
    let a = arb.stop().expect("arbiter still healthy");
    assert!(a.decisions >= 50_000);
}
