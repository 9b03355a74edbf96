//! Reading a policy file: at most [`MAX_FILE_BYTES`], read through
//! [`Read::take`] so that a device or a huge file (`/dev/zero`) fails at
//! once instead of filling memory, and UTF-8 checked with the place of the
//! first bad byte.

use crate::error::{Locator, PolicyFileError};
use std::fs::File;
use std::io::Read;

/// Largest policy file, bytes (1 MiB). The file is held in memory while
/// it is parsed; a tree as large as the format allows (2^22 flows, through
/// `count`) fits in a few kB, and 1 MiB holds tens of thousands of tables.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The text of the file at `path`, or why not.
pub(crate) fn read_text(path: &str) -> Result<String, PolicyFileError> {
    let cannot = |e: std::io::Error| PolicyFileError::whole_file(path, cannot_read(&e));
    let file = File::open(path).map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(PolicyFileError::whole_file(
            path,
            format!(
                "larger than the {MAX_FILE_BYTES}-byte limit for policy files (held in memory while parsed; use `count` for many identical flows)"
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        // The valid prefix locates the bad byte.
        let text = std::str::from_utf8(&bytes[..good]).unwrap_or_default();
        Locator { text, file: path }.error(good..good, "not UTF-8 text (TOML files are UTF-8)")
    })
}

/// "cannot read: REASON", the operating system's reason without its
/// error number.
fn cannot_read(e: &std::io::Error) -> String {
    let text = e.to_string();
    let reason = text.split(" (os error").next().unwrap_or(&text);
    format!("cannot read: {reason}")
}
