//! # fairway-runtime (placeholder until issue 6 lands)
//!
//! The PSPAT-style architecture of seed 001: client queues, the arbiter
//! loop, link emulation and I/O back-ends.
