//! I/O buffers for C: `FairwayIoBuf`, a library-allocated, 4 KiB-aligned
//! block (`AlignedBuf`) behind a tagged pointer.
//!
//! C gets its buffers from the library because the engine owns a buffer
//! while its request is in flight (the kernel may write into it) and hands
//! it back in the completion: the buffer must be one the engine can hold
//! and return without copying, and aligned for `O_DIRECT`. The C pointer
//! stays the same through a submission and its completion (the block
//! stays put; only the bytes inside move to the engine and back), so C code
//! can keep per-buffer state keyed by the pointer.
//!
//! Ownership, as the header says: after `fairway_io_buf_alloc` the buffer
//! is the caller's; an accepted `fairway_io_submit` makes it the engine's
//! (its data pointer must not be used, and every call but
//! `fairway_io_buf_len` refuses it with `FAIRWAY_ERR_BUFFER_IN_FLIGHT`)
//! until a completion names it; a refused submission leaves it the
//! caller's. Buffers are not tombstoned like engine handles (they may be
//! allocated and freed at a high rate): using a freed buffer is undefined,
//! as with `free`.

use crate::handle::{self, Failure};
use crate::status::FairwayStatus;
use fairway_disk::engine::{AlignedBuf, BUF_ALIGN, MAX_BUF_LEN};
use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Largest I/O buffer, bytes (128 KiB: one request, at most L_max = 256
/// sectors of 512 bytes).
pub const FAIRWAY_IO_MAX_BUF_LEN: usize = 131072;
/// Alignment of every I/O buffer's data, bytes (enough for any logical
/// block size `O_DIRECT` needs).
pub const FAIRWAY_IO_BUF_ALIGN: usize = 4096;

const _: () = assert!(FAIRWAY_IO_MAX_BUF_LEN == MAX_BUF_LEN && FAIRWAY_IO_BUF_ALIGN == BUF_ALIGN);

/// An I/O buffer made by [`fairway_io_buf_alloc`]. Opaque: C code only
/// holds pointers to it and reaches its bytes through
/// [`fairway_io_buf_data`].
pub struct FairwayIoBuf {
    _opaque: [u8; 0],
}

/// Tag of a live buffer block ("FWYIOBUF"); cleared before the block is
/// freed.
const BUF_TAG: u64 = u64::from_be_bytes(*b"FWYIOBUF");

/// The block a `FairwayIoBuf *` points to.
#[repr(C)]
pub(crate) struct BufBlock {
    tag: u64,
    /// The bytes; `None` while the engine holds them (in flight).
    pub(crate) buf: Option<AlignedBuf>,
    /// The buffer's length, also readable while in flight.
    pub(crate) len: usize,
}

/// The buffer block behind `b`, or why not: null is
/// `FAIRWAY_ERR_NULL_POINTER`, anything else that is not a live buffer
/// `FAIRWAY_ERR_INVALID_HANDLE`.
///
/// # Safety
/// `b` must be null or a pointer [`fairway_io_buf_alloc`] returned and
/// not yet freed (or any pointer to readable, aligned memory of 8 bytes).
pub(crate) unsafe fn block<'a>(
    b: *mut FairwayIoBuf,
    what: &str,
) -> Result<&'a mut BufBlock, Failure> {
    let b = b.cast::<BufBlock>();
    if b.is_null() {
        return Err(Failure::new(
            FairwayStatus::FairwayErrNullPointer,
            format!("{what} is null"),
        ));
    }
    // SAFETY: non-null and, by the caller's contract, readable for the tag
    // (read unaligned: a misaligned pointer reads no live tag).
    let tag = unsafe { core::ptr::addr_of!((*b).tag).read_unaligned() };
    if !b.is_aligned() || tag != BUF_TAG {
        return Err(Failure::new(
            FairwayStatus::FairwayErrInvalidHandle,
            format!("{what} is not a buffer of fairway_io_buf_alloc"),
        ));
    }
    // SAFETY: the tag says this is a live buffer block.
    Ok(unsafe { &mut *b })
}

/// The block's bytes if the caller holds them, else
/// `FAIRWAY_ERR_BUFFER_IN_FLIGHT`.
pub(crate) fn take(block: &mut BufBlock, what: &str) -> Result<AlignedBuf, Failure> {
    block.buf.take().ok_or_else(|| in_flight(what))
}

fn in_flight(what: &str) -> Failure {
    Failure::new(
        FairwayStatus::FairwayErrBufferInFlight,
        format!("{what} belongs to the engine until its completion is collected"),
    )
}

/// Frees a block whose bytes are in a completion that will never reach the
/// caller (the engine is being destroyed).
///
/// # Safety
/// `b` is a live buffer block, in flight, referenced by nothing else.
pub(crate) unsafe fn free_in_flight(b: *mut BufBlock) {
    // SAFETY: the caller's contract; allocated by `Box` in alloc.
    unsafe {
        (*b).tag = 0;
        drop(Box::from_raw(b));
    }
}

/// Allocates a zeroed buffer of `len` bytes (`1..=FAIRWAY_IO_MAX_BUF_LEN`),
/// its data aligned to `FAIRWAY_IO_BUF_ALIGN`, and writes it to `*out`.
/// The buffer is the caller's until it is submitted (see
/// `fairway_io_submit`). On failure writes nothing to `*out`
/// and, if `err_buf` is non-null, a NUL-terminated message (truncated to
/// `err_len` bytes) naming `len` and its range.
///
/// # Safety
/// `out` must be null or writable; `err_buf` must be null or writable for
/// `err_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_buf_alloc(
    len: usize,
    out: *mut *mut FairwayIoBuf,
    err_buf: *mut c_char,
    err_len: usize,
) -> FairwayStatus {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<_, Failure> {
        handle::check_out(out, "out")?;
        if !(1..=FAIRWAY_IO_MAX_BUF_LEN).contains(&len) {
            return Err(Failure::new(
                FairwayStatus::FairwayErrOutOfRange,
                format!(
                    "len {len} out of range 1..={FAIRWAY_IO_MAX_BUF_LEN} bytes (one request, at most L_max = 256 sectors)"
                ),
            ));
        }
        let buf = AlignedBuf::new(len)
            .map_err(|e| Failure::new(FairwayStatus::FairwayErrOutOfRange, e.to_string()))?;
        Ok(Box::into_raw(Box::new(BufBlock {
            tag: BUF_TAG,
            buf: Some(buf),
            len,
        })))
    }));
    let failure = match result {
        Ok(Ok(b)) => {
            // SAFETY: `out` was checked non-null and aligned above.
            unsafe { out.write(b.cast()) };
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

/// Frees a buffer the caller holds. `FAIRWAY_ERR_BUFFER_IN_FLIGHT` (and
/// nothing freed) while the engine holds it; `FAIRWAY_ERR_NULL_POINTER` /
/// `FAIRWAY_ERR_INVALID_HANDLE` for null or something else. The pointer
/// is invalid afterwards.
///
/// # Safety
/// `b` must be null or a buffer of [`fairway_io_buf_alloc`] not yet freed.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_buf_free(b: *mut FairwayIoBuf) -> FairwayStatus {
    let r = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: forwarded contract.
        let block = unsafe { block(b, "buf") }?;
        if block.buf.is_none() {
            return Err(in_flight("buf"));
        }
        block.tag = 0;
        // SAFETY: a live block, allocated by `Box` in alloc; the caller
        // holds its bytes, so nothing else refers to it.
        drop(unsafe { Box::from_raw(b.cast::<BufBlock>()) });
        Ok(())
    }));
    match r {
        Ok(Ok(())) => FairwayStatus::FairwayOk,
        Ok(Err(f)) => f.status,
        Err(_) => FairwayStatus::FairwayErrPanic,
    }
}

/// The buffer's bytes (`fairway_io_buf_len(b)` of them, aligned to
/// `FAIRWAY_IO_BUF_ALIGN`), or null if `b` is null, not a buffer, or held
/// by the engine (in flight). The address is the same for the buffer's
/// whole life; the bytes are the caller's to read and write only while it
/// holds the buffer.
///
/// # Safety
/// `b` must be null or a buffer of [`fairway_io_buf_alloc`] not yet freed.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_buf_data(b: *mut FairwayIoBuf) -> *mut u8 {
    // Nothing here can panic: a check and a field access.
    // SAFETY: forwarded contract.
    match unsafe { block(b, "buf") } {
        Ok(block) => match &mut block.buf {
            Some(buf) => buf.as_mut_slice().as_mut_ptr(),
            None => core::ptr::null_mut(),
        },
        Err(_) => core::ptr::null_mut(),
    }
}

/// The buffer's length in bytes (also while in flight), or 0 if `b` is
/// null or not a buffer.
///
/// # Safety
/// As for [`fairway_io_buf_data`].
#[no_mangle]
pub unsafe extern "C" fn fairway_io_buf_len(b: *mut FairwayIoBuf) -> usize {
    // SAFETY: forwarded contract.
    match unsafe { block(b, "buf") } {
        Ok(block) => block.len,
        Err(_) => 0,
    }
}
