//! Flags and helpers the `fairway disk` experiments share.

use super::error::{DiskCmdError, FlagError};
use clap::Args;
use fairway_disk::model::DiskModel;
use fairway_disk::readahead::ReadAhead;
use fairway_eval::cost::chart::{write_svg, ChartSpec, Series};
use fairway_lab::disk::load_drive;
use indicatif::ProgressBar;
use std::path::Path;

/// Flags shared by the experiments.
#[derive(Args, Clone)]
pub struct Common {
    /// One JSON object per result line instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write an SVG chart here.
    #[arg(long, value_name = "PATH.svg")]
    pub chart: Option<String>,
    /// Disk parameters (TOML, fields as in presets/ibm-dtla-307030.toml, at
    /// most 1 MiB, at least 1966080 sectors of capacity; a bad value is
    /// reported as FILE:LINE:COLUMN); default: the built-in IBM-DTLA-307030.
    #[arg(long, value_name = "FILE.toml")]
    pub disk: Option<String>,
    /// A short version for CI (smaller files, shorter runs).
    #[arg(long)]
    pub quick: bool,
}

/// The sequential readers' kernel read-ahead.
#[derive(Args, Clone)]
pub struct ReadAheadArg {
    /// Kernel read-ahead of the sequential readers, KiB: a multiple of 128
    /// (one 128 KiB request each) up to 16384; 128 is Linux 2.6.21's
    /// default, the thesis' kernel; 0 makes the readers strictly
    /// synchronous. Example: --readahead-kb 0
    #[arg(long, value_name = "KIB", default_value_t = 128)]
    pub readahead_kb: u64,
}

impl ReadAheadArg {
    /// The read-ahead the flag gives.
    pub fn get(&self) -> Result<ReadAhead, DiskCmdError> {
        ReadAhead::kib(self.readahead_kb).map_err(|error| {
            FlagError::Invalid {
                flag: "--readahead-kb",
                error: error.into(),
            }
            .into()
        })
    }
}

/// The drive of `--disk`. Every experiment loads the drive first, so the
/// chart path is checked here, before the run, not after it.
pub fn load_disk(c: &Common) -> Result<DiskModel, DiskCmdError> {
    if let Some(p) = &c.chart {
        crate::cmd::outputs::check_chart_file("--chart", Path::new(p))?;
    }
    Ok(load_drive(c.disk.as_deref())?)
}

/// A progress bar of `total` steps (none with `--json`).
pub fn bar(total: u64, json: bool) -> ProgressBar {
    crate::cmd::progress::bar(Some(total), crate::cmd::progress::COUNTED, json)
}

/// A comma-separated list of numbers.
pub fn parse_list<T: std::str::FromStr>(
    flag: &'static str,
    text: &str,
) -> Result<Vec<T>, DiskCmdError> {
    text.split(',')
        .map(|s| {
            s.trim().parse().map_err(|_| {
                FlagError::NotANumber {
                    flag,
                    text: s.to_string(),
                }
                .into()
            })
        })
        .collect()
}

/// Prints `v` as one JSON line.
pub fn json_line(v: &impl serde::Serialize) -> Result<(), DiskCmdError> {
    crate::outln!("{}", crate::cmd::json::line(v)?);
    Ok(())
}

/// Two decimals.
pub fn fmt2(x: f64) -> String {
    format!("{x:.2}")
}

/// Writes the chart to `path`, if one was asked for.
pub fn chart(
    path: &Option<String>,
    spec: ChartSpec,
    series: &[Series],
) -> Result<(), DiskCmdError> {
    if let Some(p) = path {
        write_svg(Path::new(p), &spec, series)?;
        crate::errln!("chart written to {p}");
    }
    Ok(())
}
