//! The integration tests of `fairway-eval`, one module per file, built as
//! one test binary: a binary per file would link the crate and its
//! dependencies once each. `cargo test -p fairway-eval --test integration NAME::`
//! runs one file's tests.

mod guarantees;
mod netsim_fig8;
mod s_kps_bounds;
mod s_kps_cost;
mod trace_pifo_model;
