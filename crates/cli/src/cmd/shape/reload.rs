//! `fairway shape reload`: a changed configuration applied to a running shaper.

use crate::cmd::error::CliError;
use clap::Args;

/// Arguments of `fairway shape reload`.
#[derive(Args)]
pub struct ReloadArgs {}

/// Runs `fairway shape reload`.
pub fn run(_args: ReloadArgs) -> Result<(), CliError> {
    Err(CliError::Needs {
        command: "fairway shape reload",
        what: "a fairway built with it (not built yet)",
    })
}
