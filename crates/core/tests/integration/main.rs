//! The integration tests of `fairway-core`, one module per file, built as
//! one test binary: a binary per file would link the crate and proptest
//! once each. `cargo test -p fairway-core --test integration pq_props::`
//! runs one file's tests.

mod aqm_models;
mod common;

mod codel_model;
mod constructor_ranges;
mod drr_model;
mod drr_quantum;
mod fq_codel_model;
mod fq_codel_sparse;
mod fq_codel_ways;
mod long_idle;
mod pq_props;
mod properties;
mod qfq_config;
mod qfq_differential;
mod qfq_props;
mod qfq_refill;
mod s_kps;
mod service_order_hash;
mod validation;
