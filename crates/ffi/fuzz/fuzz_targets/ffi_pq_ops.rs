//! Fuzzes every cFFS entry point of the C ABI: statuses are known codes,
//! `FAIRWAY_CLAMPED` exactly when the clamp counters grow, extracts return
//! queued elements with their inserted ranks, in rank order while nothing
//! was clamped, and every element comes back exactly once.
#![no_main]

use fairway_ffi::*;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use std::ptr::null_mut;

#[derive(Arbitrary, Debug)]
enum Op {
    Insert { e: u8, rank: u16 },
    Extract,
    Peek,
    Remove { e: u8 },
    Soonest,
}

fuzz_target!(|input: (u8, u8, Vec<Op>)| {
    let (half, cap, ops) = input;
    let (half, cap) = (u32::from(half % 64) + 1, u32::from(cap % 64) + 1);
    let mut q = null_mut();
    assert_eq!(
        unsafe { fairway_pq_create(half, cap, &mut q, null_mut(), 0) },
        FairwayStatus::FairwayOk
    );
    let mut model: BTreeMap<u32, u64> = BTreeMap::new();
    let clamps = |q| {
        let mut s = FairwayPqStats::default();
        assert_eq!(
            unsafe { fairway_pq_stats(q, &mut s) },
            FairwayStatus::FairwayOk
        );
        s
    };
    for op in ops.iter().take(500) {
        let before = clamps(q);
        let st = unsafe {
            match *op {
                Op::Insert { e, rank } => {
                    let st = fairway_pq_insert(q, u32::from(e), u64::from(rank));
                    let after = clamps(q);
                    let grew = after.clamped_low + after.clamped_high
                        > before.clamped_low + before.clamped_high;
                    match st {
                        FairwayStatus::FairwayOk | FairwayStatus::FairwayClamped => {
                            assert_eq!(st == FairwayStatus::FairwayClamped, grew);
                            assert!(model.insert(u32::from(e), u64::from(rank)).is_none());
                        }
                        _ => assert!(!grew),
                    }
                    st
                }
                Op::Extract | Op::Peek => {
                    let (mut e, mut r) = (0u32, 0u64);
                    let st = if matches!(op, Op::Extract) {
                        fairway_pq_extract_min(q, &mut e, &mut r)
                    } else {
                        fairway_pq_peek_min(q, &mut e, &mut r)
                    };
                    if st == FairwayStatus::FairwayOk {
                        assert_eq!(model.get(&e), Some(&r));
                        if before.clamped_low + before.clamped_high == 0 {
                            assert_eq!(Some(r), model.values().min().copied());
                        }
                        if matches!(op, Op::Extract) {
                            model.remove(&e);
                        }
                    } else {
                        assert!(model.is_empty());
                    }
                    st
                }
                Op::Remove { e } => {
                    let st = fairway_pq_remove(q, u32::from(e));
                    assert_eq!(
                        st == FairwayStatus::FairwayOk,
                        model.remove(&u32::from(e)).is_some()
                    );
                    st
                }
                Op::Soonest => {
                    let mut r = 0u64;
                    fairway_pq_soonest_rank(q, &mut r)
                }
            }
        };
        assert!(FairwayStatus::from_code(st as i32).is_some());
        assert_ne!(st, FairwayStatus::FairwayErrPanic);
        assert_eq!(clamps(q).len, model.len() as u64);
    }
    let (mut e, mut r) = (0u32, 0u64);
    while unsafe { fairway_pq_extract_min(q, &mut e, &mut r) } == FairwayStatus::FairwayOk {
        assert_eq!(model.remove(&e), Some(r));
    }
    assert!(model.is_empty());
    assert_eq!(unsafe { fairway_pq_destroy(q) }, FairwayStatus::FairwayOk);
});
