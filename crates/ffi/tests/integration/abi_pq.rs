//! The cFFS priority-queue ABI called as C calls it, checked against a
//! model: a list of (element, rank, insertion order). While no rank has
//! been clamped, every extract must return the smallest rank, oldest first
//! among equal ranks; always, each element comes back exactly once with the
//! rank it was inserted with, and `FAIRWAY_CLAMPED` is returned exactly when
//! the clamp counters grow.
//!
//! Case counts follow `PROPTEST_CASES` when set, else a CI-sized default.

use fairway_ffi::*;
use proptest::prelude::*;
use std::ffi::CStr;
use std::ptr::null_mut;

fn cases(default: u32) -> u32 {
    if cfg!(miri) {
        return 2;
    }
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn create(n: u32, cap: u32) -> Result<*mut FairwayPq, (FairwayStatus, String)> {
    let mut q = null_mut();
    let mut buf = [0 as std::ffi::c_char; 200];
    let st = unsafe { fairway_pq_create(n, cap, &mut q, buf.as_mut_ptr(), buf.len()) };
    if st == FairwayStatus::FairwayOk {
        Ok(q)
    } else {
        let msg = unsafe { CStr::from_ptr(buf.as_ptr()) };
        Err((st, msg.to_str().unwrap().to_string()))
    }
}

fn stats(q: *mut FairwayPq) -> FairwayPqStats {
    let mut s = FairwayPqStats::default();
    assert_eq!(
        unsafe { fairway_pq_stats(q, &mut s) },
        FairwayStatus::FairwayOk
    );
    s
}

fn last_error(q: *mut FairwayPq) -> String {
    unsafe { CStr::from_ptr(fairway_pq_last_error(q)) }
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn sizes_are_checked_and_the_window_clamp_is_reported() {
    let (st, msg) = create(0, 8).unwrap_err();
    assert_eq!(st, FairwayStatus::FairwayErrOutOfRange);
    assert!(
        msg.contains("buckets_per_half 0 out of range 1..=1048576"),
        "{msg}"
    );
    let (st, msg) = create(8, FAIRWAY_PQ_MAX_CAPACITY + 1).unwrap_err();
    assert_eq!(st, FairwayStatus::FairwayErrOutOfRange);
    assert!(
        msg.contains("capacity 16777217 out of range 1..=16777216"),
        "{msg}"
    );

    let q = create(4, 8).unwrap();
    unsafe {
        assert_eq!(fairway_pq_insert(q, 0, 5), FairwayStatus::FairwayOk);
        assert_eq!(
            fairway_pq_insert(q, 0, 6),
            FairwayStatus::FairwayErrAlreadyExists
        );
        assert!(last_error(q).contains("already queued"));
        assert_eq!(
            fairway_pq_insert(q, 8, 6),
            FairwayStatus::FairwayErrOutOfRange
        );
        assert!(last_error(q).contains("handle 8 is out of range (capacity 8)"));
        // The window is [4, 12) after re-basing on the first rank; 100 lies
        // past it and is served at its edge, and the caller is told so.
        assert_eq!(fairway_pq_insert(q, 1, 100), FairwayStatus::FairwayClamped);
        let s = stats(q);
        assert_eq!((s.len, s.clamped_low, s.clamped_high), (2, 0, 1));
        let (mut e, mut r) = (0u32, 0u64);
        assert_eq!(
            fairway_pq_extract_min(q, &mut e, &mut r),
            FairwayStatus::FairwayOk
        );
        assert_eq!((e, r), (0, 5));
        assert_eq!(fairway_pq_remove(q, 0), FairwayStatus::FairwayErrNotQueued);
        assert_eq!(fairway_pq_remove(q, 9), FairwayStatus::FairwayErrOutOfRange);
        assert_eq!(fairway_pq_remove(q, 1), FairwayStatus::FairwayOk);
        assert_eq!(
            fairway_pq_extract_min(q, &mut e, &mut r),
            FairwayStatus::FairwayEmpty
        );
        assert_eq!(
            fairway_pq_soonest_rank(q, &mut r),
            FairwayStatus::FairwayEmpty
        );
        assert_eq!(
            fairway_pq_extract_min(q, null_mut(), &mut r),
            FairwayStatus::FairwayErrNullPointer
        );
        assert_eq!(fairway_pq_destroy(q), FairwayStatus::FairwayOk);
        // Destroyed, null, and a scheduler handle passed as a queue.
        let bad = FairwayStatus::FairwayErrInvalidHandle;
        for h in [q, null_mut()] {
            assert_eq!(fairway_pq_insert(h, 0, 1), bad);
            assert_eq!(fairway_pq_extract_min(h, &mut e, &mut r), bad);
            assert_eq!(fairway_pq_peek_min(h, &mut e, &mut r), bad);
            assert_eq!(fairway_pq_remove(h, 0), bad);
            assert_eq!(fairway_pq_soonest_rank(h, &mut r), bad);
            assert_eq!(fairway_pq_stats(h, &mut FairwayPqStats::default()), bad);
            assert_eq!(fairway_pq_destroy(h), bad);
            assert!(last_error(h).starts_with("invalid handle"));
        }
        let mut s = null_mut();
        assert_eq!(
            fairway_sched_create(c"fifo".as_ptr(), 2, 2, &mut s, null_mut(), 0),
            FairwayStatus::FairwayOk
        );
        assert_eq!(fairway_pq_insert(s.cast(), 0, 1), bad);
        assert_eq!(fairway_sched_destroy(s), FairwayStatus::FairwayOk);
    }
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u32, u64),
    Extract,
    Peek,
    Remove(u32),
}

const N: u32 = 8;
const CAP: u32 = 24;

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..CAP + 2, 0u64..40).prop_map(|(e, r)| Op::Insert(e, r)),
        // Slowly rising ranks, as timestamps do, to exercise rotation.
        2 => (0..CAP, 0u64..400).prop_map(|(e, r)| Op::Insert(e, r)),
        4 => Just(Op::Extract),
        1 => Just(Op::Peek),
        1 => (0..CAP + 2).prop_map(Op::Remove),
    ]
}

/// Runs `ops` and checks them against the model; `lifo` breaks the model
/// on purpose (newest first among equal ranks).
fn run(ops: &[Op], lifo: bool) -> Result<(), String> {
    let q = create(N, CAP).map_err(|e| format!("{e:?}"))?;
    // (element, rank, insertion sequence)
    let mut model: Vec<(u32, u64, u64)> = Vec::new();
    let mut seq = 0u64;
    let result = (|| {
        for (i, op) in ops.iter().enumerate() {
            let ctx = |what: String| format!("step {i} {op:?}: {what}");
            let before = stats(q);
            match *op {
                Op::Insert(e, r) => {
                    let st = unsafe { fairway_pq_insert(q, e, r) };
                    let after = stats(q);
                    let clamps = |s: &FairwayPqStats| s.clamped_low + s.clamped_high;
                    if e >= CAP {
                        if st != FairwayStatus::FairwayErrOutOfRange {
                            return Err(ctx(format!("got {st:?}")));
                        }
                    } else if model.iter().any(|m| m.0 == e) {
                        if st != FairwayStatus::FairwayErrAlreadyExists {
                            return Err(ctx(format!("got {st:?}")));
                        }
                    } else {
                        let want = if clamps(&after) > clamps(&before) {
                            FairwayStatus::FairwayClamped
                        } else {
                            FairwayStatus::FairwayOk
                        };
                        if st != want {
                            return Err(ctx(format!("got {st:?}, want {want:?}")));
                        }
                        model.push((e, r, seq));
                        seq += 1;
                    }
                }
                Op::Extract | Op::Peek => {
                    let (mut pe, mut pr) = (u32::MAX, 0u64);
                    let pst = unsafe { fairway_pq_peek_min(q, &mut pe, &mut pr) };
                    let (mut e, mut r) = (pe, pr);
                    let st = if matches!(op, Op::Extract) {
                        unsafe { fairway_pq_extract_min(q, &mut e, &mut r) }
                    } else {
                        pst
                    };
                    if model.is_empty() {
                        if st != FairwayStatus::FairwayEmpty {
                            return Err(ctx(format!("got {st:?} from an empty queue")));
                        }
                        continue;
                    }
                    if st != FairwayStatus::FairwayOk || (e, r) != (pe, pr) {
                        return Err(ctx(format!("got {st:?} ({e}, {r}), peek ({pe}, {pr})")));
                    }
                    let Some(pos) = model.iter().position(|m| m.0 == e && m.1 == r) else {
                        return Err(ctx(format!("({e}, {r}) was not queued")));
                    };
                    if before.clamped_low + before.clamped_high == 0 {
                        let min = model.iter().map(|m| m.1).min().unwrap();
                        let tie = model.iter().filter(|m| m.1 == min);
                        let oldest = if lifo {
                            tie.max_by_key(|m| m.2)
                        } else {
                            tie.min_by_key(|m| m.2)
                        };
                        if oldest.map(|m| (m.0, m.1)) != Some((e, r)) {
                            return Err(ctx(format!("got ({e}, {r}), want {oldest:?}")));
                        }
                        let mut soon = 0u64;
                        let sst = unsafe { fairway_pq_soonest_rank(q, &mut soon) };
                        if matches!(op, Op::Peek) && (sst != FairwayStatus::FairwayOk || soon != r)
                        {
                            return Err(ctx(format!("soonest rank {soon} ({sst:?})")));
                        }
                    }
                    if matches!(op, Op::Extract) {
                        model.remove(pos);
                    }
                }
                Op::Remove(e) => {
                    let st = unsafe { fairway_pq_remove(q, e) };
                    let want = if e >= CAP {
                        FairwayStatus::FairwayErrOutOfRange
                    } else if let Some(pos) = model.iter().position(|m| m.0 == e) {
                        model.remove(pos);
                        FairwayStatus::FairwayOk
                    } else {
                        FairwayStatus::FairwayErrNotQueued
                    };
                    if st != want {
                        return Err(ctx(format!("got {st:?}, want {want:?}")));
                    }
                }
            }
            if stats(q).len != model.len() as u64 {
                return Err(ctx(format!(
                    "len {} != model {}",
                    stats(q).len,
                    model.len()
                )));
            }
        }
        // Drain: every element comes back exactly once.
        let (mut e, mut r) = (0u32, 0u64);
        while unsafe { fairway_pq_extract_min(q, &mut e, &mut r) } == FairwayStatus::FairwayOk {
            let Some(pos) = model.iter().position(|m| m.0 == e && m.1 == r) else {
                return Err(format!("drain: ({e}, {r}) not queued"));
            };
            model.remove(pos);
        }
        if !model.is_empty() {
            return Err(format!("lost {model:?}"));
        }
        Ok(())
    })();
    assert_eq!(unsafe { fairway_pq_destroy(q) }, FairwayStatus::FairwayOk);
    result
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn random_calls_match_the_model(ops in prop::collection::vec(op(), 0..150)) {
        if let Err(e) = run(&ops, false) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// The order check can fail: a model expecting the newest of two equal
/// ranks first reports the queue's (correct) FIFO order as a mismatch.
#[test]
fn the_order_check_detects_a_wrong_tie_order() {
    let ops = [Op::Insert(0, 3), Op::Insert(1, 3), Op::Extract];
    assert_eq!(run(&ops, false), Ok(()));
    assert!(run(&ops, true).unwrap_err().contains("want"));
}
