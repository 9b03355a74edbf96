//! The test environment of seeds 003 §7 and 000 §8: which packets arrive
//! when. [`pattern`] names the patterns (`small`, `large`, `full`, `smooth`,
//! `bursty`, `alternate`) and their backlog thresholds; [`controller`] is
//! the one controller that drives them, both for the link simulation of the
//! guarantee experiment (with the random phase switch of seed 000 §8.3) and
//! for the cost harness's timed loop ([`crate::cost::driver`]); [`levels`]
//! is its O(1) least-backlogged flow choice.

pub mod controller;
pub mod levels;
pub mod pattern;

pub use controller::{
    Budget, Controller, ControllerConfig, Draws, SplitMix64, TimedController, TrafficController,
    Unlimited,
};
pub use pattern::{parse_patterns, FlowPick, Pattern, Thresholds, PER_FLOW_CAP};
