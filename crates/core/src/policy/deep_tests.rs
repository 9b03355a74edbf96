//! Oracle tests of deep trees and jumbo frames: nodes with one child (a
//! slot instead of their queue's buckets) serve exactly what the same
//! tree with full queues serves, the depth limit holds at `MAX_DEPTH` and
//! one past it, and STFQ and hClock trees take 9000-byte packets with the
//! default queues, within the fair-queueing bound.

use super::*;
use alloc::vec;
use alloc::vec::Vec;
use proptest::prelude::*;

/// A chain of `depth` nodes under the root (`transactions[i % len]`, an
/// optional rate on some), one flow at the bottom and one flow beside
/// every `side`-th level, so both one-child and two-child nodes occur.
fn caterpillar(depth: usize, side: usize, rates: &[Option<u64>], prio: bool) -> TreeSpec {
    let queue = if prio {
        QueueSpec::new(QueueKind::Ffs, 4, 1)
    } else {
        QueueSpec::new(QueueKind::Cffs, 8192, 1 << 15)
    };
    let transaction = if prio {
        Transaction::StrictPriority
    } else {
        Transaction::Stfq
    };
    let nodes = (0..depth)
        .map(|i| NodeSpec {
            parent: i.checked_sub(1).map(|p| p as u32),
            transaction: transaction.clone(),
            queue,
            params: ChildParams {
                rate: rates.get(i).copied().flatten(),
                weight: 1 + (i as u32 % 3),
                priority: (i % 2) as u64,
                ..ChildParams::default()
            },
        })
        .collect();
    let mut flows = vec![FlowSpec {
        parent: depth as u32 - 1,
        params: ChildParams::default(),
    }];
    for i in (0..depth - 1).step_by(side.max(1)) {
        flows.push(FlowSpec {
            parent: i as u32,
            params: ChildParams {
                weight: 2,
                priority: 1,
                ..ChildParams::default()
            },
        });
    }
    TreeSpec {
        nodes,
        flows,
        shaper: TreeSpec::DEFAULT_SHAPER,
        max_packets: 1 << 12,
        max_packet_len: 1500,
    }
}

/// Departures `(time, flow, len)` of `t` fed `arrivals` `(time, flow,
/// len)` on a link of `link` bytes/s.
fn departures(
    mut t: PolicyTree<u32>,
    arrivals: &[(u64, u32, u32)],
    link: u64,
) -> Vec<(u64, u32, u32)> {
    let (mut now, mut k, mut out) = (0u64, 0usize, Vec::new());
    loop {
        while k < arrivals.len() && arrivals[k].0 <= now {
            let (_, f, len) = arrivals[k];
            t.enqueue(now, f, len, 0).unwrap();
            k += 1;
        }
        if let Some(s) = t.dequeue(now) {
            out.push((now, s.flow, s.packet));
            now += tx_ns(s.packet, link);
            continue;
        }
        match (t.next_eligible(now), arrivals.get(k).map(|a| a.0)) {
            (None, None) => break,
            (a, b) => {
                now = a
                    .unwrap_or(u64::MAX)
                    .min(b.unwrap_or(u64::MAX))
                    .max(now + 1)
            }
        }
    }
    assert_eq!(t.stats().internal_misses, 0);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// One-child nodes hold their child in a slot; the departures (time,
    /// flow, length) are those of the same tree with every node's full
    /// queue, for STFQ and strict-priority chains with rate limits.
    #[test]
    fn one_child_slots_serve_as_full_queues(
        depth in 1usize..40,
        side in 1usize..8,
        rates in prop::collection::vec(prop::option::weighted(0.2, 200_000u64..2_000_000), 40),
        prio in any::<bool>(),
        arrivals in prop::collection::vec((0u64..3_000_000, 0u32..64, 64u32..1500), 1..200),
    ) {
        let spec = caterpillar(depth, side, &rates, prio);
        let n = spec.flows.len() as u32;
        let mut ev: Vec<(u64, u32, u32)> = arrivals.iter().map(|&(t, f, l)| (t, f % n, l)).collect();
        ev.sort();
        let slots = PolicyTree::build(&spec).unwrap();
        let full = PolicyTree::build_full_queues(&spec).unwrap();
        let (a, b) = (departures(slots, &ev, 5_000_000), departures(full, &ev, 5_000_000));
        prop_assert_eq!(a.len(), ev.len());
        prop_assert_eq!(a, b);
    }

    /// Jumbo frames on the default fair-queueing queue (2 × 4096 buckets
    /// of 2^15): STFQ keeps the Goyal–Vin–Cheng bound `L/w_i + L/w_j` with
    /// `L` = 9000, plus one bucket of normalised service on each side
    /// (the queue's rank unit is 2^3 tag units for 9000-byte packets:
    /// buckets 4 bytes wide at weight 1).
    #[test]
    fn stfq_with_jumbo_frames_within_fairness_bound(
        weights in prop::collection::vec(1u32..20, 2..6),
        lens in prop::collection::vec(64u32..=9000, 30),
    ) {
        let mut spec = policies::stfq(&weights, 1 << 14);
        spec.max_packet_len = 9000;
        let mut t: PolicyTree<u32> = PolicyTree::build(&spec).unwrap();
        let n = weights.len();
        for k in 0..lens.len() {
            for f in 0..n {
                t.enqueue(0, f as u32, lens[(k + f) % lens.len()], 0).unwrap();
            }
        }
        let bucket = (1u64 << 15 << stfq_rank_shift(9000)) as f64 / STFQ_SCALE as f64;
        let mut served = vec![0f64; n];
        let mut left = vec![lens.len(); n];
        let mut now = 0;
        while let Some(s) = t.dequeue(now) {
            now += tx_ns(s.packet, 1 << 30);
            let f = s.flow as usize;
            served[f] += f64::from(s.packet);
            left[f] -= 1;
            for i in 0..n {
                for j in 0..n {
                    if i != j && left[i] > 0 && left[j] > 0 {
                        let d = served[i] / f64::from(weights[i]) - served[j] / f64::from(weights[j]);
                        let bound = 9000.0 / f64::from(weights[i]) + 9000.0 / f64::from(weights[j]) + 2.0 * bucket;
                        prop_assert!(d.abs() <= bound + 1e-6, "flows {} {}: {} > {}", i, j, d, bound);
                    }
                }
            }
        }
        prop_assert!(left.iter().all(|&l| l == 0));
        prop_assert_eq!(t.stats().internal_misses, 0);
    }
}

#[test]
fn stfq_rank_shift_scales_with_the_largest_packet() {
    assert_eq!(stfq_rank_shift(64), 0);
    assert_eq!(stfq_rank_shift(1500), 0);
    assert_eq!(stfq_rank_shift(1501), 1);
    assert_eq!(stfq_rank_shift(9000), 3);
    assert_eq!(stfq_rank_shift(65536), 6);
    // The default queue holds the largest step at weight 1 for every
    // packet length the tree accepts.
    for len in [1500, 9000, 65536] {
        let mut spec = policies::stfq(&[1, 65536], 64);
        spec.max_packet_len = len;
        assert!(PolicyTree::<u32>::build(&spec).is_ok(), "{len}");
    }
}

/// hClock with 9000-byte packets: reservation honoured, limit never
/// exceeded, the rest shared by weight.
#[test]
fn hclock_with_jumbo_frames() {
    let link = 10_000_000;
    let mut spec = policies::hclock(
        &[(4_000_000, 0, 1), (0, 2_000_000, 4), (0, 0, 1), (0, 0, 3)],
        1 << 16,
    );
    spec.max_packet_len = 9000;
    let mut t: PolicyTree<u32> = PolicyTree::build(&spec).unwrap();
    for _ in 0..3000 {
        for f in 0..4 {
            t.enqueue(0, f, 9000, 0).unwrap();
        }
    }
    let secs = 2;
    let mut bytes = [0u64; 4];
    let mut limited = Vec::new();
    let mut now = 0;
    while now <= secs * 1_000_000_000 {
        if let Some(s) = t.dequeue(now) {
            bytes[s.flow as usize] += u64::from(s.packet);
            if s.flow == 1 {
                limited.push((now, s.packet));
            }
            now += tx_ns(s.packet, link);
        } else if let Some(n) = t.next_eligible(now) {
            now = n;
        } else {
            break;
        }
    }
    let rate = |f: usize| bytes[f] as f64 / secs as f64;
    assert!(
        rate(0) >= 4_000_000.0 * 0.98,
        "reservation: {} {} {} {}",
        rate(0),
        rate(1),
        rate(2),
        rate(3)
    );
    for j in 1..limited.len() {
        for i in 0..j {
            let between: u64 = limited[i + 1..j].iter().map(|d| u64::from(d.1)).sum();
            let window = u128::from(limited[j].0 - limited[i].0);
            assert!(u128::from(between) * 1_000_000_000 <= 2_000_000 * window);
        }
    }
    let r = rate(3) / rate(2);
    assert!((r - 3.0).abs() < 0.15, "share ratio {r}");
    assert_eq!(t.stats().internal_misses, 0);
}

/// A chain of `MAX_DEPTH` nodes builds; one more node is refused, naming
/// the node past the limit; a long chain is checked in time linear in
/// its length (a cycle is still found).
#[test]
fn depth_is_limited_to_max_depth() {
    let chain = |depth: usize| caterpillar(depth, usize::MAX, &[], false);
    let mut t: PolicyTree<u32> = PolicyTree::build(&chain(MAX_DEPTH as usize)).unwrap();
    t.enqueue(0, 0, 1500, 0).unwrap();
    assert_eq!(t.dequeue(0).map(|s| s.flow), Some(0));
    let err = PolicyTree::<u32>::build(&chain(MAX_DEPTH as usize + 1)).err();
    assert!(
        matches!(err, Some(BuildError::BadChild { node, .. }) if node == MAX_DEPTH),
        "{err:?}"
    );
    let msg = alloc::string::ToString::to_string(&err.unwrap());
    assert!(msg.contains("deeper than 1024 levels"), "{msg}");
    // The same chain with its root's parent pointing at the bottom.
    let mut s = chain(500);
    s.nodes[0].parent = Some(499);
    s.nodes.push(NodeSpec {
        parent: None,
        ..s.nodes[1].clone()
    });
    assert!(matches!(
        PolicyTree::<u32>::build(&s),
        Err(BuildError::Cycle { .. })
    ));
}

/// Sizes are refused against their stated limits before anything is
/// allocated (one past each limit returns at once); at the bucket limit
/// the tree builds.
#[test]
fn sizes_past_their_limits_are_refused_before_allocating() {
    let mut s = policies::stfq(&[1, 1], 64);
    s.max_packets = MAX_PACKETS + 1;
    let e = PolicyTree::<u32>::build(&s).err().unwrap();
    assert!(
        alloc::string::ToString::to_string(&e).contains("max_packets must be 1..=2^26"),
        "{e}"
    );
    // Buckets: the shaper's 20 000 plus nodes of 2^26 each; the second
    // node passes 2^27 and is named.
    let mut s = caterpillar(3, 1, &[], false);
    for nd in &mut s.nodes {
        nd.queue.buckets = 1 << 26;
    }
    let e = PolicyTree::<u32>::build(&s).err();
    assert!(
        matches!(e, Some(BuildError::BadChild { node: 1, .. })),
        "{e:?}"
    );
    s.shaper.buckets = (MAX_QUEUE_BUCKETS + 2) as u32;
    assert!(matches!(
        PolicyTree::<u32>::build(&s),
        Err(BuildError::InvalidParameter(_))
    ));
}
