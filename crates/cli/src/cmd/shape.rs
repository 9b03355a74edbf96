//! `fairway shape`: the shaper an operator runs in front of real
//! subscribers. For now only its configuration exists, so `--check` is
//! required: it reads a shaper file (`--config`) or LibreQoS's files
//! directly (`--shaped-devices`, `--network`), checks them
//! (`fairway_shaper::validate`) and prints a summary, or every problem on
//! its own line `file:line[:col]: message` and exits 1.

use super::error::CliError;
use clap::{ArgGroup, Args};
use fairway_shaper::summary::Summary;
use fairway_shaper::Source;
use std::fmt;
use std::path::PathBuf;

/// Arguments of `fairway shape`.
#[derive(Args)]
#[command(
    group(ArgGroup::new("source").required(true).args(["config", "shaped_devices"])),
    after_help = "Examples:\n  fairway shape --check --config examples/shaper/shaper.toml\n  \
fairway shape --check --shaped-devices examples/shaper/ShapedDevices.csv --network examples/shaper/network.json"
)]
pub struct ShapeArgs {
    /// Check the configuration and print a summary; required, since the
    /// data path (frames in and out) is not built yet.
    #[arg(long, required = true)]
    pub check: bool,
    /// The shaper file (TOML), e.g. examples/shaper/shaper.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// LibreQoS's ShapedDevices.csv, read without a shaper file.
    #[arg(long, value_name = "CSV", conflicts_with = "config")]
    pub shaped_devices: Option<PathBuf>,
    /// LibreQoS's network.json; without it the network is flat.
    #[arg(
        long,
        value_name = "JSON",
        requires = "shaped_devices",
        conflicts_with = "config"
    )]
    pub network: Option<PathBuf>,
}

/// A configuration with problems, each already printed on its own line.
#[derive(Debug)]
pub struct ShapeCheckFailed {
    /// How many.
    pub problems: usize,
}

impl fmt::Display for ShapeCheckFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = if self.problems == 1 { "" } else { "s" };
        write!(
            f,
            "{} problem{s} in the configuration (above, one a line)",
            self.problems
        )
    }
}

impl std::error::Error for ShapeCheckFailed {}

/// Runs `fairway shape`.
pub fn run(args: ShapeArgs) -> Result<(), CliError> {
    let (source, label) = match (args.config, args.shaped_devices) {
        (Some(config), _) => {
            let label = config.display().to_string();
            (Source::ShaperFile(config), label)
        }
        (None, Some(csv)) => {
            let label = match &args.network {
                Some(n) => format!("{} + {}", csv.display(), n.display()),
                None => csv.display().to_string(),
            };
            let network = args.network;
            (
                Source::Libreqos {
                    shaped_devices: csv,
                    network,
                },
                label,
            )
        }
        // clap's group requires one of the two; kept as an error, not a
        // panic, should the group ever change.
        (None, None) => {
            return Err(CliError::Needs {
                command: "fairway shape",
                what: "--config FILE or --shaped-devices CSV",
            })
        }
    };
    match fairway_shaper::load(&source) {
        Ok(checked) => {
            crate::outln!("{label}: ok");
            crate::out!("{}", Summary::of(&checked));
            Ok(())
        }
        Err(problems) => {
            for p in &problems {
                crate::errln!("{p}");
            }
            Err(ShapeCheckFailed {
                problems: problems.len(),
            }
            .into())
        }
    }
}
