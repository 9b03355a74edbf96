//! Helpers shared by subcommands: argument parsing into library types and a
//! plain-text table printer.

use super::error::CliError;
use super::flag::FlagError;
use fairway_core::registry::parse_list;
use fairway_core::SchedSpec;
use fairway_eval::workload::FlowSet;

/// Parses `--sched` lists such as `drr,wf2q+` or `fifo,drr:quantum=1500`,
/// each scheduler named once.
pub fn parse_scheds(text: &str) -> Result<Vec<SchedSpec>, CliError> {
    let specs = parse_list(text)?;
    if specs.is_empty() {
        return Err(FlagError::Needs {
            flag: "--sched",
            needs: "at least one scheduler",
        }
        .into());
    }
    let labels: Vec<String> = specs.iter().map(ToString::to_string).collect();
    for (i, l) in labels.iter().enumerate() {
        if labels[..i].contains(l) {
            return Err(FlagError::Duplicate {
                flag: "--sched",
                text: l.clone(),
            }
            .into());
        }
    }
    Ok(specs)
}

/// Parses `--flows`.
pub fn parse_flows(text: &str) -> Result<FlowSet, CliError> {
    Ok(FlowSet::parse_one(text)?)
}

/// A left-aligned first column, right-aligned numbers.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column names.
    pub fn new(header: &[&str]) -> Self {
        Self {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Prints to stdout.
    pub fn print(&self) -> Result<(), crate::cmd::stdout::StdoutError> {
        let cols = self.header.len();
        let mut width = vec![0; cols];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(cols) {
                width[i] = width[i].max(c.chars().count());
            }
        }
        for r in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate().take(cols) {
                if i == 0 {
                    line.push_str(&format!("{c:<w$}", w = width[i]));
                } else {
                    line.push_str(&format!("  {c:>w$}", w = width[i]));
                }
            }
            crate::outln!("{}", line.trim_end());
        }
        Ok(())
    }
}
