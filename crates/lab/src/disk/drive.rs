//! The drive an experiment runs on: the built-in IBM-DTLA-307030 of the
//! BFQ thesis, or one described in a TOML parameter file (App. C: a drive
//! described in a file, fields as in `presets/ibm-dtla-307030.toml`).

use fairway_disk::model::{DiskModel, DiskParams};
use fairway_disk::DiskConfigError;
use std::fmt;

/// Why the drive could not be loaded.
#[derive(Debug)]
pub enum DriveError {
    /// The parameter file could not be read.
    Read {
        /// The file.
        path: String,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// The parameter file is not valid TOML of the drive's fields.
    Parse {
        /// The file.
        path: String,
        /// What is wrong, with its line and column.
        error: String,
    },
    /// A parameter is out of its range.
    Params(DiskConfigError),
}

impl fmt::Display for DriveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read { path, error } => write!(f, "{path}: {error}"),
            Self::Parse { path, error } => write!(f, "{path}: {error}"),
            Self::Params(e) => write!(f, "disk parameters: {e}"),
        }
    }
}

impl std::error::Error for DriveError {}

/// The drive described in `path`, or the built-in IBM-DTLA-307030 when
/// `path` is `None`.
pub fn load_drive(path: Option<&str>) -> Result<DiskModel, DriveError> {
    let params = match path {
        None => DiskParams::dtla_307030(),
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|error| DriveError::Read {
                path: p.to_string(),
                error,
            })?;
            DiskParams::from_toml(&text).map_err(|error| DriveError::Parse {
                path: p.to_string(),
                error,
            })?
        }
    };
    DiskModel::new(params).map_err(DriveError::Params)
}
