//! Line/column positions in the three encodings editors use, and the
//! conversions between them and byte offsets.
//!
//! Lines end at `\n`, `\r\n` or a lone `\r`, as the Language Server Protocol
//! defines them. Every conversion clamps: a line past the end is the end of
//! the text, a column past the end of its line is the end of that line, and a
//! column inside a multi-unit character rounds down to its start.

/// How the `character` of a [`Position`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PositionEncoding {
    /// Bytes of UTF-8.
    Utf8,
    /// UTF-16 code units: the Language Server Protocol's default.
    #[default]
    Utf16,
    /// Unicode scalar values (what Python's `len(str)` counts).
    Utf32,
}

impl PositionEncoding {
    /// Length of one character in this encoding's units.
    pub fn len_of(self, c: char) -> usize {
        match self {
            PositionEncoding::Utf8 => c.len_utf8(),
            PositionEncoding::Utf16 => c.len_utf16(),
            PositionEncoding::Utf32 => 1,
        }
    }
}

/// Zero-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

impl Position {
    pub const fn new(line: u32, character: u32) -> Self {
        Position { line, character }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

impl Range {
    pub const fn new(start: Position, end: Position) -> Self {
        Range { start, end }
    }
}

/// Byte offset within `line` (a line's text without its terminator) of the
/// column `character` counted in `encoding`, clamped to the line.
pub(crate) fn column_to_byte(line: impl Iterator<Item = char>, character: u32, encoding: PositionEncoding) -> usize {
    let target = character as usize;
    let mut units = 0;
    let mut bytes = 0;
    for c in line {
        let next = units + encoding.len_of(c);
        if next > target {
            break;
        }
        units = next;
        bytes += c.len_utf8();
    }
    bytes
}

/// Column, counted in `encoding`, of the end of `prefix` (text from a line's start).
pub(crate) fn prefix_to_column(prefix: impl Iterator<Item = char>, encoding: PositionEncoding) -> u32 {
    prefix.map(|c| encoding.len_of(c)).sum::<usize>() as u32
}

/// Start offsets of every line of `text`, LSP style (`\n`, `\r\n`, lone `\r`).
/// For text that is not edited; [`crate::Document`] uses its rope instead.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<u32>,
    len: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0u32];
        let mut i = 0;
        while let Some(off) = memchr::memchr2(b'\n', b'\r', &bytes[i..]) {
            let at = i + off;
            let next = if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') { at + 2 } else { at + 1 };
            starts.push(next as u32);
            i = next;
        }
        LineIndex { starts, len: text.len() as u32 }
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// Zero-based line holding byte `offset` (clamped to the text).
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.len as usize) as u32;
        self.starts.partition_point(|&s| s <= offset) - 1
    }

    /// Byte range of line `line` without its terminator.
    pub fn line_range(&self, text: &str, line: usize) -> std::ops::Range<usize> {
        let line = line.min(self.starts.len() - 1);
        let start = self.starts[line] as usize;
        let mut end = self.starts.get(line + 1).map_or(text.len(), |&e| e as usize);
        let b = text.as_bytes();
        if end > start && b[end - 1] == b'\n' {
            end -= 1;
        }
        if end > start && b[end - 1] == b'\r' {
            end -= 1;
        }
        start..end
    }

    pub fn position(&self, text: &str, offset: usize, encoding: PositionEncoding) -> Position {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = self.line_of(offset);
        let start = self.starts[line] as usize;
        Position::new(line as u32, prefix_to_column(text[start..offset].chars(), encoding))
    }

    pub fn offset(&self, text: &str, position: Position, encoding: PositionEncoding) -> usize {
        if position.line as usize >= self.starts.len() {
            return text.len();
        }
        let range = self.line_range(text, position.line as usize);
        range.start + column_to_byte(text[range.clone()].chars(), position.character, encoding)
    }
}

pub(crate) fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;
    use PositionEncoding::*;

    #[test]
    fn line_endings_of_all_kinds() {
        let text = "a\nb\r\nc\rd";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        assert_eq!(index.line_range(text, 1), 2..3);
        assert_eq!(index.line_range(text, 2), 5..6);
        assert_eq!(index.position(text, 7, Utf16), Position::new(3, 0));
    }

    #[test]
    fn columns_in_each_encoding() {
        // 'é' is 2 bytes / 1 unit; '😀' is 4 bytes / 2 UTF-16 units / 1 scalar.
        let text = "é😀x = 1\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(index.position(text, x, Utf8), Position::new(0, 6));
        assert_eq!(index.position(text, x, Utf16), Position::new(0, 3));
        assert_eq!(index.position(text, x, Utf32), Position::new(0, 2));
        for enc in [Utf8, Utf16, Utf32] {
            assert_eq!(index.offset(text, index.position(text, x, enc), enc), x);
        }
    }

    #[test]
    fn out_of_range_positions_clamp() {
        let text = "ab\r\ncd";
        let index = LineIndex::new(text);
        assert_eq!(index.offset(text, Position::new(0, 99), Utf16), 2, "clamped before the CRLF");
        assert_eq!(index.offset(text, Position::new(7, 0), Utf16), text.len());
        // Inside a surrogate pair rounds down to the character's start.
        let text = "😀b";
        assert_eq!(LineIndex::new(text).offset(text, Position::new(0, 1), Utf16), 0);
    }
}
