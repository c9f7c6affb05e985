//! Differential oracle for editing: a document changed the way the language
//! server changes it (`Document::apply_changes`, then `check_incremental`
//! with the document's `Cache` kept between notifications) must, after every
//! notification, hold the same text as the same changes applied to a plain
//! string by an independent implementation of the LSP's position rules, a
//! tree equal to a fresh parse of that text, and findings equal to a fresh
//! analysis (with and without `check`'s shortcuts, and `check_text`'s
//! partial parse). Nothing may panic.
//!
//! # Input format
//!
//! ```text
//! header  initial-text  (0xFF kind l1 c1 l2 c2 change-text)*
//! ```
//!
//! - `header`: bits 0–1 the position encoding (UTF-8, UTF-16, UTF-32,
//!   UTF-16), bit 2 `min-elements = 0` (every size counts as big), bits 4–5
//!   the GPU (none, a GTX 1080, an RTX 4090, none).
//! - Texts are UTF-8 (invalid bytes become U+FFFD) in which the bytes that
//!   UTF-8 never uses stand for pieces worth having often: `0xC0` CRLF,
//!   `0xC1` a lone CR, `0xF6` an emoji (a UTF-16 surrogate pair), `0xF7` CJK
//!   text, `0xFC` a NUL, others whole lines of NumPy or pandas code (see
//!   [`TOKENS`]).
//! - Each `0xFF` starts a change. `kind` bit 0 set starts a new didChange
//!   notification (otherwise the change joins the current one, as LSP
//!   clients batch them); bits 1–3 all set make it a whole-document change.
//!   The four position bytes are line, character, line, character: values up
//!   to 239 as they are, 240–254 far past any end (hundreds to thousands),
//!   255 `u32::MAX`. Reversed ranges and ranges past the end are allowed.
//!
//! The seeds in `fuzz/seeds/edits/` are written in this format.

use gpulens_diagnostics::{check, check_incremental, check_reference, check_text, check_text_unfixed, Cache, Finding, Settings};
use gpulens_gpu::GpuProfile;
use gpulens_syntax::{parse, Change, Document, Position, PositionEncoding, Range, Tree};

/// Starts every change; never part of UTF-8.
pub const SEPARATOR: u8 = 0xFF;

/// Bytes UTF-8 never uses, each standing for a piece of text.
pub const TOKENS: &[(u8, &str)] = &[
    (0xC0, "\r\n"),
    (0xC1, "\r"),
    (0xF5, "\n    "),
    (0xF6, "😀"),
    (0xF7, "中文"),
    (0xF8, "import numpy as np\n"),
    (0xF9, "np.fft.fft(a)"),
    (0xFA, "for i in range(n):\n    out[i] = a[i] * 2\n"),
    (0xFB, "def f(a):\n"),
    (0xFC, "\0"),
    (0xFD, "N = 10_000_000\n"),
    (0xFE, "import pandas as pd\ndf = pd.read_csv(p)\n"),
];

/// At most this many changes are taken from one input, so one input stays fast.
const MAX_CHANGES: usize = 200;

/// What one fuzz input describes.
#[derive(Debug)]
pub struct Scenario {
    pub encoding: PositionEncoding,
    pub settings: Settings,
    pub gpu: GpuProfile,
    pub initial: String,
    pub notifications: Vec<Vec<Change>>,
}

/// Reads any bytes as a [`Scenario`]; every input is a valid one.
pub fn decode(data: &[u8]) -> Scenario {
    let header = data.first().copied().unwrap_or(0);
    let encoding = match header & 3 {
        0 => PositionEncoding::Utf8,
        2 => PositionEncoding::Utf32,
        _ => PositionEncoding::Utf16,
    };
    let mut settings = Settings::default();
    if header & 4 != 0 {
        settings.min_elements = 0;
    }
    let gpu = match (header >> 4) & 3 {
        1 => GpuProfile::target("GTX 1080").unwrap_or_else(|_| GpuProfile::none()),
        2 => GpuProfile::target("RTX 4090").unwrap_or_else(|_| GpuProfile::none()),
        _ => GpuProfile::none(),
    };
    let mut parts = data.get(1..).unwrap_or_default().split(|&b| b == SEPARATOR);
    let initial = text(parts.next().unwrap_or_default());
    let mut notifications: Vec<Vec<Change>> = Vec::new();
    for part in parts.take(MAX_CHANGES) {
        let byte = |i: usize| part.get(i).copied().unwrap_or(0);
        let kind = byte(0);
        let new_text = text(part.get(5..).unwrap_or_default());
        let change = if kind & 0b1110 == 0b1110 {
            Change::full(new_text)
        } else {
            let start = Position::new(coordinate(byte(1)), coordinate(byte(2)));
            let end = Position::new(coordinate(byte(3)), coordinate(byte(4)));
            Change::replace(Range::new(start, end), new_text)
        };
        match notifications.last_mut() {
            Some(current) if kind & 1 == 0 => current.push(change),
            _ => notifications.push(vec![change]),
        }
    }
    Scenario { encoding, settings, gpu, initial, notifications }
}

fn coordinate(b: u8) -> u32 {
    match b {
        0..=239 => b as u32,
        255 => u32::MAX,
        _ => 250 * (b as u32 - 239),
    }
}

/// UTF-8 with the [`TOKENS`] expanded and invalid bytes replaced.
pub fn text(bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut run_start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if let Some((_, piece)) = TOKENS.iter().find(|(t, _)| *t == b) {
            out.push_str(&String::from_utf8_lossy(&bytes[run_start..i]));
            out.push_str(piece);
            run_start = i + 1;
        }
    }
    out.push_str(&String::from_utf8_lossy(&bytes[run_start..]));
    out
}

/// Runs the scenario `data` describes; panics on any difference.
pub fn run(data: &[u8]) {
    let scenario = decode(data);
    let mut doc = Document::new(&scenario.initial);
    let mut model = scenario.initial.clone();
    let mut cache = Cache::default();
    verify(&doc, &model, &mut cache, &scenario, 0);
    for (n, changes) in scenario.notifications.iter().enumerate() {
        for change in changes {
            model_apply(&mut model, change, scenario.encoding);
        }
        doc.apply_changes(changes, scenario.encoding);
        verify(&doc, &model, &mut cache, &scenario, n + 1);
    }
}

fn verify(doc: &Document, model: &str, cache: &mut Cache, s: &Scenario, step: usize) {
    let text = doc.to_string();
    assert_eq!(text, model, "text after notification {step}");
    assert_eq!(doc.len(), model.len(), "length after notification {step}");
    assert_eq!(doc.line_count(), model_line_count(model), "lines after notification {step} of {model:?}");

    let fresh = parse(&text);
    let (got, want) = (shape(doc.tree()), shape(&fresh));
    // FIXME: tree-sitter's error recovery can end differently when it
    // reparses incrementally than from scratch; trees may differ only where
    // both have errors, and then the findings are compared on the edited tree.
    let both_broken = fresh.root_node().has_error() && doc.tree().root_node().has_error();
    if got != want && !both_broken {
        let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
        panic!(
            "tree after notification {step} differs from a fresh parse at node {at}: {:?} != {:?}\ntext: {text:?}",
            got.get(at),
            want.get(at)
        );
    }

    let same_tree = if got == want { &fresh } else { doc.tree() };
    let incremental = check_incremental(&text, doc.tree(), &s.settings, &s.gpu, cache);
    let full = check(&text, same_tree, &s.settings, &s.gpu);
    assert_eq!(incremental, full, "incremental findings after notification {step}\ntext: {text:?}");
    let reference = check_reference(&text, same_tree, &s.settings, &s.gpu);
    assert_eq!(full, reference, "check's shortcuts changed the findings after notification {step}\ntext: {text:?}");
    // Parsing only what matters gives the findings of a whole parse, except
    // inside a definition that does not parse: what error recovery makes of
    // it depends on what else it reads (`np.return fft.fft(x)` parses as a
    // call of `np.fft.fft`), and no byte reading can follow every guess.
    let broken = broken_definitions(&fresh);
    let outside = |findings: Vec<Finding>| -> Vec<Finding> {
        findings.into_iter().filter(|f| !broken.iter().any(|r| r.start <= f.range.start && f.range.start < r.end)).collect()
    };
    let parsed_in_part = outside(check_text(&text, &s.settings, &s.gpu));
    let whole = outside(check(&text, &fresh, &s.settings, &s.gpu));
    // Nor where the bytes say nothing can start a rule (nothing is parsed)
    // but code outside the definitions does not parse: error recovery can
    // then read a definition's body as module-level code (a test's, whose
    // findings are otherwise never shown), which no byte reading foresees.
    let unforeseeable = gpulens_diagnostics::parses_nothing(&text) && broken_outside_definitions(&fresh);
    if !unforeseeable {
        assert_eq!(parsed_in_part, whole, "parsing only what matters changed the findings after notification {step}\ntext: {text:?}");
        // Without fixes, it parses less (no statement only the fixes read,
        // no comment they read) and finds the same but the fixes.
        let unfixed = outside(check_text_unfixed(&text, &s.settings, &s.gpu));
        let whole_unfixed: Vec<Finding> = whole.into_iter().map(|f| Finding { fix: None, ..f }).collect();
        assert_eq!(unfixed, whole_unfixed, "parsing only what matters without fixes changed the findings after notification {step}\ntext: {text:?}");
    }
    for finding in &incremental {
        round_trip(doc, finding, &text);
    }
}

/// The byte ranges of the outermost function and class definitions of
/// `tree` that hold a syntax error, each with the broken statements right
/// after it: error recovery can fold the next definition into the broken
/// one (`def k(a):` with a broken body, then `def loop(...)` read as a call
/// and a loop at the top level), which a parse without `k` reads as it is.
fn broken_definitions(tree: &Tree) -> Vec<std::ops::Range<usize>> {
    fn visit(node: gpulens_syntax::Node<'_>, out: &mut Vec<std::ops::Range<usize>>) {
        let mut run: Option<std::ops::Range<usize>> = None;
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            let definition = matches!(child.kind(), "function_definition" | "class_definition" | "decorated_definition");
            match &mut run {
                Some(r) if child.has_error() => r.end = child.end_byte(),
                _ if definition && child.has_error() => {
                    out.extend(run.take());
                    run = Some(child.byte_range());
                }
                _ => {
                    out.extend(run.take());
                    if child.has_error() {
                        visit(child, out);
                    }
                }
            }
        }
        out.extend(run);
    }
    let mut out = Vec::new();
    visit(tree.root_node(), &mut out);
    out
}

/// Whether a statement of the module that is no definition holds a syntax
/// error, or the module an error none of its statements holds: a token
/// error recovery made up between them (`import numpy as np*f(x)` reads as
/// two statements with a missing line end, a hidden node no child shows).
fn broken_outside_definitions(tree: &Tree) -> bool {
    let root = tree.root_node();
    let mut cursor = root.walk();
    let (mut outside, mut any) = (false, false);
    for child in root.children(&mut cursor) {
        if child.has_error() {
            any = true;
            outside |= !matches!(child.kind(), "function_definition" | "class_definition" | "decorated_definition");
        }
    }
    outside || (root.has_error() && !any)
}

/// Every node: kind, bytes, rows and columns, whether it was made up by error recovery.
type Shape = (u16, usize, usize, (usize, usize), (usize, usize), bool);

fn shape(tree: &Tree) -> Vec<Shape> {
    gpulens_syntax::preorder(tree.root_node())
        .map(|n| {
            let (a, b) = (n.start_position(), n.end_position());
            (n.kind_id(), n.start_byte(), n.end_byte(), (a.row, a.column), (b.row, b.column), n.is_missing())
        })
        .collect()
}

/// A finding's ends, as the server sends them (a position in each encoding),
/// lead back to the same bytes.
fn round_trip(doc: &Document, finding: &Finding, text: &str) {
    assert!(finding.range.start <= finding.range.end && finding.range.end <= text.len(), "{finding:?}");
    for offset in [finding.range.start, finding.range.end] {
        assert!(text.is_char_boundary(offset), "finding ends inside a character: {finding:?}");
        // No position names the middle of a "\r\n": that is the line's end.
        let splits_line_end = text[..offset].ends_with('\r') && text[offset..].starts_with('\n');
        let expected = if splits_line_end { offset - 1 } else { offset };
        for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32] {
            let position = doc.position(offset, encoding);
            let near = &text.as_bytes()[offset.saturating_sub(4)..(offset + 4).min(text.len())];
            assert_eq!(doc.offset(position, encoding), expected, "{encoding:?} position {position:?} of {finding:?}, bytes around: {near:?}");
        }
    }
}

// ------------------------------------------------------------- the model
//
// The LSP's rules, written from the specification without gpulens-syntax:
// lines end at "\n", "\r\n" or a lone "\r"; a line past the last one means
// the end of the text; a character past the end of its line means the end of
// the line; a character inside a multi-unit character means its start.

fn units(c: char, encoding: PositionEncoding) -> u32 {
    match encoding {
        PositionEncoding::Utf8 => c.len_utf8() as u32,
        PositionEncoding::Utf16 => c.len_utf16() as u32,
        PositionEncoding::Utf32 => 1,
    }
}

/// Byte offsets where each line starts.
fn line_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                i += 2;
                starts.push(i);
            }
            b'\r' | b'\n' => {
                i += 1;
                starts.push(i);
            }
            _ => i += 1,
        }
    }
    starts
}

fn model_line_count(text: &str) -> usize {
    line_starts(text).len()
}

fn model_offset(text: &str, position: Position, encoding: PositionEncoding) -> usize {
    let starts = line_starts(text);
    let Some(&start) = starts.get(position.line as usize) else { return text.len() };
    let mut seen = 0u32;
    for (i, c) in text[start..].char_indices() {
        if c == '\n' || c == '\r' || seen >= position.character {
            return start + i;
        }
        let next = seen + units(c, encoding);
        if next > position.character {
            return start + i;
        }
        seen = next;
    }
    text.len()
}

fn model_apply(text: &mut String, change: &Change, encoding: PositionEncoding) {
    match change.range {
        None => *text = change.text.clone(),
        Some(range) => {
            let mut a = model_offset(text, range.start, encoding);
            let mut b = model_offset(text, range.end, encoding);
            if a > b {
                std::mem::swap(&mut a, &mut b);
            }
            text.replace_range(a..b, &change.text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_follows_the_lsp() {
        let text = "a😀b\r\nc\rd\n";
        let p = |l, c| Position::new(l, c);
        assert_eq!(model_offset(text, p(0, 3), PositionEncoding::Utf16), 5);
        assert_eq!(model_offset(text, p(0, 2), PositionEncoding::Utf16), 1, "inside the surrogate pair");
        assert_eq!(model_offset(text, p(0, 99), PositionEncoding::Utf8), 6, "before the CRLF");
        assert_eq!(model_offset(text, p(2, 0), PositionEncoding::Utf32), 10);
        assert_eq!(model_offset(text, p(4, 0), PositionEncoding::Utf32), text.len());
        assert_eq!(model_line_count(text), 4);
    }

    #[test]
    fn decoding() {
        let s = decode(b"\x01x = 1\xC0\xFF\x01\x00\x00\x00\x01y\xFF\x00\x00\x00\x00\x00\xF6\xFF\x0E\0\0\0\0z");
        assert_eq!(s.encoding, PositionEncoding::Utf16);
        assert_eq!(s.initial, "x = 1\r\n");
        assert_eq!(s.notifications.len(), 1);
        assert_eq!(s.notifications[0].len(), 3);
        assert_eq!(s.notifications[0][1].text, "😀");
        assert_eq!(s.notifications[0][2], Change::full("z"));
        run(b"");
        run(&[0xFF; 64]);
    }
}
