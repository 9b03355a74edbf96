//! `fairway shape reload`: asks the running shaper (over its control
//! socket) to re-read its configuration file, and prints its answer:
//! exit 0 when the new configuration runs, 1 when it was refused (the
//! old one keeps running) or no shaper answered.

use super::control::{ask, ControlFailed};
use crate::cmd::error::CliError;
use crate::cmd::flag::FlagError;
use clap::Args;
use fairway_shaper::control::protocol::{Request, MAX_RELOAD_TIMEOUT_MS};
use fairway_shaper::control::DEFAULT_SOCKET;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `fairway shape reload`.
#[derive(Args)]
#[command(after_help = "Examples:\n  fairway shape reload\n  \
fairway shape reload --socket /tmp/shape.sock --timeout 30")]
pub struct ReloadArgs {
    /// The running shaper's control socket (its --control).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_SOCKET)]
    pub socket: PathBuf,
    /// How long to wait for the reload's outcome, seconds (1..=600).
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub timeout: u64,
}

/// Runs `fairway shape reload`.
pub fn run(args: ReloadArgs) -> Result<(), CliError> {
    let max = MAX_RELOAD_TIMEOUT_MS / 1000;
    if args.timeout == 0 || args.timeout > max {
        return Err(FlagError::ValueOutOfRange {
            flag: "--timeout",
            value: args.timeout.to_string(),
            range: format!("1..={max} (seconds)"),
        }
        .into());
    }
    let request = Request::Reload {
        timeout_ms: Some(args.timeout * 1000),
    };
    // The socket's answer comes after the reload's wait; a margin for
    // the answer itself.
    let wait = Duration::from_secs(args.timeout + 5);
    let response = ask(&args.socket, &request, wait)?;
    let Some(reply) = response.reload else {
        return Err(ControlFailed::Shaper("a response without the reload's outcome".into()).into());
    };
    for line in reply.text.lines() {
        crate::outln!("{line}");
    }
    if reply.applied {
        crate::outln!("reloaded: the new configuration runs");
        Ok(())
    } else {
        Err(ControlFailed::Refused.into())
    }
}
