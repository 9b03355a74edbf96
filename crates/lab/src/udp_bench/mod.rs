//! # Real packets: the PSPAT paper's UDP experiments against the kernel's
//! scheduler
//!
//! §5.4–§5.5 of the PSPAT paper measure the arbiter architecture with real
//! UDP senders, side by side with no scheduler and with the kernel's TC.
//! This module runs the same configurations in one run, on a testbed the
//! run creates (two network namespaces and a veth pair, see
//! [`crate::testbed`]):
//!
//! * `none`: clients send directly, no qdisc;
//! * `tc`: clients send directly, HTB on the egress device, one class per
//!   client (the kernel here has HTB and TBF, not the QFQ/DRR qdiscs);
//! * `fairway`: clients submit to the arbiter (default DRR with a quantum of
//!   one 60-byte packet, §5.2) and transmit what it granted;
//! * `fairway-dispatch`: clients only submit; the arbiter thread transmits
//!   what it granted (`dispatcher.rs`, the dispatcher of the PSPAT paper §3).
//!
//! Experiments ([`experiments`]):
//! * throughput versus number of clients, 60-byte packets (Fig. 6);
//! * the one-way latency of a *target* client sending 4 kpps with weight
//!   50, alone (Fig. 8) and with the other clients sending flat out
//!   (Fig. 10), Δ_A = Δ_C = 500 ns;
//! * the 98th percentile of that latency versus the configured link rate
//!   (Fig. 9), locating each configuration's overload threshold;
//! * throughput of each transport (UDP `sendmmsg`, `AF_PACKET`
//!   `sendmmsg`, `AF_PACKET` TX ring), interleaved in one run;
//! * the Eq. (1) bound of §4 checked on the target's measured scheduling
//!   delay ([`bound`]).
//!
//! Every trial checks that nothing is lost uncounted: packets sent =
//! received + drops counted by the kernel, and each client's offered
//! packets = sent + refused + left queued.
//!
//! The files: [`config`] (the run's parameters) drives [`experiments`],
//! which runs trials ([`trial`]: what one trial runs is a [`spec`], what it
//! measured a [`result`]); a trial's client threads (`clients.rs`) share
//! one start instant (`start.rs`) and send through a socket of any
//! transport (`sender.rs`), a [`sampler`] counts what crosses the link,
//! and [`lock`] keeps trials of different processes apart. [`report`]
//! writes tables, CSV and charts; [`error`] says what failed.

pub mod bound;
mod clients;
pub mod config;
mod dispatcher;
pub mod error;
pub mod experiments;
pub mod lock;
pub mod report;
pub mod result;
pub mod sampler;
mod sender;
pub mod spec;
mod start;
pub mod trial;

pub use bound::{BoundCheck, BoundInput};
pub use clients::CATCH_UP_NS;
pub use config::{BenchConfig, Experiment, RT_COOLDOWN_MS, SWEPT};
pub use error::{BenchError, ConfigError, ReportError, TrialError};
pub use experiments::{run, ObservedBound, Report, Targets};
pub use result::{FlowResult, KernelCounts, Percentiles, TargetResult, TrialResult};
pub use spec::{ClientClock, FlowSpec, Mode, Placement, ReceivePath, Transport, TrialSpec};
pub use trial::run_trial;
