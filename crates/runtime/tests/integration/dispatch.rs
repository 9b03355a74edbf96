//! The arbiter thread as dispatcher (`RuntimeBuilder::spawn_dispatching`):
//! every granted packet is transmitted without the clients draining.

use fairway_core::Drr;
use fairway_runtime::*;
use std::time::{Duration, Instant};

/// Every client's draining half, transmitting into one counter.
struct Counting {
    drainers: Vec<ClientDrainer<u32>>,
    tx: CountingBackend,
}

impl Dispatch for Counting {
    fn dispatch(&mut self) -> usize {
        let tx = &mut self.tx;
        self.drainers.iter_mut().map(|d| d.drain_now(tx)).sum()
    }
}

const PER_CLIENT: u64 = 200;

/// Three clients submit `PER_CLIENT` packets each and never drain; the
/// arbiter thread runs `dispatch`. Returns the arbiter's decisions, the
/// dispatcher (if handed back) and the final accounts.
fn run<D: Dispatch + 'static>(
    mode: ArbiterMode,
    make: impl FnOnce(Vec<ClientDrainer<u32>>) -> D,
) -> (u64, Option<D>, PacketAccounts) {
    let cfg = RuntimeConfig {
        rate_bps: 1_000_000_000,
        mode,
        ..RuntimeConfig::default()
    };
    let mut b = RuntimeBuilder::new(cfg).unwrap();
    let mut subs = Vec::new();
    let mut drainers = Vec::new();
    for w in [1, 2, 5] {
        let c = b
            .add_client::<u32>(ClientConfig {
                weight: w,
                ..ClientConfig::default()
            })
            .unwrap();
        let (s, d) = c.split();
        subs.push(s);
        drainers.push(d);
    }
    let h = b
        .spawn_dispatching(
            |c, l| Box::new(Drr::<u32>::with_options(c, l, None)),
            make(drainers),
        )
        .unwrap();
    for s in &mut subs {
        for _ in 0..PER_CLIENT {
            s.submit(100).unwrap();
        }
    }
    let total = 3 * PER_CLIENT;
    let end = Instant::now() + Duration::from_secs(10);
    while h.accounts().total().granted < total && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(1));
    }
    // Time for a dispatcher to drain the last grants.
    std::thread::sleep(Duration::from_millis(20));
    let accounts = h.accounts().total();
    let (stats, d) = h.stop().unwrap();
    (stats.decisions, d, accounts)
}

#[test]
fn the_arbiter_thread_transmits_every_granted_packet() {
    for mode in [ArbiterMode::BusyPoll, ArbiterMode::Sleep] {
        let (decisions, d, a) = run(mode, |drainers| Counting {
            drainers,
            tx: CountingBackend::default(),
        });
        let d = d.expect("the dispatcher comes back");
        assert_eq!(decisions, 3 * PER_CLIENT, "{mode:?}");
        assert_eq!(d.tx.packets, 3 * PER_CLIENT, "{mode:?}");
        assert_eq!(d.tx.bytes, 3 * PER_CLIENT * 100, "{mode:?}");
        assert_eq!(a.transmitted, 3 * PER_CLIENT, "{mode:?}: {a:?}");
        assert_eq!(a.undrained(), 0, "{mode:?}: {a:?}");
    }
}

#[test]
fn without_a_dispatcher_granted_packets_stay_undrained() {
    // The check above can fail: with `()` as the dispatcher nobody
    // drains, so every packet is granted and none transmitted.
    let (decisions, d, a) = run(ArbiterMode::BusyPoll, |_drainers| ());
    assert!(d.is_some());
    assert_eq!(decisions, 3 * PER_CLIENT);
    assert_eq!(a.transmitted, 0, "{a:?}");
    assert_eq!(a.undrained(), 3 * PER_CLIENT, "{a:?}");
}
