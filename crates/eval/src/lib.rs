//! # fairway-eval: how schedulers are measured
//!
//! * [`workload`]: flow sets (`WEIGHTxCOUNT[@MAXLEN]`, the QFQ+ paper §8 presets)
//!   and packet-size distributions;
//! * [`traffic`]: the test environment of the QFQ paper §7 and the QFQ+ paper §8: the
//!   patterns and the enqueue/dequeue-phase controller;
//! * [`cost`]: the cost harness (ns per enqueue/dequeue pair, sweeps, charts);
//! * [`link_sim`]: a scheduler feeding a constant-rate link through a FIFO
//!   transmit queue, recording every packet;
//! * [`fluid`]: the ideal GPS fluid reference;
//! * [`metrics`]: T-WFI, B-WFI, delay versus GPS, and the papers' bounds;
//! * [`guarantees`]: the QFQ+ paper §8.3 experiment end to end;
//! * [`pq_bench`]: the priority-queue benchmarks;
//! * [`chart`]: SVG line charts of every measurement; [`machine`]: the CPU
//!   model and core count printed with the figures.
//! * [`limits`]: the memory and work limits experiments check their sizes
//!   against before they allocate;
//! * [`netsim`]: a packet-level network simulator (links, output queues,
//!   sources, end-to-end delays) and the QFQ paper's Fig. 8 / Tables 2–3.
//!
//! Everything is seeded and reproducible. Of fairway's crates this one
//! depends on `fairway-core` alone: it writes charts and reads policy
//! files, but starts no threads and opens no sockets or devices. The
//! experiments that do (the runtime's arbiter benchmark, the real-packet
//! benchmark and its network-namespace testbed, the disk experiments,
//! `fairway reproduce`, which runs them all) are in `fairway-lab`.

pub mod chart;
pub mod cost;
pub mod fluid;
pub mod guarantees;
pub mod limits;
pub mod link_sim;
pub mod machine;
pub mod metrics;
pub mod netsim;
pub mod policy;
pub mod pq_bench;
pub mod traffic;
pub mod workload;

/// The former path of [`traffic::controller`].
pub use traffic::controller;
