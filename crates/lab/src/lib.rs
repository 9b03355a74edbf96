//! # fairway-lab: experiments that need the real world
//!
//! `fairway-eval` is the simulation and measurement toolkit on
//! `fairway-core` alone. The experiments here need more: threads (the
//! arbiter benchmark of the PSPAT runtime), sockets and network namespaces
//! (the real-packet benchmark and its testbed), real files and devices (the
//! BFQ thesis' disk experiments), and `fairway reproduce`, which runs all
//! of them to check the papers' claims. This crate sits above `eval`,
//! `runtime` and `disk`; only the CLI sits above it.

pub mod disk;
