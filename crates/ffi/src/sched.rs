//! The packet-scheduler half of the C ABI: one opaque `FairwayScheduler`
//! per scheduler built from a spec string, flows, packets, counters.
//!
//! A packet is the caller's pointer plus its length in bytes; the scheduler
//! reads only the length (as every fairway scheduler does, see
//! `fairway_core::Packet`) and hands the pointer back unchanged.
//!
//! Counters ([`FairwaySchedStats`]): every packet ever accepted is either
//! dequeued, handed back by a flow removal ("reclaimed"), or still queued.
//! The handle counts the dequeued and reclaimed packets (and bytes); the
//! queued ones are the scheduler's own backlog counters; the accepted ones
//! are their sum, `enqueued = dequeued + reclaimed + queued`, so an accepted
//! enqueue updates no counter of its own. A rejected enqueue is counted
//! apart (and `rejected_full` counts the overload drops among them).
//!
//! ## The single-packet fast path
//!
//! The handle's block holds the scheduler itself, after the handle
//! (`SchedBlock`), built by the registry from the spec; every call but
//! two reaches it as a `dyn Scheduler`. The two that run once per packet,
//! [`fairway_sched_enqueue`] and [`fairway_sched_dequeue`], instead call
//! through two function pointers at the start of the handle
//! ([`FairwaySchedFastPath`]), set at creation from the registry's
//! [`SchedVisitor`], when the scheduler's concrete type was known:
//! `enqueue_as::<S>` and `dequeue_as::<S>` (or `dequeue_noalias::<S>`),
//! the whole call (counters, status, `catch_unwind`) compiled for that
//! type, with the scheduler's own enqueue or dequeue inlined. So the ABI
//! makes the one indirect call a Rust caller of a `Box<dyn Scheduler>`
//! makes, and saves what a `dyn` call costs besides (the `Result` returned
//! through memory, a second frame). The exported functions check the
//! handle (null, one tag compare) and, for dequeue, `out`, and jump; the
//! header defines the same two calls `static inline` (see its end), so a
//! C caller makes those checks in its own code, where the compiler drops
//! the ones it can prove, and calls the function pointer directly.

use crate::handle::{self, call, check_out, Failure, Handle, Kind, OpResult};
use crate::status::FairwayStatus;
use fairway_core::registry::SchedVisitor;
use fairway_core::{
    Capacity, ConfigError, EnqueueErrorKind, FlowConfig, FlowId, Limits, Packet, SchedSpec,
    Scheduler, SpecError,
};
use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Version of the part of a scheduler handle's layout that the header's
/// inline `fairway_sched_enqueue` and `fairway_sched_dequeue` read: the
/// tag word first, then the two fast-path functions
/// ([`FairwaySchedFastPath`]). It is part of the live tag
/// ([`FAIRWAY_SCHED_LIVE_TAG`]), which the inline calls compare on every
/// call: code compiled against the header of another layout never takes a
/// handle of this library as live, and falls back to the exported
/// functions (correct, only not inlined). Raised with every change to
/// that part of the layout.
pub const FAIRWAY_SCHED_LAYOUT: u32 = 1;

/// The tag word of a live scheduler handle of layout
/// [`FAIRWAY_SCHED_LAYOUT`]: "FWS" and the layout's digit in its first
/// four bytes (ASCII), zeros in the last four.
pub const FAIRWAY_SCHED_LIVE_TAG: u64 = 0x3153_5746;

const _: () = assert!(
    FAIRWAY_SCHED_LIVE_TAG
        == handle::live_tag([b'F', b'W', b'S', b'0' + FAIRWAY_SCHED_LAYOUT as u8])
);

/// Tags of a scheduler handle: live ([`FAIRWAY_SCHED_LIVE_TAG`]) and
/// poisoned ("FWYSCPOI").
const SCHED_KIND: Kind = Kind {
    live: FAIRWAY_SCHED_LIVE_TAG,
    poisoned: u64::from_be_bytes(*b"FWYSCPOI"),
};

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

/// A scheduler's single enqueue, compiled for its type: what
/// [`fairway_sched_enqueue`] calls once it has checked the handle. Called
/// only on a live handle (tag [`FAIRWAY_SCHED_LIVE_TAG`]) of this library.
pub type FairwayEnqueueFn =
    unsafe extern "C" fn(*mut FairwayScheduler, u32, *mut c_void, usize) -> FairwayStatus;

/// A scheduler's single dequeue, compiled for its type: what
/// [`fairway_sched_dequeue`] calls once it has checked the handle and
/// `out`. Called only on a live handle, with `out` non-null and aligned.
pub type FairwayDequeueFn =
    unsafe extern "C" fn(*mut FairwayScheduler, *mut FairwayPacket) -> FairwayStatus;

/// The first bytes of every scheduler handle, as the header's inline
/// `fairway_sched_enqueue` and `fairway_sched_dequeue` read them (the
/// layout [`FAIRWAY_SCHED_LAYOUT`]): after checking that the handle is
/// non-null and that `tag` is [`FAIRWAY_SCHED_LIVE_TAG`] (and, for
/// dequeue, that `out` is non-null and aligned), they call `enqueue` or
/// `dequeue` with the handle; on any failed check they call the exported
/// function, which returns the status. Read-only for C; the rest of the
/// handle is private.
#[repr(C)]
pub struct FairwaySchedFastPath {
    /// [`FAIRWAY_SCHED_LIVE_TAG`] while the handle is live; another value
    /// once it is poisoned or destroyed.
    pub tag: u64,
    /// The single enqueue for this handle's scheduler.
    pub enqueue: FairwayEnqueueFn,
    /// The single dequeue for this handle's scheduler.
    pub dequeue: FairwayDequeueFn,
}

/// The whole block of a scheduler handle: the handle (tag, state,
/// message), then the scheduler itself. The fast paths get the handle's
/// address as their argument and find the scheduler at a constant offset
/// from it, so they load no pointer to reach it. Allocated by
/// [`new_handle`], never freed (destroy drops the state and the scheduler
/// in place and leaves the block as a tombstone, see `handle`).
#[repr(C)]
struct SchedBlock<S> {
    handle: Handle<SchedState>,
    sched: S,
}

// The header's inline calls read the tag and the two functions at the
// offsets of `FairwaySchedFastPath` (the tag is a handle's first field).
const _: () = {
    let value = core::mem::offset_of!(Handle<SchedState>, value);
    assert!(
        value + core::mem::offset_of!(SchedState, enqueue)
            == core::mem::offset_of!(FairwaySchedFastPath, enqueue)
    );
    assert!(
        value + core::mem::offset_of!(SchedState, dequeue)
            == core::mem::offset_of!(FairwaySchedFastPath, dequeue)
    );
};

/// Allocates the block of a new scheduler handle for `sched`, with the
/// fast paths for its type, and returns the handle's address.
fn new_handle<S: Scheduler<FfiPacket> + Send + 'static>(sched: S) -> *mut Handle<SchedState> {
    let name = handle::to_c_string(sched.name().to_string());
    let noalias = NOALIAS_DEQUEUE.contains(&sched.name());
    type NoaliasFn<S> =
        unsafe extern "C" fn(&mut SchedBlock<S>, *mut FairwayPacket) -> FairwayStatus;
    let dequeue: FairwayDequeueFn = if noalias {
        let f: NoaliasFn<S> = dequeue_noalias::<S>;
        // SAFETY: the two function pointer types differ only in their
        // first argument, `&mut SchedBlock<S>` and `*mut FairwayScheduler`,
        // which are ABI-compatible (pointers to sized types). The function
        // is called only as `dequeue` of this handle, on a live handle
        // used by one thread, which is a valid and unique `SchedBlock<S>`
        // for the call.
        unsafe { core::mem::transmute::<NoaliasFn<S>, FairwayDequeueFn>(f) }
    } else {
        dequeue_as::<S>
    };
    let state = SchedState {
        enqueue: enqueue_as::<S>,
        dequeue,
        dequeued_packets: 0,
        // Set below, once the block has its address.
        sched: core::ptr::null_mut::<S>(),
        dequeued_bytes: 0,
        name,
        reclaimed_packets: 0,
        reclaimed_bytes: 0,
        rejected_packets: 0,
        rejected_full: 0,
        flows: 0,
    };
    let block = Box::into_raw(Box::new(SchedBlock {
        handle: Handle::new(SCHED_KIND, state),
        sched,
    }));
    // SAFETY: just allocated, not shared yet; the scheduler's address is
    // derived from the block's, so it may be used for the block's life.
    unsafe {
        let sched: *mut S = core::ptr::addr_of_mut!((*block).sched);
        let state: &mut SchedState = &mut (*block).handle.value;
        state.sched = sched;
    }
    block.cast()
}

impl<S: Scheduler<FfiPacket>> SchedBlock<S> {
    /// The state of the handle `this`.
    #[inline(always)]
    fn state(this: *mut Self) -> *mut SchedState {
        // `Handle` and `ManuallyDrop` keep their field's address.
        // SAFETY (of the projection): in bounds of the block.
        unsafe { core::ptr::addr_of_mut!((*this).handle.value).cast() }
    }

    /// The single enqueue's fast path: returns the status; a refusal is
    /// counted, worded and stored by the cold [`SchedState::refuse`].
    ///
    /// # Safety
    /// `this` is a live handle whose scheduler is an `S`, used by this
    /// thread only, with the provenance of its whole block.
    #[inline(always)]
    unsafe fn enqueue(this: *mut Self, flow: u32, data: *mut c_void, len: usize) -> FairwayStatus {
        let Ok(len32) = u32::try_from(len) else {
            // SAFETY: forwarded contract.
            return unsafe { SchedState::refuse_length(this.cast(), flow, len) };
        };
        let packet = FfiPacket {
            data: data as usize,
            len: len32,
        };
        // SAFETY: forwarded contract; the reference ends with the call.
        match unsafe { (*this).sched.enqueue(FlowId(flow), packet) } {
            Ok(()) => FairwayStatus::FairwayOk,
            // SAFETY: forwarded contract.
            Err(e) => unsafe { SchedState::refuse(this.cast(), flow, e.kind) },
        }
    }

    /// The single dequeue's fast path: returns the status.
    ///
    /// # Safety
    /// As for [`Self::enqueue`]; `out` is non-null and aligned (checked by
    /// [`fairway_sched_dequeue`] or the header's inline version).
    #[inline(always)]
    unsafe fn dequeue(this: *mut Self, out: *mut FairwayPacket) -> FairwayStatus {
        // SAFETY: forwarded contract; the reference ends with the call.
        match unsafe { (*this).sched.dequeue() } {
            Some(d) => {
                // SAFETY: forwarded contract; no reference into the
                // state is alive.
                unsafe {
                    let state = Self::state(this);
                    (*state).dequeued_packets += 1;
                    (*state).dequeued_bytes += u64::from(d.packet.len);
                    // Checked non-null and aligned; the caller promises
                    // it points to writable memory for one FairwayPacket.
                    out.write(d.packet.to_c(d.flow));
                }
                FairwayStatus::FairwayOk
            }
            None => FairwayStatus::FairwayEmpty,
        }
    }
}

/// What a scheduler handle holds. `repr(C)`: its first two fields are
/// read by the header's inline calls (see [`FairwaySchedFastPath`]).
#[repr(C)]
struct SchedState {
    /// `enqueue_as::<S>` for the concrete type `S` behind `sched`.
    enqueue: FairwayEnqueueFn,
    /// `dequeue_as::<S>` or `dequeue_noalias::<S>` for the same `S`.
    dequeue: FairwayDequeueFn,
    /// Counted by the fast dequeue (and the batch one).
    dequeued_packets: u64,
    /// The scheduler in the same block (see [`SchedBlock`]), as a `dyn`
    /// scheduler for every call but the two fast ones; dropped in place
    /// with the state. Also keeps the two counters apart: next to each
    /// other the compiler turns their two adds into a six-instruction
    /// vector update.
    sched: *mut (dyn Scheduler<FfiPacket> + Send),
    dequeued_bytes: u64,
    name: CString,
    /// Counted on the slow paths.
    reclaimed_packets: u64,
    reclaimed_bytes: u64,
    rejected_packets: u64,
    rejected_full: u64,
    /// Successful adds minus removes (the scheduler trait does not expose
    /// its flow count).
    flows: u32,
}

/// Builds the scheduler a spec names and the handle that holds it. The
/// only place that touches the registry: `SchedSpec::parse` plus its
/// visitor, which hands over the scheduler's concrete type.
fn build_handle(spec: &str, cap: Capacity) -> Result<*mut Handle<SchedState>, Failure> {
    let parsed = SchedSpec::parse(spec).map_err(|e| {
        let status = match e {
            SpecError::OutOfRange { .. } => FairwayStatus::FairwayErrOutOfRange,
            _ => FairwayStatus::FairwayErrInvalidArgument,
        };
        Failure::new(status, format!("spec '{spec}': {e}"))
    })?;
    Ok(parsed.visit(BuildHandle { cap }))
}

/// The registry visitor that builds a handle for the spec's concrete
/// scheduler type.
struct BuildHandle {
    cap: Capacity,
}

impl SchedVisitor<FfiPacket> for BuildHandle {
    type Output = *mut Handle<SchedState>;

    fn visit<S, F>(self, make: F) -> *mut Handle<SchedState>
    where
        S: Scheduler<FfiPacket> + Send + 'static,
        F: FnOnce(Capacity, Limits) -> S + Send + 'static,
    {
        new_handle(make(self.cap, Limits::DEFAULT))
    }
}

/// The single enqueue for scheduler type `S`: the handle's `enqueue`,
/// called by [`fairway_sched_enqueue`] (or the header's inline version)
/// after the handle check.
///
/// # Safety
/// `h` is a live scheduler handle whose scheduler is an `S` (the handle's
/// `enqueue` is this function), used by this thread only.
unsafe extern "C" fn enqueue_as<S: Scheduler<FfiPacket> + Send + 'static>(
    h: *mut FairwayScheduler,
    flow: u32,
    data: *mut c_void,
    len: usize,
) -> FairwayStatus {
    let block = h.cast::<SchedBlock<S>>();
    // SAFETY: the caller checked the handle is live, its scheduler is an
    // `S` (the function's contract), one thread at a time.
    unsafe {
        handle::guard(
            || block.cast::<Handle<SchedState>>(),
            SCHED_KIND,
            || SchedBlock::enqueue(block, flow, data, len),
        )
    }
}

/// The single dequeue for scheduler type `S`: the handle's `dequeue`,
/// called by [`fairway_sched_dequeue`] (or the header's inline version)
/// after the handle check and the check of `out`.
///
/// # Safety
/// As for [`enqueue_as`]; `out` is non-null and aligned.
unsafe extern "C" fn dequeue_as<S: Scheduler<FfiPacket> + Send + 'static>(
    h: *mut FairwayScheduler,
    out: *mut FairwayPacket,
) -> FairwayStatus {
    let block = h.cast::<SchedBlock<S>>();
    // SAFETY: as in `enqueue_as`.
    unsafe {
        handle::guard(
            || block.cast::<Handle<SchedState>>(),
            SCHED_KIND,
            || SchedBlock::dequeue(block, out),
        )
    }
}

/// The single dequeue for scheduler type `S`, with its block as a
/// `noalias` argument: the handle's `dequeue` (through a cast of the
/// function pointer, see [`new_handle`]) for the schedulers in
/// [`NOALIAS_DEQUEUE`], instead of [`dequeue_as`]. A `&mut` argument is
/// `noalias` to the compiler, as the `&mut self` of a `dyn Scheduler`
/// method is, so it knows that the scheduler's stores into its heap arrays
/// leave the scheduler's own fields (the arrays' addresses and lengths)
/// unchanged, and does not load and bounds-check them again after each
/// store. (A `&mut` made inside the function does not help: only a
/// function's parameters carry `noalias`.)
///
/// # Safety
/// As for [`dequeue_as`], `block` being that handle's block.
unsafe extern "C" fn dequeue_noalias<S: Scheduler<FfiPacket> + Send + 'static>(
    block: &mut SchedBlock<S>,
    out: *mut FairwayPacket,
) -> FairwayStatus {
    // From here on only the raw address is used, also for the panic path.
    let block: *mut SchedBlock<S> = block;
    // SAFETY: as in `dequeue_as`.
    unsafe {
        handle::guard(
            || block.cast::<Handle<SchedState>>(),
            SCHED_KIND,
            || SchedBlock::dequeue(block, out),
        )
    }
}

/// The schedulers (by name) whose single dequeue is
/// [`dequeue_noalias`]; the others get [`dequeue_as`]. Chosen by
/// instruction counts (`crates/ffi/scripts/abi-instructions.sh`): without
/// `noalias` the SCHED+ schedulers' dequeue reloads and re-checks the flow
/// table after its stores; the others gain nothing from it (FIFO and WF2Q+
/// pay an extra jump, DRR's compiled dequeue needs two more saved
/// registers).
const NOALIAS_DEQUEUE: &[&str] = &["qfq+", "wf2q++"];

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

impl Drop for SchedState {
    fn drop(&mut self) {
        // SAFETY: the scheduler was initialised with the state, in the
        // same block, and only this drop (run once, by destroy) drops it;
        // the block itself stays allocated (a tombstone).
        unsafe { core::ptr::drop_in_place(self.sched) }
    }
}

impl SchedState {
    /// The scheduler, as a `dyn` scheduler.
    #[inline]
    fn sched(&mut self) -> &mut (dyn Scheduler<FfiPacket> + Send) {
        // SAFETY: the scheduler is in the same block as the state (set by
        // `new_handle`), live while the state is (both are dropped by
        // destroy), and reached only through the state, so `&mut self`
        // makes this the only reference to it.
        unsafe { &mut *self.sched }
    }

    /// The scheduler, shared.
    #[inline]
    fn sched_ref(&self) -> &(dyn Scheduler<FfiPacket> + Send) {
        // SAFETY: as in `sched`.
        unsafe { &*self.sched }
    }

    /// Counts, words and stores a refused single enqueue.
    ///
    /// # Safety
    /// `h` is a live scheduler handle, used by this thread only.
    #[cold]
    #[inline(never)]
    unsafe fn refuse(
        h: *mut Handle<SchedState>,
        flow: u32,
        kind: EnqueueErrorKind,
    ) -> FairwayStatus {
        // SAFETY: the caller's contract; the reference ends here.
        let failure = unsafe { (*h).value.enqueue_failed(flow, kind) };
        // SAFETY: the caller's contract.
        unsafe { handle::fail(h, failure) }
    }

    /// Counts, words and stores a single enqueue refused for its length.
    ///
    /// # Safety
    /// As for [`Self::refuse`].
    #[cold]
    #[inline(never)]
    unsafe fn refuse_length(h: *mut Handle<SchedState>, flow: u32, len: usize) -> FairwayStatus {
        // SAFETY: the caller's contract; the reference ends here.
        let failure = unsafe { (*h).value.length_overflow(flow, len) };
        // SAFETY: the caller's contract.
        unsafe { handle::fail(h, failure) }
    }

    #[cold]
    #[inline(never)]
    fn length_overflow(&mut self, flow: u32, len: usize) -> Failure {
        self.rejected_packets += 1;
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
        self.rejected_packets += 1;
        if matches!(kind, EnqueueErrorKind::Full { .. }) {
            self.rejected_full += 1;
        }
        Failure::new(
            enqueue_status(&kind),
            format!("enqueue on flow {flow}: {kind}"),
        )
    }

    fn peek(&mut self, out: *mut FairwayPacket) -> OpResult {
        check_out(out, "peek: out")?;
        match self.sched().peek() {
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
        if let Some(backlog) = self.sched().flow_backlog(id) {
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
            .sched()
            .remove_flow(id)
            .map_err(|e| config_failure("remove_flow", flow, e))?;
        self.flows -= 1;
        for (i, p) in packets.iter().enumerate() {
            self.reclaimed_packets += 1;
            self.reclaimed_bytes += u64::from(p.len);
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
        // The scheduler is loaded once per batch; a refusal is worded
        // after the loop.
        let sched = self.sched();
        let mut refused = None;
        for i in 0..n {
            // SAFETY: `pkts` is non-null, aligned and, by the caller's
            // contract, valid for `n` reads.
            let p = unsafe { pkts.add(i).read() };
            let Ok(len32) = u32::try_from(p.len) else {
                refused = Some((i, p, None));
                break;
            };
            let packet = FfiPacket {
                data: p.data as usize,
                len: len32,
            };
            if let Err(e) = sched.enqueue(FlowId(p.flow), packet) {
                refused = Some((i, p, Some(e.kind)));
                break;
            }
        }
        let Some((i, p, kind)) = refused else {
            // SAFETY: as above (`n_done` checked non-null and aligned).
            unsafe { n_done.write(n) };
            return Ok(FairwayStatus::FairwayOk);
        };
        // SAFETY: as above.
        unsafe { n_done.write(i) };
        Err(match kind {
            None => self.length_overflow(p.flow, p.len),
            Some(kind) => self.enqueue_failed(p.flow, kind),
        })
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
        // Found once per batch (see `enqueue_batch`).
        let sched = self.sched();
        while n < cap {
            let Some(d) = sched.dequeue() else {
                break;
            };
            bytes += u64::from(d.packet.len);
            // SAFETY: `out` is non-null, aligned and valid for `cap`
            // writes by contract; `n < cap`.
            unsafe { out.add(n).write(d.packet.to_c(d.flow)) };
            n += 1;
        }
        self.dequeued_packets += n as u64;
        self.dequeued_bytes += bytes;
        // SAFETY: as above.
        unsafe { n_out.write(n) };
        Ok(if n == 0 && cap > 0 {
            FairwayStatus::FairwayEmpty
        } else {
            FairwayStatus::FairwayOk
        })
    }

    fn stats(&self) -> FairwaySchedStats {
        let backlog = self.sched_ref().backlog();
        FairwaySchedStats {
            flows: self.flows,
            queued_packets: backlog.packets,
            queued_bytes: backlog.bytes,
            enqueued_packets: self.dequeued_packets + self.reclaimed_packets + backlog.packets,
            enqueued_bytes: self.dequeued_bytes + self.reclaimed_bytes + backlog.bytes,
            dequeued_packets: self.dequeued_packets,
            dequeued_bytes: self.dequeued_bytes,
            reclaimed_packets: self.reclaimed_packets,
            reclaimed_bytes: self.reclaimed_bytes,
            rejected_packets: self.rejected_packets,
            rejected_full: self.rejected_full,
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
        build_handle(spec, Capacity::new(max_flows, max_packets))
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
    unsafe { handle::destroy(handle(h), SCHED_KIND) }
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
    unsafe { handle::last_error(handle(h), SCHED_KIND) }
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
        call(handle(h), SCHED_KIND, |s| {
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
        call(handle(h), SCHED_KIND, |s| {
            s.sched()
                .add_flow(FlowId(flow), FlowConfig::new(weight, max_len))
                .map_err(|e| config_failure("add_flow", flow, e))?;
            s.flows += 1;
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
        call(handle(h), SCHED_KIND, |s| {
            s.sched()
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
        call(handle(h), SCHED_KIND, |s| {
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
    let h = handle(h);
    // SAFETY: forwarded contract.
    match unsafe { handle::live(h, SCHED_KIND) } {
        // SAFETY: live, and `enqueue` was made for the handle's scheduler.
        Some(live) => unsafe { (live.value.enqueue)(h.cast(), flow, data, len) },
        // SAFETY: forwarded contract.
        None => unsafe { handle::not_live(h, SCHED_KIND) },
    }
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
    let h = handle(h);
    // SAFETY: forwarded contract.
    let Some(live) = (unsafe { handle::live(h, SCHED_KIND) }) else {
        // SAFETY: forwarded contract.
        return unsafe { handle::not_live(h, SCHED_KIND) };
    };
    // Checked here, before the jump, where the compiler tests the
    // pointer's bits in place (inside `dequeue_as` they cost a copy more).
    if out.is_null() || !out.is_aligned() {
        // SAFETY: live; no reference into it is held.
        return unsafe { refuse_dequeue_out(h, out) };
    }
    // SAFETY: live, `dequeue` was made for the handle's scheduler, and
    // `out` is non-null and aligned.
    unsafe { (live.value.dequeue)(h.cast(), out) }
}

/// The cold path of a dequeue whose `out` is null or misaligned. `extern
/// "C"` so that the compiler knows it cannot unwind and
/// [`fairway_sched_dequeue`] can jump to it rather than call it.
///
/// # Safety
/// `h` is a live scheduler handle, used by this thread only.
#[cold]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called from Rust only
unsafe extern "C" fn refuse_dequeue_out(
    h: *mut Handle<SchedState>,
    out: *mut FairwayPacket,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe { handle::refuse_out(h, out, "dequeue: out") }
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
    unsafe { call(handle(h), SCHED_KIND, |s| s.enqueue_batch(pkts, n, n_done)) }
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
    unsafe { call(handle(h), SCHED_KIND, |s| s.dequeue_batch(out, cap, n_out)) }
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
    unsafe { call(handle(h), SCHED_KIND, |s| s.peek(out)) }
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
        call(handle(h), SCHED_KIND, |s| {
            check_out(out, "backlog: out")?;
            let b = s.sched().backlog();
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
        call(handle(h), SCHED_KIND, |s| {
            check_out(out, "flow_backlog: out")?;
            let b = s.sched().flow_backlog(FlowId(flow)).ok_or_else(|| {
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
        call(handle(h), SCHED_KIND, |s| {
            check_out(out, "flow_config: out")?;
            let c = s.sched().flow_config(FlowId(flow)).ok_or_else(|| {
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
        call(handle(h), SCHED_KIND, |s| {
            check_out(out, "stats: out")?;
            // SAFETY: checked non-null and aligned; caller-writable.
            out.write(s.stats());
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

#[cfg(test)]
mod tests {
    //! The fast path's own checks, through the exported functions: the
    //! tag compare against poisoned, misaligned and destroyed handles, and
    //! `catch_unwind` inside the code compiled for one scheduler type.
    use super::*;
    use fairway_core::{Backlog, Dequeued, EnqueueError, Fifo};
    use std::ptr::null_mut;

    /// A FIFO that panics on an enqueue of 13 bytes or, once armed, on a
    /// dequeue: a library bug, as the guard must contain it.
    struct Trap {
        inner: Fifo<FfiPacket>,
        panic_on_dequeue: bool,
        /// "trap", or a name from `NOALIAS_DEQUEUE` to get that dequeue.
        name: &'static str,
    }

    impl Scheduler<FfiPacket> for Trap {
        fn name(&self) -> &'static str {
            self.name
        }
        fn add_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
            self.inner.add_flow(id, cfg)
        }
        fn remove_flow(&mut self, id: FlowId) -> Result<Vec<FfiPacket>, ConfigError> {
            self.inner.remove_flow(id)
        }
        fn reconfigure_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
            self.inner.reconfigure_flow(id, cfg)
        }
        fn enqueue(&mut self, id: FlowId, p: FfiPacket) -> Result<(), EnqueueError<FfiPacket>> {
            assert!(p.len != 13, "trap: enqueue of 13 bytes");
            self.inner.enqueue(id, p)
        }
        fn dequeue(&mut self) -> Option<Dequeued<FfiPacket>> {
            assert!(!self.panic_on_dequeue, "trap: dequeue");
            self.inner.dequeue()
        }
        fn peek(&mut self) -> Option<(FlowId, &FfiPacket)> {
            self.inner.peek()
        }
        fn backlog(&self) -> Backlog {
            self.inner.backlog()
        }
        fn flow_backlog(&self, id: FlowId) -> Option<Backlog> {
            self.inner.flow_backlog(id)
        }
        fn flow_config(&self, id: FlowId) -> Option<FlowConfig> {
            self.inner.flow_config(id)
        }
    }

    fn trap_handle(panic_on_dequeue: bool) -> *mut FairwayScheduler {
        named_trap_handle(panic_on_dequeue, "trap")
    }

    fn named_trap_handle(panic_on_dequeue: bool, name: &'static str) -> *mut FairwayScheduler {
        let inner = Fifo::new(Capacity::new(4, 8));
        let h = new_handle(Trap {
            inner,
            panic_on_dequeue,
            name,
        })
        .cast::<FairwayScheduler>();
        assert_eq!(
            unsafe { fairway_sched_add_flow(h, 0, 1, 100) },
            FairwayStatus::FairwayOk
        );
        h
    }

    fn message(h: *mut FairwayScheduler) -> String {
        let text = unsafe { CStr::from_ptr(fairway_sched_last_error(h)) };
        text.to_str().unwrap().to_string()
    }

    fn packet() -> FairwayPacket {
        FairwayPacket {
            data: null_mut(),
            len: 0,
            flow: 0,
        }
    }

    /// After a panic the handle answers POISONED to every call but destroy
    /// and last_error, the fast paths included.
    fn assert_poisoned(h: *mut FairwayScheduler) {
        let poisoned = FairwayStatus::FairwayErrPoisoned;
        let mut p = packet();
        let mut s = FairwaySchedStats::default();
        unsafe {
            assert_eq!(fairway_sched_enqueue(h, 0, null_mut(), 10), poisoned);
            assert_eq!(fairway_sched_dequeue(h, &mut p), poisoned);
            assert_eq!(fairway_sched_peek(h, &mut p), poisoned);
            assert_eq!(fairway_sched_stats(h, &mut s), poisoned);
            assert_eq!(fairway_sched_add_flow(h, 1, 1, 100), poisoned);
        }
        assert!(message(h).contains("trap:"), "{}", message(h));
        assert_eq!(
            unsafe { fairway_sched_destroy(h) },
            FairwayStatus::FairwayOk
        );
        let invalid = FairwayStatus::FairwayErrInvalidHandle;
        assert_eq!(
            unsafe { fairway_sched_enqueue(h, 0, null_mut(), 10) },
            invalid
        );
        assert_eq!(unsafe { fairway_sched_dequeue(h, &mut p) }, invalid);
        assert_eq!(unsafe { fairway_sched_destroy(h) }, invalid);
    }

    #[test]
    fn a_panic_in_the_fast_enqueue_is_caught_and_poisons_the_handle() {
        let h = trap_handle(false);
        assert_eq!(
            unsafe { fairway_sched_enqueue(h, 0, null_mut(), 12) },
            FairwayStatus::FairwayOk
        );
        assert_eq!(
            unsafe { fairway_sched_enqueue(h, 0, null_mut(), 13) },
            FairwayStatus::FairwayErrPanic
        );
        assert!(message(h).contains("poisoned"), "{}", message(h));
        assert_poisoned(h);
    }

    /// Both shapes of the typed dequeue: `dequeue_as` ("trap") and
    /// `dequeue_via_noalias` (a name from `NOALIAS_DEQUEUE`).
    #[test]
    fn a_panic_in_the_fast_dequeue_is_caught_and_poisons_the_handle() {
        for name in ["trap", NOALIAS_DEQUEUE[0]] {
            let h = named_trap_handle(true, name);
            assert_eq!(
                unsafe { fairway_sched_enqueue(h, 0, null_mut(), 12) },
                FairwayStatus::FairwayOk
            );
            let mut p = packet();
            assert_eq!(
                unsafe { fairway_sched_dequeue(h, &mut p) },
                FairwayStatus::FairwayErrPanic
            );
            assert_eq!(p, packet(), "nothing written on a panic");
            assert_poisoned(h);
        }
    }

    /// Every name in `NOALIAS_DEQUEUE` is a catalogue scheduler's (a
    /// renamed scheduler would otherwise lose its dequeue shape silently).
    #[test]
    fn the_noalias_table_names_catalogue_schedulers() {
        let names: Vec<&str> = fairway_core::SchedKind::ALL
            .iter()
            .map(|k| k.name())
            .collect();
        for name in NOALIAS_DEQUEUE {
            assert!(names.contains(name), "{name} is not in {names:?}");
        }
    }

    #[test]
    fn misaligned_handles_and_out_pointers_are_refused() {
        let h = trap_handle(false);
        assert_eq!(
            unsafe { fairway_sched_enqueue(h, 0, 7 as *mut c_void, 12) },
            FairwayStatus::FairwayOk
        );
        let mut p = packet();
        // Every misaligned address inside the tag word reads a word that
        // is not the live tag.
        for k in 1..8 {
            let m = unsafe { h.cast::<u8>().add(k) }.cast::<FairwayScheduler>();
            let invalid = FairwayStatus::FairwayErrInvalidHandle;
            assert_eq!(
                unsafe { fairway_sched_enqueue(m, 0, null_mut(), 12) },
                invalid
            );
            assert_eq!(unsafe { fairway_sched_dequeue(m, &mut p) }, invalid);
            assert_eq!(unsafe { fairway_sched_destroy(m) }, invalid);
        }
        // A null or misaligned `out` is refused with its message, and the
        // packet stays queued.
        assert_eq!(
            unsafe { fairway_sched_dequeue(h, null_mut()) },
            FairwayStatus::FairwayErrNullPointer
        );
        assert_eq!(message(h), "dequeue: out is null");
        let mut buf = [0u64; 4];
        let skewed = unsafe { buf.as_mut_ptr().cast::<u8>().add(4) }.cast::<FairwayPacket>();
        assert_eq!(
            unsafe { fairway_sched_dequeue(h, skewed) },
            FairwayStatus::FairwayErrInvalidArgument
        );
        assert_eq!(message(h), "dequeue: out is not aligned for its type");
        assert_eq!(
            unsafe { fairway_sched_dequeue(h, &mut p) },
            FairwayStatus::FairwayOk
        );
        assert_eq!((p.data as usize, p.len, p.flow), (7, 12, 0));
        assert_eq!(
            unsafe { fairway_sched_destroy(h) },
            FairwayStatus::FairwayOk
        );
    }

    #[test]
    fn a_length_beyond_u32_is_refused_not_truncated() {
        let h = trap_handle(false);
        let len = (1usize << 32) + 12;
        assert_eq!(
            unsafe { fairway_sched_enqueue(h, 0, null_mut(), len) },
            FairwayStatus::FairwayErrPacketTooLong
        );
        assert!(message(h).contains(&len.to_string()), "{}", message(h));
        let mut s = FairwaySchedStats::default();
        assert_eq!(
            unsafe { fairway_sched_stats(h, &mut s) },
            FairwayStatus::FairwayOk
        );
        assert_eq!(
            (s.queued_packets, s.enqueued_packets, s.rejected_packets),
            (0, 0, 1)
        );
        assert_eq!(
            unsafe { fairway_sched_destroy(h) },
            FairwayStatus::FairwayOk
        );
    }

    /// The handle block, kept as a tombstone after destroy, stays small:
    /// it holds the scheduler's own struct (its arrays are on the heap and
    /// freed by destroy).
    #[test]
    fn a_tombstone_is_small() {
        struct Size;
        impl SchedVisitor<FfiPacket> for Size {
            type Output = usize;
            fn visit<S, F>(self, _make: F) -> usize
            where
                S: Scheduler<FfiPacket> + Send + 'static,
                F: FnOnce(Capacity, Limits) -> S + Send + 'static,
            {
                core::mem::size_of::<SchedBlock<S>>()
            }
        }
        for kind in fairway_core::SchedKind::ALL {
            let size = SchedSpec::parse(kind.name()).unwrap().visit(Size);
            println!("{}: scheduler handle block {size} bytes", kind.name());
            assert!(size <= 1024, "{}: {size}", kind.name());
        }
    }

    /// Each catalogue scheduler gets fast paths compiled for its own type,
    /// where the header's inline calls read them.
    #[test]
    fn every_spec_gets_its_own_fast_paths() {
        let mut seen = Vec::new();
        for kind in fairway_core::SchedKind::ALL {
            let h = build_handle(kind.name(), Capacity::new(4, 8)).unwrap();
            let fast = unsafe { &*h.cast::<FairwaySchedFastPath>() };
            assert_eq!(fast.tag, FAIRWAY_SCHED_LIVE_TAG);
            let state = unsafe { &(*h).value };
            assert_eq!(state.name.to_str().unwrap(), kind.name());
            assert_eq!(fast.enqueue as usize, state.enqueue as usize);
            assert_eq!(fast.dequeue as usize, state.dequeue as usize);
            let f = state.enqueue as usize;
            assert!(!seen.contains(&f), "{} shares its enqueue", kind.name());
            seen.push(f);
            let h = h.cast::<FairwayScheduler>();
            assert_eq!(
                unsafe { fairway_sched_destroy(h) },
                FairwayStatus::FairwayOk
            );
        }
    }
}
