//! Where a value was written: a file and, where the file's parser knows
//! it, a line (the file line a CSV record starts on) and a column (TOML,
//! JSON). Every error and every element of a plan carries one, so that a
//! problem found long after parsing (an overlap, a cycle, a sum) still
//! names the lines to edit.

use fairway_policy_file::place;
use std::fmt;
use std::sync::Arc;

/// A place in a configuration file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    /// The file as the user named it.
    pub file: Arc<str>,
    /// 1-based line, if known.
    pub line: Option<u32>,
    /// 1-based column (in characters), if known.
    pub col: Option<u32>,
}

impl Loc {
    /// The whole file (no line known).
    pub fn file(file: &Arc<str>) -> Self {
        Self {
            file: Arc::clone(file),
            line: None,
            col: None,
        }
    }

    /// A line of `file`.
    pub fn line(file: &Arc<str>, line: u64) -> Self {
        Self {
            file: Arc::clone(file),
            line: Some(u32::try_from(line).unwrap_or(u32::MAX)),
            col: None,
        }
    }

    /// The line and column of byte `offset` in `text`, the text of `file`.
    pub fn at_offset(file: &Arc<str>, text: &str, offset: usize) -> Self {
        let (line, col) = line_col(text, offset);
        Self {
            file: Arc::clone(file),
            line: Some(line),
            col: Some(col),
        }
    }
}

/// Places of byte offsets in one text, giving [`Loc`]s: what
/// [`fairway_policy_file::place::LineIndex`] gives, its line starts
/// found by a SIMD search (a reload of a large shaper file builds one).
pub struct LineIndex<'t> {
    text: &'t str,
    /// Byte offset where each line starts.
    starts: Vec<usize>,
}

impl<'t> LineIndex<'t> {
    /// The index of `text`.
    pub fn new(text: &'t str) -> Self {
        let mut starts = Vec::with_capacity(text.len() / 32 + 1);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Self { text, starts }
    }

    /// 1-based line and column (in characters) of byte `offset`; an
    /// offset past the end is the end, one inside a character is that
    /// character.
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts.get(line - 1).copied().unwrap_or(0);
        let col = self
            .text
            .get(start..offset)
            .map_or(0, |t| t.chars().count());
        (line, col + 1)
    }

    /// The 1-based line of byte `offset`.
    pub fn line(&self, offset: usize) -> u32 {
        u32_of(self.line_col(offset).0)
    }

    /// The place of byte `offset` in `file` (this index's text).
    pub fn loc(&self, file: &Arc<str>, offset: usize) -> Loc {
        let (line, col) = self.line_col(offset);
        Loc {
            file: Arc::clone(file),
            line: Some(u32_of(line)),
            col: Some(u32_of(col)),
        }
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`;
/// an offset past the end is the end.
pub fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let (line, col) = place::line_col(text, offset);
    (u32_of(line), u32_of(col))
}

fn u32_of(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.col {
                write!(f, ":{col}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_lines_and_columns() {
        let text = "ab\ncdé\nf";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 3), (2, 1));
        assert_eq!(line_col(text, 7), (2, 4));
        assert_eq!(line_col(text, 8), (3, 1));
        assert_eq!(line_col(text, 99), (3, 2));
        let f: Arc<str> = Arc::from("x.toml");
        assert_eq!(Loc::at_offset(&f, text, 3).to_string(), "x.toml:2:1");
        assert_eq!(Loc::line(&f, 7).to_string(), "x.toml:7");
        assert_eq!(Loc::file(&f).to_string(), "x.toml");
        let index = LineIndex::new(text);
        for offset in 0..=12 {
            assert_eq!(
                index.loc(&f, offset),
                Loc::at_offset(&f, text, offset),
                "{offset}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn the_index_places_as_the_policy_files_do(
            text in "[ab\n\u{e9}\u{1F600}\r]{0,40}",
            offsets in proptest::collection::vec(0usize..48, 1..8),
        ) {
            let index = LineIndex::new(&text);
            for offset in offsets {
                let (line, col) = place::line_col(&text, offset);
                proptest::prop_assert_eq!(index.line_col(offset), (line, col), "{:?} at {}", text, offset);
            }
        }
    }
}
