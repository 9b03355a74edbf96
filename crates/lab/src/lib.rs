//! # fairway-lab: experiments that need the real world
//!
//! `fairway-eval` is the simulation and measurement toolkit on
//! `fairway-core` alone. The experiments here need more: threads (the
//! arbiter benchmark of the PSPAT runtime), sockets and network namespaces
//! (the real-packet benchmark and its testbed), real files and devices (the
//! BFQ thesis' disk experiments), and `fairway reproduce`, which runs all
//! of them to check the papers' claims. This crate sits above `eval`,
//! `runtime` and `disk`; only the CLI sits above it.
//!
//! * [`arbiter_bench`]: the `fairway arbiter-bench` measurement of the
//!   runtime's arbiter (decisions per second and latency, the PSPAT paper
//!   §5.4–5.5), client threads against the arbiter thread;
//! * [`testbed`] (Linux): two network namespaces joined by a veth pair on a
//!   private benchmarking subnet, the HTB configuration of the `tc`
//!   comparison, the kernel's drop counters, a counted early drop at the
//!   receiver's ingress, removal on drop;
//! * [`udp_bench`] (Linux): the PSPAT paper §5.4–§5.5 with real UDP packets on
//!   the testbed, the kernel's HTB and fairway's arbiter side by side;
//! * [`shape_bench`] (Linux): `fairway shape bench`, the shaper beside the
//!   kernel's HTB on three namespaces, the same circuits and traffic;
//! * [`disk`]: the BFQ thesis' experiments on the disk crate's simulator,
//!   emulated device and real storage, with the thesis' numbers;
//! * [`reproduce`]: `fairway reproduce`, the papers' tables and figures
//!   with their claims checked.

pub mod arbiter_bench;
pub mod disk;
pub mod reproduce;
#[cfg(target_os = "linux")]
pub mod shape_bench;
#[cfg(target_os = "linux")]
pub mod testbed;
#[cfg(target_os = "linux")]
pub mod udp_bench;
