//! The one error of a policy file: what is wrong, and where. Printed on
//! one line as `file:line:column: message` (1-based), or `file: message`
//! when the error concerns the file as a whole (it cannot be read, is too
//! large, or lacks a table altogether).

use crate::place::{line_col, one_line};
use std::fmt;
use std::ops::Range;

/// An error at a place in a policy file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyFileError {
    /// The file name as given.
    pub file: String,
    /// 1-based line; 0 when the error concerns the whole file.
    pub line: usize,
    /// 1-based column; 0 when the error concerns the whole file.
    pub column: usize,
    /// What is wrong, on one line.
    pub message: String,
}

impl PolicyFileError {
    /// An error about the file as a whole (no line to point at).
    pub(crate) fn whole_file(file: &str, message: impl Into<String>) -> Self {
        Self {
            file: file.to_string(),
            line: 0,
            column: 0,
            message: one_line(&message.into()),
        }
    }
}

impl fmt::Display for PolicyFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )
        }
    }
}

impl std::error::Error for PolicyFileError {}

/// Turns byte spans of one file's text into located errors.
pub(crate) struct Locator<'a> {
    /// The file's text.
    pub(crate) text: &'a str,
    /// Its name, as given.
    pub(crate) file: &'a str,
}

impl Locator<'_> {
    /// `message` at the start of `span`.
    pub(crate) fn error(&self, span: Range<usize>, message: impl Into<String>) -> PolicyFileError {
        let (line, column) = line_col(self.text, span.start);
        PolicyFileError {
            file: self.file.to_string(),
            line,
            column,
            message: one_line(&message.into()),
        }
    }

    /// An error about the whole file.
    pub(crate) fn whole_file(&self, message: impl Into<String>) -> PolicyFileError {
        PolicyFileError::whole_file(self.file, message)
    }

    /// The 1-based line `span` starts on, for messages naming a second
    /// place.
    pub(crate) fn line(&self, span: Range<usize>) -> usize {
        line_col(self.text, span.start).0
    }
}
