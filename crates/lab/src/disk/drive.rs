//! The drive an experiment runs on: the built-in IBM-DTLA-307030 of the
//! BFQ thesis, or one described in a TOML parameter file (App. C: a drive
//! described in a file, fields as in `presets/ibm-dtla-307030.toml`).
//!
//! A parameter file is read up to [`MAX_DRIVE_FILE_BYTES`]: a drive is a
//! few dozen lines, and the limit keeps a path such as `/dev/zero` from
//! filling memory before anything is parsed.

use super::run_error::DiskRunError;
use super::units::check_capacity;
use fairway_disk::model::{DiskModel, ModelFileError};
use std::fmt;
use std::io::Read;

/// The largest disk parameter file read, bytes (1 MiB: thousands of
/// zones; the preset is 1 KiB).
pub const MAX_DRIVE_FILE_BYTES: u64 = 1 << 20;

/// Why the drive could not be loaded. Each message starts with the file
/// (`FILE:LINE:COLUMN:` when the fault has a place in it).
#[derive(Debug)]
pub enum DriveError {
    /// The parameter file could not be read.
    Read {
        /// The file.
        path: String,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// The parameter file is larger than [`MAX_DRIVE_FILE_BYTES`].
    TooLarge {
        /// The file.
        path: String,
    },
    /// The parameter file is not UTF-8 text.
    NotText {
        /// The file.
        path: String,
        /// 1-based line of the first byte that is not UTF-8.
        line: usize,
    },
    /// The parameter file is not valid TOML of the drive's fields, or a
    /// value is out of its range.
    File {
        /// The file.
        path: String,
        /// What is wrong, with its line and column.
        error: ModelFileError,
    },
    /// The drive is valid but too small for the experiments' layout.
    TooSmall {
        /// The file.
        path: String,
        /// How small.
        error: DiskRunError,
    },
}

impl fmt::Display for DriveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read { path, error } => write!(f, "{path}: cannot read: {error}"),
            Self::TooLarge { path } => write!(
                f,
                "{path}: larger than {MAX_DRIVE_FILE_BYTES} bytes, the most a disk parameter file may hold (a drive is a few dozen lines)"
            ),
            Self::NotText { path, line } => write!(f, "{path}:{line}: not UTF-8 text"),
            Self::File { path, error } => write!(f, "{path}:{error}"),
            Self::TooSmall { path, error } => write!(f, "{path}: {error}"),
        }
    }
}

impl std::error::Error for DriveError {}

/// The text of `path`, read up to [`MAX_DRIVE_FILE_BYTES`].
fn read_limited(path: &str) -> Result<String, DriveError> {
    let read = |error| DriveError::Read {
        path: path.to_string(),
        error,
    };
    let file = std::fs::File::open(path).map_err(read)?;
    let mut bytes = Vec::new();
    file.take(MAX_DRIVE_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read)?;
    if bytes.len() as u64 > MAX_DRIVE_FILE_BYTES {
        return Err(DriveError::TooLarge {
            path: path.to_string(),
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        DriveError::NotText {
            path: path.to_string(),
            line: good.iter().filter(|&&b| b == b'\n').count() + 1,
        }
    })
}

/// The drive described in `path`, or the built-in IBM-DTLA-307030 when
/// `path` is `None`.
pub fn load_drive(path: Option<&str>) -> Result<DiskModel, DriveError> {
    let Some(p) = path else {
        return Ok(DiskModel::dtla_307030());
    };
    let text = read_limited(p)?;
    let disk = DiskModel::from_toml(&text).map_err(|error| DriveError::File {
        path: p.to_string(),
        error,
    })?;
    check_capacity(&disk).map_err(|error| DriveError::TooSmall {
        path: p.to_string(),
        error,
    })?;
    Ok(disk)
}
