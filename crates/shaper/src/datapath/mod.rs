//! # The data path of `fairway shape`
//!
//! A bump in the wire between two interfaces: frames arriving on the
//! Internet side are shaped toward the subscribers (download), frames
//! from the subscribers toward the Internet (upload). Per direction:
//!
//! - [`port`]: the frame I/O back-ends behind one trait, one socket per
//!   interface: [`ring`] (a TPACKET_V3 receive ring, batched sends, the
//!   default), [`frame_io`] (one system call per frame) and, with the
//!   `ebpf` feature, `xdp` (AF_XDP sockets); frames are
//!   received into the [`pool`], its slots sized for the interfaces' MTU;
//! - [`headers`] and [`classify`]: a frame's headers and its circuit;
//! - [`tree`] (with [`bucket`] and [`heap`]): the hierarchy of nodes and circuits,
//!   each circuit's guarantee and ceiling, FQ-CoDel inside each circuit;
//! - [`engine`]: classification, queueing and sending together, with the
//!   clock passed in (so the tests drive it in simulated time), and every
//!   frame accounted for ([`stats`]);
//! - [`run`]: the loop over the sockets, the clock and the stop signals;
//! - [`reload`]: a new configuration applied to the running engine, its
//!   queues, counters and statistics kept;
//! - [`slots`]: the running indices a reloaded plan keeps;
//! - [`reload_request`]: reload requests from the control socket to the loop;
//! - [`watch`] and [`snapshot`]: rates, delay percentiles and the
//!   statistics the loop hands to the control socket and the metrics
//!   endpoint on request ([`snapshot_request`]);
//! - [`memory`]: the memory a reload frees kept for the next one.

pub mod bucket;
pub mod classify;
pub mod engine;
#[cfg(target_os = "linux")]
pub mod frame_io;
pub mod headers;
pub mod heap;
#[cfg(target_os = "linux")]
pub mod hooks;
pub mod memory;
pub mod node_sched;
pub mod pool;
#[cfg(target_os = "linux")]
pub mod port;
pub mod reload;
pub mod reload_request;
#[cfg(target_os = "linux")]
mod reload_worker;
#[cfg(target_os = "linux")]
pub mod ring;
#[cfg(target_os = "linux")]
pub mod run;
pub mod slots;
pub mod snapshot;
pub mod snapshot_request;
pub mod stats;
pub mod tree;
#[cfg(target_os = "linux")]
pub mod wake;
#[cfg(target_os = "linux")]
pub mod warm_up;
pub mod watch;
#[cfg(all(target_os = "linux", feature = "ebpf"))]
pub mod xdp;

#[cfg(test)]
mod reload_tests;
#[cfg(test)]
pub(crate) mod test_plan;
#[cfg(test)]
mod tree_reference;
#[cfg(test)]
mod tree_tests;
