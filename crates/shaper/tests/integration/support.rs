//! Scratch files and short ways to load them.

use fairway_shaper::validate::Checked;
use fairway_shaper::{load, Source};
use std::path::PathBuf;

/// LibreQoS's header, in LibreQoS's order.
pub const HEADER: &str = "Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment";

/// Writes `text` to scratch file `name`; its path.
pub fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("shaper");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write scratch file");
    path
}

/// Loads LibreQoS files written to scratch files `NAME.csv` and
/// `NAME.json`; the problems as printed lines.
pub fn libreqos(name: &str, csv: &str, json: Option<&str>) -> Result<Checked, Vec<String>> {
    let src = Source::Libreqos {
        shaped_devices: scratch(&format!("{name}.csv"), csv),
        network: json.map(|j| scratch(&format!("{name}.json"), j)),
    };
    load(&src).map_err(|e| e.iter().map(ToString::to_string).collect())
}

/// Loads a shaper file written to scratch file `NAME.toml`.
pub fn shaper(name: &str, text: &str) -> Result<Checked, Vec<String>> {
    let src = Source::ShaperFile(scratch(&format!("{name}.toml"), text));
    load(&src).map_err(|e| e.iter().map(ToString::to_string).collect())
}

/// The problems, which must exist.
pub fn problems<T: std::fmt::Debug>(r: Result<T, Vec<String>>) -> Vec<String> {
    r.expect_err("the configuration must be refused")
}

/// The path of scratch file `name`, as problems name it.
pub fn path(name: &str) -> String {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("shaper")
        .join(name)
        .display()
        .to_string()
}

/// The one problem, which must end with `tail` and start at `file:line`.
pub fn only(problems: &[String], at: &str, tail: &str) {
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].starts_with(&format!("{at}: ")), "{problems:#?}");
    assert!(problems[0].contains(tail), "{problems:#?}");
}
