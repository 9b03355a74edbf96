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
    /// The directory an output goes into does not exist (and is not made).
    NoDirectory(PathBuf),
    /// A path for a directory names something else.
    NotADirectory,
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
            OutputProblem::NoDirectory(d) => {
                write!(
                    f,
                    "directory {} does not exist (it is not created)",
                    d.display()
                )
            }
            OutputProblem::NotADirectory => f.write_str("exists and is not a directory"),
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

/// The directory `path` is in (`.` for a bare name).
fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A file-name prefix (`docs/img/udp` for `docs/img/udp-*.svg`): its
/// directory must exist and be writable. Nothing is created: a mistyped
/// directory is refused, not made.
pub fn check_prefix(flag: &'static str, prefix: &str) -> Result<(), OutputError> {
    let dir = parent_dir(Path::new(prefix));
    if !dir.is_dir() {
        return Err(OutputError::new(
            flag,
            prefix,
            OutputProblem::NoDirectory(dir.to_path_buf()),
        ));
    }
    let probe = dir.join(format!(".fairway-write-check-{}", std::process::id()));
    check_file_writable(flag, &probe)
        .map_err(|_| OutputError::new(flag, prefix, OutputProblem::CannotWriteFilesThere))
}

/// A directory that will receive files after a run: an existing,
/// writable directory, or a new one whose parent exists and is writable
/// (the run makes it when it writes; nothing is created now).
pub fn check_dir_to_create(flag: &'static str, dir: &Path) -> Result<(), OutputError> {
    let fail = |problem| OutputError::new(flag, dir, problem);
    let probe_in = |d: &Path| {
        let probe = d.join(format!(".fairway-write-check-{}", std::process::id()));
        check_file_writable(flag, &probe).map_err(|_| fail(OutputProblem::DirectoryNotWritable))
    };
    if dir.is_dir() {
        return probe_in(dir);
    }
    if dir.exists() {
        return Err(fail(OutputProblem::NotADirectory));
    }
    let parent = parent_dir(dir);
    if !parent.is_dir() {
        return Err(fail(OutputProblem::NoDirectory(parent.to_path_buf())));
    }
    probe_in(parent)
}

/// The environment variable that moves [`results_dir`].
pub const RESULTS_ENV: &str = "FAIRWAY_RESULTS";

/// Where a command writes files it was not told where to write:
/// `$FAIRWAY_RESULTS/NAME`, or `./fairway-results/NAME` when the variable
/// is unset or empty. Not `./target/`: an installed `fairway` runs in any
/// directory, and a `target/` there would pass for a Cargo build directory.
pub fn results_dir(name: &str) -> PathBuf {
    match std::env::var_os(RESULTS_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join(name),
        _ => PathBuf::from("fairway-results").join(name),
    }
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

    #[test]
    fn prefixes_and_directories_to_fill_are_checked_without_creating_anything() {
        let base = std::env::temp_dir().join(format!("fairway-outputs-{}", std::process::id()));
        let missing = base.join("missing");
        let prefix = missing.join("pfx");
        let e = check_prefix("--chart", &prefix.to_string_lossy()).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert!(check_dir_to_create("--csv", &missing.join("out")).is_err());
        assert!(!base.exists(), "nothing was created");
        fs::create_dir(&base).unwrap();
        assert!(check_prefix("--chart", &base.join("pfx").to_string_lossy()).is_ok());
        assert!(check_dir_to_create("--csv", &missing).is_ok());
        assert!(!missing.exists(), "the run makes it, not the check");
        let file = base.join("file");
        fs::write(&file, "x").unwrap();
        assert!(check_dir_to_create("--csv", &file).is_err());
        assert_eq!(fs::read_dir(&base).unwrap().count(), 1, "no probe left");
        fs::remove_dir_all(&base).unwrap();
    }
}
