//! A small packet-level network simulator: nodes joined by directed links
//! of given bandwidth and propagation delay, one output queue per link run
//! by any scheduler, constant-bit-rate, greedy and Pareto on/off sources,
//! and per-flow end-to-end delay statistics — enough to reproduce the ns-2
//! experiment of the QFQ paper §6 (Fig. 8, Tables 2 and 3) with fairway's own
//! schedulers.
//!
//! * [`network`]: the model ([`Network`], [`LinkSpec`], [`FlowSpec`],
//!   [`Source`]) and the discrete-event engine ([`Network::run`]);
//! * [`fig8`]: the topology and traffic of the QFQ paper Fig. 8, and
//!   Tables 2–3 for a list of schedulers.
//!
//! Time is integer nanoseconds; a packet of `len` bytes holds a link of
//! `R` bit/s for `⌈8·len·10^9 / R⌉` ns. Output queues keep at most
//! [`Network::per_flow_buffer`] packets per flow (drop-tail per flow, as a
//! per-flow queueing router does), and count the drops.

mod error;
pub mod fig8;
pub mod network;

pub use error::{NetsimError, MAX_SIMULATED_S};
pub use network::{
    FlowReport, FlowSpec, LinkSpec, NetPacket, NetReport, Network, SchedChoice, SchedFactory,
    Source,
};
