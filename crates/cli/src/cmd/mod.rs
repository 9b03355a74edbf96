//! One module per subcommand; each exposes an `Args` struct and `run`.

pub mod common;
pub mod demo;
pub mod guarantees;
