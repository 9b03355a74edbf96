//! Checks on output paths and flag combinations made before anything is
//! measured, so that a typo costs a second, not a finished run.

use std::fmt;
use std::fs::{self, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// What is wrong with an output path.
#[derive(Debug)]
pub enum OutputProblem {
    /// A chart file whose name does not end in `.svg`.
    NotSvg,
    /// A file name that names a directory.
    IsADirectory,
    /// The file cannot be opened or created for writing.
    CannotWrite(io::Error),
    /// The directory cannot be created.
    CannotCreate(io::Error),
    /// No file can be written in the directory.
    DirectoryNotWritable,
    /// No file can be written in the directory of a file-name prefix.
    CannotWriteFilesThere,
    /// Any other failure of the file system.
    Io(io::Error),
}

/// An output path a flag names that cannot be written; printed as
/// `FLAG PATH: problem`.
#[derive(Debug)]
pub struct OutputError {
    /// The flag (`--chart`, `--out`).
    pub flag: &'static str,
    /// The path given.
    pub path: PathBuf,
    /// What is wrong with it.
    pub problem: OutputProblem,
}

impl OutputError {
    /// `problem` with the path `path` of `flag`.
    pub fn new(flag: &'static str, path: impl Into<PathBuf>, problem: OutputProblem) -> Self {
        Self {
            flag,
            path: path.into(),
            problem,
        }
    }
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: ", self.flag, self.path.display())?;
        match &self.problem {
            OutputProblem::NotSvg => {
                f.write_str("charts are written as SVG; give a name ending in .svg")
            }
            OutputProblem::IsADirectory => f.write_str("is a directory"),
            OutputProblem::CannotWrite(e) => write!(f, "cannot write: {e}"),
            OutputProblem::CannotCreate(e) => write!(f, "cannot create: {e}"),
            OutputProblem::DirectoryNotWritable => f.write_str("directory is not writable"),
            OutputProblem::CannotWriteFilesThere => f.write_str("cannot write files there"),
            OutputProblem::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for OutputError {}

/// A chart file: its name must end in `.svg` (the charts are SVG; a `.png`
/// name is refused rather than silently filled with SVG) and it must be
/// writable now. An existing file is left as it is.
pub fn check_chart_file(flag: &'static str, path: &Path) -> Result<(), OutputError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if ext.as_deref() != Some("svg") {
        return Err(OutputError::new(flag, path, OutputProblem::NotSvg));
    }
    check_file_writable(flag, path)
}

/// `path` can be created or opened for writing; a probe file this creates is
/// removed again.
pub fn check_file_writable(flag: &'static str, path: &Path) -> Result<(), OutputError> {
    let fail = |problem| OutputError::new(flag, path, problem);
    if path.is_dir() {
        return Err(fail(OutputProblem::IsADirectory));
    }
    if path.exists() {
        return OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(|e| fail(OutputProblem::CannotWrite(e)));
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| fail(OutputProblem::CannotWrite(e)))?;
    fs::remove_file(path).map_err(|e| fail(OutputProblem::Io(e)))
}

/// A directory that will receive files: created if missing, and a probe file
/// written and removed in it.
pub fn check_out_dir(flag: &'static str, dir: &Path) -> Result<(), OutputError> {
    fs::create_dir_all(dir)
        .map_err(|e| OutputError::new(flag, dir, OutputProblem::CannotCreate(e)))?;
    let probe = dir.join(format!(".fairway-write-check-{}", std::process::id()));
    check_file_writable(flag, &probe)
        .map_err(|_| OutputError::new(flag, dir, OutputProblem::DirectoryNotWritable))
}

/// A file-name prefix (`docs/img/udp` for `docs/img/udp-*.svg`): its
/// directory must be writable.
pub fn check_prefix(flag: &'static str, prefix: &str) -> Result<(), OutputError> {
    let dir = Path::new(prefix)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    check_out_dir(flag, dir)
        .map_err(|_| OutputError::new(flag, prefix, OutputProblem::CannotWriteFilesThere))
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
