//! `fairway shape bench`: the shaper beside the kernel's HTB.

use crate::cmd::error::CliError;
use clap::Args;

/// Arguments of `fairway shape bench`.
#[derive(Args)]
pub struct BenchArgs {}

/// Runs `fairway shape bench`.
pub fn run(_args: BenchArgs) -> Result<(), CliError> {
    Err(CliError::Needs {
        command: "fairway shape bench",
        what: "a fairway built with it (not built yet)",
    })
}
