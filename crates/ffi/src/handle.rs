//! The handle behind every opaque C pointer, and the guard each call runs in.
//!
//! A handle is a 16-byte heap block `{ magic, state }`. `magic` says which
//! kind of object it is (scheduler or priority queue) or that it was
//! destroyed; `state` (boxed) holds the object, the message of the last
//! failed call and the poisoned flag. Destroy frees `state` and writes the
//! dead magic, but keeps the 16-byte block as a *tombstone*: a caller that
//! uses the pointer again reads memory that is still allocated and gets
//! `FAIRWAY_ERR_INVALID_HANDLE`, instead of reading freed memory that a new
//! object may occupy. Tombstones are listed in a global table, so leak
//! checkers (LeakSanitizer, valgrind, Miri) see them as reachable, not
//! lost; they cost 16 bytes (plus 8 in the table) per destroyed handle,
//! and objects are created at configuration time, so they stay few.
//!
//! [`call`] is the guard: it checks the pointer (null, alignment, magic,
//! poisoned), runs the operation under `catch_unwind`, stores the message of
//! a failure in the handle, and turns a panic into `FAIRWAY_ERR_PANIC` plus
//! poisoning, so that no unwind ever crosses into C.

use crate::status::FairwayStatus;
use std::any::Any;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// Magic of a destroyed handle ("DEADFWAY" in ASCII, little-endian order
/// aside).
pub(crate) const DEAD_MAGIC: u64 = u64::from_be_bytes(*b"DEADFWAY");

/// A failed operation: the status to return and the message to keep.
#[derive(Debug)]
pub(crate) struct Failure {
    pub status: FairwayStatus,
    pub message: String,
}

impl Failure {
    pub fn new(status: FairwayStatus, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }
}

/// What an operation returns: a non-error status, or a failure.
pub(crate) type OpResult = Result<FairwayStatus, Failure>;

/// The live part of a handle.
pub(crate) struct State<T> {
    pub value: T,
    /// Message of the most recent failed call; empty before any failure.
    message: CString,
    poisoned: bool,
}

/// The block an opaque C pointer points to. `repr(C)` puts `magic` first in
/// every kind, so it can be read through a pointer of the wrong kind.
#[repr(C)]
pub(crate) struct Handle<T> {
    magic: u64,
    state: Option<Box<State<T>>>,
}

/// A destroyed handle's block, kept allocated (see the module doc).
struct Tombstone(#[allow(dead_code)] *mut u64);

// SAFETY: the pointer is only stored, never dereferenced through this
// table; it exists so the block stays reachable.
unsafe impl Send for Tombstone {}

/// Every tombstone, for the life of the process.
static TOMBSTONES: Mutex<Vec<Tombstone>> = Mutex::new(Vec::new());

impl<T> Handle<T> {
    /// Allocates a live handle and returns its address for C.
    pub fn into_raw(magic: u64, value: T) -> *mut Handle<T> {
        Box::into_raw(Box::new(Handle {
            magic,
            state: Some(Box::new(State {
                value,
                message: CString::default(),
                poisoned: false,
            })),
        }))
    }
}

/// Checks `h` and returns its handle if it is a live handle of `magic`'s
/// kind; `Err` with the status to return otherwise.
///
/// # Safety
/// `h` must be null or a pointer this library returned (live or destroyed)
/// of the handle kind `T`, or of another kind whose block starts with the
/// same `magic: u64` field (all handle kinds do, see `Handle`).
unsafe fn checked<'a, T>(
    h: *mut Handle<T>,
    magic: u64,
) -> Result<&'a mut Handle<T>, FairwayStatus> {
    if h.is_null() || !h.is_aligned() {
        return Err(FairwayStatus::FairwayErrInvalidHandle);
    }
    // SAFETY: non-null and aligned; by the caller's contract it points to a
    // handle block, live or tombstone, which is never freed. The magic is
    // read on its own first: a handle of another kind has a different `T`,
    // so its `state` must not be touched until the magic matches.
    let found = unsafe { core::ptr::addr_of!((*h).magic).read() };
    if found != magic {
        return Err(FairwayStatus::FairwayErrInvalidHandle);
    }
    // SAFETY: the magic says this block is a live `Handle<T>`.
    Ok(unsafe { &mut *h })
}

/// Runs `op` on the live object behind `h`; see the module doc.
///
/// # Safety
/// As for [`checked`]; in addition no other call may be using the same
/// handle concurrently (one thread at a time per handle).
#[inline]
pub(crate) unsafe fn call<T>(
    h: *mut Handle<T>,
    magic: u64,
    op: impl FnOnce(&mut T) -> OpResult,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call_fast(h, magic, move |value, message| match op(value) {
            Ok(status) => status,
            Err(failure) => store_failure(message, failure),
        })
    }
}

/// The guard of the single-packet fast path: as [`call`], but `op` gets
/// the handle's message slot and returns the status itself, storing a
/// failure's message through [`store_failure`] from its own cold path.
/// Nothing but the 4-byte status then crosses `catch_unwind` (which passes
/// its result through memory; a wider result was measured to cost a
/// store-forwarding stall per call), the success path writes no message,
/// and every error path (the panic's message, the poisoning) is a call to
/// an out-of-line cold function, so the hot path keeps few values alive
/// across the scheduler call and saves few registers.
///
/// # Safety
/// As for [`call`].
#[inline]
pub(crate) unsafe fn call_fast<T>(
    h: *mut Handle<T>,
    magic: u64,
    op: impl FnOnce(&mut T, &mut CString) -> FairwayStatus,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    let handle = match unsafe { checked(h, magic) } {
        Ok(handle) => handle,
        Err(status) => return status,
    };
    // The state's address itself (not the handle's field holding it) is
    // kept for the panic path, so the handle's address need not stay alive
    // across the operation.
    let Some(state) = handle.state.as_deref_mut() else {
        return FairwayStatus::FairwayErrInvalidHandle;
    };
    if state.poisoned {
        return FairwayStatus::FairwayErrPoisoned;
    }
    let State { value, message, .. } = &mut *state;
    // AssertUnwindSafe: after a panic the value is never used again (the
    // handle is poisoned below), so a broken invariant cannot be observed.
    match catch_unwind(AssertUnwindSafe(move || op(value, message))) {
        Ok(status) => status,
        Err(payload) => poison(state, payload),
    }
}

/// Poisons the handle after a panic in an operation and keeps the panic's
/// text as its message.
#[cold]
#[inline(never)]
fn poison<T>(state: &mut State<T>, payload: Box<dyn Any + Send>) -> FairwayStatus {
    state.poisoned = true;
    state.message = to_c_string(format!(
        "internal panic: {}; the handle is poisoned, destroy it",
        panic_text(payload.as_ref())
    ));
    FairwayStatus::FairwayErrPanic
}

/// Keeps a failure's message in the handle and returns its status.
#[cold]
#[inline(never)]
pub(crate) fn store_failure(message: &mut CString, failure: Failure) -> FairwayStatus {
    *message = to_c_string(failure.message);
    failure.status
}

/// Destroys the object behind `h`, leaving the tombstone.
///
/// # Safety
/// As for [`call`].
pub(crate) unsafe fn destroy<T>(h: *mut Handle<T>, magic: u64) -> FairwayStatus {
    // SAFETY: forwarded contract.
    let handle = match unsafe { checked(h, magic) } {
        Ok(handle) => handle,
        Err(status) => return status,
    };
    handle.magic = DEAD_MAGIC;
    let state = handle.state.take();
    // A poisoned table only means another thread panicked while pushing;
    // the Vec itself is still sound to push to.
    let mut tombs = TOMBSTONES.lock().unwrap_or_else(|e| e.into_inner());
    tombs.push(Tombstone(h.cast()));
    drop(tombs);
    // Dropping the object runs only library code; a panic there (a bug)
    // must still not unwind into C. The tombstone is written already.
    match catch_unwind(AssertUnwindSafe(move || drop(state))) {
        Ok(()) => FairwayStatus::FairwayOk,
        Err(_) => FairwayStatus::FairwayErrPanic,
    }
}

/// The message of the last failed call on `h`, or a fixed text if `h` is
/// not a live handle of this kind. Never null; valid until the next call on
/// the same handle.
///
/// # Safety
/// As for [`call`].
pub(crate) unsafe fn last_error<T>(h: *mut Handle<T>, magic: u64) -> *const c_char {
    // SAFETY: forwarded contract.
    match unsafe { checked(h, magic) } {
        Ok(handle) => match handle.state.as_ref() {
            Some(state) => state.message.as_ptr(),
            None => c"invalid handle".as_ptr(),
        },
        Err(_) => c"invalid handle: null, destroyed, or of another kind".as_ptr(),
    }
}

/// A C string of `text`, with any interior NUL replaced (messages are ours
/// and contain none, but user text such as a spec may be quoted in them).
pub(crate) fn to_c_string(text: String) -> CString {
    CString::new(text).unwrap_or_else(|e| {
        let bytes: Vec<u8> = e.into_vec().into_iter().filter(|&b| b != 0).collect();
        CString::new(bytes).unwrap_or_default()
    })
}

/// Copies `text` into the caller's buffer `buf` of `len` bytes, truncated
/// and always NUL-terminated (nothing is written if `buf` is null or `len`
/// is 0).
///
/// # Safety
/// `buf` must be null or valid for writes of `len` bytes.
pub(crate) unsafe fn write_message(buf: *mut c_char, len: usize, text: &str) {
    if buf.is_null() || len == 0 {
        return;
    }
    let n = text.len().min(len - 1);
    // SAFETY: `buf` is valid for `len` bytes and `n + 1 <= len`; `text` is a
    // separate Rust allocation, so the ranges do not overlap.
    unsafe {
        core::ptr::copy_nonoverlapping(text.as_ptr().cast::<c_char>(), buf, n);
        buf.add(n).write(0);
    }
}

/// Checks an out-parameter before it is written: null is
/// `FAIRWAY_ERR_NULL_POINTER`, misaligned `FAIRWAY_ERR_INVALID_ARGUMENT`.
#[inline(always)]
pub(crate) fn check_out<T>(p: *mut T, what: &'static str) -> Result<(), Failure> {
    if p.is_null() || !p.is_aligned() {
        return Err(bad_out(p.is_null(), what));
    }
    Ok(())
}

/// The cold path of an out-parameter [`check_out`] refused: stores the
/// message and returns the status (for [`call_fast`] operations).
#[cold]
#[inline(never)]
pub(crate) fn refuse_out<T>(message: &mut CString, p: *mut T, what: &'static str) -> FairwayStatus {
    store_failure(message, bad_out(p.is_null(), what))
}

#[cold]
#[inline(never)]
fn bad_out(null: bool, what: &'static str) -> Failure {
    if null {
        Failure::new(
            FairwayStatus::FairwayErrNullPointer,
            format!("{what} is null"),
        )
    } else {
        Failure::new(
            FairwayStatus::FairwayErrInvalidArgument,
            format!("{what} is not aligned for its type"),
        )
    }
}

/// Best-effort text of a panic payload.
pub(crate) fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    const MAGIC: u64 = 0x1234_5678_9abc_def0;

    #[test]
    fn a_panic_becomes_a_status_and_poisons_the_handle() {
        let h = Handle::into_raw(MAGIC, 0u32);
        let st = unsafe { call(h, MAGIC, |_v| panic!("boom")) };
        assert_eq!(st, FairwayStatus::FairwayErrPanic);
        let msg = unsafe { CStr::from_ptr(last_error(h, MAGIC)) };
        assert!(msg.to_str().unwrap().contains("boom"), "{msg:?}");
        // Poisoned: the operation is not even run.
        let mut ran = false;
        let st = unsafe {
            call(h, MAGIC, |_v| {
                ran = true;
                Ok(FairwayStatus::FairwayOk)
            })
        };
        assert_eq!(st, FairwayStatus::FairwayErrPoisoned);
        assert!(!ran);
        assert_eq!(unsafe { destroy(h, MAGIC) }, FairwayStatus::FairwayOk);
    }

    #[test]
    fn destroyed_null_and_wrong_kind_handles_are_rejected() {
        let h = Handle::into_raw(MAGIC, 7u64);
        let ok = |v: &mut u64| {
            *v += 1;
            Ok(FairwayStatus::FairwayOk)
        };
        assert_eq!(unsafe { call(h, MAGIC, ok) }, FairwayStatus::FairwayOk);
        assert_eq!(
            unsafe { call(h, MAGIC ^ 1, ok) },
            FairwayStatus::FairwayErrInvalidHandle
        );
        assert_eq!(
            unsafe { call(core::ptr::null_mut::<Handle<u64>>(), MAGIC, ok) },
            FairwayStatus::FairwayErrInvalidHandle
        );
        assert_eq!(unsafe { destroy(h, MAGIC) }, FairwayStatus::FairwayOk);
        assert_eq!(
            unsafe { call(h, MAGIC, ok) },
            FairwayStatus::FairwayErrInvalidHandle
        );
        assert_eq!(
            unsafe { destroy(h, MAGIC) },
            FairwayStatus::FairwayErrInvalidHandle
        );
        // The tombstone is never freed; reclaim it here so Miri's leak
        // check stays meaningful for the rest of the crate.
        drop(unsafe { Box::from_raw(h) });
    }

    #[test]
    fn messages_are_truncated_and_terminated() {
        let mut buf = [0x7f as c_char; 8];
        unsafe { write_message(buf.as_mut_ptr(), buf.len(), "0123456789") };
        let s = unsafe { CStr::from_ptr(buf.as_ptr()) };
        assert_eq!(s.to_str().unwrap(), "0123456");
        unsafe { write_message(buf.as_mut_ptr(), 0, "x") };
        assert_eq!(buf[0], b'0' as c_char);
        assert_eq!(to_c_string("a\0b".into()).to_str().unwrap(), "ab");
    }
}
