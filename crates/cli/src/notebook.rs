//! Fixes put back into a notebook: the fixed Python of its joined cells
//! split back into the cells it came from, each cell's `source` rewritten
//! in place and nothing else in the file touched (outputs, execution
//! counts, metadata, cell ids, key order, the file's own indentation and
//! escapes). A zero-code-change mode the fixes switch on is a new first
//! cell with its magic (`%load_ext cudf.pandas`).

use gpulens_syntax::notebook::Notebook;
use serde_json::value::RawValue;
use similar::{DiffOp, TextDiff};

/// The notebook file's text (`file`, as read) with `fixed` (the fixed form
/// of `notebook.python`) put back into its cells, and the code cells
/// `first_cells` (see `Fix::cell`) put before them, in one new cell.
pub fn write_back(file: &str, notebook: &Notebook, fixed: &str, first_cells: &[String]) -> Result<String, String> {
    let old_masked: Vec<&str> = notebook.python.split_inclusive('\n').collect();
    let old_original: Vec<&str> = notebook.original.split_inclusive('\n').collect();
    let new: Vec<&str> = fixed.split_inclusive('\n').collect();
    // The part (index into `notebook.parts`) of each line of the joined text.
    // (Every part ends with a newline in the joined text.)
    let mut part_of = Vec::with_capacity(old_masked.len());
    for (i, part) in notebook.parts.iter().enumerate() {
        let end = notebook.parts.get(i + 1).map_or(notebook.python.len(), |next| next.start);
        part_of.extend(std::iter::repeat_n(i, notebook.python[part.start..end].matches('\n').count()));
    }
    // Each part's new lines, and which of them the fixes inserted.
    let mut lines: Vec<Vec<(String, bool)>> = vec![Vec::new(); notebook.parts.len()];
    let masked = |i: usize| old_masked[i] != old_original[i];
    let diff = TextDiff::from_slices(&old_masked, &new);
    for op in diff.ops() {
        match *op {
            DiffOp::Equal { old_index, new_index: _, len } => {
                for i in old_index..old_index + len {
                    lines[part_of[i]].push((old_original[i].to_string(), false));
                }
            }
            DiffOp::Delete { old_index, old_len, .. } => {
                if (old_index..old_index + old_len).any(masked) {
                    return Err("a fix would change a line of IPython syntax; the notebook was left unchanged".into());
                }
            }
            DiffOp::Insert { old_index, new_index, new_len } => {
                // Before the old line `old_index`: in the cell of the line
                // before it (an import put after the last import ends the
                // cell that holds it), or of the first line.
                let part = old_index.checked_sub(1).map_or(0, |before| part_of[before]);
                for line in &new[new_index..new_index + new_len] {
                    lines[part].push((line.to_string(), true));
                }
            }
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                let part = part_of[old_index];
                if (old_index..old_index + old_len).any(masked) {
                    // A fix in the statement after `%time`/`%timeit` (line for
                    // line, the magic itself untouched) keeps the magic.
                    if old_len != new_len {
                        return Err("a fix would change a line of IPython syntax; the notebook was left unchanged".into());
                    }
                    for k in 0..old_len {
                        let (masked_line, original, fixed) = (old_masked[old_index + k], old_original[old_index + k], new[new_index + k]);
                        let line = if masked_line == original {
                            fixed.to_string()
                        } else {
                            unmasked(masked_line, original, fixed)
                                .ok_or("a fix would change a line of IPython syntax; the notebook was left unchanged")?
                        };
                        lines[part_of[old_index + k]].push((line, true));
                    }
                    continue;
                }
                for line in &new[new_index..new_index + new_len] {
                    lines[part].push((line.to_string(), true));
                }
            }
        }
    }
    // The new sources, from the last cell back (earlier offsets stay valid).
    let mut out = file.to_string();
    for (i, part) in notebook.parts.iter().enumerate().rev() {
        let cell = &notebook.cells[part.cell];
        let mut text: String = lines[i].iter().map(|(l, _)| l.as_str()).collect();
        if !cell.text.ends_with('\n') && text.ends_with('\n') {
            text.pop();
            if text.ends_with('\r') {
                text.pop();
            }
        }
        if text == cell.text {
            continue;
        }
        let raw = &file[cell.source_span.clone()];
        let written = if cell.source_is_list { source_list(raw, &text) } else { json_string(&text) };
        out.replace_range(cell.source_span.clone(), &written);
    }
    if !first_cells.is_empty() {
        let first = notebook.cells.first().ok_or("the notebook has no cells to put the magic before")?;
        // (Ids where the notebook's cells have them: nbformat 4.5 on.)
        let ids = notebook.minor >= 5
            && serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&file[first.span.clone()]).is_ok_and(|c| c.contains_key("id"));
        let cell = new_cell(file, first.span.start, &first_cells.join("\n"), ids);
        out.insert_str(first.span.start, &cell);
    }
    Ok(out)
}

/// What fixes change in a notebook, cell by cell: a unified diff of each
/// changed cell's source (`a/nb.ipynb:cell 3` against `b/nb.ipynb:cell 4`,
/// numbered as Jupyter shows them in each version) and of each new first
/// cell. `None` where the two files are not one notebook before and after
/// cells were put first (then the file's own diff says it).
pub fn cell_diff(path: &str, before: &str, after: &str) -> Option<String> {
    let (old, new) = (Notebook::read(before.as_bytes()).ok()?, Notebook::read(after.as_bytes()).ok()?);
    let added = new.cells.len().checked_sub(old.cells.len())?;
    if old.cells.iter().zip(&new.cells[added..]).any(|(a, b)| a.kind != b.kind) {
        return None;
    }
    let mut out = String::new();
    let mut hunk = |from: &str, to: &str, a: &str, b: &str| {
        // Cells seldom end in a newline: ended alike, none is said to be missing.
        let ended = |t: &str| if t.is_empty() || t.ends_with('\n') { t.to_string() } else { format!("{t}\n") };
        let alike = from.is_empty() || from.ends_with('\n') == to.ends_with('\n');
        let (from, to) = if alike { (ended(from), ended(to)) } else { (from.to_string(), to.to_string()) };
        let diff = TextDiff::from_lines(&from, &to);
        out.push_str(&diff.unified_diff().context_radius(3).header(a, b).to_string());
    };
    for (i, cell) in new.cells[..added].iter().enumerate() {
        hunk("", &cell.text, "/dev/null", &format!("b/{path}:cell {} (new)", i + 1));
    }
    for (i, (a, b)) in old.cells.iter().zip(&new.cells[added..]).enumerate() {
        if a.text != b.text {
            hunk(&a.text, &b.text, &format!("a/{path}:cell {}", i + 1), &format!("b/{path}:cell {}", i + added + 1));
        }
    }
    Some(out)
}

/// The fixed form of a masked line (`if 1:   f(x)` for `%time f(x)`) with
/// its IPython syntax put back, when the fix left what was masked alone.
fn unmasked(masked: &str, original: &str, fixed: &str) -> Option<String> {
    // (Masking keeps lengths: the masked part ends at the last byte that differs.)
    let end = masked.bytes().zip(original.bytes()).rposition(|(a, b)| a != b)? + 1;
    (fixed.starts_with(&masked[..end]) && original.is_char_boundary(end)).then(|| format!("{}{}", &original[..end], &fixed[end..]))
}

/// `text` as a JSON string, as Jupyter writes one (not ASCII-escaped).
fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

/// `text` as a `source` list of lines laid out like `raw`, the list it
/// replaces: one item per line, each line kept as it was written where it
/// is unchanged (its escapes too).
fn source_list(raw: &str, text: &str) -> String {
    let items: Vec<&RawValue> = serde_json::from_str(raw).unwrap_or_default();
    let mut unchanged: std::collections::HashMap<String, Vec<&str>> = std::collections::HashMap::new();
    for item in items.iter().rev() {
        if let Ok(line) = serde_json::from_str::<String>(item.get()) {
            unchanged.entry(line).or_default().push(item.get());
        }
    }
    let written: Vec<String> = text
        .split_inclusive('\n')
        .map(|line| unchanged.get_mut(line).and_then(Vec::pop).map_or_else(|| json_string(line), str::to_string))
        .collect();
    // The layout: items on lines of their own (and where the indentation
    // of the items and of the closing bracket stand), or on one line.
    match raw.find('\n') {
        Some(newline) if !written.is_empty() => {
            let item_indent: String = raw[newline + 1..].chars().take_while(|c| *c == ' ' || *c == '\t').collect();
            let close_indent: String = raw[..raw.len() - 1].chars().rev().take_while(|c| *c == ' ' || *c == '\t').collect();
            let joined = written.iter().map(|w| format!("{item_indent}{w}")).collect::<Vec<_>>().join(",\n");
            format!("[\n{joined}\n{close_indent}]")
        }
        _ => format!("[{}]", written.join(", ")),
    }
}

/// A new code cell holding `source`, laid out like the cell object that
/// starts at `before` in `file`, followed by the separator that goes
/// before that cell.
fn new_cell(file: &str, before: usize, source: &str, with_id: bool) -> String {
    let line_start = file[..before].rfind('\n').map_or(0, |i| i + 1);
    let indent = &file[line_start..before];
    let indent = if indent.chars().all(|c| c == ' ' || c == '\t') { indent } else { "" };
    // (The notebook's indentation unit: the cells stand two levels deep.)
    let unit = &indent[..indent.len() / 2];
    let lines: Vec<String> = source.split_inclusive('\n').map(json_string).collect();
    let id = format!("{:08x}", xxhash_rust::xxh3::xxh3_64(source.as_bytes()) as u32);
    let mut fields = vec![
        ("cell_type".to_string(), "\"code\"".to_string()),
        ("execution_count".to_string(), "null".to_string()),
    ];
    if with_id {
        fields.push(("id".to_string(), json_string(&format!("gpulens-{id}"))));
    }
    fields.push(("metadata".to_string(), "{}".to_string()));
    fields.push(("outputs".to_string(), "[]".to_string()));
    if unit.is_empty() {
        fields.push(("source".to_string(), format!("[{}]", lines.join(", "))));
        let body = fields.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect::<Vec<_>>().join(", ");
        let separator = if indent.is_empty() && !file[line_start..before].is_empty() { ", " } else { ",\n" };
        return format!("{{{body}}}{separator}{indent}");
    }
    let inner = format!("{indent}{unit}");
    let list = lines.iter().map(|l| format!("{inner}{unit}{l}")).collect::<Vec<_>>().join(",\n");
    fields.push(("source".to_string(), format!("[\n{list}\n{inner}]")));
    let body = fields.iter().map(|(k, v)| format!("{inner}\"{k}\": {v}")).collect::<Vec<_>>().join(",\n");
    format!("{{\n{body}\n{indent}}},\n{indent}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTEBOOK: &str = r#"{
  "cells": [
    {
      "cell_type": "code",
      "execution_count": 1,
      "id": "a1",
      "metadata": {},
      "outputs": [{"output_type": "stream", "name": "stdout", "text": ["0.1\n"]}],
      "source": [
        "%matplotlib inline\n",
        "import pandas as pd\n",
        "caf\u00e9 = 1"
      ]
    },
    {
      "cell_type": "markdown",
      "id": "a2",
      "metadata": {},
      "source": "text"
    }
  ],
  "metadata": {},
  "nbformat": 4,
  "nbformat_minor": 5
}
"#;

    #[test]
    fn only_the_changed_sources_are_written() {
        let nb = Notebook::read(NOTEBOOK.as_bytes()).unwrap();
        let fixed = nb.python.replace("import pandas as pd\n", "import pandas as pd\nx = 2\n");
        let out = write_back(NOTEBOOK, &nb, &fixed, &[]).unwrap();
        let expected = NOTEBOOK.replace("        \"import pandas as pd\\n\",\n", "        \"import pandas as pd\\n\",\n        \"x = 2\\n\",\n");
        assert_eq!(out, expected);
        // Unchanged: the same text back.
        assert_eq!(write_back(NOTEBOOK, &nb, &nb.python, &[]).unwrap(), NOTEBOOK);
    }

    #[test]
    fn a_mode_switched_on_is_a_first_cell_with_its_magic() {
        let nb = Notebook::read(NOTEBOOK.as_bytes()).unwrap();
        let out = write_back(NOTEBOOK, &nb, &nb.python, &["%load_ext cudf.pandas".to_string()]).unwrap();
        let again = Notebook::read(out.as_bytes()).unwrap();
        assert_eq!(again.cells.len(), 3);
        assert_eq!(again.cells[0].text, "%load_ext cudf.pandas");
        assert_eq!(again.cells[1].text, nb.cells[0].text, "the first cell is unchanged");
        assert!(out.starts_with("{\n  \"cells\": [\n    {\n      \"cell_type\": \"code\",\n      \"execution_count\": null,\n      \"id\": \"gpulens-"));
        assert!(out.contains("      \"source\": [\n        \"%load_ext cudf.pandas\"\n      ]\n    },\n    {\n      \"cell_type\": \"code\",\n      \"execution_count\": 1,"));
    }

    #[test]
    fn a_fix_after_a_timing_magic_keeps_the_magic() {
        assert_eq!(
            unmasked("if 1:   np.fft.fft(x)\n", "%timeit np.fft.fft(x)\n", "if 1:   cp.fft.fft(x)\n").as_deref(),
            Some("%timeit cp.fft.fft(x)\n")
        );
        assert_eq!(unmasked("if 1:   f(x)\n", "%timeit f(x)\n", "f(x)\n"), None);
    }

    #[test]
    fn ipython_lines_are_never_rewritten() {
        let nb = Notebook::read(NOTEBOOK.as_bytes()).unwrap();
        let fixed = nb.python.replace("#matplotlib inline\n", "");
        assert!(write_back(NOTEBOOK, &nb, &fixed, &[]).is_err());
    }
}
