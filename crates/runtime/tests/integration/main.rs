//! The integration tests of `fairway-runtime` that need no network
//! namespace, one module per file, built as one test binary (a binary per
//! file would link the crate once each). `cargo test -p fairway-runtime
//! --test integration stress::` runs one file's tests.

mod serial;

mod dispatch;
mod faults;
mod parameter_ranges;
mod stress;
