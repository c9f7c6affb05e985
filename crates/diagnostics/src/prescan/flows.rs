//! What the bytes tell about values flowing into a definition (see
//! `semantic::flow`): which definitions call each other, which a value can
//! reach at all, and whether a method's receiver may hold such a value (not
//! a literal, not a module, not `self` itself).

use rustc_hash::{FxHashMap, FxHashSet};

use super::*;

/// The flow calls (see `plan::words::flow_calls`) each of the outline's
/// definitions makes, and its neighbours two calls away (see
/// `plan::words::within_two_calls`).
pub(crate) fn definition_flows(plain: &str, outline: &gpulens_syntax::outline::Outline) -> (Vec<FlowCalls>, Vec<Vec<usize>>) {
    let names: Vec<Option<&str>> = outline.definitions.iter().map(|d| Some(d.name.as_str())).collect();
    let forms: Vec<Form> = outline
        .definitions
        .iter()
        .map(|d| match d.classes.last() {
            Some(line) => outline.classes.iter().find(|c| c.line_start == *line).map_or(Form::Unknown, |c| Form::Method(c.range.clone())),
            None => Form::Function,
        })
        .collect();
    let starts: Vec<usize> = outline.definitions.iter().map(|d| d.range.start).collect();
    let called: Vec<FlowCalls> = outline.definitions.iter().map(|d| flow_calls(&plain[d.range.clone()])).collect();
    let near = within_two_calls(&neighbours(&names, &forms, &starts, &called.iter().collect::<Vec<_>>()));
    (called, near)
}

/// Which definitions a value may flow into or out of (see `semantic::flow`):
/// those with a neighbour, those the module's code outside them calls, and
/// those calling themselves (a recursive call returns what they return).
/// By name, so a superset. (`flows`: [`definition_flows`].)
pub(crate) fn flow_reach(plain: &str, outline: &gpulens_syntax::outline::Outline, flows: &(Vec<FlowCalls>, Vec<Vec<usize>>)) -> Vec<bool> {
    let (_, near) = flows;
    let mut from_outside: FxHashSet<String> = FxHashSet::default();
    for r in &outline.statements {
        from_outside.extend(all_called_names(&plain[r.clone()]));
    }
    // (Its body, past its name in its header, which `(` follows too: the
    // flow calls count the header.)
    let recursive = |d: &gpulens_syntax::outline::DefinitionOutline| {
        let code = &plain[d.range.clone()];
        let body = code.find("def").and_then(|k| code[k..].find(d.name.as_str()).map(|n| k + n + d.name.len())).map_or(code, |at| &code[at..]);
        all_called_names(body).contains(&d.name)
    };
    outline
        .definitions
        .iter()
        .enumerate()
        .map(|(i, d)| !near[i].is_empty() || from_outside.contains(&d.name) || recursive(d))
        .collect()
}

/// Whether `text` (a definition) may document a parameter's type that
/// makes a value (see `semantic::docstrings`): read from every line of its
/// text, and from each line's first string on (a docstring on the `def` line).
pub(crate) fn documents_a_value(text: &str) -> bool {
    let makes = |doc: &str| semantic::documented_types(doc).iter().any(|(_, ty)| semantic::type_text_value(ty) != semantic::Value::Unknown);
    makes(text)
        || text.lines().any(|line| {
            let line = line.trim_start();
            line.find(['"', '\'']).is_some_and(|q| q > 0 && makes(&line[q..]))
        })
}

/// Whether `token` (in `code`, a method or attribute) may be read on a
/// value some flow tells (see `semantic::flow`): not on `self` or `cls`
/// themselves (no caller passes those), nor on a literal (in the blanked
/// code, a string left only blanks: `", ".join` reads `return   .join`).
/// `Some(true)` when the receiver is an attribute of `self` or `cls`
/// (`self.data.groupby`), whose value other methods set.
pub(crate) fn flow_receiver(code: &str, token: &str) -> Option<bool> {
    let bytes = code.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let start = token.as_ptr() as usize - code.as_ptr() as usize;
    let mut dot = last_code_byte(&bytes[..start])?;
    let mut first = true;
    loop {
        let end = last_code_byte(&bytes[..dot])?;
        return match bytes[end] {
            // A call's or a subscript's result: anything.
            b')' | b']' => Some(false),
            c if is_word(c) => {
                let from = bytes[..=end].iter().rposition(|b| !is_word(*b)).map_or(0, |i| i + 1);
                let word = &code[from..=end];
                if word.as_bytes()[0].is_ascii_digit() {
                    return None;
                }
                match last_code_byte(&bytes[..from]) {
                    // An attribute: on to the name it starts from.
                    Some(k) if bytes[k] == b'.' => {
                        dot = k;
                        first = false;
                        continue;
                    }
                    _ if matches!(word, "self" | "cls") => (!first).then_some(true),
                    _ if PYTHON_KEYWORDS.contains(&word) => None,
                    _ => Some(false),
                }
            }
            // A string's closing quote (an f-string is kept), a dict or set,
            // or an operator before a blanked string.
            _ => None,
        };
    }
}

/// Whether the receiver of `token` (a method, in `code`) is a dotted name
/// starting from a module the function sees imported (`np.mean`,
/// `np.linalg.norm`): a module's function, not an array's method.
pub(crate) fn receiver_is_module(code: &str, token: &str, imported: &FxHashMap<&str, Vec<String>>, local: &FxHashMap<&str, Vec<String>>) -> bool {
    let bytes = code.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let start = token.as_ptr() as usize - code.as_ptr() as usize;
    let Some(mut dot) = last_code_byte(&bytes[..start]) else { return false };
    loop {
        let Some(end) = last_code_byte(&bytes[..dot]) else { return false };
        if !is_word(bytes[end]) {
            return false;
        }
        let from = bytes[..=end].iter().rposition(|b| !is_word(*b)).map_or(0, |i| i + 1);
        match last_code_byte(&bytes[..from]) {
            Some(k) if bytes[k] == b'.' => dot = k,
            _ => {
                let root = &code[from..=end];
                return imported.contains_key(root) || local.contains_key(root);
            }
        }
    }
}

/// Python's keywords that may stand before an expression.
const PYTHON_KEYWORDS: &[&str] = &[
    "and", "as", "assert", "await", "del", "elif", "else", "for", "from", "if", "in", "is", "lambda", "not", "or", "return",
    "while", "with", "yield", "print", "case", "match",
];

/// Whether `token` (in `code`) follows a dot: an attribute or a method.
pub(crate) fn is_method(code: &str, token: &str) -> bool {
    let start = token.as_ptr() as usize - code.as_ptr() as usize;
    last_code_byte(&code.as_bytes()[..start]).map(|k| code.as_bytes()[k]) == Some(b'.')
}

/// Where the last byte of `code` stands that is not white space or a
/// backslash (a line continuation).
pub(crate) fn last_code_byte(code: &[u8]) -> Option<usize> {
    code.iter().rposition(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\\'))
}
