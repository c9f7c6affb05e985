//! What a module's text declares, read without a parse: the type of the
//! one value a function's docstring says it returns, type aliases, where a
//! `def` header ends and the docstring after it.

use super::is_identifier;
use crate::semantic::{type_text_value, Value};

/// A module-level statement that names a type of data: `Name = type`,
/// `Name: TypeAlias = type` or `type Name = type`, where the type is written
/// with names, dots, `|`, brackets and commas only, and names a table, an
/// array or a graph first (see [`type_text_value`]).
pub(super) fn type_alias(statement: &str) -> Option<(&str, Value)> {
    let statement = statement.trim();
    let statement = statement.strip_prefix("type ").unwrap_or(statement);
    let (left, right) = statement.split_once('=')?;
    if right.starts_with('=') {
        return None;
    }
    let name = left.split_once(':').map_or(left, |(n, ty)| if ty.trim().ends_with("TypeAlias") { n } else { "" }).trim();
    let right = right.trim();
    let written_as_type = !right.is_empty()
        && right.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '|' | '[' | ']' | ',' | ' '))
        && right.contains('.');
    if !is_identifier(name) || !written_as_type {
        return None;
    }
    Some((name, type_text_value(right))).filter(|(_, v)| *v != Value::Unknown)
}

/// A type that holds several values (`tuple[...]`, `list[...]`, an
/// iterator): not the one value it names.
pub(super) fn names_a_container(annotation: &str) -> bool {
    let lower = annotation.to_ascii_lowercase();
    ["tuple", "list", "dict", "iterator", "iterable", "generator", "sequence", "mapping", "set["].iter().any(|c| lower.contains(c))
}

/// The inside of the triple-quoted string a body starts with (its docstring).
pub(super) fn leading_docstring(body: &str) -> Option<&str> {
    let body = body.trim_start();
    let body = body.strip_prefix(['r', 'R', 'u', 'U']).unwrap_or(body);
    let quotes = ["\"\"\"", "'''"].into_iter().find(|q| body.starts_with(q))?;
    let inside = &body[3..];
    inside.find(quotes).map(|end| &inside[..end])
}

/// Where the header of a `def` (from `def `) ends: its `:` outside
/// brackets and strings.
pub(super) fn header_end(def: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    for (i, b) in def.bytes().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' => quote = Some(b),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b':' if depth == 0 => return Some(i),
                b'#' => return None,
                _ => {}
            },
        }
    }
    None
}

/// The type of the one value a docstring's Returns section documents:
/// NumPy's (`Returns\n-------\nname : type` or just `type`), Google's
/// (`Returns:\n    type: description`) or Sphinx's (`:rtype: type`). None
/// when it documents several values (a tuple) or none.
pub(crate) fn documented_return(doc: &str) -> Option<&str> {
    documented_return_entry(doc).map(|(ty, _)| ty)
}

/// [`documented_return`], with the lines that describe the value (those
/// indented under its entry, or the rest of a Google entry's line): a
/// shape is often stated there (`Predicted values of shape (n_samples,)`).
pub(crate) fn documented_return_entry(doc: &str) -> Option<(&str, Vec<&str>)> {
    if let Some(at) = doc.find(":rtype:") {
        let rest = &doc[at + ":rtype:".len()..];
        let description = doc.find(":returns:").or_else(|| doc.find(":return:")).map(|r| {
            let text = &doc[r..];
            let text = text.split_once(':').map_or(text, |(_, t)| t);
            let text = text.split_once(':').map_or(text, |(_, t)| t);
            vec![text.lines().next().unwrap_or("").trim()]
        });
        return Some((rest.lines().next().unwrap_or("").trim(), description.unwrap_or_default()));
    }
    let lines: Vec<&str> = doc.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        let numpy = (trimmed == "Returns" || trimmed == "Return")
            && lines.get(i + 1).is_some_and(|l| {
                let l = l.trim();
                !l.is_empty() && l.chars().all(|c| c == '-')
            });
        let google = trimmed == "Returns:" || trimmed == "Return:";
        if !numpy && !google {
            continue;
        }
        let first = if numpy { i + 2 } else { i + 1 };
        let body: Vec<&str> = lines[first.min(lines.len())..].iter().copied().take_while(|l| !l.trim().is_empty()).collect();
        let indent = |l: &str| l.len() - l.trim_start().len();
        let base = body.iter().map(|l| indent(l)).min()?;
        let entries: Vec<&str> = body.iter().copied().filter(|l| indent(l) == base).collect();
        if entries.len() != 1 {
            return None;
        }
        let entry = entries[0].trim();
        let mut description: Vec<&str> = body.iter().filter(|l| indent(l) > base).map(|l| l.trim()).collect();
        return Some(if numpy {
            (entry.split_once(" : ").map_or(entry, |(_, ty)| ty), description)
        } else {
            match entry.split_once(':') {
                Some((ty, rest)) => {
                    description.insert(0, rest.trim());
                    (ty, description)
                }
                None => (entry, description),
            }
        });
    }
    None
}
