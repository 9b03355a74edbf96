//! Property tests of the integer priority queues (`fairway_core::pq`) against
//! a `BTreeMap<(rank, seq)>` reference: random insert / extract-min / remove
//! / peek sequences, with the window semantics of cFFS and the timing wheel
//! modelled explicitly (clamped ranks included), and the approximate
//! gradient queue checked for loss, duplication and its error bound.

use fairway_core::pq::{
    bitmap_depth, ApproxGradientQueue, BucketHeap, CircularFfsQueue, ElementBinaryHeap, FfsQueue,
    GradientQueue, HierarchicalBitmap, HierarchicalFfsQueue, IntegerPriorityQueue, PqError,
    TimingWheel,
};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

const CAP: u32 = 64;

#[derive(Clone, Debug)]
enum Op {
    /// Insert the lowest free handle with a rank drawn from `u32` (scaled
    /// by each test into its range).
    Insert(u32),
    Extract,
    /// Remove the k-th handle (mod capacity), queued or not.
    Remove(u32),
    Peek,
}

fn ops(max_len: usize) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            5 => any::<u32>().prop_map(Op::Insert),
            3 => Just(Op::Extract),
            1 => any::<u32>().prop_map(Op::Remove),
            1 => Just(Op::Peek),
        ],
        1..max_len,
    )
}

/// Reference: elements ordered by (effective rank, insertion seq).
#[derive(Default)]
struct Reference {
    order: BTreeMap<(u64, u64), (u32, u64)>,
    key_of: BTreeMap<u32, (u64, u64)>,
    seq: u64,
}

impl Reference {
    fn insert(&mut self, h: u32, effective: u64, rank: u64) {
        let key = (effective, self.seq);
        self.seq += 1;
        self.order.insert(key, (h, rank));
        self.key_of.insert(h, key);
    }
    fn first(&self) -> Option<((u64, u64), (u32, u64))> {
        self.order.iter().next().map(|(k, v)| (*k, *v))
    }
    fn extract(&mut self) -> Option<((u64, u64), (u32, u64))> {
        let (k, v) = self.first()?;
        self.order.remove(&k);
        self.key_of.remove(&v.0);
        Some((k, v))
    }
    fn remove(&mut self, h: u32) -> bool {
        match self.key_of.remove(&h) {
            Some(k) => {
                self.order.remove(&k);
                true
            }
            None => false,
        }
    }
    fn free_handle(&self) -> Option<u32> {
        (0..CAP).find(|h| !self.key_of.contains_key(h))
    }
}

/// Runs `ops` on a fixed-range exact queue over ranks `0..buckets`.
fn check_fixed_range<Q: IntegerPriorityQueue>(
    mut q: Q,
    buckets: u32,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let mut r = Reference::default();
    for op in ops {
        match *op {
            Op::Insert(x) => {
                let Some(h) = r.free_handle() else { continue };
                let rank = u64::from(x % buckets);
                q.insert(h, rank)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                r.insert(h, rank, rank);
                prop_assert_eq!(q.insert(h, rank), Err(PqError::AlreadyQueued(h)));
            }
            Op::Extract => {
                prop_assert_eq!(q.extract_min(), r.extract().map(|(_, v)| v));
            }
            Op::Remove(k) => {
                let h = k % CAP;
                prop_assert_eq!(q.remove(h), r.remove(h));
                prop_assert!(!q.contains(h));
            }
            Op::Peek => {
                prop_assert_eq!(q.peek_min(), r.first().map(|(_, v)| v));
                prop_assert_eq!(q.soonest_rank(), r.first().map(|(k, _)| k.0));
            }
        }
        prop_assert_eq!(q.len(), r.order.len());
    }
    while let Some((_, v)) = r.extract() {
        prop_assert_eq!(q.extract_min(), Some(v));
    }
    prop_assert_eq!(q.extract_min(), None);
    prop_assert!(q.is_empty());
    Ok(())
}

proptest! {
    // PROPTEST_CASES (the long runs of scripts/long-random.sh) overrides the CI-sized default.
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96), ..ProptestConfig::default() })]

    #[test]
    fn ffs_queue_matches_reference(buckets in 1u32..=1024, ops in ops(300)) {
        check_fixed_range(FfsQueue::new(0, buckets, CAP).unwrap(), buckets, &ops)?;
    }

    #[test]
    fn hierarchical_ffs_matches_reference(buckets in prop_oneof![1u32..200, 4000u32..5000, 262_140u32..262_150], ops in ops(300)) {
        check_fixed_range(HierarchicalFfsQueue::new(0, buckets, CAP).unwrap(), buckets, &ops)?;
    }

    #[test]
    fn gradient_queue_matches_reference(buckets in prop_oneof![1u32..100, 1000u32..1100, 32_760u32..32_780], ops in ops(300)) {
        check_fixed_range(GradientQueue::new(0, buckets, CAP).unwrap(), buckets, &ops)?;
    }

    #[test]
    fn bucket_heap_matches_reference(buckets in 1u32..3000, ops in ops(300)) {
        check_fixed_range(BucketHeap::new(0, buckets, CAP).unwrap(), buckets, &ops)?;
    }

    #[test]
    fn element_binary_heap_matches_reference(buckets in 1u32..3000, ops in ops(300)) {
        check_fixed_range(ElementBinaryHeap::new(CAP), buckets, &ops)?;
    }

    /// cFFS over a moving window, ranks drawn around the window (including
    /// before it and far past it), against a model of the window policy.
    #[test]
    fn circular_ffs_matches_windowed_reference(half in 1u32..300, ops in ops(400)) {
        let n = u64::from(half);
        let mut q = CircularFfsQueue::new(half, CAP).unwrap();
        let mut r = Reference::default();
        let (mut base, mut low, mut high) = (0u64, 0u64, 0u64);
        let primary_busy = |r: &Reference, base: u64| r.order.range((base, 0)..(base + n, 0)).next().is_some();
        for op in &ops {
            match *op {
                Op::Insert(x) => {
                    let Some(h) = r.free_handle() else { continue };
                    // Mostly within [base - n/2, base + 3n), sometimes far.
                    let spread = if x % 16 == 0 { 40 * n } else { 3 * n + n / 2 };
                    let rank = (base + 1_000_000 + u64::from(x >> 4) % spread).saturating_sub(n / 2 + 1_000_000);
                    if r.order.is_empty() && !(base..base + 2 * n).contains(&rank) {
                        base = rank - rank % n;
                    } else if rank.saturating_sub(base) >= 2 * n && !primary_busy(&r, base) {
                        base += n;
                    }
                    let eff = if rank < base {
                        low += 1;
                        base
                    } else if rank - base >= 2 * n {
                        high += 1;
                        base + 2 * n - 1
                    } else {
                        rank
                    };
                    q.insert(h, rank).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    r.insert(h, eff, rank);
                }
                Op::Extract => {
                    if !r.order.is_empty() && !primary_busy(&r, base) {
                        base += n;
                    }
                    prop_assert_eq!(q.extract_min(), r.extract().map(|(_, v)| v));
                }
                Op::Remove(k) => {
                    let h = k % CAP;
                    prop_assert_eq!(q.remove(h), r.remove(h));
                }
                Op::Peek => {
                    prop_assert_eq!(q.peek_min(), r.first().map(|(_, v)| v));
                    prop_assert_eq!(q.soonest_rank(), r.first().map(|(k, _)| k.0));
                }
            }
            prop_assert_eq!(q.len(), r.order.len());
            if !r.order.is_empty() {
                prop_assert_eq!(q.window_start(), base);
            }
        }
        prop_assert_eq!((q.clamped_low(), q.clamped_high()), (low, high));
        while let Some((_, v)) = r.extract() {
            prop_assert_eq!(q.extract_min(), Some(v));
        }
        prop_assert_eq!(q.extract_min(), None);
    }

    /// Timing wheel: exact by (clamped slot time, FIFO); the cursor moves to
    /// each extracted element's slot time.
    #[test]
    fn timing_wheel_matches_windowed_reference(slots in 1u32..300, ops in ops(400)) {
        let n = u64::from(slots);
        let mut q = TimingWheel::new(slots, CAP).unwrap();
        let mut r = Reference::default();
        let mut now = 0u64;
        let (mut past, mut horizon) = (0u64, 0u64);
        for op in &ops {
            match *op {
                Op::Insert(x) => {
                    let Some(h) = r.free_handle() else { continue };
                    let rank = (now + u64::from(x) % (2 * n + 2)).saturating_sub(n / 4);
                    let eff = if rank < now {
                        past += 1;
                        now
                    } else if rank - now >= n {
                        horizon += 1;
                        now + n - 1
                    } else {
                        rank
                    };
                    q.insert(h, rank).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    r.insert(h, eff, rank);
                }
                Op::Extract => {
                    let expected = r.extract();
                    if let Some((k, _)) = expected {
                        now = k.0;
                    }
                    prop_assert_eq!(q.extract_min(), expected.map(|(_, v)| v));
                }
                Op::Remove(k) => {
                    let h = k % CAP;
                    prop_assert_eq!(q.remove(h), r.remove(h));
                }
                Op::Peek => {
                    prop_assert_eq!(q.peek_min(), r.first().map(|(_, v)| v));
                    prop_assert_eq!(q.soonest_rank(), r.first().map(|(k, _)| k.0));
                }
            }
            prop_assert_eq!(q.len(), r.order.len());
        }
        prop_assert_eq!((q.clamped_past(), q.clamped_horizon()), (past, horizon));
    }

    /// Approximate gradient queue: nothing lost or duplicated, FIFO within a
    /// bucket, never below the true minimum, and the search never starts
    /// more than `max_search_offset` past it.
    #[test]
    fn approx_gradient_keeps_elements_and_error_bound(buckets in 1u32..1500, alpha in 1u32..20, ops in ops(400)) {
        let mut q = ApproxGradientQueue::new(0, buckets, alpha, CAP).unwrap();
        let bound = u64::from(q.max_search_offset());
        let mut r = Reference::default();
        let check_extract = |got: Option<(u32, u64)>, r: &mut Reference| -> Result<(), TestCaseError> {
            let Some((h, rank)) = got else {
                prop_assert!(r.order.is_empty());
                return Ok(());
            };
            let key = r.key_of.get(&h).copied();
            prop_assert!(key.is_some(), "extracted handle {} is not queued", h);
            let key = key.unwrap();
            prop_assert_eq!(key.0, rank);
            let ((min_rank, _), _) = r.first().unwrap();
            prop_assert!(rank >= min_rank);
            // FIFO: h is the oldest element of its bucket.
            let oldest = r.order.range((rank, 0)..(rank + 1, 0)).next().map(|(_, v)| v.0);
            prop_assert_eq!(oldest, Some(h));
            // Bound: rank ≤ first occupied bucket at or after min + bound.
            let occupied: BTreeSet<u64> = r.order.keys().map(|k| k.0).collect();
            if let Some(&limit) = occupied.range(min_rank + bound..).next() {
                prop_assert!(rank <= limit, "rank {} past bound {} (min {})", rank, limit, min_rank);
            }
            r.remove(h);
            Ok(())
        };
        for op in &ops {
            match *op {
                Op::Insert(x) => {
                    let Some(h) = r.free_handle() else { continue };
                    let rank = u64::from(x % buckets);
                    q.insert(h, rank).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    r.insert(h, rank, rank);
                }
                Op::Extract => check_extract(q.extract_min(), &mut r)?,
                Op::Remove(k) => {
                    let h = k % CAP;
                    prop_assert_eq!(q.remove(h), r.remove(h));
                }
                Op::Peek => {
                    // The estimate is a function of the queue's state, so
                    // the next extraction serves what the peek showed.
                    let peeked = q.peek_min();
                    prop_assert_eq!(peeked.map(|p| p.1), q.soonest_rank());
                    if peeked.is_some() {
                        let got = q.extract_min();
                        prop_assert_eq!(got, peeked);
                        check_extract(got, &mut r)?;
                    }
                }
            }
            prop_assert_eq!(q.len(), r.order.len());
        }
        while !r.order.is_empty() {
            check_extract(q.extract_min(), &mut r)?;
        }
        prop_assert_eq!(q.extract_min(), None);
    }
}

#[test]
fn approx_gradient_is_exact_when_every_bucket_is_occupied() {
    for &(buckets, alpha) in &[(5000u32, 16u32), (10_000, 16), (10_000, 4), (777, 1)] {
        let mut q = ApproxGradientQueue::new(0, buckets, alpha, buckets).unwrap();
        // Insert in a scrambled order: the stride is coprime with every N
        // used here, so k * stride mod N is a permutation.
        let stride = u64::from((7919 % buckets) | 1);
        for k in 0..buckets {
            let rank = (u64::from(k) * stride) % u64::from(buckets);
            q.insert(k, rank).unwrap();
        }
        for expected in 0..u64::from(buckets) {
            let (_, rank) = q.extract_min().unwrap();
            assert_eq!(rank, expected, "N={buckets} α={alpha}");
        }
        assert!(q.is_empty());
    }
}

#[test]
fn hierarchical_depth_is_ceil_log64_around_every_power() {
    assert_eq!(bitmap_depth(1), 1);
    for k in 1..=5u32 {
        let p = 64u64.pow(k) as u32;
        assert_eq!(bitmap_depth(p - 1), k.max(1), "64^{k} - 1");
        assert_eq!(bitmap_depth(p), k, "64^{k}");
        assert_eq!(bitmap_depth(p + 1), k + 1, "64^{k} + 1");
    }
    assert_eq!(bitmap_depth(u32::MAX), 6);
    // Real bitmaps around 64, 4096 and 262144: the last bit is reachable.
    for k in 1..=3u32 {
        let p = 64u32.pow(k);
        for n in [p - 1, p, p + 1] {
            let mut b = HierarchicalBitmap::new(n);
            assert_eq!(b.depth(), bitmap_depth(n));
            for i in [n - 1, n / 2, 0] {
                b.set(i);
                assert_eq!(b.first(), Some(i));
            }
            b.clear(0);
            b.clear(n / 2);
            assert_eq!(b.first(), Some(n - 1), "n={n}");
            b.clear(n - 1);
            assert!(b.is_empty());
            let q = HierarchicalFfsQueue::new(0, n, 1).unwrap();
            assert_eq!(q.depth(), bitmap_depth(n));
        }
    }
    // Gradient tree: ⌈log_32 N⌉.
    for (n, depth) in [
        (1u32, 1u32),
        (32, 1),
        (33, 2),
        (1024, 2),
        (1025, 3),
        (32768, 3),
        (32769, 4),
    ] {
        assert_eq!(GradientQueue::new(0, n, 1).unwrap().depth(), depth, "n={n}");
    }
}

#[test]
fn typed_errors_for_bad_input() {
    let mut q = HierarchicalFfsQueue::new(100, 10, 4).unwrap();
    assert_eq!(
        q.insert(4, 100),
        Err(PqError::HandleOutOfRange {
            handle: 4,
            capacity: 4
        })
    );
    assert_eq!(
        q.insert(0, 99),
        Err(PqError::RankOutOfRange {
            rank: 99,
            min: 100,
            max: 109
        })
    );
    assert_eq!(
        q.insert(0, 110),
        Err(PqError::RankOutOfRange {
            rank: 110,
            min: 100,
            max: 109
        })
    );
    assert!(q.insert(0, 109).is_ok());
    assert_eq!(q.insert(0, 105), Err(PqError::AlreadyQueued(0)));
    assert!(!q.remove(1));
    assert!(!q.remove(u32::MAX));
    assert!(FfsQueue::new(0, 1025, 1).is_err());
    assert!(HierarchicalFfsQueue::new(u64::MAX, 2, 1).is_err());
    assert!(CircularFfsQueue::new(0, 1).is_err());
    assert!(ApproxGradientQueue::new(0, 10, 0, 1).is_err());
    assert!(TimingWheel::new(0, 1).is_err());
    let mut c = CircularFfsQueue::new(8, 2).unwrap();
    assert!(c.insert(0, u64::MAX).is_ok());
    assert!(c.insert(1, 0).is_ok()); // clamped to the window's first bucket
    assert_eq!(c.clamped_low(), 1);
    assert_eq!(c.extract_min(), Some((1, 0)));
    assert_eq!(c.extract_min(), Some((0, u64::MAX)));
}

#[test]
fn timing_wheel_pop_due_follows_the_clock() {
    let mut w = TimingWheel::new(16, 8).unwrap();
    w.insert(0, 5).unwrap();
    w.insert(1, 3).unwrap();
    w.insert(2, 5).unwrap();
    assert_eq!(w.pop_due(2), None);
    assert_eq!(w.pop_due(4), Some((1, 3)));
    assert_eq!(w.pop_due(4), None);
    assert_eq!(w.pop_due(9), Some((0, 5)));
    assert_eq!(w.pop_due(9), Some((2, 5)));
    assert_eq!(w.pop_due(100), None);
    assert_eq!(w.now(), 100);
    w.insert(3, 90).unwrap();
    assert_eq!(w.clamped_past(), 1);
    assert_eq!(w.extract_min(), Some((3, 90)));
}

proptest! {
    // PROPTEST_CASES (the long runs of scripts/long-random.sh) overrides the CI-sized default.
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64), ..ProptestConfig::default() })]

    /// Heavy churn on one to three buckets: long FIFOs spanning many chunks,
    /// tombstones from removals and in-place compaction.
    #[test]
    fn few_buckets_churn_matches_reference(buckets in 1u32..4, ops in ops(800)) {
        check_fixed_range(HierarchicalFfsQueue::new(0, buckets, CAP).unwrap(), buckets, &ops)?;
        check_fixed_range(BucketHeap::new(0, buckets, CAP).unwrap(), buckets, &ops)?;
    }

    /// Bursts of up to `CAP` elements into one to three buckets (chains of
    /// several pool chunks), some removed, then drained to empty: every
    /// pool chunk is released between bursts, so the next burst takes
    /// chunks in address order again (the pool's restart).
    #[test]
    fn bursts_drained_to_empty_match_reference(
        buckets in 1u32..4,
        bursts in prop::collection::vec((1u32..=CAP, prop::collection::vec(any::<u32>(), 0..12)), 1..6),
    ) {
        let mut ops = Vec::new();
        for (n, removes) in &bursts {
            ops.extend((0..*n).map(|i| Op::Insert(i.wrapping_mul(0x9E37_79B9))));
            ops.extend(removes.iter().map(|&k| Op::Remove(k)));
            ops.extend((0..*n).map(|_| Op::Extract));
        }
        check_fixed_range(HierarchicalFfsQueue::new(0, buckets, CAP).unwrap(), buckets, &ops)?;
        check_fixed_range(GradientQueue::new(0, buckets, CAP).unwrap(), buckets, &ops)?;
    }
}

/// Deterministic compaction: a long-lived head element, then a tombstone
/// per insert at the tail, so the bucket must compact to stay in its pool.
#[test]
fn tombstones_are_compacted_in_fifo_order() {
    let mut ops = vec![Op::Insert(0); 64];
    ops.extend((1..60).map(Op::Remove));
    for _ in 0..500 {
        ops.push(Op::Insert(0));
        ops.push(Op::Remove(1));
        ops.push(Op::Insert(0));
    }
    ops.extend((0..20).map(|_| Op::Extract));
    check_fixed_range(HierarchicalFfsQueue::new(0, 1, CAP).unwrap(), 1, &ops).unwrap();
    check_fixed_range(CircularFfsQueue::new(1, CAP).unwrap(), 1, &ops).unwrap();
}
