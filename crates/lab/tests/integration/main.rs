//! The integration tests of `fairway-lab`, one module per file, built as
//! one test binary: a binary per file would link the crate and its
//! dependencies once each. `cargo test -p fairway-lab --test integration NAME::`
//! runs one file's tests.

mod disk_shares;
mod disk_validate;
mod kernel_bfq;
mod net;
mod udp_bench;
