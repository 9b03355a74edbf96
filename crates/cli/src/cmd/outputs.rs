//! Checks on output paths and flag combinations made before anything is
//! measured, so that a typo costs a second, not a finished run.

use std::fs::{self, OpenOptions};
use std::path::Path;

/// A chart file: its name must end in `.svg` (the charts are SVG; a `.png`
/// name is refused rather than silently filled with SVG) and it must be
/// writable now. An existing file is left as it is.
pub fn check_chart_file(flag: &str, path: &Path) -> Result<(), String> {
    let shown = path.display();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if ext.as_deref() != Some("svg") {
        return Err(format!(
            "{flag} {shown}: charts are written as SVG; give a name ending in .svg"
        ));
    }
    check_file_writable(flag, path)
}

/// `path` can be created or opened for writing; a probe file this creates is
/// removed again.
pub fn check_file_writable(flag: &str, path: &Path) -> Result<(), String> {
    let shown = path.display();
    if path.is_dir() {
        return Err(format!("{flag} {shown}: is a directory"));
    }
    if path.exists() {
        return OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(|e| format!("{flag} {shown}: cannot write: {e}"));
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| format!("{flag} {shown}: cannot write: {e}"))?;
    fs::remove_file(path).map_err(|e| format!("{flag} {shown}: {e}"))
}

/// A directory that will receive files: created if missing, and a probe file
/// written and removed in it.
pub fn check_out_dir(flag: &str, dir: &Path) -> Result<(), String> {
    let shown = dir.display();
    fs::create_dir_all(dir).map_err(|e| format!("{flag} {shown}: cannot create: {e}"))?;
    let probe = dir.join(format!(".fairway-write-check-{}", std::process::id()));
    check_file_writable(flag, &probe)
        .map_err(|_| format!("{flag} {shown}: directory is not writable"))
}

/// A file-name prefix (`docs/img/udp` for `docs/img/udp-*.svg`): its
/// directory must be writable.
pub fn check_prefix(flag: &str, prefix: &str) -> Result<(), String> {
    let dir = Path::new(prefix)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    check_out_dir(flag, dir).map_err(|_| format!("{flag} {prefix}: cannot write files there"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_must_be_svg_and_writable() {
        let dir = std::env::temp_dir();
        assert!(check_chart_file("--chart", &dir.join("x.png")).is_err());
        let ok = dir.join(format!("fairway-check-{}.svg", std::process::id()));
        assert!(check_chart_file("--chart", &ok).is_ok());
        assert!(!ok.exists(), "the probe is removed");
        assert!(check_chart_file("--chart", Path::new("/nonexistent/dir/x.svg")).is_err());
    }
}
