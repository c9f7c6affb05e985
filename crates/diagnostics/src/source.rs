//! Helpers on source text and trees that every layer may use (the rules,
//! the fixes, the incremental plan): where a line starts, its indentation,
//! its line break, the names a module defines at the top.

use gpulens_syntax::{NodeExt, Tree};

/// Offset of the start of the line holding `offset`.
pub(crate) fn line_start(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |i| i + 1)
}

/// The whitespace that starts the line holding `offset`.
pub(crate) fn indentation_at(text: &str, offset: usize) -> &str {
    let start = line_start(text, offset);
    let rest = &text[start..];
    &rest[..rest.len() - rest.trim_start_matches([' ', '\t']).len()]
}

/// The line break before the line holding `offset` (the one after it on a
/// first line), so that code written there matches its surroundings. The
/// break before is inside the function being fixed, where the one after may
/// not be: a function's text ends before its last line break.
pub(crate) fn newline(text: &str, offset: usize) -> &'static str {
    let bytes = text.as_bytes();
    let start = line_start(text, offset.min(bytes.len()));
    if start > 0 {
        return match (bytes[start - 1], start.checked_sub(2).map(|i| bytes[i])) {
            (b'\n', Some(b'\r')) => "\r\n",
            (b'\r', _) => "\r",
            _ => "\n",
        };
    }
    match bytes[offset.min(bytes.len())..].iter().position(|&b| b == b'\n' || b == b'\r') {
        Some(i) if bytes[offset + i] == b'\r' && bytes.get(offset + i + 1) == Some(&b'\n') => "\r\n",
        Some(i) if bytes[offset + i] == b'\r' => "\r",
        _ => "\n",
    }
}

/// Names of the functions and classes defined at the top of the module.
pub(crate) fn top_level_definitions<'t>(text: &'t str, tree: &Tree) -> Vec<&'t str> {
    let root = tree.root_node();
    let mut out = Vec::new();
    let mut cursor = root.walk();
    for child in root.named_children(&mut cursor) {
        let definition = if child.kind_name() == "decorated_definition" { child.field("definition") } else { Some(child) };
        if let Some(name) = definition
            .filter(|d| matches!(d.kind_name(), "function_definition" | "class_definition"))
            .and_then(|d| d.field("name"))
        {
            out.push(&text[name.byte_range()]);
        }
    }
    out
}
