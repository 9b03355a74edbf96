//! The real-time emulated device: shutdown handing requests back, and
//! BFQ's idling for a synchronous thread happening for real. Its App.
//! C.5.1 trace replay against the simulator is `fairway-lab`'s
//! (`tests/integration/disk_validate.rs`).

use fairway_disk::emulator::EmulatedDisk;
use fairway_disk::model::DiskModel;
use fairway_disk::AppSpec;
use fairway_disk::{AppId, Bfq, BfqConfig, DiskScheduler, Request, TimeBudget};

/// First come, first served: BFQ with one application, no T_FIFO, no
/// idling, no time budget.
fn fcfs() -> Bfq {
    let mut b = Bfq::new(BfqConfig {
        t_wait: 0,
        t_fifo: 0,
        t_max: TimeBudget::Off,
        max_apps: 1,
        ..BfqConfig::simplified(1 << 20).unwrap()
    })
    .unwrap();
    b.add_app(AppId(0), AppSpec::weight(1)).unwrap();
    b
}

#[test]
fn shutdown_hands_back_what_is_queued() {
    let dev = EmulatedDisk::start(fcfs(), DiskModel::dtla_307030());
    let sub = dev.submitter();
    let rxs: Vec<_> = (0..50u64)
        .map(|k| sub.submit(Request::read(AppId(0), k * 1_000_003, 64).with_tag(k)))
        .collect();
    // Let one request start, then stop.
    let first = rxs[0].recv().expect("the first request completes");
    assert_eq!(first.req.tag, 0);
    let report = dev.shutdown();
    let delivered = 1 + rxs[1..].iter().filter(|rx| rx.try_recv().is_ok()).count();
    assert_eq!(delivered + report.unserved.len(), 50, "{report:?}");
    let mut tags: Vec<u64> = report.unserved.iter().map(|r| r.tag).collect();
    tags.sort_unstable();
    tags.dedup();
    assert_eq!(tags.len(), report.unserved.len(), "caller tags restored");
}

#[test]
fn a_synchronous_thread_keeps_the_disk_under_bfq() {
    // A synchronous sequential reader and an asynchronous reader far away,
    // as real threads: BFQ idles for the synchronous one, so it completes
    // its reads although the other always has requests queued.
    let mut bfq = Bfq::new(BfqConfig::simplified(1024).unwrap()).unwrap();
    bfq.add_app(AppId(0), AppSpec::weight(1)).unwrap();
    bfq.add_app(AppId(1), AppSpec::weight(1)).unwrap();
    let dev = EmulatedDisk::start(bfq, DiskModel::dtla_307030());
    let (s0, s1) = (dev.submitter(), dev.submitter());
    let sync = std::thread::spawn(move || {
        (0..40u64)
            .filter_map(|k| s0.io(Request::read(AppId(0), k * 64, 64)))
            .count()
    });
    let other = std::thread::spawn(move || {
        let rxs: Vec<_> = (0..40u64)
            .map(|k| s1.submit(Request::read(AppId(1), 50_000_000 + k * 64, 64)))
            .collect();
        rxs.into_iter().filter(|rx| rx.recv().is_ok()).count()
    });
    assert_eq!(sync.join().unwrap(), 40);
    assert_eq!(other.join().unwrap(), 40);
    let report = dev.shutdown();
    assert_eq!(report.completed, 80);
    assert!(report.unserved.is_empty());
}
