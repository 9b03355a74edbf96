//! The I/O scheduler half of the C ABI: one opaque `FairwayIoEngine` per
//! `fairway_disk::engine::Engine` (BFQ or any disk scheduler of the
//! catalogue, issuing reads and writes on io_uring), its targets, clients,
//! requests and completions. The guide is `docs/ffi.md`, "The I/O
//! scheduler"; the engine itself is described in `docs/io-scheduler.md`.
//!
//! Ids: targets and clients are `uint64_t` ids the handle hands out
//! (counting from 1, never reused, 0 never valid), mapped to the engine's
//! own ids, so a removed client's or closed target's id stays invalid.
//! Requests are the engine's request ids.
//!
//! Buffers ([`buf`]): every request carries a `FairwayIoBuf` from
//! [`fairway_io_buf_alloc`](buf::fairway_io_buf_alloc). An accepted
//! submission hands the buffer's bytes to the engine and records the
//! buffer's block under the request id; the completion puts the bytes back into the same block and names
//! it, so the pointer C holds is the same before and after. A refused
//! submission leaves the buffer the caller's.
//!
//! Completions: the engine's device thread queues them; [`fairway_io_poll`]
//! and [`fairway_io_wait`] move them into the caller's array, in the order
//! they finished, keeping what does not fit for the next call. Every
//! accepted request completes exactly once, also across
//! [`fairway_io_shutdown`]: after it, the remaining completions (transfers
//! finished, requests never dispatched as `-ESHUTDOWN`) wait in the handle
//! for poll. [`fairway_io_destroy`] shuts down if needed and frees the
//! buffers of completions never collected.
//!
//! Threads: like every handle of this library, an engine handle is used by
//! one thread at a time (it may move between threads); the engine's own
//! device thread runs the scheduler in the background either way.

pub mod buf;
pub mod groups;

use crate::handle::{self, check_out, Failure, Handle, Kind, OpResult};
use crate::status::FairwayStatus;
use buf::{BufBlock, FairwayIoBuf};
use fairway_disk::engine::{
    ClientId, ClientStats, Completion, Engine, EngineError, IoError, IoRequest, SubmitError,
    SubmitErrorKind, TargetId, TargetOptions,
};
use fairway_disk::{DiskConfigError, DiskSpecError};
use std::collections::{HashMap, VecDeque};
use std::ffi::{c_char, CStr};
use std::time::Duration;

/// `fairway_io_open` flag: open with `O_DIRECT` (offsets and lengths must
/// then be multiples of the target's `align`).
pub const FAIRWAY_IO_OPEN_DIRECT: u32 = 1;
/// `fairway_io_open` flag: open for writing too (without it, writes are
/// refused with `FAIRWAY_ERR_READ_ONLY`).
pub const FAIRWAY_IO_OPEN_WRITE: u32 = 2;
/// `fairway_io_submit` op: read into the buffer.
pub const FAIRWAY_IO_OP_READ: u32 = 0;
/// `fairway_io_submit` op: write the buffer.
pub const FAIRWAY_IO_OP_WRITE: u32 = 1;
/// `fairway_io_wait` timeout: no limit.
pub const FAIRWAY_IO_WAIT_FOREVER: u64 = u64::MAX;
/// `fairway_io_create_ex` flag: submitting threads schedule and submit
/// to the ring themselves (the engine's inline submission).
pub const FAIRWAY_IO_INLINE: u32 = 1;
/// Largest `max_in_flight` of [`fairway_io_create`] (io_uring entries).
pub const FAIRWAY_IO_MAX_IN_FLIGHT: u32 = 256;
/// Largest `max_clients` of [`fairway_io_create`].
pub const FAIRWAY_IO_MAX_CLIENTS: u32 = 65536;
/// Largest `max_queued` of [`fairway_io_create`].
pub const FAIRWAY_IO_MAX_QUEUED: u32 = 1048576;

const _: () = assert!(
    FAIRWAY_IO_MAX_IN_FLIGHT == fairway_disk::engine::MAX_IN_FLIGHT
        && FAIRWAY_IO_MAX_CLIENTS == fairway_disk::engine::MAX_CLIENTS
        && FAIRWAY_IO_MAX_QUEUED == fairway_disk::engine::MAX_QUEUED
);

/// Tags of an engine handle: live ("FWIO") and poisoned ("FWYIOPOI").
const IO_KIND: Kind = Kind {
    live: handle::live_tag(*b"FWIO"),
    poisoned: u64::from_be_bytes(*b"FWYIOPOI"),
};

/// An I/O engine created by [`fairway_io_create`]. Opaque: C code only
/// holds pointers to it.
pub struct FairwayIoEngine {
    _opaque: [u8; 0],
}

/// A finished request, as [`fairway_io_poll`] and [`fairway_io_wait`]
/// return it. Every accepted request produces exactly one.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FairwayIoCompletion {
    /// The id [`fairway_io_submit`] returned.
    pub request_id: u64,
    /// The request's `user_data`, untouched.
    pub user_data: u64,
    /// The issuing client's id.
    pub client: u64,
    /// The target's id.
    pub target: u64,
    /// Byte offset of the request.
    pub offset: u64,
    /// Bytes transferred (`len` when complete; fewer for a transfer that
    /// stopped early, at the end of the file), or a negative errno: the
    /// kernel's error (`-EIO`, `-EBADF`, ...), `-ECANCELED` for a request
    /// its client's removal cancelled before dispatch, `-ESHUTDOWN` for
    /// one the engine's shutdown found undispatched.
    pub result: i64,
    /// The request's buffer, the same pointer that was submitted, the
    /// caller's again (for a read, holding the data).
    pub buf: *mut FairwayIoBuf,
    /// Bytes requested.
    pub len: u32,
    /// `FAIRWAY_IO_OP_READ` or `FAIRWAY_IO_OP_WRITE`.
    pub op: u32,
    /// From submission to completion, ns.
    pub latency_ns: u64,
    /// From submission to the scheduler's dispatch, ns: the part of
    /// `latency_ns` spent in fairway's queues (all of it for a request
    /// never dispatched).
    pub queued_ns: u64,
}

/// What happened to a client's requests. Every accepted request ends in
/// exactly one of `completed`, `failed` and `cancelled`:
/// `submitted = completed + failed + cancelled + outstanding`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FairwayIoClientStats {
    /// Requests accepted by submit.
    pub submitted: u64,
    /// Requests of this client the engine refused (the queue full, a zero
    /// or too long length, unaligned, a read-only target, ...). Refusals
    /// made before the request reaches the engine (a bad `op`, `buf` or
    /// target id, a `len` above 2^32 − 1) are not counted.
    pub refused: u64,
    /// Accepted requests handed to the device.
    pub dispatched: u64,
    /// Requests transferred in full.
    pub completed: u64,
    /// Requests the device failed (I/O error, short transfer).
    pub failed: u64,
    /// Requests never dispatched (client removed, engine shut down).
    pub cancelled: u64,
    /// Bytes transferred by completed requests.
    pub bytes: u64,
    /// Sum of the completed requests' latencies, ns.
    pub latency_sum_ns: u64,
    /// Largest latency of a completed request, ns.
    pub latency_max_ns: u64,
}

impl From<ClientStats> for FairwayIoClientStats {
    fn from(s: ClientStats) -> Self {
        Self {
            submitted: s.submitted,
            refused: s.refused,
            dispatched: s.dispatched,
            completed: s.completed,
            failed: s.failed,
            cancelled: s.cancelled,
            bytes: s.bytes,
            latency_sum_ns: s.latency_sum_ns,
            latency_max_ns: s.latency_max_ns,
        }
    }
}

/// An accepted request whose completion the caller has not collected.
struct Accepted {
    /// The buffer's block, holding no bytes until the completion.
    buf: *mut BufBlock,
    client: u64,
    target: u64,
}

/// What an engine handle holds.
struct IoState {
    /// `None` once shut down.
    engine: Option<Engine>,
    clients: HashMap<u64, ClientId>,
    targets: HashMap<u64, TargetId>,
    groups: HashMap<u64, fairway_disk::engine::GroupId>,
    /// The last id handed out (clients, targets and groups share the
    /// counter).
    last_id: u64,
    /// By request id.
    accepted: HashMap<u64, Accepted>,
    /// Completions taken from the engine, not yet handed to the caller.
    ready: VecDeque<Completion>,
}

impl Drop for IoState {
    fn drop(&mut self) {
        // Transfers in flight finish first (the kernel owns their bytes).
        if let Some(engine) = self.engine.take() {
            self.ready.extend(engine.shutdown());
        }
        for (_, a) in self.accepted.drain() {
            // SAFETY: an accepted request's block is live and in flight,
            // and the handle was its only holder; its completion (with
            // the bytes) is in `ready`, dropped with the state.
            unsafe { buf::free_in_flight(a.buf) };
        }
    }
}

fn engine_status(e: &EngineError) -> FairwayStatus {
    match e {
        EngineError::OutOfRange { .. }
        | EngineError::Scheduler(_)
        | EngineError::Group(DiskConfigError::OutOfRange { .. })
        | EngineError::Group(DiskConfigError::WeightSumTooLarge { .. }) => {
            FairwayStatus::FairwayErrOutOfRange
        }
        EngineError::Group(_) => FairwayStatus::FairwayErrInvalidArgument,
        EngineError::Spec(DiskSpecError::OutOfRange { .. }) => FairwayStatus::FairwayErrOutOfRange,
        EngineError::Spec(_) | EngineError::Unsupported(_) => {
            FairwayStatus::FairwayErrInvalidArgument
        }
        EngineError::Unavailable(_) => FairwayStatus::FairwayErrUnavailable,
        EngineError::Open { .. } | EngineError::Memory(_) => FairwayStatus::FairwayErrOs,
        EngineError::TooManyClients { .. }
        | EngineError::TooManyTargets { .. }
        | EngineError::TooManyGroups { .. } => FairwayStatus::FairwayErrFull,
        EngineError::UnknownClient(_) => FairwayStatus::FairwayErrUnknownClient,
        EngineError::UnknownTarget(_) => FairwayStatus::FairwayErrUnknownTarget,
        EngineError::Stopped => FairwayStatus::FairwayErrStopped,
    }
}

fn engine_failure(what: &str, e: EngineError) -> Failure {
    Failure::new(engine_status(&e), format!("{what}: {e}"))
}

fn stopped(what: &str) -> Failure {
    Failure::new(
        FairwayStatus::FairwayErrStopped,
        format!("{what}: the engine has shut down"),
    )
}

/// The status and message of a refused submission.
fn submit_failure(kind: &SubmitErrorKind, client: u64, target: u64, buf_len: usize) -> Failure {
    let status = match kind {
        SubmitErrorKind::ZeroLength
        | SubmitErrorKind::BufferTooSmall { .. }
        | SubmitErrorKind::Unaligned { .. }
        | SubmitErrorKind::OffsetTooLarge { .. }
        | SubmitErrorKind::TooLong { .. } => FairwayStatus::FairwayErrOutOfRange,
        SubmitErrorKind::ReadOnlyTarget(_) => FairwayStatus::FairwayErrReadOnly,
        SubmitErrorKind::UnknownClient(_) => FairwayStatus::FairwayErrUnknownClient,
        SubmitErrorKind::UnknownTarget(_) => FairwayStatus::FairwayErrUnknownTarget,
        SubmitErrorKind::QueueFull { .. } => FairwayStatus::FairwayErrFull,
        SubmitErrorKind::Stopped => FairwayStatus::FairwayErrStopped,
    };
    let message = match kind {
        SubmitErrorKind::ZeroLength => {
            format!("submit: len 0 out of range 1..={buf_len} (the buffer's length)")
        }
        SubmitErrorKind::BufferTooSmall { len, buf } => {
            format!("submit: len {len} out of range 1..={buf} (the buffer's length)")
        }
        SubmitErrorKind::ReadOnlyTarget(_) => {
            format!("submit: write to target {target}, opened without FAIRWAY_IO_OPEN_WRITE")
        }
        SubmitErrorKind::UnknownClient(_) => {
            format!("submit: client {client} is not registered (never added, or removed)")
        }
        SubmitErrorKind::UnknownTarget(_) => {
            format!("submit: target {target} is not open (never opened, or closed)")
        }
        k => format!("submit: {k}"),
    };
    Failure::new(status, message)
}

/// A completion's `result` field (see [`FairwayIoCompletion::result`]).
fn result_code(c: &Completion) -> i64 {
    let errno = |e: i32| -i64::from(e);
    match &c.result {
        Ok(()) => i64::from(c.len),
        Err(IoError::Short { transferred, .. }) => i64::from(*transferred),
        Err(IoError::Os(e)) => errno(e.raw_os_error().unwrap_or(libc::EIO)),
        Err(IoError::Cancelled) => errno(libc::ECANCELED),
        Err(IoError::ShutDown) => errno(libc::ESHUTDOWN),
        Err(IoError::Refused(_)) => errno(libc::EINVAL),
    }
}

impl IoState {
    fn engine(&self, what: &str) -> Result<&Engine, Failure> {
        self.engine.as_ref().ok_or_else(|| stopped(what))
    }

    fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    fn client(&self, client: u64, what: &str) -> Result<ClientId, Failure> {
        self.clients.get(&client).copied().ok_or_else(|| {
            Failure::new(
                FairwayStatus::FairwayErrUnknownClient,
                format!("{what}: client {client} is not registered (never added, or removed)"),
            )
        })
    }

    fn target(&self, target: u64, what: &str) -> Result<TargetId, Failure> {
        self.targets.get(&target).copied().ok_or_else(|| {
            Failure::new(
                FairwayStatus::FairwayErrUnknownTarget,
                format!("{what}: target {target} is not open (never opened, or closed)"),
            )
        })
    }

    fn open(&mut self, path: *const c_char, flags: u32, align: u32) -> Result<u64, Failure> {
        use std::os::unix::ffi::OsStrExt;
        if path.is_null() {
            return Err(Failure::new(
                FairwayStatus::FairwayErrNullPointer,
                "open: path is null",
            ));
        }
        let known = FAIRWAY_IO_OPEN_DIRECT | FAIRWAY_IO_OPEN_WRITE;
        if flags & !known != 0 {
            return Err(Failure::new(
                FairwayStatus::FairwayErrInvalidArgument,
                format!(
                    "open: flags {flags:#x} has bits other than FAIRWAY_IO_OPEN_DIRECT ({FAIRWAY_IO_OPEN_DIRECT:#x}) and FAIRWAY_IO_OPEN_WRITE ({FAIRWAY_IO_OPEN_WRITE:#x})"
                ),
            ));
        }
        // SAFETY: non-null; the caller promises NUL termination.
        let path = std::ffi::OsStr::from_bytes(unsafe { CStr::from_ptr(path) }.to_bytes());
        let options = TargetOptions {
            direct: flags & FAIRWAY_IO_OPEN_DIRECT != 0,
            write: flags & FAIRWAY_IO_OPEN_WRITE != 0,
            align,
        };
        let t = self
            .engine("open")?
            .open(path, options)
            .map_err(|e| engine_failure("open", e))?;
        let id = self.next_id();
        self.targets.insert(id, t);
        Ok(id)
    }

    #[allow(clippy::too_many_arguments)] // the C call's parameters
    fn submit(
        &mut self,
        target: u64,
        client: u64,
        op: u32,
        offset: u64,
        b: *mut FairwayIoBuf,
        len: usize,
        sync: bool,
        user_data: u64,
    ) -> Result<u64, Failure> {
        let dir = match op {
            FAIRWAY_IO_OP_READ => fairway_disk::Direction::Read,
            FAIRWAY_IO_OP_WRITE => fairway_disk::Direction::Write,
            _ => {
                return Err(Failure::new(
                    FairwayStatus::FairwayErrOutOfRange,
                    format!(
                        "submit: op {op} out of range (FAIRWAY_IO_OP_READ = 0 or FAIRWAY_IO_OP_WRITE = 1)"
                    ),
                ))
            }
        };
        // SAFETY: the caller's contract on `b`.
        let block = unsafe { buf::block(b, "submit: buf") }?;
        let buf_len = block.len;
        let len = u32::try_from(len).map_err(|_| {
            Failure::new(
                FairwayStatus::FairwayErrOutOfRange,
                format!("submit: len {len} out of range 1..={buf_len} (the buffer's length)"),
            )
        })?;
        let client_id = self.client(client, "submit")?;
        let target_id = self.target(target, "submit")?;
        let engine = self.engine("submit")?;
        let bytes = buf::take(block, "submit: buf")?;
        let req = IoRequest {
            client: client_id,
            target: target_id,
            offset,
            len,
            dir,
            sync,
            buf: bytes,
            user_data,
        };
        match engine.submit(req) {
            Ok(id) => {
                let accepted = Accepted {
                    buf: b.cast(),
                    client,
                    target,
                };
                self.accepted.insert(id.0, accepted);
                Ok(id.0)
            }
            Err(SubmitError { kind, buf }) => {
                block.buf = Some(buf);
                Err(submit_failure(&kind, client, target, buf_len))
            }
        }
    }

    /// Moves up to `cap` ready completions into `out`; how many.
    ///
    /// # Safety
    /// `out` is non-null, aligned and writable for `cap` elements.
    unsafe fn deliver(&mut self, out: *mut FairwayIoCompletion, cap: usize) -> usize {
        let mut n = 0;
        while n < cap {
            let Some(c) = self.ready.pop_front() else {
                break;
            };
            let result = result_code(&c);
            let a = self
                .accepted
                .remove(&c.id.0)
                .expect("every completion is of an accepted request");
            // SAFETY: an accepted request's block is live; the handle is
            // its only user until this completion reaches the caller.
            unsafe { (*a.buf).buf = Some(c.buf) };
            let completion = FairwayIoCompletion {
                request_id: c.id.0,
                user_data: c.user_data,
                client: a.client,
                target: a.target,
                offset: c.offset,
                result,
                buf: a.buf.cast(),
                len: c.len,
                op: match c.dir {
                    fairway_disk::Direction::Read => FAIRWAY_IO_OP_READ,
                    fairway_disk::Direction::Write => FAIRWAY_IO_OP_WRITE,
                },
                latency_ns: u64::try_from(c.latency.as_nanos()).unwrap_or(u64::MAX),
                queued_ns: u64::try_from(c.queued.as_nanos()).unwrap_or(u64::MAX),
            };
            // SAFETY: the caller's contract; `n < cap`.
            unsafe { out.add(n).write(completion) };
            n += 1;
        }
        n
    }

    /// Collects completions into `out`: [`fairway_io_poll`] when `wait`
    /// is `None`, else [`fairway_io_wait`] with that timeout (`None`: no
    /// limit).
    fn collect(
        &mut self,
        out: *mut FairwayIoCompletion,
        cap: usize,
        n_out: *mut usize,
        wait: Option<Option<Duration>>,
    ) -> OpResult {
        let (what, n_out_name, out_name) = match wait {
            Some(_) => ("wait", "wait: n_out", "wait: out"),
            None => ("poll", "poll: n_out", "poll: out"),
        };
        check_out(n_out, n_out_name)?;
        // SAFETY: checked non-null and aligned; writable by contract.
        unsafe { n_out.write(0) };
        if cap == 0 {
            return Err(Failure::new(
                FairwayStatus::FairwayErrOutOfRange,
                format!("{what}: cap 0 out of range 1..=SIZE_MAX (completions the array holds)"),
            ));
        }
        check_out(out, out_name)?;
        if let Some(engine) = &self.engine {
            let mut fresh = Vec::new();
            match wait {
                Some(t) if self.ready.is_empty() => engine.wait(&mut fresh, t),
                _ => engine.poll(&mut fresh),
            };
            self.ready.extend(fresh);
        }
        // SAFETY: `out` checked non-null and aligned; `cap` writable
        // elements by contract.
        let n = unsafe { self.deliver(out, cap) };
        // SAFETY: as above.
        unsafe { n_out.write(n) };
        Ok(if n > 0 {
            FairwayStatus::FairwayOk
        } else if wait.is_some() && !self.accepted.is_empty() {
            FairwayStatus::FairwayTimeout
        } else {
            FairwayStatus::FairwayEmpty
        })
    }
}

#[inline]
fn handle(e: *mut FairwayIoEngine) -> *mut Handle<IoState> {
    e.cast()
}

mod api;
pub use api::*;
