//! The packet-scheduler half of the C ABI: one opaque `FairwayScheduler`
//! per scheduler built from a spec string, flows, packets, counters.
//!
//! A packet is the caller's pointer plus its length in bytes; the scheduler
//! reads only the length (as every fairway scheduler does, see
//! `fairway_core::Packet`) and hands the pointer back unchanged.
//!
//! Counters kept here, per handle ([`FairwaySchedStats`]): every packet ever
//! accepted is either dequeued, handed back by a flow removal ("reclaimed"),
//! or still queued, so
//! `enqueued = dequeued + reclaimed + queued` holds after every call; a
//! rejected enqueue is counted apart (and `rejected_full` counts the
//! overload drops among them).

use crate::handle::{self, call, call_fast, check_out, Failure, Handle, OpResult};
use crate::status::FairwayStatus;
use fairway_core::{
    Capacity, ConfigError, EnqueueErrorKind, FlowConfig, FlowId, Limits, Packet, SchedSpec,
    Scheduler, SpecError,
};
use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Magic word of a live scheduler handle ("FWYSCHED").
const SCHED_MAGIC: u64 = u64::from_be_bytes(*b"FWYSCHED");

/// Largest `max_flows` [`fairway_sched_create`] accepts (2^20): per-flow
/// state is allocated up front, so this bounds the allocation.
pub const FAIRWAY_MAX_FLOWS: u32 = 1 << 20;

/// Largest `max_packets` [`fairway_sched_create`] accepts (2^24): the packet
/// slots are allocated up front (a few tens of bytes each).
pub const FAIRWAY_MAX_PACKETS: u32 = 1 << 24;

/// A scheduler created by [`fairway_sched_create`]. Opaque: C code only
/// holds pointers to it.
pub struct FairwayScheduler {
    _opaque: [u8; 0],
}

/// A packet handed back by dequeue, peek or flow removal, or handed to
/// [`fairway_sched_enqueue_batch`].
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FairwayPacket {
    /// The pointer given to enqueue, unchanged.
    pub data: *mut c_void,
    /// Its length in bytes, as given to enqueue.
    pub len: usize,
    /// The flow it was enqueued on.
    pub flow: u32,
}

/// Packets and bytes queued.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FairwayBacklog {
    /// Number of packets.
    pub packets: u64,
    /// Sum of their lengths in bytes.
    pub bytes: u64,
}

/// A flow's configuration.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FairwayFlowConfig {
    /// Integer weight, `1..=65536`; the flow's share is its weight over the
    /// sum of all configured weights.
    pub weight: u32,
    /// Largest packet the flow may enqueue, `1..=65536` bytes.
    pub max_len: u32,
}

/// Counters of one scheduler handle since creation. Invariant after every
/// call: `enqueued_packets == dequeued_packets + reclaimed_packets +
/// queued_packets` (and the same for bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FairwaySchedStats {
    /// Flows configured now.
    pub flows: u32,
    /// Packets queued now.
    pub queued_packets: u64,
    /// Bytes queued now.
    pub queued_bytes: u64,
    /// Packets accepted by enqueue.
    pub enqueued_packets: u64,
    /// Bytes accepted by enqueue.
    pub enqueued_bytes: u64,
    /// Packets returned by dequeue.
    pub dequeued_packets: u64,
    /// Bytes returned by dequeue.
    pub dequeued_bytes: u64,
    /// Packets handed back by flow removal.
    pub reclaimed_packets: u64,
    /// Bytes handed back by flow removal.
    pub reclaimed_bytes: u64,
    /// Enqueues refused, for any reason (the packet stayed the caller's).
    pub rejected_packets: u64,
    /// Of those, refused because every packet slot was in use.
    pub rejected_full: u64,
}

/// The packet type the schedulers queue: the caller's pointer kept as an
/// integer (never dereferenced; an integer keeps the type `Send` without
/// an `unsafe impl`) plus the length.
#[derive(Clone, Copy, Debug)]
struct FfiPacket {
    data: usize,
    len: u32,
}

impl Packet for FfiPacket {
    #[inline]
    fn len(&self) -> u32 {
        self.len
    }
}

impl FfiPacket {
    #[inline]
    fn to_c(self, flow: FlowId) -> FairwayPacket {
        FairwayPacket {
            data: self.data as *mut c_void,
            len: self.len as usize,
            flow: flow.0,
        }
    }
}

/// What a scheduler handle holds.
struct SchedState {
    sched: Box<dyn Scheduler<FfiPacket> + Send>,
    name: CString,
    /// Counters kept here; `flows` counts successful adds minus removes
    /// (the scheduler trait does not expose its flow count).
    stats: FairwaySchedStats,
}

/// Builds the scheduler a spec names. The only place that touches the
/// registry: `SchedSpec::parse` plus the dynamic build.
fn build_scheduler(
    spec: &str,
    cap: Capacity,
) -> Result<Box<dyn Scheduler<FfiPacket> + Send>, Failure> {
    let parsed = SchedSpec::parse(spec).map_err(|e| {
        let status = match e {
            SpecError::OutOfRange { .. } => FairwayStatus::FairwayErrOutOfRange,
            _ => FairwayStatus::FairwayErrInvalidArgument,
        };
        Failure::new(status, format!("spec '{spec}': {e}"))
    })?;
    Ok(parsed.build(cap, Limits::DEFAULT))
}

fn config_status(e: &ConfigError) -> FairwayStatus {
    match e {
        ConfigError::ReservedFlowId
        | ConfigError::FlowIdOutOfRange { .. }
        | ConfigError::InvalidWeight { .. }
        | ConfigError::InvalidMaxLen { .. }
        | ConfigError::WeightSumOverflow { .. } => FairwayStatus::FairwayErrOutOfRange,
        ConfigError::FlowExists(_) => FairwayStatus::FairwayErrAlreadyExists,
        ConfigError::UnknownFlow(_) => FairwayStatus::FairwayErrUnknownFlow,
        ConfigError::QueuedPacketTooLong { .. } => FairwayStatus::FairwayErrQueuedPacketTooLong,
        ConfigError::InvalidParameter(_) => FairwayStatus::FairwayErrInvalidArgument,
    }
}

fn enqueue_status(kind: &EnqueueErrorKind) -> FairwayStatus {
    match kind {
        EnqueueErrorKind::ReservedFlowId => FairwayStatus::FairwayErrOutOfRange,
        EnqueueErrorKind::UnknownFlow(_) => FairwayStatus::FairwayErrUnknownFlow,
        EnqueueErrorKind::PacketTooLong { .. } => FairwayStatus::FairwayErrPacketTooLong,
        EnqueueErrorKind::EmptyPacket => FairwayStatus::FairwayErrEmptyPacket,
        EnqueueErrorKind::Full { .. } => FairwayStatus::FairwayErrFull,
    }
}

fn config_failure(what: &str, flow: u32, e: ConfigError) -> Failure {
    Failure::new(config_status(&e), format!("{what} flow {flow}: {e}"))
}

impl SchedState {
    /// The single enqueue's fast path: returns the status; a refusal is
    /// counted, worded and stored by the cold [`Self::refuse`].
    #[inline]
    fn enqueue(
        &mut self,
        message: &mut CString,
        flow: u32,
        data: *mut c_void,
        len: usize,
    ) -> FairwayStatus {
        let Ok(len32) = u32::try_from(len) else {
            let failure = self.length_overflow(flow, len);
            return handle::store_failure(message, failure);
        };
        let packet = FfiPacket {
            data: data as usize,
            len: len32,
        };
        match self.sched.enqueue(FlowId(flow), packet) {
            Ok(()) => {
                self.stats.enqueued_packets += 1;
                self.stats.enqueued_bytes += u64::from(len32);
                FairwayStatus::FairwayOk
            }
            Err(e) => self.refuse(message, flow, e.kind),
        }
    }

    /// Counts, words and stores a refused single enqueue.
    #[cold]
    #[inline(never)]
    fn refuse(
        &mut self,
        message: &mut CString,
        flow: u32,
        kind: EnqueueErrorKind,
    ) -> FairwayStatus {
        let failure = self.enqueue_failed(flow, kind);
        handle::store_failure(message, failure)
    }

    #[cold]
    #[inline(never)]
    fn length_overflow(&mut self, flow: u32, len: usize) -> Failure {
        self.stats.rejected_packets += 1;
        Failure::new(
            FairwayStatus::FairwayErrPacketTooLong,
            format!(
                "enqueue on flow {flow}: packet length {len} out of range 1..={} bytes",
                u32::MAX
            ),
        )
    }

    /// Counts a refused enqueue and words its error; kept out of line so
    /// the accepting path stays short.
    #[cold]
    #[inline(never)]
    fn enqueue_failed(&mut self, flow: u32, kind: EnqueueErrorKind) -> Failure {
        self.stats.rejected_packets += 1;
        if matches!(kind, EnqueueErrorKind::Full { .. }) {
            self.stats.rejected_full += 1;
        }
        Failure::new(
            enqueue_status(&kind),
            format!("enqueue on flow {flow}: {kind}"),
        )
    }

    /// The single dequeue's fast path: returns the status; a refused
    /// `out` is worded and stored by the cold [`handle::refuse_out`].
    #[inline]
    fn dequeue(&mut self, message: &mut CString, out: *mut FairwayPacket) -> FairwayStatus {
        if out.is_null() || !out.is_aligned() {
            return handle::refuse_out(message, out, "dequeue: out");
        }
        match self.sched.dequeue() {
            Some(d) => {
                self.stats.dequeued_packets += 1;
                self.stats.dequeued_bytes += u64::from(d.packet.len);
                // SAFETY: checked non-null and aligned; the caller promises
                // it points to writable memory for one FairwayPacket.
                unsafe { out.write(d.packet.to_c(d.flow)) };
                FairwayStatus::FairwayOk
            }
            None => FairwayStatus::FairwayEmpty,
        }
    }

    fn peek(&mut self, out: *mut FairwayPacket) -> OpResult {
        check_out(out, "peek: out")?;
        match self.sched.peek() {
            Some((flow, packet)) => {
                // SAFETY: as in `dequeue`.
                unsafe { out.write(packet.to_c(flow)) };
                Ok(FairwayStatus::FairwayOk)
            }
            None => Ok(FairwayStatus::FairwayEmpty),
        }
    }

    fn remove_flow(
        &mut self,
        flow: u32,
        out: *mut FairwayPacket,
        cap: usize,
        n_out: *mut usize,
    ) -> OpResult {
        check_out(n_out, "remove_flow: n_out")?;
        let id = FlowId(flow);
        // Check that every packet fits before removing anything: a failed
        // call must leave the flow as it was.
        if let Some(backlog) = self.sched.flow_backlog(id) {
            let needed = usize::try_from(backlog.packets).unwrap_or(usize::MAX);
            // SAFETY: n_out checked non-null and aligned; the caller
            // promises it is writable.
            unsafe { n_out.write(needed) };
            if needed > cap {
                return Err(Failure::new(
                    FairwayStatus::FairwayErrBufferTooSmall,
                    format!(
                        "remove_flow flow {flow}: it holds {needed} packets, the array holds {cap}; nothing removed"
                    ),
                ));
            }
            if needed > 0 {
                check_out(out, "remove_flow: out")?;
            }
        }
        let packets = self
            .sched
            .remove_flow(id)
            .map_err(|e| config_failure("remove_flow", flow, e))?;
        self.stats.flows -= 1;
        for (i, p) in packets.iter().enumerate() {
            self.stats.reclaimed_packets += 1;
            self.stats.reclaimed_bytes += u64::from(p.len);
            // SAFETY: `packets.len()` equals the backlog checked above
            // (`<= cap`), `out` is non-null and aligned, and the caller
            // promises `cap` writable elements.
            unsafe { out.add(i).write(p.to_c(id)) };
        }
        // SAFETY: as above.
        unsafe { n_out.write(packets.len()) };
        Ok(FairwayStatus::FairwayOk)
    }

    /// Enqueues `pkts[0..n]` in order, stopping at the first refused one.
    /// `*n_done` is how many were queued; the caller keeps `pkts[n_done..]`.
    fn enqueue_batch(
        &mut self,
        pkts: *const FairwayPacket,
        n: usize,
        n_done: *mut usize,
    ) -> OpResult {
        check_out(n_done, "enqueue_batch: n_done")?;
        // SAFETY: checked non-null and aligned; the caller promises it is
        // writable. Written first, so a failure below leaves it exact.
        unsafe { n_done.write(0) };
        if n == 0 {
            return Ok(FairwayStatus::FairwayOk);
        }
        if pkts.is_null() || !pkts.is_aligned() {
            return Err(Failure::new(
                if pkts.is_null() {
                    FairwayStatus::FairwayErrNullPointer
                } else {
                    FairwayStatus::FairwayErrInvalidArgument
                },
                "enqueue_batch: pkts is null or not aligned",
            ));
        }
        // Counters kept in locals and stored once: the loop then costs what
        // single enqueues cost in the scheduler, plus a read per packet.
        let (mut packets, mut bytes) = (0u64, 0u64);
        let mut failure = None;
        for i in 0..n {
            // SAFETY: `pkts` is non-null, aligned and, by the caller's
            // contract, valid for `n` reads.
            let p = unsafe { pkts.add(i).read() };
            let Ok(len32) = u32::try_from(p.len) else {
                failure = Some((i, self.length_overflow(p.flow, p.len)));
                break;
            };
            let packet = FfiPacket {
                data: p.data as usize,
                len: len32,
            };
            if let Err(e) = self.sched.enqueue(FlowId(p.flow), packet) {
                failure = Some((i, self.enqueue_failed(p.flow, e.kind)));
                break;
            }
            packets += 1;
            bytes += u64::from(len32);
        }
        self.stats.enqueued_packets += packets;
        self.stats.enqueued_bytes += bytes;
        // SAFETY: as above (`n_done` checked non-null and aligned).
        match failure {
            None => unsafe { n_done.write(n) },
            Some((i, f)) => {
                unsafe { n_done.write(i) };
                return Err(f);
            }
        }
        Ok(FairwayStatus::FairwayOk)
    }

    /// Dequeues up to `cap` packets into `out`, in the order single
    /// dequeues would give them; `*n_out` is how many. `FAIRWAY_EMPTY` if
    /// none was queued.
    fn dequeue_batch(
        &mut self,
        out: *mut FairwayPacket,
        cap: usize,
        n_out: *mut usize,
    ) -> OpResult {
        check_out(n_out, "dequeue_batch: n_out")?;
        // SAFETY: checked non-null and aligned; writable by contract.
        unsafe { n_out.write(0) };
        if cap > 0 {
            check_out(out, "dequeue_batch: out")?;
        }
        let (mut n, mut bytes) = (0, 0u64);
        while n < cap {
            let Some(d) = self.sched.dequeue() else { break };
            bytes += u64::from(d.packet.len);
            // SAFETY: `out` is non-null, aligned and valid for `cap`
            // writes by contract; `n < cap`.
            unsafe { out.add(n).write(d.packet.to_c(d.flow)) };
            n += 1;
        }
        self.stats.dequeued_packets += n as u64;
        self.stats.dequeued_bytes += bytes;
        // SAFETY: as above.
        unsafe { n_out.write(n) };
        Ok(if n == 0 && cap > 0 {
            FairwayStatus::FairwayEmpty
        } else {
            FairwayStatus::FairwayOk
        })
    }

    fn stats(&self) -> FairwaySchedStats {
        let backlog = self.sched.backlog();
        FairwaySchedStats {
            queued_packets: backlog.packets,
            queued_bytes: backlog.bytes,
            ..self.stats
        }
    }
}

#[inline]
fn handle(h: *mut FairwayScheduler) -> *mut Handle<SchedState> {
    h.cast()
}

/// Creates a scheduler from a spec such as `"qfq+:m=8"`, `"drr"`,
/// `"drr:quantum=1500"`, `"wf2q+"`, `"qfq"`, `"fifo"` (the names and
/// parameters the `fairway` command line accepts), for flow ids
/// `0..max_flows` (`1..=FAIRWAY_MAX_FLOWS`) and at most `max_packets`
/// packets queued at once (`1..=FAIRWAY_MAX_PACKETS`; all allocated now).
/// Flows accept weights `1..=65536`, packets of `1..=65536` bytes and a
/// weight sum up to `2^24`.
///
/// On success writes the new handle to `*out`. On failure writes nothing
/// to `*out` and, if `err_buf` is non-null, a NUL-terminated message
/// (truncated to `err_len` bytes) naming the parameter at fault.
///
/// # Safety
/// `spec` must be null or a NUL-terminated string; `out` must be null or
/// writable; `err_buf` must be null or writable for `err_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_create(
    spec: *const c_char,
    max_flows: u32,
    max_packets: u32,
    out: *mut *mut FairwayScheduler,
    err_buf: *mut c_char,
    err_len: usize,
) -> FairwayStatus {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<_, Failure> {
        if spec.is_null() {
            return Err(Failure::new(
                FairwayStatus::FairwayErrNullPointer,
                "spec is null",
            ));
        }
        check_out(out, "out")?;
        // SAFETY: non-null, and the caller promises NUL termination.
        let spec = unsafe { CStr::from_ptr(spec) };
        let spec = spec.to_str().map_err(|_| {
            Failure::new(
                FairwayStatus::FairwayErrInvalidArgument,
                "spec is not valid UTF-8",
            )
        })?;
        if !(1..=FAIRWAY_MAX_FLOWS).contains(&max_flows) {
            return Err(Failure::new(
                FairwayStatus::FairwayErrOutOfRange,
                format!("max_flows {max_flows} out of range 1..={FAIRWAY_MAX_FLOWS}"),
            ));
        }
        if !(1..=FAIRWAY_MAX_PACKETS).contains(&max_packets) {
            return Err(Failure::new(
                FairwayStatus::FairwayErrOutOfRange,
                format!("max_packets {max_packets} out of range 1..={FAIRWAY_MAX_PACKETS}"),
            ));
        }
        let sched = build_scheduler(spec, Capacity::new(max_flows, max_packets))?;
        let name = handle::to_c_string(sched.name().to_string());
        Ok(Handle::into_raw(
            SCHED_MAGIC,
            SchedState {
                sched,
                name,
                stats: FairwaySchedStats::default(),
            },
        ))
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

/// Destroys a scheduler. Packets still queued are dropped from the
/// scheduler without being handed back (their memory is the caller's:
/// dequeue or remove the flows first to get the pointers back). Using the
/// handle afterwards returns `FAIRWAY_ERR_INVALID_HANDLE`.
///
/// # Safety
/// `h` must be null or a pointer returned by [`fairway_sched_create`]
/// (possibly destroyed already), not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_destroy(h: *mut FairwayScheduler) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe { handle::destroy(handle(h), SCHED_MAGIC) }
}

/// The message of the most recent failed call on `h` (empty if none has
/// failed), or a fixed text if `h` is not a live scheduler handle. Never
/// null; valid until the next call on `h`.
///
/// # Safety
/// As for [`fairway_sched_destroy`].
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_last_error(h: *mut FairwayScheduler) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe { handle::last_error(handle(h), SCHED_MAGIC) }
}

/// Writes the scheduler's short name (`"qfq+"`, `"drr"`, ...; a static
/// NUL-terminated string owned by the handle, valid until destroy) to
/// `*out`.
///
/// # Safety
/// As for [`fairway_sched_destroy`]; `out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_name(
    h: *mut FairwayScheduler,
    out: *mut *const c_char,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), SCHED_MAGIC, |s| {
            check_out(out, "name: out")?;
            // SAFETY: checked non-null and aligned; caller-writable.
            out.write(s.name.as_ptr());
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Configures flow `flow` (`0..max_flows`) with `weight` (`1..=65536`) and
/// largest packet `max_len` (`1..=65536` bytes). The weight sum over all
/// flows may not exceed `2^24`.
///
/// # Safety
/// As for [`fairway_sched_destroy`].
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_add_flow(
    h: *mut FairwayScheduler,
    flow: u32,
    weight: u32,
    max_len: u32,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), SCHED_MAGIC, |s| {
            s.sched
                .add_flow(FlowId(flow), FlowConfig::new(weight, max_len))
                .map_err(|e| config_failure("add_flow", flow, e))?;
            s.stats.flows += 1;
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Changes a flow's weight and maximum packet length, also while it is
/// backlogged (same ranges as add). Fails, changing nothing, with
/// `FAIRWAY_ERR_QUEUED_PACKET_TOO_LONG` if a queued packet is longer than
/// the new `max_len`.
///
/// # Safety
/// As for [`fairway_sched_destroy`].
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_reconfigure_flow(
    h: *mut FairwayScheduler,
    flow: u32,
    weight: u32,
    max_len: u32,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), SCHED_MAGIC, |s| {
            s.sched
                .reconfigure_flow(FlowId(flow), FlowConfig::new(weight, max_len))
                .map_err(|e| config_failure("reconfigure_flow", flow, e))?;
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Removes a flow and hands back its queued packets, oldest first, in
/// `out[0..*n_out]`. `*n_out` is set to the number of packets the flow
/// held; if that exceeds `cap`, the call fails with
/// `FAIRWAY_ERR_BUFFER_TOO_SMALL` and removes nothing (call again with a
/// larger array, or query [`fairway_sched_flow_backlog`] first). `out` may
/// be null when `cap` is 0.
///
/// # Safety
/// As for [`fairway_sched_destroy`]; `out` must be null or writable for
/// `cap` elements; `n_out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_remove_flow(
    h: *mut FairwayScheduler,
    flow: u32,
    out: *mut FairwayPacket,
    cap: usize,
    n_out: *mut usize,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), SCHED_MAGIC, |s| {
            s.remove_flow(flow, out, cap, n_out)
        })
    }
}

/// Queues the packet (`data`, `len` bytes) on `flow`. The pointer is never
/// dereferenced. On any error the packet is not queued and stays the
/// caller's: `FAIRWAY_ERR_UNKNOWN_FLOW`, `FAIRWAY_ERR_PACKET_TOO_LONG`
/// (longer than the flow's `max_len`), `FAIRWAY_ERR_EMPTY_PACKET`,
/// `FAIRWAY_ERR_FULL` (every slot in use: count it as a drop).
///
/// # Safety
/// As for [`fairway_sched_destroy`].
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_enqueue(
    h: *mut FairwayScheduler,
    flow: u32,
    data: *mut c_void,
    len: usize,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe { call_fast(handle(h), SCHED_MAGIC, |s, m| s.enqueue(m, flow, data, len)) }
}

/// Removes the next packet to transmit into `*out`: `FAIRWAY_OK`, or
/// `FAIRWAY_EMPTY` (writing nothing) when nothing is queued.
///
/// # Safety
/// As for [`fairway_sched_destroy`]; `out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_dequeue(
    h: *mut FairwayScheduler,
    out: *mut FairwayPacket,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe { call_fast(handle(h), SCHED_MAGIC, |s, m| s.dequeue(m, out)) }
}

/// Enqueues `n` packets, `pkts[i].data`/`len` on flow `pkts[i].flow`, in
/// order, as `n` calls of [`fairway_sched_enqueue`] would, for one handle
/// check. Stops at the first packet refused and returns its status (its
/// message as for a single enqueue); `*n_done` says how many were queued,
/// and the caller still owns `pkts[*n_done..n]`. `FAIRWAY_OK` when all were.
///
/// # Safety
/// As for [`fairway_sched_destroy`]; `pkts` must be readable for `n`
/// packets (may be null when `n` is 0), `n_done` writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_enqueue_batch(
    h: *mut FairwayScheduler,
    pkts: *const FairwayPacket,
    n: usize,
    n_done: *mut usize,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe { call(handle(h), SCHED_MAGIC, |s| s.enqueue_batch(pkts, n, n_done)) }
}

/// Dequeues up to `cap` packets into `out[0..cap]`, in the order `cap`
/// calls of [`fairway_sched_dequeue`] would, for one handle check;
/// `*n_out` says how many. `FAIRWAY_OK`, or `FAIRWAY_EMPTY` (with
/// `*n_out = 0`) when nothing was queued.
///
/// # Safety
/// As for [`fairway_sched_destroy`]; `out` must be writable for `cap`
/// packets (may be null when `cap` is 0), `n_out` writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_dequeue_batch(
    h: *mut FairwayScheduler,
    out: *mut FairwayPacket,
    cap: usize,
    n_out: *mut usize,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe { call(handle(h), SCHED_MAGIC, |s| s.dequeue_batch(out, cap, n_out)) }
}

/// Writes the packet the next dequeue will return to `*out` without
/// removing it (valid until the next enqueue or reconfiguration):
/// `FAIRWAY_OK`, or `FAIRWAY_EMPTY`.
///
/// # Safety
/// As for [`fairway_sched_dequeue`].
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_peek(
    h: *mut FairwayScheduler,
    out: *mut FairwayPacket,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe { call(handle(h), SCHED_MAGIC, |s| s.peek(out)) }
}

/// Writes the packets and bytes queued in the whole scheduler to `*out`.
///
/// # Safety
/// As for [`fairway_sched_dequeue`].
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_backlog(
    h: *mut FairwayScheduler,
    out: *mut FairwayBacklog,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), SCHED_MAGIC, |s| {
            check_out(out, "backlog: out")?;
            let b = s.sched.backlog();
            // SAFETY: checked non-null and aligned; caller-writable.
            out.write(FairwayBacklog {
                packets: b.packets,
                bytes: b.bytes,
            });
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Writes one flow's queued packets and bytes to `*out`;
/// `FAIRWAY_ERR_UNKNOWN_FLOW` if the flow is not configured.
///
/// # Safety
/// As for [`fairway_sched_dequeue`].
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_flow_backlog(
    h: *mut FairwayScheduler,
    flow: u32,
    out: *mut FairwayBacklog,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), SCHED_MAGIC, |s| {
            check_out(out, "flow_backlog: out")?;
            let b = s.sched.flow_backlog(FlowId(flow)).ok_or_else(|| {
                Failure::new(
                    FairwayStatus::FairwayErrUnknownFlow,
                    format!("flow_backlog: unknown flow {flow}"),
                )
            })?;
            // SAFETY: checked non-null and aligned; caller-writable.
            out.write(FairwayBacklog {
                packets: b.packets,
                bytes: b.bytes,
            });
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Writes one flow's configuration to `*out`; `FAIRWAY_ERR_UNKNOWN_FLOW` if
/// the flow is not configured.
///
/// # Safety
/// As for [`fairway_sched_dequeue`].
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_flow_config(
    h: *mut FairwayScheduler,
    flow: u32,
    out: *mut FairwayFlowConfig,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), SCHED_MAGIC, |s| {
            check_out(out, "flow_config: out")?;
            let c = s.sched.flow_config(FlowId(flow)).ok_or_else(|| {
                Failure::new(
                    FairwayStatus::FairwayErrUnknownFlow,
                    format!("flow_config: unknown flow {flow}"),
                )
            })?;
            // SAFETY: checked non-null and aligned; caller-writable.
            out.write(FairwayFlowConfig {
                weight: c.weight,
                max_len: c.max_len,
            });
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Writes the handle's counters (see [`FairwaySchedStats`]) to `*out`.
///
/// # Safety
/// As for [`fairway_sched_dequeue`].
#[no_mangle]
pub unsafe extern "C" fn fairway_sched_stats(
    h: *mut FairwayScheduler,
    out: *mut FairwaySchedStats,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(h), SCHED_MAGIC, |s| {
            check_out(out, "stats: out")?;
            // SAFETY: checked non-null and aligned; caller-writable.
            out.write(s.stats());
            Ok(FairwayStatus::FairwayOk)
        })
    }
}
