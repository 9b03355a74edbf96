//! `fairway scheds`: the catalogue of schedulers (`fairway_core::registry`):
//! every spec name, its parameters with their ranges and defaults, and the
//! guarantee the guarantee experiment checks it against.

use super::common::Table;
use super::error::CliError;
use clap::Args;
use fairway_core::registry::{Guarantee, SchedKind};

/// Arguments of `fairway scheds`.
#[derive(Args)]
#[command(after_help = "Examples:\n  fairway scheds\n  fairway scheds --json")]
pub struct SchedsArgs {
    /// One JSON object per scheduler on stdout.
    #[arg(long)]
    pub json: bool,
}

fn guarantee(g: Guarantee) -> String {
    match g {
        Guarantee::None => "none checked".into(),
        Guarantee::Flow(e) => format!("WFI, ΔS⁻ = {} L/φ, ΔS⁺ = {} L/φ", e.minus, e.plus),
        Guarantee::Aggregate(e) => {
            format!("SCHED+ WFI, ΔS⁻ = {} L/φ, ΔS⁺ = {} L/φ", e.minus, e.plus)
        }
    }
}

/// Prints the catalogue.
pub fn run(args: SchedsArgs) -> Result<(), CliError> {
    let mut table = Table::new(&["spec", "parameters", "guarantee", "what it is"]);
    for &kind in SchedKind::ALL {
        let info = kind.info();
        let params: Vec<String> = info
            .params
            .iter()
            .map(|p| {
                let default = p.default.map_or("derived".into(), |d| d.to_string());
                format!("{}={}..={} (default {default})", p.key, p.min, p.max)
            })
            .collect();
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
            let (kind_name, errors) = match info.guarantee {
                Guarantee::None => ("none", None),
                Guarantee::Flow(e) => ("flow", Some(e)),
                Guarantee::Aggregate(e) => ("aggregate", Some(e)),
            };
            super::json::print_line(&serde_json::json!({
                "name": info.name,
                "summary": info.summary,
                "params": params,
                "guarantee": kind_name,
                "delta_s_minus": errors.map(|e| e.minus),
                "delta_s_plus": errors.map(|e| e.plus),
            }))?;
        } else {
            table.row(vec![
                info.name.to_string(),
                if params.is_empty() {
                    "-".into()
                } else {
                    params.join(", ")
                },
                guarantee(info.guarantee),
                info.summary.to_string(),
            ]);
        }
    }
    if !args.json {
        table.print()?;
    }
    Ok(())
}
