//! # fairway-disk: proportional-share disk scheduling (BFQ) and a disk simulator
//!
//! This crate follows chapter 2 and appendix C of the BFQ thesis
//! (Checconi's thesis): BFQ (budget fair queueing) with its internal
//! B-WF2Q+ budget scheduler, the baselines it is compared with, a model of
//! a rotating disk and a deterministic discrete-event simulator to run the
//! thesis' experiments, which live in `fairway-lab`.
//!
//! * [`DiskScheduler`] is the trait every disk scheduler implements:
//!   `add_request` / `dispatch` / `complete`, time passed in by the caller.
//! * [`bfq`]: BFQ (§2.1), [`bwf2q`]: its B-WF2Q+ engine (§2.1.4),
//!   [`hier`]: B-WF2Q+ over groups of applications (hierarchical shares),
//!   [`dmclock`]: reservations and limits (dmClock's tags),
//!   [`queue`]: per-application C-LOOK/FIFO request queues,
//!   [`split`]: a request dispatched in pieces, put back together.
//! * [`baseline`]: C-LOOK, AS, CFQ-like, SCAN-EDF, YFQ (§2.3–2.4).
//! * [`catalogue`]: every scheduler by name, its parameters and their
//!   ranges, specs such as `bfq:b_max=8192` and the one place a spec
//!   becomes a scheduler.
//! * [`model`]: the rotating-disk model and the IBM-DTLA-307030 preset;
//!   [`sim`]: the discrete-event simulator; [`workload`]: application
//!   models, [`readahead`]: their kernel read-ahead.
//! * [`check`]: online checks of Theorems 2.1 and 2.2 and of idling.
//! * [`emulator`]: the real-time emulated disk (App. C);
//!   [`file_device`]: BFQ in front of a real file or block device with
//!   `pread`, [`uring_device`]: the same with io_uring; [`cost`]: the
//!   add+dispatch cost benchmark.
//!
//! ```
//! use fairway_disk::{AppId, AppSpec, Bfq, BfqConfig, DiskScheduler, Dispatch, Request, MS};
//!
//! let mut bfq = Bfq::new(BfqConfig::simplified(4096).unwrap()).unwrap();
//! bfq.add_app(AppId(0), AppSpec::weight(2)).unwrap();
//! bfq.add_app(AppId(1), AppSpec::weight(1)).unwrap();
//! bfq.add_request(0, Request::read(AppId(0), 1000, 256)).unwrap();
//! bfq.add_request(0, Request::read(AppId(1), 9_000_000, 256)).unwrap();
//! let Dispatch::Serve(r) = bfq.dispatch(0) else { panic!() };
//! // ... the disk serves r, then reports the completion:
//! bfq.complete(10 * MS, &r);
//! // r's application has nothing queued: BFQ idles up to T_wait = 4 ms for
//! // its next (synchronous) request instead of seeking to the other one.
//! assert_eq!(bfq.dispatch(10 * MS), Dispatch::Idle(Some(14 * MS)));
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod baseline;
pub mod bfq;
pub mod bwf2q;
pub mod catalogue;
pub mod check;
pub mod cost;
pub mod dmclock;
pub mod emulator;
pub mod engine;
pub mod file_device;
pub mod hier;
pub mod model;
pub mod queue;
pub mod readahead;
pub mod request;
pub mod scheduler;
pub mod sim;
pub mod split;
pub mod uring_device;
pub mod workload;

pub use bfq::{Bfq, BfqConfig, BfqStats, TimeBudget};
pub use catalogue::{DiskSchedKind, DiskSchedSpec, DiskSpecError};
pub use queue::RequestQueue;
pub use request::{
    AddError, AddErrorKind, AppId, Direction, DiskConfigError, Nanos, Request, MS, SECTOR_BYTES,
};
pub use scheduler::{AppSpec, DiskScheduler, Dispatch, IoClass, Rate, MAX_WEIGHT, MAX_WEIGHT_SUM};
