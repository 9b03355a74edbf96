//! The priority-queue half of the C ABI: Eiffel's circular FFS queue (cFFS,
//! the Eiffel paper §3.1.1, Fig. 4; `fairway_core::pq::CircularFfsQueue`) behind an
//! opaque `FairwayPq`, for callers who want only the queue.
//!
//! Elements are caller-chosen `uint32_t` handles `0..capacity` (e.g. packet
//! slots) with `uint64_t` ranks; the minimum rank leaves first, equal ranks
//! in FIFO order. The queue covers a moving window of `2 × buckets_per_half`
//! ranks. A rank outside the window is, as the paper specifies, served at
//! the window's edge: the insert then returns `FAIRWAY_CLAMPED` instead of
//! `FAIRWAY_OK` and is counted in [`FairwayPqStats`], so it is never silent.

use crate::handle::{self, call, check_out, Failure, Handle, Kind};
use crate::status::FairwayStatus;
use fairway_core::pq::{CircularFfsQueue, IntegerPriorityQueue, PqError};
use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Tags of a priority-queue handle: live ("FWYQ") and poisoned
/// ("FWYPQPOI").
const PQ_KIND: Kind = Kind {
    live: handle::live_tag(*b"FWYQ"),
    poisoned: u64::from_be_bytes(*b"FWYPQPOI"),
};

/// Largest `buckets_per_half` [`fairway_pq_create`] accepts (2^20).
pub const FAIRWAY_PQ_MAX_BUCKETS_PER_HALF: u32 = 1 << 20;

/// Largest `capacity` (number of handles) [`fairway_pq_create`] accepts
/// (2^24).
pub const FAIRWAY_PQ_MAX_CAPACITY: u32 = 1 << 24;

/// A cFFS queue created by [`fairway_pq_create`]. Opaque.
pub struct FairwayPq {
    _opaque: [u8; 0],
}

/// The state of a cFFS queue.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FairwayPqStats {
    /// Elements queued now.
    pub len: u64,
    /// Handles are `0..capacity`.
    pub capacity: u32,
    /// `N`: the window spans `2N` ranks.
    pub buckets_per_half: u32,
    /// First rank of the window.
    pub window_start: u64,
    /// Inserts whose rank was below the window (served as its first rank).
    pub clamped_low: u64,
    /// Inserts whose rank was past the window (served as its last rank).
    pub clamped_high: u64,
}

#[inline]
fn handle(h: *mut FairwayPq) -> *mut Handle<CircularFfsQueue> {
    h.cast()
}

fn pq_failure(what: &str, e: PqError) -> Failure {
    let status = match e {
        PqError::HandleOutOfRange { .. } | PqError::RankOutOfRange { .. } => {
            FairwayStatus::FairwayErrOutOfRange
        }
        PqError::AlreadyQueued(_) => FairwayStatus::FairwayErrAlreadyExists,
        PqError::InvalidConfig(_) => FairwayStatus::FairwayErrOutOfRange,
    };
    Failure::new(status, format!("{what}: {e}"))
}

/// Creates a cFFS queue over a window of `2 × buckets_per_half` ranks
/// starting at rank 0 (`buckets_per_half` in
/// `1..=FAIRWAY_PQ_MAX_BUCKETS_PER_HALF`), for handles `0..capacity`
/// (`capacity` in `1..=FAIRWAY_PQ_MAX_CAPACITY`), all storage allocated now.
/// On failure writes a message to `err_buf` as `fairway_sched_create`
/// does.
///
/// # Safety
/// `out` must be null or writable; `err_buf` null or writable for
/// `err_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn fairway_pq_create(
    buckets_per_half: u32,
    capacity: u32,
    out: *mut *mut FairwayPq,
    err_buf: *mut c_char,
    err_len: usize,
) -> FairwayStatus {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<_, Failure> {
        check_out(out, "out")?;
        if !(1..=FAIRWAY_PQ_MAX_BUCKETS_PER_HALF).contains(&buckets_per_half) {
            return Err(Failure::new(
                FairwayStatus::FairwayErrOutOfRange,
                format!(
                    "buckets_per_half {buckets_per_half} out of range 1..={FAIRWAY_PQ_MAX_BUCKETS_PER_HALF}"
                ),
            ));
        }
        if !(1..=FAIRWAY_PQ_MAX_CAPACITY).contains(&capacity) {
            return Err(Failure::new(
                FairwayStatus::FairwayErrOutOfRange,
                format!("capacity {capacity} out of range 1..={FAIRWAY_PQ_MAX_CAPACITY}"),
            ));
        }
        let q = CircularFfsQueue::new(buckets_per_half, capacity)
            .map_err(|e| pq_failure("create", e))?;
        Ok(Handle::into_raw(PQ_KIND, q))
    }));
    let failure = match result {
        Ok(Ok(h)) => {
            // SAFETY: `out` was checked non-null and aligned above.
            unsafe { out.write(h.cast()) };
            return FairwayStatus::FairwayOk;
        }
        Ok(Err(failure)) => failure,
        Err(payload) => Failure::new(
            FairwayStatus::FairwayErrPanic,
            format!("internal panic: {}", handle::panic_text(payload.as_ref())),
        ),
    };
    // SAFETY: the caller's contract on err_buf.
    unsafe { handle::write_message(err_buf, err_len, &failure.message) };
    failure.status
}

/// Destroys a queue; later use returns `FAIRWAY_ERR_INVALID_HANDLE`.
///
/// # Safety
/// `h` must be null or a pointer returned by [`fairway_pq_create`]
/// (possibly destroyed already), not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn fairway_pq_destroy(h: *mut FairwayPq) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe { handle::destroy(handle(h), PQ_KIND) }
}

/// The message of the most recent failed call on `h`; see
/// `fairway_sched_last_error`.
///
/// # Safety
/// As for [`fairway_pq_destroy`].
#[no_mangle]
pub unsafe extern "C" fn fairway_pq_last_error(h: *mut FairwayPq) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe { handle::last_error(handle(h), PQ_KIND) }
}

/// Queues `element` (`0..capacity`, not already queued) with `rank`.
/// Returns `FAIRWAY_OK`, or `FAIRWAY_CLAMPED` if the rank lay outside the
/// window and will be served at its edge (see the module doc);
/// `FAIRWAY_ERR_OUT_OF_RANGE` or `FAIRWAY_ERR_ALREADY_EXISTS` otherwise.
///
/// # Safety
/// As for [`fairway_pq_destroy`].
#[no_mangle]
pub unsafe extern "C" fn fairway_pq_insert(
    h: *mut FairwayPq,
    element: u32,
    rank: u64,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), PQ_KIND, |q| {
            let clamped = q.clamped_low() + q.clamped_high();
            q.insert(element, rank)
                .map_err(|e| pq_failure("insert", e))?;
            if q.clamped_low() + q.clamped_high() != clamped {
                Ok(FairwayStatus::FairwayClamped)
            } else {
                Ok(FairwayStatus::FairwayOk)
            }
        })
    }
}

/// Removes the minimum into `*element` and `*rank` (the rank it was
/// inserted with): `FAIRWAY_OK`, or `FAIRWAY_EMPTY` writing nothing.
///
/// # Safety
/// As for [`fairway_pq_destroy`]; `element` and `rank` must be null or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_pq_extract_min(
    h: *mut FairwayPq,
    element: *mut u32,
    rank: *mut u64,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), PQ_KIND, |q| {
            check_out(element, "extract_min: element")?;
            check_out(rank, "extract_min: rank")?;
            match q.extract_min() {
                Some((e, r)) => {
                    // SAFETY: both checked non-null and aligned.
                    element.write(e);
                    rank.write(r);
                    Ok(FairwayStatus::FairwayOk)
                }
                None => Ok(FairwayStatus::FairwayEmpty),
            }
        })
    }
}

/// Writes the element the next extract returns, without removing it:
/// `FAIRWAY_OK`, or `FAIRWAY_EMPTY`.
///
/// # Safety
/// As for [`fairway_pq_extract_min`].
#[no_mangle]
pub unsafe extern "C" fn fairway_pq_peek_min(
    h: *mut FairwayPq,
    element: *mut u32,
    rank: *mut u64,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), PQ_KIND, |q| {
            check_out(element, "peek_min: element")?;
            check_out(rank, "peek_min: rank")?;
            match q.peek_min() {
                Some((e, r)) => {
                    // SAFETY: both checked non-null and aligned.
                    element.write(e);
                    rank.write(r);
                    Ok(FairwayStatus::FairwayOk)
                }
                None => Ok(FairwayStatus::FairwayEmpty),
            }
        })
    }
}

/// Removes a queued element: `FAIRWAY_OK`, `FAIRWAY_ERR_NOT_QUEUED`, or
/// `FAIRWAY_ERR_OUT_OF_RANGE` for an element not below the capacity.
///
/// # Safety
/// As for [`fairway_pq_destroy`].
#[no_mangle]
pub unsafe extern "C" fn fairway_pq_remove(h: *mut FairwayPq, element: u32) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), PQ_KIND, |q| {
            if element >= q.capacity() {
                return Err(pq_failure(
                    "remove",
                    PqError::HandleOutOfRange {
                        handle: element,
                        capacity: q.capacity(),
                    },
                ));
            }
            if q.remove(element) {
                Ok(FairwayStatus::FairwayOk)
            } else {
                Err(Failure::new(
                    FairwayStatus::FairwayErrNotQueued,
                    format!("remove: element {element} is not queued"),
                ))
            }
        })
    }
}

/// Writes the rank of the bucket served next (what to arm a timer with) to
/// `*rank`: `FAIRWAY_OK`, or `FAIRWAY_EMPTY`.
///
/// # Safety
/// As for [`fairway_pq_destroy`]; `rank` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_pq_soonest_rank(
    h: *mut FairwayPq,
    rank: *mut u64,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), PQ_KIND, |q| {
            check_out(rank, "soonest_rank: rank")?;
            match q.soonest_rank() {
                Some(r) => {
                    // SAFETY: checked non-null and aligned.
                    rank.write(r);
                    Ok(FairwayStatus::FairwayOk)
                }
                None => Ok(FairwayStatus::FairwayEmpty),
            }
        })
    }
}

/// Writes the queue's state and clamp counters to `*out`.
///
/// # Safety
/// As for [`fairway_pq_destroy`]; `out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_pq_stats(
    h: *mut FairwayPq,
    out: *mut FairwayPqStats,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), PQ_KIND, |q| {
            check_out(out, "stats: out")?;
            // SAFETY: checked non-null and aligned.
            out.write(FairwayPqStats {
                len: q.len() as u64,
                capacity: q.capacity(),
                buckets_per_half: q.buckets_per_half(),
                window_start: q.window_start(),
                clamped_low: q.clamped_low(),
                clamped_high: q.clamped_high(),
            });
            Ok(FairwayStatus::FairwayOk)
        })
    }
}
