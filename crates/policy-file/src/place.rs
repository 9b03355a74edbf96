//! Places in a file's text: the 1-based line and column (in characters)
//! of a byte offset, one at a time ([`line_col`]) or many in one text
//! ([`LineIndex`], O(log lines) each after one pass). Every fairway file
//! reader (policy files, the shaper file, LibreQoS's network.json) turns
//! its parser's byte spans into `FILE:LINE:COL` with these, and keeps
//! every message on one line ([`one_line`]).

/// 1-based line and column (in characters) of byte `offset` in `text`;
/// an offset past the end is the end, one inside a character is that
/// character.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = floor_char(text, offset);
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

/// `offset` within `text`, moved back to a character boundary.
fn floor_char(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// Lines and columns of byte offsets in one text (a large file has many
/// elements, each placed).
pub struct LineIndex<'t> {
    text: &'t str,
    /// Byte offset where each line starts.
    starts: Vec<usize>,
}

impl<'t> LineIndex<'t> {
    /// The index of `text`.
    pub fn new(text: &'t str) -> Self {
        let starts = std::iter::once(0)
            .chain(
                text.bytes()
                    .enumerate()
                    .filter(|&(_, b)| b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        Self { text, starts }
    }

    /// 1-based line and column of byte `offset`, as [`line_col`].
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char(self.text, offset);
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let col = self.text[self.starts[line - 1]..offset].chars().count() + 1;
        (line, col)
    }
}

/// `message` with any line breaks (a parser's multi-line report) joined
/// by "; ", so that every error is one line.
pub fn one_line(message: &str) -> String {
    let parts: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    parts.join("; ")
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
        assert_eq!(line_col(text, 6), (2, 3), "inside é");
        assert_eq!(line_col(text, 8), (3, 1));
        assert_eq!(line_col(text, 99), (3, 2));
        let index = LineIndex::new(text);
        for offset in 0..=12 {
            assert_eq!(index.line_col(offset), line_col(text, offset), "{offset}");
        }
    }
}
