//! Python's lexical structure read straight from the bytes: string
//! literals, comments, brackets, backslash continuations, logical lines and
//! names. Tree-sitter reads all of this too, but a parse costs far more than
//! a pass over the bytes, and the readers that decide what to parse (the
//! [`outline`](crate::outline), the diagnostics' pre-scan) need an answer
//! before there is a tree.
//!
//! What this reading promises, and what it gives up on:
//!
//! - A string literal is found from its opening quote. Its prefix is the run
//!   of up to three letters just before the quote when each is one of
//!   `r b u f t` (either case) and no name byte stands before the run:
//!   `return'x'` has no prefix, `rb'x'` has one. Any prefix letter may be
//!   doubled or mixed; whether the combination is one Python accepts is not
//!   checked.
//! - A backslash inside a string keeps the byte after it from ending the
//!   string, in raw strings too (Python's raw strings can't end in a lone
//!   backslash either). A one-quote string ends at a line break not after a
//!   backslash: that is an unterminated string.
//! - An f- or t-string is read with its replacement fields: `{{` is a brace
//!   of text, `{` opens a field that may hold brackets and string literals
//!   with any quotes (Python 3.12 allows the enclosing quote again), and the
//!   field ends at its `}` outside them. A backslash in a field (outside a
//!   string there) and a format specification holding a quote are not read:
//!   the reading gives up.
//! - A comment runs from a `#` outside strings to the end of its line.
//! - A logical line ends at a line break outside brackets and not after a
//!   backslash. Line breaks are `\n` and `\r\n`; a `\r` alone is read as
//!   white space, where Python would end the line there: a reader that may
//!   meet one must look for it first, as the outline does.
//!
//! Every reading here gives up (`None`, `false`) instead of guessing: at a
//! string that doesn't end, a bracket closed that was never opened, a
//! bracket still open at the end of the text. None of it allocates per
//! token: strings and lines are handed to the caller as they are found.

use std::ops::Range;

/// Whether `b` can be part of a name. Bytes past ASCII count, so that a name
/// read as a run of these ends on a character boundary.
#[inline]
pub const fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Calls `f` with every name-like token of `text`: a run of [`name_byte`]s
/// not starting with a digit. Keywords are tokens too, and so is whatever
/// stands inside strings and comments: blank those first where they must
/// not count.
pub fn for_each_name<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    const IDENT: [bool; 256] = {
        let mut ident = [false; 256];
        let mut c = 0;
        while c < 256 {
            ident[c] = name_byte(c as u8);
            c += 1;
        }
        ident
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if IDENT[bytes[i] as usize] {
            let start = i;
            i += 1;
            while i < bytes.len() && IDENT[bytes[i] as usize] {
                i += 1;
            }
            if !bytes[start].is_ascii_digit() {
                f(&text[start..i]);
            }
        } else {
            i += 1;
        }
    }
}

/// Where the line holding `i` ends: at its `\n` (the `\r` of a `\r\n` is
/// before it), or at the end of `b`.
#[inline]
pub fn line_end(b: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |e| i + e)
}

/// The string prefix letters just before the quote at `quote` (`rb`, `f`,
/// …); empty where there is none (see the module's notes).
pub fn string_prefix(b: &[u8], quote: usize) -> &[u8] {
    let mut s = quote;
    while s > 0 && b[s - 1].is_ascii_alphabetic() && quote - s < 3 {
        s -= 1;
    }
    // Part of a longer identifier (`x"..."` is not a prefix): no prefix.
    if s > 0 && name_byte(b[s - 1]) {
        return &[];
    }
    let p = &b[s..quote];
    if p.iter().all(|c| matches!(c.to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f' | b't')) {
        p
    } else {
        &[]
    }
}

/// A string literal, as [`scan_string`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Literal {
    /// Its first byte: its prefix's first letter, or its opening quote.
    pub start: usize,
    /// Past its opening quote or quotes.
    pub open: usize,
    /// At its closing quote or quotes.
    pub close: usize,
    /// Past them.
    pub end: usize,
    /// Opened with three quotes.
    pub triple: bool,
    /// An f- or t-string (`f`, `t` among its prefix letters).
    pub formatted: bool,
}

impl Literal {
    /// From its prefix to past its closing quotes.
    pub fn range(&self) -> Range<usize> {
        self.start..self.end
    }

    /// Between its quotes.
    pub fn inside(&self) -> Range<usize> {
        self.open..self.close
    }
}

/// Reads the string literal whose opening quote is `b[quote]` (its prefix
/// is read back from there); `None` where it doesn't end, or ends in a way
/// this reading gives up on (see the module's notes). `nested` is told the
/// literals inside its replacement fields, innermost first.
pub fn scan_string(b: &[u8], quote: usize, nested: &mut impl FnMut(&Literal)) -> Option<Literal> {
    let prefix = string_prefix(b, quote);
    let q = b[quote];
    let triple = b.get(quote + 1) == Some(&q) && b.get(quote + 2) == Some(&q);
    let formatted = prefix.iter().any(|c| matches!(c.to_ascii_lowercase(), b'f' | b't'));
    let open = if triple { quote + 3 } else { quote + 1 };
    let literal = |close: usize, end: usize| Literal { start: quote - prefix.len(), open, close, end, triple, formatted };
    let mut j = open;
    loop {
        if !formatted {
            // Straight to the next byte that can matter.
            let next = if triple { memchr::memchr2(q, b'\\', &b[j.min(b.len())..]) } else { memchr::memchr3(q, b'\\', b'\n', &b[j.min(b.len())..]) };
            j += next?;
        }
        let c = *b.get(j)?;
        match c {
            b'\\' => {
                j += 2;
                continue;
            }
            b'\n' if !triple => return None,
            b'{' if formatted => {
                if b.get(j + 1) == Some(&b'{') {
                    j += 2;
                    continue;
                }
                j = scan_replacement(b, j + 1, nested)?;
                continue;
            }
            _ if c == q => {
                if !triple {
                    return Some(literal(j, j + 1));
                }
                if b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
                    return Some(literal(j, j + 3));
                }
            }
            _ => {}
        }
        j += 1;
    }
}

/// Reads an f-string replacement field from just after its `{`; returns
/// the index past its closing `}`.
fn scan_replacement(b: &[u8], mut j: usize, nested: &mut impl FnMut(&Literal)) -> Option<usize> {
    let mut depth = 0i32;
    loop {
        let c = *b.get(j)?;
        match c {
            b'\'' | b'"' => {
                let literal = scan_string(b, j, nested)?;
                nested(&literal);
                j = literal.end;
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' => depth -= 1,
            b'}' => {
                if depth == 0 {
                    return Some(j + 1);
                }
                depth -= 1;
            }
            b'\\' => return None,
            _ => {}
        }
        j += 1;
    }
}

/// A comment or a string literal, as [`strings_and_comments`] finds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// From its `#` to the end of its line (its line break left out, a
    /// `\r\n`'s `\r` kept).
    Comment(Range<usize>),
    String(Literal),
}

impl Piece {
    /// The bytes it covers.
    pub fn range(&self) -> Range<usize> {
        match self {
            Piece::Comment(range) => range.clone(),
            Piece::String(literal) => literal.range(),
        }
    }
}

/// Calls `f` with every comment and string literal of `b` (the outermost
/// ones: a replacement field's strings are part of their f-string), in
/// order; `false` where a string can't be read (see [`scan_string`]), after
/// the pieces before it.
pub fn strings_and_comments(b: &[u8], mut f: impl FnMut(Piece)) -> bool {
    let mut i = 0;
    while let Some(at) = memchr::memchr3(b'\'', b'"', b'#', &b[i..]) {
        i += at;
        if b[i] == b'#' {
            let end = line_end(b, i);
            f(Piece::Comment(i..end));
            i = end;
            continue;
        }
        let Some(literal) = scan_string(b, i, &mut |_| {}) else { return false };
        i = literal.end;
        f(Piece::String(literal));
    }
    true
}

/// A logical line, as [`logical_lines`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    /// Where its first physical line starts (its indentation included).
    pub start: usize,
    /// Its first byte past the indentation.
    pub code: usize,
    /// Where the line break that ends it starts (the `\r` of a `\r\n`), or
    /// the end of the text.
    pub stop: usize,
    /// Past that line break.
    pub end: usize,
    /// Its last token outside brackets, strings and comments is a `:` (a
    /// block's header, the block on lines of its own).
    pub opens_block: bool,
}

impl Line {
    /// How many bytes of indentation it has (spaces, tabs, form feeds each one).
    pub fn indent(&self) -> usize {
        self.code - self.start
    }
}

/// What [`logical_lines`] tells as it reads.
pub trait LineVisitor {
    /// Give up at a tab or form feed in the indentation of any line (blank
    /// and comment-only lines too), which Python reads in columns that
    /// depend on their place: a reader of indentation in bytes can't
    /// compare it with spaces.
    const SPACES_ONLY: bool = false;
    /// A logical line, once read whole.
    fn line(&mut self, line: &Line);
    /// A physical line holding only a comment: where it starts, where its
    /// `#` is, past its line break.
    fn comment_line(&mut self, _start: usize, _hash: usize, _end: usize) {}
    /// A string literal of a logical line (those in replacement fields
    /// too, before the f-string holding them).
    fn string(&mut self, _literal: &Literal) {}
}

/// Reads `b` as logical lines (blank and comment-only lines left out but
/// for [`LineVisitor::comment_line`]), telling `visitor` each line and
/// string; `None` where a string can't be read, a bracket is closed that
/// was never opened or is still open at the end, or the visitor's
/// indentation can't be read (see [`LineVisitor::SPACES_ONLY`]).
pub fn logical_lines(b: &[u8], visitor: &mut impl LineVisitor) -> Option<()> {
    let mut i = 0;
    while i < b.len() {
        // A new logical line: its indentation.
        let start = i;
        // (Eight spaces at a time first: Python's indentation comes in fours.)
        while i + 8 <= b.len() && b[i..i + 8] == *b"        " {
            i += 8;
        }
        while i < b.len() && b[i] == b' ' {
            i += 1;
        }
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\x0c') {
            if visitor_spaces_only(visitor) && b[i] != b' ' {
                return None;
            }
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        match b[i] {
            b'\n' => {
                i += 1;
                continue;
            }
            b'\r' if b.get(i + 1) == Some(&b'\n') => {
                i += 2;
                continue;
            }
            b'#' => {
                let end = line_end(b, i);
                visitor.comment_line(start, i, (end + 1).min(b.len()));
                i = end;
                continue;
            }
            _ => {}
        }
        let code = i;
        let mut depth: i32 = 0;
        let mut colon_last = false;
        let mut stop = b.len();
        while i < b.len() {
            let c = b[i];
            if BYTE_CLASS[c as usize] <= BLANK {
                // A run of bytes that at most say the line doesn't end in
                // `:` (any but blanks say so).
                let (end, plain) = skip_run(b, i);
                i = end;
                if plain {
                    colon_last = false;
                }
                continue;
            }
            match c {
                b'#' => {
                    i = line_end(b, i);
                    continue;
                }
                b'\\' => {
                    // A continuation: only before a line break.
                    if b.get(i + 1) == Some(&b'\n') {
                        i += 2;
                        continue;
                    }
                    if b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') {
                        i += 3;
                        continue;
                    }
                    i += 1;
                    continue;
                }
                b'\n' => {
                    i += 1;
                    if depth == 0 {
                        stop = if b[i - 2] == b'\r' { i - 2 } else { i - 1 };
                        break;
                    }
                    continue;
                }
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth -= 1;
                    if depth < 0 {
                        return None;
                    }
                }
                b'\'' | b'"' => {
                    let literal = scan_string(b, i, &mut |l| visitor.string(l))?;
                    visitor.string(&literal);
                    i = literal.end;
                    colon_last = false;
                    continue;
                }
                _ => {}
            }
            if !c.is_ascii_whitespace() {
                colon_last = c == b':' && depth == 0;
            }
            i += 1;
        }
        if depth != 0 {
            return None;
        }
        visitor.line(&Line { start, code, stop, end: i, opens_block: colon_last });
    }
    Some(())
}

/// [`LineVisitor::SPACES_ONLY`] of a visitor at hand.
#[inline(always)]
fn visitor_spaces_only<V: LineVisitor>(_: &V) -> bool {
    V::SPACES_ONLY
}

/// How [`logical_lines`] reads a byte: one that only means a line doesn't
/// end in `:` (most), white space that means nothing (but a line break), or
/// one it looks at.
const PLAIN: u8 = 0;
const BLANK: u8 = 1;
const SPECIAL: u8 = 2;
const BYTE_CLASS: [u8; 256] = {
    let mut class = [PLAIN; 256];
    let mut c = 0;
    while c < 256 {
        class[c] = match c as u8 {
            b' ' | b'\t' | b'\r' | 0x0c => BLANK,
            0 | b'#' | b'\\' | b'\n' | b'(' | b'[' | b'{' | b')' | b']' | b'}' | b'\'' | b'"' | b':' => SPECIAL,
            _ => PLAIN,
        };
        c += 1;
    }
    class
};

/// Where the run of bytes from `i` that [`logical_lines`] passes over (all
/// but [`SPECIAL`]) ends, and whether it held one that isn't blank. Sixteen
/// bytes at a time where the processor has SSE2 (every x86-64 one): most of
/// a file is such runs.
fn skip_run(b: &[u8], mut i: usize) -> (usize, bool) {
    let mut plain = false;
    #[cfg(target_arch = "x86_64")]
    while i + 16 <= b.len() {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86-64, and the 16 bytes read lie in `b`.
        let (special, blank) = unsafe {
            let v = _mm_loadu_si128(b.as_ptr().add(i).cast());
            let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
            let any = |cs: &[u8]| cs.iter().fold(_mm_setzero_si128(), |m, &c| _mm_or_si128(m, eq(c)));
            (
                _mm_movemask_epi8(any(&[0, b'#', b'\\', b'\n', b'(', b'[', b'{', b')', b']', b'}', b'\'', b'"', b':'])) as u32,
                _mm_movemask_epi8(any(&[b' ', b'\t', b'\r', 0x0c])) as u32,
            )
        };
        let others = !(special | blank) & 0xffff;
        if special != 0 {
            let n = special.trailing_zeros();
            return (i + n as usize, plain || others & ((1 << n) - 1) != 0);
        }
        plain |= others != 0;
        i += 16;
    }
    while i < b.len() {
        let class = BYTE_CLASS[b[i] as usize];
        if class > BLANK {
            break;
        }
        plain |= class == PLAIN;
        i += 1;
    }
    (i, plain)
}

#[cfg(test)]
mod tests;
