//! The simulation tests of `fairway-disk`, one module per file, built as
//! one test binary (a binary per file would link the crate and proptest
//! once each). `cargo test -p fairway-disk --test integration guarantees::`
//! runs one file's tests.

mod bfq_ext;
mod bfq_idling;
mod emulator;
mod engine;
mod engine_qos;
mod file_device;
mod groups_qos;
mod guarantees;
mod schedulers;
mod uring_device;
mod warm_bound;
mod warm_split;
