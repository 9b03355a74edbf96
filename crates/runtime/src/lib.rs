//! # fairway-runtime: the architecture of the PSPAT paper (§3)
//!
//! Scheduling decisions are made by one **arbiter** thread; clients never
//! contend with each other; granted packets are transmitted by the clients
//! in parallel.
//!
//! * [`mailbox`]: the client queue ([`ClientQueue`]), an SPSC mailbox as in
//!   §3.2.2: the arbiter detects new entries from slot contents, the client
//!   learns its grants from the arbiter's `head` and clears its own slots.
//! * [`arbiter`]: `do_scan()` of Fig. 3 over any
//!   [`Scheduler`](fairway_core::Scheduler): scan at most every Δ_A,
//!   enqueue, grant while the [`EmulatedLink`] is idle, §4.1 carry-over.
//! * [`wakeup`]: sleeping and waking without lost wake-ups (§3.1, Fig. 4),
//!   both `kick_arbiter` variants.
//! * [`runtime`]: [`RuntimeBuilder`] → [`Client`]s + [`ArbiterHandle`];
//!   backpressure ([`SubmitError`]), departed clients, accounting, pausing
//!   and restarting the arbiter ([`PausedRuntime`]).
//! * [`dispatch`]: the arbiter thread as dispatcher too, transmitting
//!   granted packets after each scan ([`RuntimeBuilder::spawn_dispatching`],
//!   [`DispatchingHandle`]).
//! * [`backend`]: where `drain()` sends packets ([`NullBackend`],
//!   [`CountingBackend`], [`UdpBackend`]).
//! * [`net`] (Linux): real packets — UDP back-end with `sendmmsg`, a
//!   receiver measuring one-way delay (§5.4–5.5).
//! * The experiments on top of the runtime live in `fairway-lab`: the
//!   `fairway arbiter-bench` measurement (§5.4, §5.5) in
//!   `fairway_lab::arbiter_bench`, and the namespace/veth testbed of the
//!   real-packet runs in `fairway_lab::testbed`.
//!
//! ```
//! use fairway_runtime::*;
//! use fairway_core::{Drr, Scheduler};
//! let mut b = RuntimeBuilder::new(RuntimeConfig::default()).unwrap();
//! let mut client = b.add_client::<u32>(ClientConfig::default()).unwrap();
//! let arbiter = b.spawn_send(|cap, lim| Box::new(Drr::<u32>::with_options(cap, lim, None))).unwrap();
//! client.submit(1000).unwrap();
//! let mut tx = CountingBackend::default();
//! while tx.packets == 0 { client.drain_now(&mut tx); }
//! assert_eq!(tx.bytes, 1000);
//! arbiter.stop().unwrap();
//! ```
//!
//! ## Verification
//! `cargo test -p fairway-runtime` runs unit tests and real-thread stress
//! tests. The queue and sleep/kick protocols are model-checked with loom,
//! as CI (`.ci/run`) does on every run:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p fairway-runtime --lib loom
//! ```
#![warn(missing_docs)]

pub mod accounts;
pub mod affinity;
pub mod arbiter;
pub mod backend;
pub mod clock;
pub mod dispatch;
pub mod link;
pub mod mailbox;
#[cfg(all(target_os = "linux", not(loom)))]
pub mod net;
pub mod runtime;
mod sync;
pub mod wakeup;

#[cfg(loom)]
mod loom_tests;

pub use accounts::{PacketAccounts, RuntimeAccounts};
pub use affinity::{rt_throttle_runtime_us, set_realtime_priority, MAX_RT_PRIORITY};
pub use arbiter::{Arbiter, ArbiterStats, ScanGapWindow, ScanResult};
pub use backend::{Backend, CountingBackend, FailingBackend, NullBackend, UdpBackend};
pub use clock::MonotonicClock;
pub use dispatch::Dispatch;
pub use link::EmulatedLink;
pub use mailbox::{client_queue, ClientQueue, QueueDrainer, QueuePusher, QueueReader};
pub use runtime::{
    ArbiterHandle, ArbiterMode, Client, ClientConfig, ClientDrainer, ClientStats, ClientSubmitter,
    DispatchingHandle, PausedRuntime, RestartError, RuntimeBuilder, RuntimeConfig, RuntimeError,
    SubmitError, SubmitErrorKind, MAX_DURATION_NS, MAX_TOTAL_QUEUE_LEN,
};
pub use wakeup::KickMode;
