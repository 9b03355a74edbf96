//! The exported functions of the I/O scheduler's C ABI (see the parent
//! module for ids, buffers and completions). Each runs under
//! `catch_unwind` and checks every pointer and value before acting.

use super::{
    engine_failure, handle, FairwayIoClientStats, FairwayIoCompletion, FairwayIoEngine, IoState,
    FAIRWAY_IO_WAIT_FOREVER, IO_KIND,
};
use crate::handle::{self as h, call, check_out, Failure, Handle};
use crate::io::buf::FairwayIoBuf;
use crate::status::FairwayStatus;
use fairway_disk::engine::{ClientOptions, Engine, EngineConfig, Submission};
use fairway_disk::{DiskSchedSpec, DiskSpecError};
use std::collections::{HashMap, VecDeque};
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

/// Builds the engine `fairway_io_create_ex` describes.
fn build(
    spec: *const c_char,
    max_in_flight: u32,
    max_clients: u32,
    max_queued: u32,
    flags: u32,
) -> Result<IoState, Failure> {
    let unknown = flags & !super::FAIRWAY_IO_INLINE;
    if unknown != 0 {
        return Err(Failure::new(
            FairwayStatus::FairwayErrInvalidArgument,
            format!("flags: unknown bits {unknown:#x} (allowed: FAIRWAY_IO_INLINE = 0x1)"),
        ));
    }
    let submission = if flags & super::FAIRWAY_IO_INLINE != 0 {
        Submission::Inline
    } else {
        Submission::DeviceThread
    };
    if spec.is_null() {
        return Err(Failure::new(
            FairwayStatus::FairwayErrNullPointer,
            "spec is null",
        ));
    }
    // SAFETY: non-null, and the caller promises NUL termination.
    let spec = unsafe { CStr::from_ptr(spec) }.to_str().map_err(|_| {
        Failure::new(
            FairwayStatus::FairwayErrInvalidArgument,
            "spec is not valid UTF-8",
        )
    })?;
    let scheduler = DiskSchedSpec::parse(spec).map_err(|e| {
        let status = match e {
            DiskSpecError::OutOfRange { .. } => FairwayStatus::FairwayErrOutOfRange,
            _ => FairwayStatus::FairwayErrInvalidArgument,
        };
        Failure::new(status, format!("spec '{spec}': {e}"))
    })?;
    let config = EngineConfig {
        scheduler,
        max_in_flight,
        max_clients,
        max_queued,
        submission,
        ..EngineConfig::default()
    };
    let engine =
        Engine::new(config).map_err(|e| Failure::new(super::engine_status(&e), e.to_string()))?;
    Ok(IoState {
        engine: Some(engine),
        clients: HashMap::new(),
        targets: HashMap::new(),
        groups: HashMap::new(),
        last_id: 0,
        accepted: HashMap::new(),
        ready: VecDeque::new(),
    })
}

/// Creates an I/O engine: the disk scheduler `spec` (`"bfq"`,
/// `"bfq:t_max_ms=125"`, `"c-look"`, ... as `fairway disk list` names
/// them), at most `max_in_flight` requests on the device at once
/// (`1..=FAIRWAY_IO_MAX_IN_FLIGHT`; 1 keeps every ordering decision the
/// scheduler's), `max_clients` clients registered at once
/// (`1..=FAIRWAY_IO_MAX_CLIENTS`), `max_queued` requests outstanding at
/// once (`1..=FAIRWAY_IO_MAX_QUEUED`). Starts the engine's device thread.
///
/// On success writes the new handle to `*out`. On failure writes nothing
/// to `*out` and, if `err_buf` is non-null, a NUL-terminated message
/// (truncated to `err_len` bytes) naming the parameter at fault and its
/// range; `FAIRWAY_ERR_UNAVAILABLE` where the kernel refuses io_uring or
/// lacks timed waits (Linux < 5.11).
///
/// # Safety
/// `spec` must be null or a NUL-terminated string; `out` must be null or
/// writable; `err_buf` must be null or writable for `err_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_create(
    spec: *const c_char,
    max_in_flight: u32,
    max_clients: u32,
    max_queued: u32,
    out: *mut *mut FairwayIoEngine,
    err_buf: *mut c_char,
    err_len: usize,
) -> FairwayStatus {
    // SAFETY: the caller's contract, passed on unchanged.
    unsafe {
        fairway_io_create_ex(
            spec,
            max_in_flight,
            max_clients,
            max_queued,
            0,
            out,
            err_buf,
            err_len,
        )
    }
}

/// [`fairway_io_create`] with `flags`: 0, or [`FAIRWAY_IO_INLINE`]
/// (`super::FAIRWAY_IO_INLINE`): the thread that calls
/// `fairway_io_submit` runs the scheduler and submits to the ring itself,
/// and reaps what has completed, so a request costs no hand-off to the
/// engine's device thread (which is left with idling deadlines and
/// transfers still in flight when no call is inside). Completions are
/// still collected by `fairway_io_poll`/`fairway_io_wait`. Unknown bits
/// are refused with `FAIRWAY_ERR_INVALID_ARGUMENT`, naming them.
///
/// [`FAIRWAY_IO_INLINE`]: super::FAIRWAY_IO_INLINE
///
/// # Safety
/// As [`fairway_io_create`].
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fairway_io_create_ex(
    spec: *const c_char,
    max_in_flight: u32,
    max_clients: u32,
    max_queued: u32,
    flags: u32,
    out: *mut *mut FairwayIoEngine,
    err_buf: *mut c_char,
    err_len: usize,
) -> FairwayStatus {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<_, Failure> {
        check_out(out, "out")?;
        build(spec, max_in_flight, max_clients, max_queued, flags)
    }));
    let failure = match result {
        Ok(Ok(state)) => {
            let e = Handle::into_raw(IO_KIND, state);
            // SAFETY: `out` was checked non-null and aligned above.
            unsafe { out.write(e.cast()) };
            return FairwayStatus::FairwayOk;
        }
        Ok(Err(failure)) => failure,
        Err(payload) => Failure::new(
            FairwayStatus::FairwayErrPanic,
            format!("internal panic: {}", h::panic_text(payload.as_ref())),
        ),
    };
    // SAFETY: the caller's contract on err_buf.
    unsafe { h::write_message(err_buf, err_len, &failure.message) };
    failure.status
}

/// Destroys an engine: shuts it down if [`fairway_io_shutdown`] has not
/// (waiting for the transfers in flight: the kernel owns their buffers
/// until they finish), then frees every buffer whose completion the caller
/// has not collected. To get those buffers back instead, call
/// [`fairway_io_shutdown`] and poll until `FAIRWAY_EMPTY` first. Buffers
/// the caller holds stay the caller's (free them with
/// `fairway_io_buf_free`). Using the handle afterwards returns
/// `FAIRWAY_ERR_INVALID_HANDLE`.
///
/// # Safety
/// `e` must be null or a pointer returned by [`fairway_io_create`]
/// (possibly destroyed already), not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_destroy(e: *mut FairwayIoEngine) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe { h::destroy(handle(e), IO_KIND) }
}

/// The message of the most recent failed call on `e` (empty if none has
/// failed), or a fixed text if `e` is not a live engine handle. Never
/// null; valid until the next call on `e`.
///
/// # Safety
/// As for [`fairway_io_destroy`].
#[no_mangle]
pub unsafe extern "C" fn fairway_io_last_error(e: *mut FairwayIoEngine) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe { h::last_error(handle(e), IO_KIND) }
}

/// Stops the engine: transfers in flight complete (this waits for them),
/// requests not yet dispatched complete with `-ESHUTDOWN`; every
/// completion not yet collected then waits in the handle for
/// [`fairway_io_poll`]. Afterwards open, add_client and submit return
/// `FAIRWAY_ERR_STOPPED`; poll, wait, statistics and destroy work. A
/// second call does nothing.
///
/// # Safety
/// As for [`fairway_io_destroy`].
#[no_mangle]
pub unsafe extern "C" fn fairway_io_shutdown(e: *mut FairwayIoEngine) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(e), IO_KIND, |s| {
            if let Some(engine) = s.engine.take() {
                s.ready.extend(engine.shutdown());
            }
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Opens the file or block device `path` as a target and writes its id to
/// `*target`. `flags`: `FAIRWAY_IO_OPEN_DIRECT` (`O_DIRECT`: offsets and
/// lengths must be multiples of `align`) and/or `FAIRWAY_IO_OPEN_WRITE`
/// (writes allowed); other bits are `FAIRWAY_ERR_INVALID_ARGUMENT`.
/// `align`: the device's logical block size, 512, 1024, 2048 or 4096
/// bytes (4096 suits every device). `FAIRWAY_ERR_OS` if the file cannot be
/// opened (the message has the path and the error), `FAIRWAY_ERR_FULL`
/// beyond 2^20 targets open at once.
///
/// # Safety
/// As for [`fairway_io_destroy`]; `path` must be null or a NUL-terminated
/// string; `target` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_open(
    e: *mut FairwayIoEngine,
    path: *const c_char,
    flags: u32,
    align: u32,
    target: *mut u64,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(e), IO_KIND, |s| {
            check_out(target, "open: target")?;
            let id = s.open(path, flags, align)?;
            // SAFETY: checked non-null and aligned; caller-writable.
            target.write(id);
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Closes a target: no new request is accepted for it; those accepted
/// still complete. Its id is never valid again.
///
/// # Safety
/// As for [`fairway_io_destroy`].
#[no_mangle]
pub unsafe extern "C" fn fairway_io_close(e: *mut FairwayIoEngine, target: u64) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(e), IO_KIND, |s| {
            let t = s.target(target, "close")?;
            s.engine("close")?
                .close(t)
                .map_err(|e| engine_failure("close", e))?;
            s.targets.remove(&target);
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Registers a client of weight `weight` (`1..=65536`; the sum over the
/// registered clients at most 2^24) and writes its id to `*client`. Its
/// share of the device is its weight over the sum of the weights of the
/// clients with requests waiting. `FAIRWAY_ERR_FULL` beyond `max_clients`
/// registered at once.
///
/// # Safety
/// As for [`fairway_io_destroy`]; `client` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_add_client(
    e: *mut FairwayIoEngine,
    weight: u32,
    client: *mut u64,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(e), IO_KIND, |s| {
            check_out(client, "add_client: client")?;
            let c = s
                .engine("add_client")?
                .add_client(ClientOptions::weight(weight))
                .map_err(|e| engine_failure("add_client", e))?;
            let id = s.next_id();
            s.clients.insert(id, c);
            // SAFETY: checked non-null and aligned; caller-writable.
            client.write(id);
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Removes a client: nothing more is accepted from it, its requests not
/// yet dispatched complete with `-ECANCELED` (queued before this returns),
/// those in flight complete normally; all of them are still collected by
/// poll. Writes its statistics at this point to `*stats` if `stats` is
/// non-null. Its id is never valid again.
///
/// # Safety
/// As for [`fairway_io_destroy`]; `stats` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_remove_client(
    e: *mut FairwayIoEngine,
    client: u64,
    stats: *mut FairwayIoClientStats,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(e), IO_KIND, |s| {
            if !stats.is_null() {
                check_out(stats, "remove_client: stats")?;
            }
            let c = s.client(client, "remove_client")?;
            let st = s
                .engine("remove_client")?
                .remove_client(c)
                .map_err(|e| engine_failure("remove_client", e))?;
            s.clients.remove(&client);
            if !stats.is_null() {
                // SAFETY: checked aligned; caller-writable.
                stats.write(st.into());
            }
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Writes a registered client's statistics to `*stats`.
/// `FAIRWAY_ERR_STOPPED` after shutdown.
///
/// # Safety
/// As for [`fairway_io_destroy`]; `stats` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_client_stats(
    e: *mut FairwayIoEngine,
    client: u64,
    stats: *mut FairwayIoClientStats,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(e), IO_KIND, |s| {
            check_out(stats, "client_stats: stats")?;
            let c = s.client(client, "client_stats")?;
            let st = s
                .engine("client_stats")?
                .client_stats(c)
                .map_err(|e| engine_failure("client_stats", e))?;
            // SAFETY: checked non-null and aligned; caller-writable.
            stats.write(st.into());
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Submits a request: `client` reads (`op = FAIRWAY_IO_OP_READ`) `len`
/// bytes of `target` at byte `offset` into `buf`, or writes
/// (`FAIRWAY_IO_OP_WRITE`) `buf`'s first `len` bytes there. `len` is
/// `1..=fairway_io_buf_len(buf)`, the request spans at most 256 sectors of
/// 512 bytes (128 KiB), ends at most at byte 2^53, and on an `O_DIRECT`
/// target `offset` and `len` are multiples of its `align`. `sync`: the
/// client waits for this request before issuing what depends on it (a
/// client's synchronous requests are dispatched in submission order);
/// `false` for write-back or prefetch. `user_data` comes back untouched in
/// the completion.
///
/// **Buffer ownership.** Accepted (`FAIRWAY_OK`, the request's id written
/// to `*request_id`): the buffer belongs to the engine until the request's
/// completion, which hands back the same pointer; meanwhile its data must
/// not be touched and calls taking it return
/// `FAIRWAY_ERR_BUFFER_IN_FLIGHT`. Refused (any other status): nothing was
/// queued and the buffer stays the caller's, unchanged. Refusals:
/// `FAIRWAY_ERR_OUT_OF_RANGE` (`op`, `len`, offset, alignment, span; the
/// message names which and its range), `FAIRWAY_ERR_UNKNOWN_CLIENT`,
/// `FAIRWAY_ERR_UNKNOWN_TARGET`, `FAIRWAY_ERR_READ_ONLY`,
/// `FAIRWAY_ERR_FULL` (`max_queued` requests outstanding: an overload the
/// caller handles), `FAIRWAY_ERR_BUFFER_IN_FLIGHT`, `FAIRWAY_ERR_STOPPED`,
/// and null or invalid pointers.
///
/// # Safety
/// As for [`fairway_io_destroy`]; `buf` must be null or a buffer of
/// `fairway_io_buf_alloc` not freed; `request_id` must be null or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_submit(
    e: *mut FairwayIoEngine,
    target: u64,
    client: u64,
    op: u32,
    offset: u64,
    buf: *mut FairwayIoBuf,
    len: usize,
    sync: bool,
    user_data: u64,
    request_id: *mut u64,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(e), IO_KIND, |s| {
            check_out(request_id, "submit: request_id")?;
            let id = s.submit(target, client, op, offset, buf, len, sync, user_data)?;
            // SAFETY: checked non-null and aligned; caller-writable.
            request_id.write(id);
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Moves up to `cap` (`>= 1`) finished requests into `out[0..*n_out]`,
/// oldest first, without waiting: `FAIRWAY_OK`, or `FAIRWAY_EMPTY` with
/// `*n_out = 0` when none has finished. Those beyond `cap` stay for the
/// next call. Each completion hands its buffer back to the caller.
///
/// # Safety
/// As for [`fairway_io_destroy`]; `out` must be null or writable for `cap`
/// elements; `n_out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_poll(
    e: *mut FairwayIoEngine,
    out: *mut FairwayIoCompletion,
    cap: usize,
    n_out: *mut usize,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe { call(handle(e), IO_KIND, |s| s.collect(out, cap, n_out, None)) }
}

/// As [`fairway_io_poll`], but first waits until a request finishes or
/// `timeout_ns` nanoseconds have passed (`FAIRWAY_IO_WAIT_FOREVER`: no
/// limit). Returns `FAIRWAY_OK` with completions, `FAIRWAY_TIMEOUT` when
/// none finished in time while requests are outstanding, and
/// `FAIRWAY_EMPTY` at once when no request is outstanding (so a loop
/// `while (fairway_io_wait(...) == FAIRWAY_OK)` ends when everything has
/// been collected).
///
/// # Safety
/// As for [`fairway_io_poll`].
#[no_mangle]
pub unsafe extern "C" fn fairway_io_wait(
    e: *mut FairwayIoEngine,
    out: *mut FairwayIoCompletion,
    cap: usize,
    timeout_ns: u64,
    n_out: *mut usize,
) -> FairwayStatus {
    let timeout = (timeout_ns != FAIRWAY_IO_WAIT_FOREVER).then(|| Duration::from_nanos(timeout_ns));
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(e), IO_KIND, |s| {
            s.collect(out, cap, n_out, Some(timeout))
        })
    }
}

/// Writes to `*n` how many accepted requests have not been collected yet
/// (queued, in flight, or finished and waiting for poll): the buffers
/// the engine holds.
///
/// # Safety
/// As for [`fairway_io_destroy`]; `n` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_outstanding(
    e: *mut FairwayIoEngine,
    n: *mut u64,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(e), IO_KIND, |s| {
            check_out(n, "outstanding: n")?;
            // SAFETY: checked non-null and aligned; caller-writable.
            n.write(s.accepted.len() as u64);
            Ok(FairwayStatus::FairwayOk)
        })
    }
}
