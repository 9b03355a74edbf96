//! The one error of a policy file: what is wrong, and where
//! (`file:line:column`, 1-based; line and column 0 when the file could
//! not be read at all).

use std::fmt;
use std::ops::Range;

/// An error at a place in a policy file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyFileError {
    /// The file name as given.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for PolicyFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
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
            message: message.into(),
        }
    }
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}
