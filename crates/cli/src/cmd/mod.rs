//! One module per subcommand; each exposes an `Args` struct and `run`.

pub mod arbiter_bench;
pub mod bench;
pub mod bench_pq;
pub mod common;
pub mod demo;
pub mod disk;
pub mod error;
pub mod flag;
pub mod guarantees;
pub mod json;
pub mod netsim;
pub mod outputs;
pub mod policy;
pub mod policy_bench;
pub mod prereq;
pub mod progress;
pub mod reproduce;
pub mod scheds;
pub mod shape;
pub mod stdout;
pub mod udp_bench;
pub mod units;
