//! Bytes of a `.py` file → text, as Python reads it: UTF-8 unless a PEP 263
//! coding line in the first two lines says otherwise.

use std::borrow::Cow;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// NUL bytes: Python refuses such a file, and so do we.
    Binary,
    /// Not valid UTF-8 and no coding line.
    NotUtf8 { valid_up_to: usize },
    /// A coding line names an encoding we don't know.
    UnknownEncoding(String),
    /// The bytes are not valid in the declared encoding.
    Malformed(String),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Binary => f.write_str("binary file (contains NUL bytes), not Python source"),
            DecodeError::NotUtf8 { valid_up_to } => write!(
                f,
                "not valid UTF-8 (first bad byte at offset {valid_up_to}) and no `# -*- coding: … -*-` line"
            ),
            DecodeError::UnknownEncoding(name) => write!(f, "unknown encoding {name:?} in the coding line"),
            DecodeError::Malformed(name) => write!(f, "bytes that are not valid {name}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Decodes a Python source file.
pub fn decode(bytes: &[u8]) -> Result<Cow<'_, str>, DecodeError> {
    // (memchr's vector search: the slice's own `contains` reads a word at a time.)
    if memchr::memchr(0, bytes).is_some() {
        return Err(DecodeError::Binary);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        // A BOM means UTF-8 whatever the coding line says (Python rejects a conflict).
        return std::str::from_utf8(rest).map(Cow::Borrowed).map_err(|e| DecodeError::NotUtf8 { valid_up_to: e.valid_up_to() + 3 });
    }
    let declared = coding_declaration(bytes);
    let name = declared.map(normalise);
    match name.as_deref() {
        None | Some("utf-8" | "utf8" | "utf-8-sig") => match std::str::from_utf8(bytes) {
            Ok(text) => Ok(Cow::Borrowed(text)),
            Err(e) if declared.is_none() => Err(DecodeError::NotUtf8 { valid_up_to: e.valid_up_to() }),
            Err(_) => Err(DecodeError::Malformed("UTF-8".into())),
        },
        Some("latin-1" | "latin1" | "iso-8859-1" | "iso8859-1" | "l1") => {
            // Python's latin-1 maps every byte to the code point of the same value
            // (WHATWG's "latin1" label means windows-1252 instead).
            Ok(Cow::Owned(bytes.iter().map(|&b| b as char).collect()))
        }
        Some("ascii" | "us-ascii") => {
            if bytes.is_ascii() {
                Ok(Cow::Borrowed(std::str::from_utf8(bytes).expect("ASCII is UTF-8")))
            } else {
                Err(DecodeError::Malformed("ASCII".into()))
            }
        }
        Some(label) => {
            let encoding = encoding_rs::Encoding::for_label(label.as_bytes())
                .ok_or_else(|| DecodeError::UnknownEncoding(declared.unwrap_or_default().to_string()))?;
            encoding
                .decode_without_bom_handling_and_without_replacement(bytes)
                .ok_or_else(|| DecodeError::Malformed(encoding.name().to_string()))
        }
    }
}

fn normalise(name: &str) -> String {
    name.to_ascii_lowercase().replace('_', "-")
}

/// The encoding named by a PEP 263 comment on line 1 or 2, if any. Line 2
/// counts only when line 1 is a comment or blank, as in CPython.
fn coding_declaration(bytes: &[u8]) -> Option<&str> {
    let mut lines = bytes.split(|&b| b == b'\n').take(2);
    let first = lines.next()?;
    if let Some(name) = coding_in_line(first) {
        return Some(name);
    }
    let trimmed = first.trim_ascii_start();
    if trimmed.is_empty() || trimmed.starts_with(b"#") {
        return lines.next().and_then(coding_in_line);
    }
    None
}

fn coding_in_line(line: &[u8]) -> Option<&str> {
    let line = line.trim_ascii_start();
    if !line.starts_with(b"#") {
        return None;
    }
    let at = line.windows(6).position(|w| w == b"coding")?;
    let rest = &line[at + 6..];
    let rest = rest.strip_prefix(b":").or_else(|| rest.strip_prefix(b"="))?;
    let rest = rest.trim_ascii_start();
    let end = rest.iter().position(|&b| !(b.is_ascii_alphanumeric() || b"-_.".contains(&b))).unwrap_or(rest.len());
    std::str::from_utf8(&rest[..end]).ok().filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_by_default() {
        assert_eq!(decode("x = '中文'\n".as_bytes()).unwrap(), "x = '中文'\n");
        assert_eq!(decode(b"x = '\xff'\n"), Err(DecodeError::NotUtf8 { valid_up_to: 5 }));
    }

    #[test]
    fn coding_line_is_honoured() {
        let latin1 = b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'\n";
        assert_eq!(decode(latin1).unwrap(), "# -*- coding: latin-1 -*-\nname = 'été'\n");
        let sjis = b"#!/usr/bin/env python\n# vim: set fileencoding=shift_jis :\ns = '\x82\xa0'\n";
        assert!(decode(sjis).unwrap().contains("'あ'"));
        assert_eq!(
            decode(b"# coding: klingon\nx = 1\n"),
            Err(DecodeError::UnknownEncoding("klingon".into()))
        );
    }

    #[test]
    fn coding_on_line_two_needs_a_comment_on_line_one() {
        assert_eq!(decode(b"x = 1\n# coding: latin-1\ny = '\xe9'\n"), Err(DecodeError::NotUtf8 { valid_up_to: 29 }));
    }

    #[test]
    fn bom_and_binary() {
        assert_eq!(decode(b"\xEF\xBB\xBFx = 1\n").unwrap(), "x = 1\n");
        assert_eq!(decode(b"x = 1\0\n"), Err(DecodeError::Binary));
    }
}
