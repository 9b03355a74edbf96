//! The schedulers BFQ is compared with in the BFQ thesis §2.3–2.4, each small
//! and behind the same [`DiskScheduler`](crate::DiskScheduler) trait:
//!
//! * [`CLook`]: C-LOOK over all requests, work-conserving (T_wait = 0).
//! * [`Anticipatory`]: C-LOOK plus anticipation (AS, fairness policies off):
//!   after a request completes, waits up to T_wait for the same
//!   application's next request and serves it first.
//! * [`Cfq`]: CFQ-like round robin of exclusive time slices T_slice (scaled
//!   by the weight), idling when the active application's queue empties.
//! * [`ScanEdf`]: SCAN-EDF as extended in the thesis (§2.3.1): per-application
//!   relative deadline, absolute deadline from the previous one, rounded up
//!   to a multiple of the granularity Δ, ties in C-LOOK order, optional
//!   T_wait idling after an application's last request.
//! * [`Yfq`]: YFQ (§2.3.2): per-request start/finish tags charging an
//!   *estimated service time*, dispatch in batches of BT_size requests
//!   served in C-LOOK order, optional T_wait idling.

mod anticipatory;
mod cfq;
mod clook;
mod scan_edf;
mod table;
mod yfq;

pub use anticipatory::Anticipatory;
pub use cfq::Cfq;
pub use clook::CLook;
pub use scan_edf::ScanEdf;
pub use yfq::Yfq;

/// Most requests a baseline holds at once; one more is refused
/// (`AddErrorKind::Full`).
pub const MAX_QUEUED: usize = 1 << 20;
