//! # fairway-ffi: the C ABI
//!
//! Lets C programs (DPDK applications, BESS/VPP-like pipelines, kernel-bypass
//! stacks, storage engines) link fairway's packet schedulers, its cFFS
//! integer priority queue (the Eiffel paper §3.1.1) and its embeddable I/O
//! scheduler (`fairway_disk::engine`, see [`io`]) as a static or shared
//! library. The header,
//! `include/fairway.h`, is generated from this crate by `cbindgen` and
//! committed; a test regenerates it and fails if it differs.
//!
//! ## Contract
//! * **Opaque handles.** [`fairway_sched_create`] builds a scheduler from a
//!   textual spec (`"qfq+:m=8"`, `"drr"`, ... as the `fairway` CLI accepts)
//!   and returns a `FairwayScheduler *`; [`fairway_pq_create`] builds a cFFS
//!   queue; [`fairway_io_create`] an I/O engine. Each handle is used by one
//!   thread at a time (it may move between threads); the library holds no
//!   global lock on the fast path.
//! * **Status codes.** Every function returns a [`FairwayStatus`]: `0` is
//!   success, positive values are non-error outcomes (`FAIRWAY_EMPTY`,
//!   `FAIRWAY_CLAMPED`, `FAIRWAY_TIMEOUT`), negative values are errors.
//!   After an error, [`fairway_sched_last_error`] /
//!   [`fairway_pq_last_error`] / [`fairway_io_last_error`] return a
//!   NUL-terminated message naming the parameter and its allowed range.
//!   A failed call changes nothing (the packet stays the caller's).
//! * **Nothing unwinds into C.** Each call runs under `catch_unwind`; a
//!   panic (a bug: the core promises none on user input) becomes
//!   `FAIRWAY_ERR_PANIC` and *poisons* the handle: every later call except
//!   destroy returns `FAIRWAY_ERR_POISONED`, because the data structure may
//!   be half-updated. (An allocation failure aborts the process as in any
//!   Rust or C++ program; the creation limits keep allocations bounded.)
//! * **Misuse detection.** A null handle, a handle of the other kind, and a
//!   handle already destroyed are reported as `FAIRWAY_ERR_INVALID_HANDLE`,
//!   never dereferenced as live: each handle starts with a tag word naming
//!   its kind and state (live, poisoned, destroyed), checked with one
//!   compare, and destroy frees the scheduler but keeps the handle block as
//!   a tombstone whose tag says "destroyed" (so a stale pointer reads valid
//!   memory rather than freed memory; tombstones stay reachable from a
//!   global table, so leak checkers do not report them). A pointer that
//!   never came from this library cannot be detected in general.
//! * **Fast single-packet calls.** `fairway_sched_enqueue` and
//!   `fairway_sched_dequeue` check the handle and jump to code compiled for
//!   the scheduler's concrete type, through function pointers at the start
//!   of the handle ([`FairwaySchedFastPath`], layout
//!   [`FAIRWAY_SCHED_LAYOUT`]); the header defines both calls `static
//!   inline` too, with the same checks, so C callers call that code
//!   directly (see [`sched`]).
//! * **The library never owns packet memory.** A packet is an opaque pointer
//!   plus a length; the pointer comes back unchanged from dequeue, peek or
//!   flow removal and is never read or written by the library.
//!
//! Modules: [`status`] (codes and their names), `handle` (the tagged
//! handle and the catch-unwind guard), [`sched`] (the scheduler API), [`pq`]
//! (the cFFS API), [`io`] (the I/O scheduler API).
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod handle;
pub mod io;
pub mod pq;
pub mod sched;
pub mod status;

pub use io::buf::{
    fairway_io_buf_alloc, fairway_io_buf_data, fairway_io_buf_free, fairway_io_buf_len,
    FairwayIoBuf, FAIRWAY_IO_BUF_ALIGN, FAIRWAY_IO_MAX_BUF_LEN,
};
pub use io::groups::{
    fairway_io_add_client_ex, fairway_io_add_group, fairway_io_add_group_ex,
    fairway_io_remove_group, FairwayIoClientOptions, FairwayIoGroupOptions, FAIRWAY_IO_RATE_BYTES,
    FAIRWAY_IO_RATE_IOPS,
};
pub use io::{
    fairway_io_add_client, fairway_io_client_stats, fairway_io_close, fairway_io_create,
    fairway_io_create_ex, fairway_io_destroy, fairway_io_last_error, fairway_io_open,
    fairway_io_outstanding, fairway_io_poll, fairway_io_remove_client, fairway_io_shutdown,
    fairway_io_submit, fairway_io_wait, FairwayIoClientStats, FairwayIoCompletion, FairwayIoEngine,
    FAIRWAY_IO_INLINE, FAIRWAY_IO_MAX_CLIENTS, FAIRWAY_IO_MAX_IN_FLIGHT, FAIRWAY_IO_MAX_QUEUED,
    FAIRWAY_IO_OPEN_DIRECT, FAIRWAY_IO_OPEN_WRITE, FAIRWAY_IO_OP_READ, FAIRWAY_IO_OP_WRITE,
    FAIRWAY_IO_WAIT_FOREVER,
};
pub use pq::{
    fairway_pq_create, fairway_pq_destroy, fairway_pq_extract_min, fairway_pq_insert,
    fairway_pq_last_error, fairway_pq_peek_min, fairway_pq_remove, fairway_pq_soonest_rank,
    fairway_pq_stats, FairwayPq, FairwayPqStats, FAIRWAY_PQ_MAX_BUCKETS_PER_HALF,
    FAIRWAY_PQ_MAX_CAPACITY,
};
pub use sched::{
    fairway_sched_add_flow, fairway_sched_backlog, fairway_sched_create, fairway_sched_dequeue,
    fairway_sched_dequeue_batch, fairway_sched_destroy, fairway_sched_enqueue,
    fairway_sched_enqueue_batch, fairway_sched_flow_backlog, fairway_sched_flow_config,
    fairway_sched_last_error, fairway_sched_name, fairway_sched_peek,
    fairway_sched_reconfigure_flow, fairway_sched_remove_flow, fairway_sched_stats, FairwayBacklog,
    FairwayDequeueFn, FairwayEnqueueFn, FairwayFlowConfig, FairwayPacket, FairwaySchedFastPath,
    FairwaySchedStats, FairwayScheduler, FAIRWAY_MAX_FLOWS, FAIRWAY_MAX_PACKETS,
    FAIRWAY_SCHED_LAYOUT, FAIRWAY_SCHED_LIVE_TAG,
};
pub use status::{fairway_status_name, FairwayStatus};
