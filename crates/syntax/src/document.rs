//! An editable Python document: rope + tree-sitter tree, reparsed incrementally.

use std::cell::RefCell;

use ropey::Rope;
use tree_sitter::{InputEdit, Parser, Point, Tree};

use crate::position::{column_to_byte, prefix_to_column, Position, PositionEncoding, Range};

thread_local! {
    // A parser is cheap to keep and costly to create; one per thread serves
    // every document that thread touches.
    static PARSER: RefCell<Parser> = RefCell::new(new_parser());
}

fn new_parser() -> Parser {
    let mut parser = Parser::new();
    parser
        .set_language(crate::grammar::language())
        .expect("the bundled tree-sitter-python matches the tree-sitter ABI");
    parser
}

/// Parses `text` from scratch. Never fails: syntax errors become `ERROR` nodes.
pub fn parse(text: &str) -> Tree {
    parse_bytes(text.as_bytes())
}

/// [`parse`] of bytes (a text cut in pieces: see [`crate::outline::parse_excluding`]).
pub(crate) fn parse_bytes(text: &[u8]) -> Tree {
    PARSER.with_borrow_mut(|p| p.parse(text, None)).expect("parsing without a timeout always yields a tree")
}

/// One change from an editor: replace `range` with `text`, or the whole
/// document when `range` is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub range: Option<Range>,
    pub text: String,
}

impl Change {
    pub fn replace(range: Range, text: impl Into<String>) -> Self {
        Change { range: Some(range), text: text.into() }
    }

    pub fn full(text: impl Into<String>) -> Self {
        Change { range: None, text: text.into() }
    }
}

/// The text of one open file and its syntax tree.
///
/// The rope is the line index: it maps lines (ending at `\n`, `\r\n` or a lone
/// `\r`, as editors count them) to offsets in O(log n), and stays current
/// through edits without being rebuilt.
#[derive(Clone)]
pub struct Document {
    rope: Rope,
    tree: Tree,
    /// Number of `\r` not followed by `\n`. Tree-sitter counts rows by `\n`
    /// only, so while this is non-zero its rows differ from the rope's lines.
    lone_crs: usize,
    /// Number of NUL characters. tree-sitter-python's scanner takes a NUL for
    /// the end of the input, so an incremental reparse around one can differ
    /// from a fresh parse (found by the `edits` fuzz target): while the text
    /// has or had one, it is parsed from scratch.
    nuls: usize,
    /// Edits were made since the tree was parsed.
    stale: bool,
    /// One of them replaced the whole text: the old tree is no guide.
    full_reparse: bool,
    /// While `tree` has syntax errors: the last tree without any, with
    /// every edit since recorded in it (see [`Document::reparse`]).
    clean: Option<Tree>,
    /// The trees of the last few texts parsed, by text hash.
    recent: Recent<Tree>,
    /// `text_hash` of the text `tree` was parsed from.
    hash: u64,
    /// While stale: the hash of the current text, once worked out.
    stale_hash: Option<u64>,
    /// Every edit since the last parse kept the tree's shape (see
    /// [`Document::keeps_shape`]): the edited tree needs no parse.
    shape_kept: bool,
}

/// Words tree-sitter-python does not read as an identifier everywhere:
/// Python's keywords, its soft keywords, and Python 2's `print` and `exec`.
const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
    "pass", "raise", "return", "try", "while", "with", "yield", "match", "case", "type", "_", "print", "exec",
];

/// The last few values kept by the [`Document::text_hash`] of the text they
/// belong to (trees here, findings in the server), the most recently used
/// last: the text typing keeps returning to (a character typed and deleted)
/// stays.
#[derive(Debug, Clone)]
pub struct Recent<T> {
    entries: Vec<(u64, T)>,
}

impl<T: Clone> Recent<T> {
    /// How many values it keeps.
    pub const CAPACITY: usize = 4;

    /// The value for `hash`, which becomes the most recently used.
    pub fn get(&mut self, hash: u64) -> Option<T> {
        let at = self.entries.iter().position(|(h, _)| *h == hash)?;
        let found = self.entries.remove(at);
        let value = found.1.clone();
        self.entries.push(found);
        Some(value)
    }

    /// Keeps `value` for `hash` (replacing what was kept for it), dropping
    /// the least recently used beyond the capacity.
    pub fn put(&mut self, hash: u64, value: T) {
        self.entries.retain(|(h, _)| *h != hash);
        if self.entries.len() == Self::CAPACITY {
            self.entries.remove(0);
        }
        self.entries.push((hash, value));
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

impl<T> Default for Recent<T> {
    fn default() -> Self {
        Recent { entries: Vec::new() }
    }
}

/// A fast hash of the rope's bytes (XXH3, fed chunk by chunk: the same
/// however the rope is chunked). Not for adversaries: it tells a text from
/// the versions an editor just had. (It runs at every edit over the whole
/// text: a hash of one word at a time, each step waiting on the last, took
/// about 0.1 ms for a 700 KB file.)
fn text_hash(rope: &Rope) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3Default::new();
    for chunk in rope.chunks() {
        hasher.update(chunk.as_bytes());
    }
    hasher.digest()
}

/// One edit of a document's bytes: `start..old_end` became `start..new_end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteEdit {
    pub start: usize,
    pub old_end: usize,
    pub new_end: usize,
}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document").field("len", &self.rope.len_bytes()).finish_non_exhaustive()
    }
}

impl Document {
    pub fn new(text: &str) -> Self {
        let rope = Rope::from_str(text);
        let lone_crs = count_lone_crs(&rope, 0, rope.len_bytes());
        let tree = parse(text);
        let hash = text_hash(&rope);
        let mut recent = Recent::default();
        recent.put(hash, tree.clone());
        Document {
            recent,
            tree,
            hash,
            stale_hash: None,
            rope,
            lone_crs,
            nuls: count_nuls(text),
            stale: false,
            full_reparse: false,
            clean: None,
            shape_kept: true,
        }
    }

    pub fn rope(&self) -> &Rope {
        &self.rope
    }

    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    pub fn len(&self) -> usize {
        self.rope.len_bytes()
    }

    pub fn is_empty(&self) -> bool {
        self.rope.len_bytes() == 0
    }

    pub fn line_count(&self) -> usize {
        self.rope.len_lines()
    }

    /// Byte offset of `position`, clamped to the document.
    pub fn offset(&self, position: Position, encoding: PositionEncoding) -> usize {
        let line = position.line as usize;
        if line >= self.rope.len_lines() {
            return self.rope.len_bytes();
        }
        let start = self.rope.line_to_byte(line);
        let content = line_without_terminator(&self.rope, line);
        start + column_to_byte(content.chars(), position.character, encoding)
    }

    /// Position of byte `offset` (clamped, rounded down to a character
    /// boundary; an offset between the `\r` and the `\n` of a line end, which
    /// no position names, is the end of that line).
    pub fn position(&self, offset: usize, encoding: PositionEncoding) -> Position {
        let mut offset = offset.min(self.rope.len_bytes());
        if offset > 0 && offset < self.rope.len_bytes() && self.rope.byte(offset) == b'\n' && self.rope.byte(offset - 1) == b'\r' {
            offset -= 1;
        }
        // Round down to a char boundary (past UTF-8 continuation bytes).
        while offset > 0 && offset < self.rope.len_bytes() && self.rope.byte(offset) & 0xC0 == 0x80 {
            offset -= 1;
        }
        // In bytes: each char-index conversion is another walk down the rope,
        // and a publish converts every finding's and fix edit's ends.
        let line = self.rope.byte_to_line(offset);
        let line_start = self.rope.line_to_byte(line);
        let prefix = self.rope.byte_slice(line_start..offset);
        Position::new(line as u32, prefix_to_column(prefix.chars(), encoding))
    }

    /// Applies `changes` in order — each range refers to the text left by the
    /// previous change — then reparses once, reusing the old tree.
    pub fn apply_changes(&mut self, changes: &[Change], encoding: PositionEncoding) {
        self.edit(changes, encoding);
        self.reparse(&mut |_| false);
    }

    /// Applies `changes` in order to the text, and records them in the tree
    /// (which is then out of date until [`Document::reparse`]). Returns the
    /// byte edits made, in order, each in the offsets left by the one before.
    pub fn edit(&mut self, changes: &[Change], encoding: PositionEncoding) -> Vec<ByteEdit> {
        let mut made = Vec::with_capacity(changes.len());
        self.full_reparse |= self.nuls > 0;
        for change in changes {
            match change.range {
                None => {
                    self.shape_kept = false;
                    made.push(ByteEdit { start: 0, old_end: self.rope.len_bytes(), new_end: change.text.len() });
                    self.rope = Rope::from_str(&change.text);
                    self.lone_crs = count_lone_crs(&self.rope, 0, self.rope.len_bytes());
                    self.nuls = count_nuls(&change.text);
                    self.full_reparse = true;
                }
                Some(range) => {
                    let mut start = self.offset(range.start, encoding);
                    let mut end = self.offset(range.end, encoding);
                    if start > end {
                        std::mem::swap(&mut start, &mut end);
                    }
                    self.shape_kept = self.shape_kept && self.keeps_shape(start, end, &change.text);
                    self.replace_bytes(start, end, &change.text);
                    made.push(ByteEdit { start, old_end: end, new_end: start + change.text.len() });
                }
            }
            self.stale = true;
            self.stale_hash = None;
            // While the text has or had a NUL, parse from scratch (see `nuls`).
            self.full_reparse |= self.nuls > 0;
        }
        made
    }

    /// Replaces the bytes `start..end` (clamped to the text and to character
    /// boundaries) with `text`, recorded in the tree as [`Document::edit`]
    /// does. For callers that keep byte offsets (a notebook's cells joined).
    pub fn edit_bytes(&mut self, start: usize, end: usize, text: &str) -> ByteEdit {
        let len = self.rope.len_bytes();
        let floor = |mut at: usize| {
            at = at.min(len);
            while at > 0 && at < len && self.rope.byte(at) & 0xC0 == 0x80 {
                at -= 1;
            }
            at
        };
        let (start, end) = (floor(start.min(end)), floor(end.max(start)));
        self.full_reparse |= self.nuls > 0;
        self.shape_kept = self.shape_kept && self.keeps_shape(start, end, text);
        self.replace_bytes(start, end, text);
        self.stale = true;
        self.stale_hash = None;
        self.full_reparse |= self.nuls > 0;
        ByteEdit { start, old_end: end, new_end: start + text.len() }
    }

    /// Whether the tree is out of date: edits were made since the last parse.
    pub fn is_stale(&self) -> bool {
        self.stale
    }

    /// Brings the tree up to date without a parse when the text is that of
    /// a version parsed lately (an edit undone); returns whether it did.
    /// Costs a hash of the text.
    pub fn reuse_recent(&mut self) -> bool {
        if !self.stale {
            return true;
        }
        let full = self.full_reparse || self.nuls > 0;
        let hash = *self.stale_hash.get_or_insert_with(|| text_hash(&self.rope));
        let Some(tree) = self.recent.get(hash) else { return false };
        self.parsed(hash, tree, full);
        true
    }

    /// Brings the tree up to date with the text. `stop` is called now and
    /// then while parsing, told whether the parser has met a syntax error
    /// yet; when it answers true the parse stops, the tree stays as it was
    /// (out of date, with the edits recorded) and this returns false.
    ///
    /// The parse starts from the last tree without syntax errors, edited
    /// since: typing a character that breaks a line and deleting it again
    /// then costs two small reparses, where starting from the broken tree
    /// would make tree-sitter recover from the error a second time (in a
    /// large class, most of a full parse). Any correctly edited earlier
    /// tree gives the same result (the incremental property test holds the
    /// analysis of every edit to that of a fresh parse).
    pub fn reparse(&mut self, stop: &mut dyn FnMut(bool) -> bool) -> bool {
        if !self.stale {
            return true;
        }
        let full = self.full_reparse || self.nuls > 0;
        // (The hash covers the length too.)
        let hash = *self.stale_hash.get_or_insert_with(|| text_hash(&self.rope));
        // The same text as a version parsed lately (an edit undone): its tree.
        if let Some(tree) = self.recent.get(hash) {
            self.parsed(hash, tree, full);
            return true;
        }
        if self.shape_kept && !full {
            // Every edit stayed inside one token and kept it that token: the
            // edited tree is the tree a parse would give (its token grew or
            // shrank and what follows moved), so no parse is needed.
            self.parsed(hash, self.tree.clone(), full);
            return true;
        }
        let old = (!full).then(|| self.clean.as_ref().unwrap_or(&self.tree));
        let rope = &self.rope;
        let mut progress = |state: &tree_sitter::ParseState| {
            if stop(state.has_error()) {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        };
        let tree = PARSER.with_borrow_mut(|parser| {
            let tree = parser.parse_with_options(
                &mut |byte, _| {
                    if byte >= rope.len_bytes() {
                        return &[][..];
                    }
                    let (chunk, chunk_start, _, _) = rope.chunk_at_byte(byte);
                    &chunk.as_bytes()[byte - chunk_start..]
                },
                old,
                Some(tree_sitter::ParseOptions::new().progress_callback(&mut progress)),
            );
            if tree.is_none() {
                // A cancelled parse would otherwise resume on the next call.
                parser.reset();
            }
            tree
        });
        let Some(tree) = tree else { return false };
        self.parsed(hash, tree, full);
        true
    }

    /// Takes `tree` as the tree of the current text, whose hash is `hash`
    /// (`full`: the edits since the last one replaced the whole text).
    fn parsed(&mut self, hash: u64, tree: Tree, full: bool) {
        if tree.root_node().has_error() {
            // Keep the last clean tree (if the one replaced was clean, it,
            // with the edits recorded in it).
            if self.clean.is_none() && !full && !self.tree.root_node().has_error() {
                self.clean = Some(self.tree.clone());
            }
        } else {
            self.clean = None;
        }
        if full {
            self.clean = None;
        }
        self.recent.put(hash, tree.clone());
        self.tree = tree;
        self.hash = hash;
        self.stale = false;
        self.full_reparse = false;
        self.shape_kept = true;
    }

    /// Whether replacing `start..end` with `text` keeps the tree's shape: it
    /// changes one identifier into another (not a keyword), or the words of
    /// a comment or of a string's content, and the tree has no syntax error
    /// (error recovery weighs the bytes it skips). Asked before the edit,
    /// of a tree that is up to date or was itself only so edited.
    fn keeps_shape(&self, start: usize, end: usize, text: &str) -> bool {
        if self.nuls > 0 || self.lone_crs > 0 || self.full_reparse {
            return false;
        }
        let root = self.tree.root_node();
        if root.has_error() {
            return false;
        }
        let removed: String = self.rope.byte_slice(start..end).to_string();
        let g = crate::grammar();
        // The leaf holding the edit, which must not touch its first byte:
        // tree-sitter takes text edited at a token's start for the space
        // before it. (For an insertion, the token it extends.)
        let leaf_at = |from: usize, to: usize| {
            root.descendant_for_byte_range(from, to).filter(|n| n.child_count() == 0 || n.kind_id() == g.string_content)
        };
        let leaf = if start == end { start.checked_sub(1).and_then(|b| leaf_at(b, start)) } else { leaf_at(start, end) };
        let Some(leaf) = leaf.filter(|n| n.start_byte() < start && end <= n.end_byte()) else { return false };
        let old = self.rope.byte_slice(leaf.start_byte()..leaf.end_byte()).to_string();
        let at = start - leaf.start_byte();
        let new = format!("{}{}{}", &old[..at], text, &old[at + removed.len()..]);
        let kind = leaf.kind_id();
        if kind == g.identifier {
            let word = |s: &str| s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            return word(text)
                && word(&old)
                && new.bytes().next().is_some_and(|b| !b.is_ascii_digit())
                && !KEYWORDS.contains(&new.as_str());
        }
        // Plain words: no quote, escape, brace, line break or NUL, and no
        // backslash right before or after the edit (it would start or end an
        // escape sequence).
        let plain = |s: &str| !s.bytes().any(|b| matches!(b, b'"' | b'\'' | b'\\' | b'{' | b'}' | b'\n' | b'\r' | 0));
        let bytes = old.as_bytes();
        let no_escape_near = (at == 0 || bytes[at - 1] != b'\\') && bytes.get(at + removed.len()) != Some(&b'\\');
        if kind == g.comment {
            return at > 0 && plain(text) && plain(&removed) && no_escape_near;
        }
        if kind == g.string_content {
            return leaf.child_count() == 0 && !new.is_empty() && plain(text) && plain(&removed) && no_escape_near;
        }
        false
    }

    /// A hash of the text when it was last parsed (the current text unless
    /// [`Document::is_stale`]).
    pub fn text_hash(&self) -> u64 {
        self.hash
    }

    /// Replaces bytes `start..end` (char boundaries) and records the edit in
    /// the tree, without reparsing.
    fn replace_bytes(&mut self, start: usize, end: usize, text: &str) {
        let window_start = start.saturating_sub(1);
        self.lone_crs -= count_lone_crs(&self.rope, window_start, end);
        self.nuls -= self.rope.byte_slice(start..end).bytes().filter(|&b| b == 0).count();
        self.nuls += count_nuls(text);
        let start_point = self.ts_point(start);
        let old_end_point = self.ts_point(end);
        let start_char = self.rope.byte_to_char(start);
        let end_char = self.rope.byte_to_char(end);
        self.rope.remove(start_char..end_char);
        self.rope.insert(start_char, text);
        let new_end = start + text.len();
        self.lone_crs += count_lone_crs(&self.rope, window_start, new_end);
        let new_end_point = self.ts_point(new_end);
        let edit = InputEdit {
            start_byte: start,
            old_end_byte: end,
            new_end_byte: new_end,
            start_position: start_point,
            old_end_position: old_end_point,
            new_end_position: new_end_point,
        };
        self.tree.edit(&edit);
        if let Some(clean) = &mut self.clean {
            clean.edit(&edit);
        }
    }

    /// Tree-sitter's idea of the position of `byte`: rows end at `\n`,
    /// columns count bytes.
    fn ts_point(&self, byte: usize) -> Point {
        if self.lone_crs == 0 {
            let line = self.rope.byte_to_line(byte);
            return Point::new(line, byte - self.rope.line_to_byte(line));
        }
        // Rare: a lone `\r` somewhere. Count `\n`s directly.
        let mut row = 0;
        let mut line_start = 0;
        for (i, b) in self.rope.byte_slice(..byte).bytes().enumerate() {
            if b == b'\n' {
                row += 1;
                line_start = i + 1;
            }
        }
        Point::new(row, byte - line_start)
    }
}

impl Document {
    /// The text as one string, allocated once at its full length (`to_string`
    /// goes through `Display`, which grows the string chunk by chunk).
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(self.rope.len_bytes());
        for chunk in self.rope.chunks() {
            out.push_str(chunk);
        }
        out
    }
}

impl std::fmt::Display for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for chunk in self.rope.chunks() {
            f.write_str(chunk)?;
        }
        Ok(())
    }
}

fn line_without_terminator(rope: &Rope, line: usize) -> ropey::RopeSlice<'_> {
    let slice = rope.line(line);
    let mut len = slice.len_chars();
    if len > 0 && slice.char(len - 1) == '\n' {
        len -= 1;
    }
    if len > 0 && slice.char(len - 1) == '\r' {
        len -= 1;
    }
    slice.slice(..len)
}

fn count_nuls(text: &str) -> usize {
    text.bytes().filter(|&b| b == 0).count()
}

/// Lone `\r`s at byte positions `from..to` (the byte after each is looked at too).
fn count_lone_crs(rope: &Rope, from: usize, to: usize) -> usize {
    let len = rope.len_bytes();
    let (from, to) = (from.min(len), to.min(len));
    if from >= to {
        return 0;
    }
    let mut count = 0;
    let mut bytes = rope.bytes_at(from).peekable();
    let mut at = from;
    while at < to {
        let Some(b) = bytes.next() else { break };
        if b == b'\r' && bytes.peek() != Some(&b'\n') {
            count += 1;
        }
        at += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use PositionEncoding::*;

    fn change(l1: u32, c1: u32, l2: u32, c2: u32, text: &str) -> Change {
        Change::replace(Range::new(Position::new(l1, c1), Position::new(l2, c2)), text)
    }

    #[test]
    fn edits_apply_in_order() {
        let mut doc = Document::new("import numpy as np\nx = np.sort(a)\n");
        // The second change's position refers to the text after the first.
        doc.apply_changes(&[change(1, 0, 1, 1, "yy"), change(1, 0, 1, 2, "z")], Utf16);
        assert_eq!(doc.to_string(), "import numpy as np\nz = np.sort(a)\n");
        assert_eq!(doc.tree().root_node().to_sexp(), parse(&doc.to_string()).root_node().to_sexp());
    }

    #[test]
    fn utf16_positions_after_emoji_and_cjk() {
        let mut doc = Document::new("s = '😀中'\nx = 1\n");
        // After the emoji (2 UTF-16 units) and the CJK char (1 unit).
        doc.apply_changes(&[change(0, 8, 0, 8, "!")], Utf16);
        assert_eq!(doc.to_string(), "s = '😀中!'\nx = 1\n");
        doc.apply_changes(&[change(0, 12, 0, 12, "?")], Utf8);
        assert_eq!(doc.to_string(), "s = '😀中?!'\nx = 1\n");
        doc.apply_changes(&[change(0, 6, 0, 7, "文")], Utf32);
        assert_eq!(doc.to_string(), "s = '😀文?!'\nx = 1\n");
    }

    #[test]
    fn out_of_range_edits_clamp() {
        let mut doc = Document::new("a = 1\r\nb = 2");
        doc.apply_changes(&[change(0, 50, 0, 60, "0")], Utf16);
        assert_eq!(doc.to_string(), "a = 10\r\nb = 2");
        doc.apply_changes(&[change(9, 0, 12, 4, "\nc = 3")], Utf16);
        assert_eq!(doc.to_string(), "a = 10\r\nb = 2\nc = 3");
        // A reversed range is treated as the same range forwards.
        doc.apply_changes(&[change(0, 6, 0, 4, "")], Utf16);
        assert_eq!(doc.to_string(), "a = \r\nb = 2\nc = 3");
    }

    #[test]
    fn positions_agree_with_the_line_index_at_every_offset() {
        let text = "a\r\nb\rc\n\u{4e2d}\u{6587} = 1  # \u{1f680}\r\n\tx\u{e9}\r\r\n\n\u{1f680}\u{1f680}z\u{4e2d}";
        let doc = Document::new(text);
        let index = crate::LineIndex::new(text);
        for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32] {
            for offset in 0..=text.len() + 2 {
                let mut expected = index.position(text, offset, encoding);
                // Between a `\r` and its `\n`: the end of that line, as `Document::position` says.
                let at = offset.min(text.len());
                if at > 0 && at < text.len() && text.as_bytes()[at] == b'\n' && text.as_bytes()[at - 1] == b'\r' {
                    expected = index.position(text, at - 1, encoding);
                }
                assert_eq!(doc.position(offset, encoding), expected, "offset {offset} {encoding:?}");
            }
        }
    }

    #[test]
    fn positions_round_trip_over_crlf_and_lone_cr() {
        let doc = Document::new("a\r\nbé\rc\n");
        assert_eq!(doc.line_count(), 4);
        assert_eq!(doc.position(doc.len(), Utf16), Position::new(3, 0));
        let c = doc.to_string().find('c').unwrap();
        assert_eq!(doc.position(c, Utf8), Position::new(2, 0));
        assert_eq!(doc.offset(Position::new(1, 2), Utf16), c - 1);
        // Between the "\r" and the "\n": the end of the first line.
        assert_eq!(doc.position(2, Utf8), Position::new(0, 1));
        assert_eq!(doc.position(1, Utf8), Position::new(0, 1));
    }

    #[test]
    fn a_cancelled_reparse_keeps_the_edits_for_the_next() {
        let body: String = (0..300).map(|i| format!("    def m{i}(self):\n        return {i}\n")).collect();
        let mut doc = Document::new(&format!("class C:\n{body}"));
        doc.edit(&[change(1, 17, 1, 17, "x")], Utf8);
        assert!(doc.is_stale());
        assert!(!doc.reparse(&mut |_| true), "asked to stop at once, the parse stops");
        assert!(doc.is_stale());
        doc.edit(&[change(2, 16, 2, 17, "")], Utf8);
        // The parser was reset: the next parse starts over from the edited tree.
        assert!(doc.reparse(&mut |_| false));
        assert!(!doc.is_stale());
        assert_eq!(doc.tree().root_node().to_sexp(), parse(&doc.to_string()).root_node().to_sexp());
        // Another document parsed on the same thread is not confused by it.
        assert_eq!(Document::new("x = 1\n").tree().root_node().to_sexp(), parse("x = 1\n").root_node().to_sexp());
    }

    #[test]
    fn reparses_from_the_last_clean_tree_give_a_fresh_parse() {
        let text = "class C:\n    def a(self, v):\n        if v:\n            return 1\n        else:\n            return 2\n\n    def b(self):\n        return 3\n";
        let mut doc = Document::new(text);
        let fresh = |doc: &Document| parse(&doc.to_string()).root_node().to_sexp();
        // Break it (an unclosed bracket)...
        doc.apply_changes(&[change(4, 13, 4, 13, "[")], Utf8);
        assert!(doc.tree().root_node().has_error());
        assert_eq!(doc.tree().root_node().to_sexp(), fresh(&doc));
        // ...keep typing while it is broken, in another method too...
        doc.apply_changes(&[change(4, 14, 4, 14, "y"), change(8, 16, 8, 16, "0")], Utf8);
        assert_eq!(doc.tree().root_node().to_sexp(), fresh(&doc));
        // ...and mend it.
        doc.apply_changes(&[change(4, 13, 4, 15, "")], Utf8);
        assert!(!doc.tree().root_node().has_error());
        assert_eq!(doc.tree().root_node().to_sexp(), fresh(&doc));
        assert_eq!(doc.to_string(), text.replace("return 3", "return 30"));
    }

    #[test]
    fn the_text_hash_ignores_how_the_rope_is_chunked() {
        let text: String = (0..5000).map(|i| format!("x{i} = {i}\n")).collect();
        let whole = Rope::from_str(&text);
        let mut built = Rope::new();
        // Built backwards, line by line: chunk boundaries fall elsewhere.
        for line in text.split_inclusive('\n').collect::<Vec<_>>().into_iter().rev() {
            built.insert(0, line);
        }
        assert_ne!(whole.chunks().count(), 1);
        assert_eq!(text_hash(&whole), text_hash(&built));
        let mut other = text.clone();
        other.replace_range(7..8, "9");
        assert_ne!(text_hash(&whole), text_hash(&Rope::from_str(&other)));
    }

    #[test]
    fn undoing_an_edit_finds_the_earlier_tree() {
        let text = "class C:\n    def a(self):\n        return 1\n";
        let mut doc = Document::new(text);
        let before = doc.text_hash();
        doc.apply_changes(&[change(2, 16, 2, 16, "x")], Utf8);
        assert_ne!(doc.text_hash(), before);
        doc.apply_changes(&[change(2, 16, 2, 17, "")], Utf8);
        assert_eq!(doc.text_hash(), before);
        // Typing and deleting again and again keeps finding it.
        for _ in 0..2 * Recent::<Tree>::CAPACITY {
            doc.apply_changes(&[change(2, 16, 2, 16, "y")], Utf8);
            doc.apply_changes(&[change(2, 16, 2, 17, "")], Utf8);
            assert_eq!(doc.recent.entries.last().map(|r| r.0), Some(before));
        }
        assert_eq!(doc.tree().root_node().to_sexp(), parse(text).root_node().to_sexp());
        // The tree found again is edited like any other.
        doc.apply_changes(&[change(2, 15, 2, 16, "2")], Utf8);
        assert_eq!(doc.tree().root_node().to_sexp(), parse(&doc.to_string()).root_node().to_sexp());
        assert_eq!(doc.to_string(), text.replace('1', "2"));
    }

    #[test]
    fn full_replacement() {
        let mut doc = Document::new("x = 1\n");
        doc.apply_changes(&[Change::full("import pandas as pd\n")], Utf16);
        assert_eq!(doc.to_string(), "import pandas as pd\n");
        assert!(!doc.tree().root_node().has_error());
    }
}
