//! The test environment of seeds 003 §7 and 000 §8: which packets arrive
//! when. [`pattern`] names the patterns (`small`, `large`, `full`, `smooth`,
//! `bursty`, `alternate`) and their backlog thresholds; [`controller`]
//! drives them for the link simulation of the guarantee experiment (with
//! the random phase switch of seed 000 §8.3). The cost harness drives the
//! same patterns with its allocation-free loop, [`crate::cost::driver`].

pub mod controller;
pub mod pattern;

pub use controller::{Controller, ControllerConfig};
pub use pattern::{parse_patterns, FlowPick, Pattern, Thresholds, PER_FLOW_CAP};
