//! `fairway disk scheds`: the catalogue of disk schedulers
//! (`fairway_disk::catalogue`): every spec name, its parameters with their
//! ranges and defaults, and what it is; mirrors `fairway scheds`.

use super::common::json_line;
use super::error::DiskCmdError;
use crate::cmd::common::Table;
use clap::Args;
use fairway_disk::catalogue::DiskSchedKind;

/// Arguments of `fairway disk scheds`.
#[derive(Args)]
pub struct DiskSchedsArgs {
    /// One JSON object per scheduler on stdout.
    #[arg(long)]
    json: bool,
}

/// Prints the catalogue.
pub fn run(args: DiskSchedsArgs) -> Result<(), DiskCmdError> {
    let mut table = Table::new(&["spec", "parameters", "what it is"]);
    for &kind in DiskSchedKind::ALL {
        let info = kind.info();
        if args.json {
            let params: Vec<serde_json::Value> = info
                .params
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "key": p.key, "min": p.min, "max": p.max,
                        "default": p.default, "help": p.help,
                    })
                })
                .collect();
            json_line(&serde_json::json!({
                "name": info.name,
                "summary": info.summary,
                "params": params,
                "label": kind.default_spec().label(),
            }))?;
            continue;
        }
        let params: Vec<String> = info
            .params
            .iter()
            .map(|p| {
                let default = p.default.map_or("derived".into(), |d| d.to_string());
                format!("{}={}..={} (default {default})", p.key, p.min, p.max)
            })
            .collect();
        table.row(vec![
            info.name.to_string(),
            if params.is_empty() {
                "-".into()
            } else {
                params.join(", ")
            },
            info.summary.to_string(),
        ]);
    }
    if !args.json {
        table.print()?;
    }
    Ok(())
}
