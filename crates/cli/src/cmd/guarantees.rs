//! `fairway guarantees`: T-WFI / B-WFI of schedulers against the fluid reference.

use clap::Args;

/// Arguments of `fairway guarantees`.
#[derive(Args, Default)]
pub struct GuaranteesArgs {}

/// Runs the measurement.
pub fn run(_args: GuaranteesArgs) -> Result<(), String> {
    Err("guarantees not implemented yet".into())
}
