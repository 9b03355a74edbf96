//! Reading a file of any fairway format: at most a stated number of
//! bytes, read through [`Read::take`] so that a device or a huge file
//! (`/dev/zero`) fails at once instead of filling memory, and UTF-8
//! checked with the place of the first bad byte. Policy files use
//! [`MAX_FILE_BYTES`]; the shaper's files their own limits.

use crate::error::PolicyFileError;
use crate::place::line_col;
use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Largest policy file, bytes (1 MiB). The file is held in memory while
/// it is parsed; a tree as large as the format allows (2^22 flows, through
/// `count`) fits in a few kB, and 1 MiB holds tens of thousands of tables.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Why a file's text could not be had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// The operating system's reason, without its error number.
    Cannot(String),
    /// Larger than the limit (`size` is at least `limit + 1`: the read
    /// stops there).
    TooLarge {
        /// Bytes found.
        size: u64,
        /// The limit, bytes.
        limit: u64,
    },
    /// Not UTF-8: the first bad byte's 1-based line and column.
    NotUtf8 {
        /// Line.
        line: usize,
        /// Column, in characters.
        column: usize,
    },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cannot(reason) => write!(f, "cannot read: {reason}"),
            Self::TooLarge { size, limit } => write!(
                f,
                "file is {size} bytes, above the limit of {limit} bytes (the whole file is held in memory)"
            ),
            Self::NotUtf8 { .. } => f.write_str("not UTF-8 text (save the file as UTF-8)"),
        }
    }
}

impl std::error::Error for ReadError {}

/// The text of the file at `path`, if it is at most `limit` bytes of
/// UTF-8.
pub fn read_limited(path: &Path, limit: u64) -> Result<String, ReadError> {
    let cannot = |e: std::io::Error| {
        let text = e.to_string();
        ReadError::Cannot(text.split(" (os error").next().unwrap_or(&text).to_string())
    };
    let file = File::open(path).map_err(cannot)?;
    // The size first, where the file system knows it: a file far above
    // the limit is refused without reading it.
    if let Ok(size) = file.metadata().map(|m| m.len()) {
        if size > limit {
            return Err(ReadError::TooLarge { size, limit });
        }
    }
    let mut bytes = Vec::new();
    // `take`: a device, or a file that grows while read, still stops,
    // one byte past the limit so that a larger file is seen to be. At
    // `u64::MAX` no file can be larger: reading to the end is the same.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > limit {
        let size = bytes.len() as u64;
        return Err(ReadError::TooLarge { size, limit });
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        // The valid prefix locates the bad byte.
        let text = std::str::from_utf8(&e.as_bytes()[..good]).unwrap_or_default();
        let (line, column) = line_col(text, good);
        ReadError::NotUtf8 { line, column }
    })
}

/// The text of the policy file at `path`, or why not.
pub(crate) fn read_text(path: &str) -> Result<String, PolicyFileError> {
    read_limited(Path::new(path), MAX_FILE_BYTES).map_err(|e| match e {
        ReadError::Cannot(_) => PolicyFileError::whole_file(path, e.to_string()),
        ReadError::TooLarge { .. } => PolicyFileError::whole_file(
            path,
            format!(
                "larger than the {MAX_FILE_BYTES}-byte limit for policy files (held in memory while parsed; use `count` for many identical flows)"
            ),
        ),
        ReadError::NotUtf8 { line, column } => PolicyFileError {
            file: path.to_string(),
            line,
            column,
            message: "not UTF-8 text (TOML files are UTF-8)".into(),
        },
    })
}
