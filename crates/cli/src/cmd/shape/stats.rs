//! `fairway shape stats`: statistics of a running shaper.

use crate::cmd::error::CliError;
use clap::Args;

/// Arguments of `fairway shape stats`.
#[derive(Args)]
pub struct StatsArgs {}

/// Runs `fairway shape stats`.
pub fn run(_args: StatsArgs) -> Result<(), CliError> {
    Err(CliError::Needs {
        command: "fairway shape stats",
        what: "a fairway built with it (not built yet)",
    })
}
