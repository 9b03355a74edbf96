//! # fairway-eval: how schedulers are measured
//!
//! * [`workload`]: flow sets (`WEIGHTxCOUNT[@MAXLEN]`, seed 000 §8 presets)
//!   and packet-size distributions;
//! * [`controller`]: the enqueue/dequeue-phase controller of seeds 003 §7 and 000 §8;
//! * [`cost`]: the cost harness (ns per enqueue/dequeue pair, sweeps, charts);
//! * [`link_sim`]: a scheduler feeding a constant-rate link through a FIFO
//!   transmit queue, recording every packet;
//! * [`fluid`]: the ideal GPS fluid reference;
//! * [`metrics`]: T-WFI, B-WFI, delay versus GPS, and the papers' bounds;
//! * [`guarantees`]: the seed 000 §8.3 experiment end to end.
//!
//! Everything is seeded and reproducible.

pub mod controller;
pub mod cost;
pub mod fluid;
pub mod guarantees;
pub mod link_sim;
pub mod metrics;
pub mod policy;
pub mod pq_bench;
pub mod workload;
