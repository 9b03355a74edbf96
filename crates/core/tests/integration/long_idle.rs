//! Flows that come back after a long idle period, for every scheduler.
//!
//! While a flow is idle the system virtual time `V` keeps advancing with the
//! service of the others; in a long run it wraps around `u64` (in seconds
//! with QFQ's 30 fractional bits, in minutes with WF2Q+'s 24 at 10 Gbit/s
//! of 64 KiB packets). A returning flow must start at `max(V, F)` computed
//! exactly, never read its stale finish time `F` as far in the future (it
//! would starve) — see `fairway_core::vtime`. These tests reach such states
//! with the `warp_idle_clock` test hook (the state after flows since removed
//! were served for a long time) instead of sending billions of packets.

use crate::common::*;
use fairway_core::registry::SchedKind;
use fairway_core::*;

const MAX_LEN: u32 = 1 << 16;

fn build(kind: SchedKind) -> Box<dyn Scheduler<Pkt> + Send> {
    SchedSpec::new(kind).build::<Pkt>(Capacity::new(4, 4096), Limits::DEFAULT)
}

/// The schedulers that share by weight (FIFO serves in arrival order by
/// design), as the catalogue marks them.
fn fair_kinds() -> impl Iterator<Item = SchedKind> {
    SchedKind::ALL
        .iter()
        .copied()
        .filter(|k| k.info().shares_by_weight)
}

/// Clock advances that cover the ways a comparison can go wrong: a quarter,
/// half and three quarters of the range, just short of a full turn, one and
/// a half turns (two warps).
const WARPS: &[&[u64]] = &[
    &[1 << 62],
    &[1 << 63],
    &[(1 << 63) + (1 << 62)],
    &[u64::MAX - (1 << 40)],
    &[u64::MAX, 1 << 63],
];

/// Flow 0 sends a few packets and goes idle; the clock runs far ahead; a
/// newly arrived flow 1 of equal weight queues a long backlog, then flow 0
/// comes back with 4 packets. Flow 0 must be served at once, alternating
/// with flow 1, not after flow 1's backlog.
#[test]
fn a_flow_returning_after_the_clock_wrapped_is_served_at_once() {
    let mut failures = Vec::new();
    for kind in fair_kinds() {
        for warp in WARPS {
            let mut s = build(kind);
            s.add_flow(FlowId(0), FlowConfig::new(1, MAX_LEN)).unwrap();
            s.add_flow(FlowId(2), FlowConfig::new(1, MAX_LEN)).unwrap();
            for id in 0..3 {
                s.enqueue(FlowId(0), Pkt { id, len: MAX_LEN }).unwrap();
                s.enqueue(FlowId(2), Pkt { id, len: MAX_LEN }).unwrap();
            }
            while s.dequeue().is_some() {}
            // Flow 2's service stands for the long run: it leaves, and the
            // clock advances as if it had been served that much.
            s.remove_flow(FlowId(2)).unwrap();
            for &delta in *warp {
                assert!(s.warp_idle_clock(delta), "{}", s.name());
            }
            // One byte shorter: with SCHED+, flow 1 joins an aggregate of its
            // own instead of sharing flow 0's.
            s.add_flow(FlowId(1), FlowConfig::new(1, MAX_LEN - 1))
                .unwrap();
            for id in 0..1000 {
                s.enqueue(
                    FlowId(1),
                    Pkt {
                        id,
                        len: MAX_LEN - 1,
                    },
                )
                .unwrap();
            }
            for id in 0..4 {
                s.enqueue(FlowId(0), Pkt { id, len: MAX_LEN }).unwrap();
            }
            let order: Vec<u32> = (0..12).map(|_| s.dequeue().unwrap().flow.0).collect();
            if order.iter().filter(|&&f| f == 0).count() != 4 {
                failures.push(format!(
                    "{} after a clock advance of {warp:?}: first dequeues {order:?}",
                    s.name()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Two backlogged flows of weights 1 and 3 while `V` crosses the wrap
/// point: the shares stay 1:3 over every window of 40 packets.
#[test]
fn shares_hold_while_the_clock_wraps() {
    for kind in fair_kinds() {
        let mut s = build(kind);
        s.add_flow(FlowId(0), FlowConfig::new(1, 1500)).unwrap();
        s.add_flow(FlowId(1), FlowConfig::new(3, 1500)).unwrap();
        // Close enough to the wrap that the run below crosses it: 2000
        // packets advance V by at least 2000·1500·2^24/4 units.
        assert!(s.warp_idle_clock(u64::MAX - ((1000 * 1500u64) << 24) / 4));
        for id in 0..2000 {
            s.enqueue(FlowId(0), Pkt { id, len: 1500 }).unwrap();
            s.enqueue(FlowId(1), Pkt { id, len: 1500 }).unwrap();
        }
        let order: Vec<u32> = (0..2000).map(|_| s.dequeue().unwrap().flow.0).collect();
        for (k, window) in order.chunks(40).enumerate() {
            let heavy = window.iter().filter(|&&f| f == 1).count();
            assert!(
                (27..=33).contains(&heavy),
                "{}: window {k} gave the weight-3 flow {heavy} of 40",
                s.name()
            );
        }
    }
}

#[test]
fn the_clock_cannot_be_warped_while_packets_are_queued() {
    for &kind in SchedKind::ALL {
        let mut s = build(kind);
        s.add_flow(FlowId(0), FlowConfig::new(1, 1500)).unwrap();
        s.enqueue(FlowId(0), Pkt { id: 0, len: 1500 }).unwrap();
        assert!(!s.warp_idle_clock(1 << 62), "{}", s.name());
        assert_eq!(s.dequeue().map(|d| d.packet.id), Some(0));
        assert!(s.warp_idle_clock(1 << 62), "{}", s.name());
    }
}

/// The long run itself, with real packets and no test hook: flow 1 stays
/// backlogged with 64 KiB packets while flow 0 idles, then flow 0 comes
/// back. At two flows of weight 1 each packet advances WF2Q+'s 24-bit
/// virtual clock by about 2^39 units, so the three lengths leave it 0.4,
/// 0.875 and 1.2 turns of the 64-bit range past flow 0's finish time (QFQ's
/// 30-bit clock turns 64 times faster). About a minute in release builds:
/// `cargo test --release -p fairway-core --test integration long_idle:: -- --ignored`.
#[test]
#[ignore = "slow tier: 82 million packets per scheduler"]
fn a_flow_returning_after_millions_of_64k_packets_is_served_at_once() {
    let mut failures = Vec::new();
    for kind in fair_kinds() {
        for packets in [13_000_000u32, 29_400_000, 40_000_000] {
            let mut s = build(kind);
            s.add_flow(FlowId(0), FlowConfig::new(1, MAX_LEN)).unwrap();
            s.add_flow(FlowId(1), FlowConfig::new(1, MAX_LEN - 1))
                .unwrap();
            for id in 0..3 {
                s.enqueue(FlowId(0), Pkt { id, len: MAX_LEN }).unwrap();
            }
            for id in 0..4 {
                s.enqueue(
                    FlowId(1),
                    Pkt {
                        id,
                        len: MAX_LEN - 1,
                    },
                )
                .unwrap();
            }
            for id in 0..packets {
                s.enqueue(
                    FlowId(1),
                    Pkt {
                        id,
                        len: MAX_LEN - 1,
                    },
                )
                .unwrap();
                s.dequeue().unwrap();
            }
            assert_eq!(s.flow_backlog(FlowId(0)).unwrap().packets, 0);
            for id in 0..1000 {
                s.enqueue(
                    FlowId(1),
                    Pkt {
                        id,
                        len: MAX_LEN - 1,
                    },
                )
                .unwrap();
            }
            for id in 0..4 {
                s.enqueue(FlowId(0), Pkt { id, len: MAX_LEN }).unwrap();
            }
            let order: Vec<u32> = (0..12).map(|_| s.dequeue().unwrap().flow.0).collect();
            if order.iter().filter(|&&f| f == 0).count() != 4 {
                failures.push(format!(
                    "{} after {packets} packets: first dequeues {order:?}",
                    s.name()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
