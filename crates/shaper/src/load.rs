//! Reading a configuration from disk: the files a user names, each read
//! whole after its size is checked against its limit, parsed by its
//! reader into one [`Plan`], then checked. Paths in a shaper file's
//! `libreqos` table are relative to the shaper file's folder.

use crate::error::{ConfigError, Problem};
use crate::libreqos::{network_json, shaped_devices};
use crate::limits::{MAX_CSV_BYTES, MAX_JSON_BYTES, MAX_TOML_BYTES};
use crate::loc::Loc;
use crate::plan::Plan;
use crate::validate::{check, Checked};
use fairway_policy_file::{read_limited, ReadError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a configuration comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A shaper file (TOML), which may pull in LibreQoS's files.
    ShaperFile(PathBuf),
    /// LibreQoS's files directly; no network.json: a flat network.
    Libreqos {
        /// ShapedDevices.csv.
        shaped_devices: PathBuf,
        /// network.json.
        network: Option<PathBuf>,
    },
}

/// Reads and checks a configuration: the checked plan, or every problem.
pub fn load(source: &Source) -> Result<Checked, Vec<ConfigError>> {
    let (plan, errors) = read_plan(source);
    // The check runs on what could be read too, so that one run lists
    // the problems of the tree as well as those of the fields.
    match check(plan) {
        Ok(checked) if errors.is_empty() => Ok(checked),
        Ok(_) => Err(in_file_order(errors)),
        Err(more) => Err(in_file_order(errors.into_iter().chain(more).collect())),
    }
}

/// The problems by file (in the order files were read), line and
/// column, each once (a reader and the check may find one problem both).
fn in_file_order(mut all: Vec<ConfigError>) -> Vec<ConfigError> {
    let mut seen = std::collections::HashSet::new();
    all.retain(|e| seen.insert(e.to_string()));
    let mut files: Vec<Arc<str>> = Vec::new();
    for e in &all {
        if !files.contains(&e.at.file) {
            files.push(Arc::clone(&e.at.file));
        }
    }
    let file_index = |f: &Arc<str>| files.iter().position(|g| g == f).unwrap_or(0);
    all.sort_by_key(|e| (file_index(&e.at.file), e.at.line, e.at.col));
    all
}

/// Reads a configuration without checking it: the plan of everything
/// that parsed, and the problems of what did not.
pub fn read_plan(source: &Source) -> (Plan, Vec<ConfigError>) {
    let mut plan = Plan::default();
    let mut errors = Vec::new();
    match source {
        Source::ShaperFile(path) => {
            let name = name_of(path);
            let files = match read_text(path, &name, MAX_TOML_BYTES) {
                Ok(text) => crate::toml::read(&name, &text, &mut plan, &mut errors),
                Err(e) => {
                    errors.push(e);
                    None
                }
            };
            if let Some(f) = files {
                let dir = path.parent().unwrap_or(Path::new(""));
                let network = f.network.as_ref().map(|n| dir.join(n));
                read_libreqos(
                    &dir.join(&f.shaped_devices),
                    network.as_deref(),
                    &mut plan,
                    &mut errors,
                );
            }
        }
        Source::Libreqos {
            shaped_devices,
            network,
        } => read_libreqos(shaped_devices, network.as_deref(), &mut plan, &mut errors),
    }
    (plan, errors)
}

/// Reads LibreQoS's files into `plan`. In a flat network (no nodes at
/// all), circuits that name a parent hang under the root, as LibreQoS
/// puts them; [`Plan::flattened_parents`] counts them.
fn read_libreqos(csv: &Path, json: Option<&Path>, plan: &mut Plan, errors: &mut Vec<ConfigError>) {
    if let Some(json) = json {
        let name = name_of(json);
        match read_text(json, &name, MAX_JSON_BYTES) {
            Ok(text) => network_json::read(&name, &text, plan, errors),
            Err(e) => errors.push(e),
        }
    }
    let first = plan.circuits.len();
    let name = name_of(csv);
    match read_text(csv, &name, MAX_CSV_BYTES) {
        Ok(text) => shaped_devices::read(&name, &text, plan, errors),
        Err(e) => errors.push(e),
    }
    if plan.nodes.is_empty() && plan.virtual_nodes.is_empty() {
        for c in &mut plan.circuits[first..] {
            if c.parent.take().is_some() {
                plan.flattened_parents += 1;
            }
        }
    }
}

fn name_of(path: &Path) -> Arc<str> {
    Arc::from(path.display().to_string())
}

/// The file's text, if it is at most `limit` bytes of UTF-8: read as
/// policy files are ([`read_limited`]).
pub fn read_text(path: &Path, name: &Arc<str>, limit: u64) -> Result<String, ConfigError> {
    read_limited(path, limit).map_err(|e| {
        let at = match e {
            ReadError::NotUtf8 { line, column } => Loc {
                file: Arc::clone(name),
                line: Some(u32::try_from(line).unwrap_or(u32::MAX)),
                col: Some(u32::try_from(column).unwrap_or(u32::MAX)),
            },
            _ => Loc::file(name),
        };
        ConfigError::new(at, Problem::File(e))
    })
}
