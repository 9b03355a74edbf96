//! The integration tests of `fairway-ffi`, one module per file, built as
//! one test binary: a binary per file would link the crate, proptest and
//! cbindgen once each. `cargo test -p fairway-ffi --test integration
//! abi_pq::` runs one file's tests.

mod c_build;

mod abi_batch;
mod abi_io;
mod abi_io_groups;
mod abi_pq;
mod abi_sched;
mod c_example;
mod c_inline;
mod header;
mod parameters;
