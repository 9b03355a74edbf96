//! The test environment of the QFQ paper §7 and the QFQ+ paper §8: which packets arrive
//! when, for both the guarantee experiment and the cost harness.
//! [`pattern`] names the patterns (`small`, `large`, `full`, `smooth`,
//! `bursty`, `alternate`), their grammar and their backlog thresholds;
//! [`controller`] is the one controller that drives them, in the link
//! simulation of the guarantee experiment (with the random phase switch of
//! the QFQ+ paper §8.3) and in the cost harness's timed loop
//! ([`crate::cost::driver`]); [`levels`] is its O(1) least-backlogged flow
//! choice and [`draws`] its random sources.

pub mod controller;
pub mod draws;
pub mod levels;
pub mod pattern;

pub use controller::{
    Budget, Controller, ControllerConfig, ControllerError, Emit, PerPacket, TimedController,
    TrafficController, Unlimited,
};
pub use draws::{Draws, SplitMix64};
pub use pattern::{parse_patterns, FlowPick, Pattern, PatternError, Thresholds, PER_FLOW_CAP};
