//! The handle behind every opaque C pointer, and the guard each call runs in.
//!
//! A handle is one heap block `{ tag, message, value }`. The tag is a
//! 64-bit word that says at once which kind of object the block is
//! (scheduler or priority queue) and its state: live, poisoned (an earlier
//! call panicked) or destroyed. So checking a handle on the fast path is
//! one load and one compare against the kind's live tag; only when that
//! compare fails does the cold path look at why (null, misaligned,
//! poisoned, destroyed, another kind) to pick the status.
//!
//! Destroy drops the value and the message but keeps the block, its tag
//! set to "destroyed", as a *tombstone*: a caller that uses the pointer
//! again reads memory that is still allocated and gets
//! `FAIRWAY_ERR_INVALID_HANDLE`, instead of reading freed memory that a new
//! object may occupy. Tombstones are listed in a global table, so leak
//! checkers (LeakSanitizer, valgrind, Miri) see them as reachable, not
//! lost; they cost the handle block's size (a few hundred bytes at most,
//! plus 8 in the table) per destroyed handle, and objects are created at
//! configuration time, so they stay few.
//!
//! [`call`] is the guard of the ordinary calls: it checks the handle, runs
//! the operation under `catch_unwind`, stores the message of a failure in
//! the handle, and turns a panic into `FAIRWAY_ERR_PANIC` plus poisoning,
//! so that no unwind ever crosses into C. The scheduler's single-packet
//! calls use the same pieces ([`live`], [`not_live`], [`guard`], [`fail`])
//! directly.

use crate::status::FairwayStatus;
use std::any::Any;
use std::ffi::{c_char, CString};
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// Tag of a destroyed handle of any kind ("DEADFWAY" in ASCII).
pub(crate) const DEAD_TAG: u64 = u64::from_be_bytes(*b"DEADFWAY");

/// The two tags of one kind of handle.
#[derive(Clone, Copy)]
pub(crate) struct Kind {
    /// Tag of a live handle of this kind: four ASCII letters in the low
    /// half, zero in the high half (see [`live_tag`]).
    pub live: u64,
    /// Tag of a handle of this kind whose value panicked: only destroy and
    /// `last_error` still work.
    pub poisoned: u64,
}

/// The live tag of a kind named by four ASCII letters: the letters in the
/// tag word's first four bytes in memory, zeros in the last four. A value
/// below 2^31 is an x86-64 32-bit immediate, so the fast path compares the
/// whole 64-bit word with one `cmp [handle], imm32` (a full 64-bit
/// constant takes a separate 10-byte load). The zero high half also means
/// the tag cannot be read at a misaligned address inside its own word
/// (its first byte would be another letter or a zero), see [`live`].
pub(crate) const fn live_tag(name: [u8; 4]) -> u64 {
    assert!(name[0].is_ascii_uppercase() && name[3] < 0x80);
    assert!(name[1] != name[0] && name[2] != name[0] && name[3] != name[0]);
    u32::from_le_bytes(name) as u64
}

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

/// The block an opaque C pointer points to (or the start of it: a
/// scheduler's block goes on with the scheduler, see `sched`). `repr(C)` puts
/// `tag` first in every kind, so it can be read through a pointer of the
/// wrong kind, and `value` right after it, so that the first fields of a
/// value are at fixed offsets (the header's inline scheduler calls read
/// two of them). `message` and `value` are dropped by [`destroy`] only
/// (the block itself is never freed, see the module doc).
#[repr(C)]
pub(crate) struct Handle<T> {
    tag: u64,
    pub value: ManuallyDrop<T>,
    /// Message of the most recent failed call; empty before any failure.
    pub message: ManuallyDrop<CString>,
}

/// A destroyed handle's block, kept allocated (see the module doc).
struct Tombstone(#[allow(dead_code)] *mut u64);

// SAFETY: the pointer is only stored, never dereferenced through this
// table; it exists so the block stays reachable.
unsafe impl Send for Tombstone {}

/// Every tombstone, for the life of the process.
static TOMBSTONES: Mutex<Vec<Tombstone>> = Mutex::new(Vec::new());

impl<T> Handle<T> {
    /// A live handle of `kind`, to be placed in a block that is never
    /// freed (see [`Self::into_raw`]).
    pub fn new(kind: Kind, value: T) -> Self {
        Handle {
            tag: kind.live,
            value: ManuallyDrop::new(value),
            message: ManuallyDrop::new(CString::default()),
        }
    }

    /// Allocates a live handle of `kind` and returns its address for C.
    pub fn into_raw(kind: Kind, value: T) -> *mut Handle<T> {
        Box::into_raw(Box::new(Handle::new(kind, value)))
    }
}

/// `h` as a live handle of `kind`, or `None`: the whole check of the fast
/// path, a null test plus one load-and-compare of the tag (the poisoned and
/// destroyed states and the other kind are other tags).
///
/// The tag is read unaligned, so alignment needs no test of its own: a
/// misaligned pointer into a handle block reads a word that is not the
/// live tag. Within the tag word this is certain (see [`live_tag`]: the
/// first byte of the tag is an uppercase letter, the bytes after it are
/// other letters and zeros); elsewhere, as for any pointer that never came
/// from this library, it holds only by the tag's unlikeliness. [`not_live`]
/// still names a misaligned pointer invalid without reading it.
///
/// # Safety
/// `h` must be null or a pointer this library returned (live or destroyed)
/// of the handle kind `T`, or of another kind whose block starts with the
/// same `tag: u64` field (all handle kinds do, see `Handle`).
#[inline(always)]
pub(crate) unsafe fn live<'a, T>(h: *mut Handle<T>, kind: Kind) -> Option<&'a mut Handle<T>> {
    if h.is_null() {
        return None;
    }
    // SAFETY: non-null; by the caller's contract it points to a handle
    // block, live or tombstone, which is never freed (and is aligned, but
    // the read does not need it). The tag is read on its own first: a
    // handle of another kind has a different `T`, so the rest must not be
    // touched until the tag matches.
    let tag = unsafe { core::ptr::addr_of!((*h).tag).read_unaligned() };
    if tag != kind.live {
        return None;
    }
    // SAFETY: the tag says this block is a live `Handle<T>`.
    Some(unsafe { &mut *h })
}

/// The status for a handle [`live`] refused: `FAIRWAY_ERR_POISONED` for a
/// poisoned handle of `kind`, `FAIRWAY_ERR_INVALID_HANDLE` for anything
/// else (null, misaligned, destroyed, another kind).
///
/// # Safety
/// As for [`live`].
#[cold]
#[inline(never)]
pub(crate) unsafe fn not_live<T>(h: *mut Handle<T>, kind: Kind) -> FairwayStatus {
    if h.is_null() || !h.is_aligned() {
        return FairwayStatus::FairwayErrInvalidHandle;
    }
    // SAFETY: as in `live`.
    let tag = unsafe { core::ptr::addr_of!((*h).tag).read() };
    if tag == kind.poisoned {
        FairwayStatus::FairwayErrPoisoned
    } else {
        FairwayStatus::FairwayErrInvalidHandle
    }
}

/// Runs `op` under `catch_unwind`: its status, or, if it panicked,
/// `FAIRWAY_ERR_PANIC` with the handle `handle()` poisoned. Nothing but the
/// 4-byte status crosses `catch_unwind` (which passes its result through
/// memory; a wider result costs a store-forwarding stall per call), and
/// the panic path is an out-of-line cold call; `handle` runs only on that
/// path, so the fast path need not keep the handle's address if it can
/// find it again.
///
/// # Safety
/// `handle()` is a live handle of `kind`, used by this thread only, and
/// `op` holds no reference into it when it panics (it is poisoned through
/// the pointer).
#[inline(always)]
pub(crate) unsafe fn guard<T>(
    handle: impl FnOnce() -> *mut Handle<T>,
    kind: Kind,
    op: impl FnOnce() -> FairwayStatus,
) -> FairwayStatus {
    // AssertUnwindSafe: after a panic the value is never used again (the
    // handle is poisoned below), so a broken invariant cannot be observed.
    match catch_unwind(AssertUnwindSafe(op)) {
        Ok(status) => status,
        // SAFETY: forwarded contract.
        Err(payload) => unsafe { poison(handle(), kind, payload) },
    }
}

/// Runs `op` on the live object behind `h`; see the module doc.
///
/// # Safety
/// As for [`live`]; in addition no other call may be using the same
/// handle concurrently (one thread at a time per handle).
#[inline]
pub(crate) unsafe fn call<T>(
    h: *mut Handle<T>,
    kind: Kind,
    op: impl FnOnce(&mut T) -> OpResult,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    if unsafe { live(h, kind) }.is_none() {
        // SAFETY: forwarded contract.
        return unsafe { not_live(h, kind) };
    }
    // SAFETY: live; the reference made inside `op` ends with it.
    unsafe {
        guard(
            || h,
            kind,
            move || match op(&mut (*h).value) {
                Ok(status) => status,
                Err(failure) => fail(h, failure),
            },
        )
    }
}

/// Poisons the handle after a panic in an operation and keeps the panic's
/// text as its message.
///
/// # Safety
/// As for [`guard`].
#[cold]
#[inline(never)]
unsafe fn poison<T>(h: *mut Handle<T>, kind: Kind, payload: Box<dyn Any + Send>) -> FairwayStatus {
    // SAFETY: the caller's contract: live, no other reference into it.
    let handle = unsafe { &mut *h };
    handle.tag = kind.poisoned;
    *handle.message = to_c_string(format!(
        "internal panic: {}; the handle is poisoned, destroy it",
        panic_text(payload.as_ref())
    ));
    FairwayStatus::FairwayErrPanic
}

/// Keeps a failure's message in the live handle `h` and returns its status.
///
/// # Safety
/// `h` is a live handle, with no other reference into its message.
#[cold]
#[inline(never)]
pub(crate) unsafe fn fail<T>(h: *mut Handle<T>, failure: Failure) -> FairwayStatus {
    // SAFETY: the caller's contract.
    unsafe { *(*h).message = to_c_string(failure.message) };
    failure.status
}

/// Destroys the object behind `h` (live or poisoned), leaving the
/// tombstone.
///
/// # Safety
/// As for [`call`].
pub(crate) unsafe fn destroy<T>(h: *mut Handle<T>, kind: Kind) -> FairwayStatus {
    if h.is_null() || !h.is_aligned() {
        return FairwayStatus::FairwayErrInvalidHandle;
    }
    // SAFETY: as in `live`.
    let tag = unsafe { core::ptr::addr_of!((*h).tag).read() };
    if tag != kind.live && tag != kind.poisoned {
        return FairwayStatus::FairwayErrInvalidHandle;
    }
    // SAFETY: the tag says this block is a `Handle<T>` not yet destroyed.
    let handle = unsafe { &mut *h };
    handle.tag = DEAD_TAG;
    // SAFETY: the tag was live or poisoned, so both are still initialised;
    // now that it says destroyed, nothing reads or drops them again.
    let (message, value) = unsafe {
        (
            ManuallyDrop::take(&mut handle.message),
            ManuallyDrop::take(&mut handle.value),
        )
    };
    // A poisoned table only means another thread panicked while pushing;
    // the Vec itself is still sound to push to.
    let mut tombs = TOMBSTONES.lock().unwrap_or_else(|e| e.into_inner());
    tombs.push(Tombstone(h.cast()));
    drop(tombs);
    // Dropping the object runs only library code; a panic there (a bug)
    // must still not unwind into C. The tombstone is written already.
    match catch_unwind(AssertUnwindSafe(move || drop((message, value)))) {
        Ok(()) => FairwayStatus::FairwayOk,
        Err(_) => FairwayStatus::FairwayErrPanic,
    }
}

/// The message of the last failed call on `h` (live or poisoned), or a
/// fixed text if `h` is not a handle of this kind. Never null; valid until
/// the next call on the same handle.
///
/// # Safety
/// As for [`call`].
pub(crate) unsafe fn last_error<T>(h: *mut Handle<T>, kind: Kind) -> *const c_char {
    let invalid = c"invalid handle: null, destroyed, or of another kind".as_ptr();
    if h.is_null() || !h.is_aligned() {
        return invalid;
    }
    // SAFETY: as in `live`.
    let tag = unsafe { core::ptr::addr_of!((*h).tag).read() };
    if tag != kind.live && tag != kind.poisoned {
        return invalid;
    }
    // SAFETY: the tag says the message is initialised.
    unsafe { (*h).message.as_ptr() }
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
/// message in the live handle `h` and returns the status.
///
/// # Safety
/// As for [`fail`].
#[cold]
#[inline(never)]
pub(crate) unsafe fn refuse_out<T, P>(
    h: *mut Handle<T>,
    p: *mut P,
    what: &'static str,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe { fail(h, bad_out(p.is_null(), what)) }
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

    const MAGIC: Kind = Kind {
        live: live_tag(*b"TQKW"),
        poisoned: 0x1234_5678_9abc_def1,
    };
    const OTHER: Kind = Kind {
        live: live_tag(*b"OTHR"),
        poisoned: 0x0fed_cba9_8765_4322,
    };

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
        // Still poisoned, and the message is kept; to another kind it is
        // just an invalid handle.
        assert_eq!(
            unsafe { call(h, MAGIC, |_v| Ok(FairwayStatus::FairwayOk)) },
            FairwayStatus::FairwayErrPoisoned
        );
        assert!(unsafe { CStr::from_ptr(last_error(h, MAGIC)) }
            .to_str()
            .unwrap()
            .contains("boom"));
        assert_eq!(
            unsafe {
                call(h.cast::<Handle<u32>>(), OTHER, |_v| {
                    Ok(FairwayStatus::FairwayOk)
                })
            },
            FairwayStatus::FairwayErrInvalidHandle
        );
        assert_eq!(unsafe { destroy(h, MAGIC) }, FairwayStatus::FairwayOk);
        assert_eq!(
            unsafe { call(h, MAGIC, |_v| Ok(FairwayStatus::FairwayOk)) },
            FairwayStatus::FairwayErrInvalidHandle
        );
        // The tombstone is never freed; reclaim it here so Miri's leak
        // check stays meaningful for the rest of the crate.
        drop(unsafe { Box::from_raw(h) });
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
            unsafe { call(h, OTHER, ok) },
            FairwayStatus::FairwayErrInvalidHandle
        );
        assert_eq!(
            unsafe { call(core::ptr::null_mut::<Handle<u64>>(), MAGIC, ok) },
            FairwayStatus::FairwayErrInvalidHandle
        );
        // Misaligned: a pointer into the block, never read as a handle.
        let inside = unsafe { h.cast::<u8>().add(1).cast::<Handle<u64>>() };
        assert_eq!(
            unsafe { call(inside, MAGIC, ok) },
            FairwayStatus::FairwayErrInvalidHandle
        );
        assert_eq!(
            unsafe { destroy(inside, MAGIC) },
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
