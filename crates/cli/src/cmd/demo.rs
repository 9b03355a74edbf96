//! `fairway demo`: compare the available schedulers on a built-in scenario.

use clap::Args;

/// Arguments of `fairway demo`.
#[derive(Args, Default)]
pub struct DemoArgs {}

/// Runs the demo.
pub fn run(_args: DemoArgs) -> Result<(), String> {
    Err("demo not implemented yet".into())
}
