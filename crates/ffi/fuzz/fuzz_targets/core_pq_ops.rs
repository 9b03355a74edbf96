//! Fuzzes every integer priority queue of `fairway_core::pq` through the
//! `IntegerPriorityQueue` trait: no panic on any handle or rank, typed
//! errors only, `len` tracks the elements, each element extracted or
//! removed exactly once with its inserted rank, and the exact fixed-range
//! queues return ranks in non-decreasing order when nothing is inserted
//! in between.
#![no_main]

use fairway_core::pq::*;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

#[derive(Arbitrary, Debug)]
enum Op {
    Insert { h: u8, rank: u16 },
    Extract,
    Remove { h: u8 },
}

fn queue(kind: u8, base: u64, buckets: u32, cap: u32) -> Option<Box<dyn IntegerPriorityQueue>> {
    Some(match kind % 8 {
        // Constructors get arbitrary sizes (1024 is FfsQueue's maximum, so
        // larger values exercise its typed error).
        0 => Box::new(FfsQueue::new(base, buckets % 1100, cap).ok()?),
        1 => Box::new(HierarchicalFfsQueue::new(base, buckets, cap).ok()?),
        2 => Box::new(CircularFfsQueue::new(buckets, cap).ok()?),
        3 => Box::new(GradientQueue::new(base, buckets, cap).ok()?),
        4 => Box::new(ApproxGradientQueue::new(base, buckets, 16, cap).ok()?),
        5 => Box::new(BucketHeap::new(base, buckets, cap).ok()?),
        6 => Box::new(ElementBinaryHeap::new(cap)),
        _ => Box::new(TimingWheel::new(buckets, cap).ok()?),
    })
}

fuzz_target!(|input: (u8, u8, u16, u8, Vec<Op>)| {
    let (kind, base, buckets, cap, ops) = input;
    let Some(mut q) = queue(kind, u64::from(base), u32::from(buckets), u32::from(cap)) else {
        return;
    };
    let mut model: BTreeMap<u32, u64> = BTreeMap::new();
    for op in ops.iter().take(500) {
        match *op {
            Op::Insert { h, rank } => match q.insert(u32::from(h), u64::from(rank)) {
                Ok(()) => assert!(model.insert(u32::from(h), u64::from(rank)).is_none()),
                Err(PqError::AlreadyQueued(x)) => assert!(model.contains_key(&x)),
                Err(_) => {}
            },
            Op::Extract => match q.extract_min() {
                Some((h, r)) => assert_eq!(model.remove(&h), Some(r)),
                None => assert!(model.is_empty()),
            },
            Op::Remove { h } => assert_eq!(
                q.remove(u32::from(h)),
                model.remove(&u32::from(h)).is_some()
            ),
        }
        assert_eq!(q.len(), model.len());
    }
    while let Some((h, r)) = q.extract_min() {
        assert_eq!(model.remove(&h), Some(r));
    }
    assert!(model.is_empty());
});
