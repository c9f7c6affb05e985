//! What `check` reports of each file, placed for the outputs: the findings
//! with their lines and columns (and source lines for text output), and
//! the problems that stopped a file from being checked. `check` builds
//! these; `output` writes them; neither needs the other.

use gpulens_diagnostics::Finding;
use gpulens_syntax::{LineIndex, PositionEncoding};

/// The result of checking one file: what the output shows of it, and no
/// more (a run over a big tree holds no file's text until the output).
pub struct FileReport {
    /// As shown to the user: relative to where gpulens was started when possible.
    pub path: String,
    pub findings: Vec<Shown>,
    /// With `--fix`/`--diff`, when fixes changed the file: how many.
    pub fixed: Option<usize>,
    /// With `--diff`, when fixes changed the file: its text before and after.
    pub diff: Option<(String, String)>,
}

/// Something that stopped a file (or path) from being checked.
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// A finding placed in its file, with everything the outputs show of it,
/// so that the file's text need not be kept until the output is written.
pub struct Shown {
    pub record: Finding,
    /// 1-based line and column (in Unicode scalar values) of the first and
    /// last byte of the span.
    pub start: (usize, usize),
    pub end: (usize, usize),
    /// Where each of the fix's edits starts and ends, when fixes are shown.
    pub edits: Vec<((usize, usize), (usize, usize))>,
    /// The source line for text output.
    pub snippet: Option<Snippet>,
    /// In a notebook: the cell (1-based, every cell counted, as editors
    /// number them) that `start` and `end` are relative to, and each edit's.
    pub cell: Option<usize>,
    pub edit_cells: Vec<usize>,
    /// With `--profile`: what the profile measured where the finding is
    /// (`None` when the profile never saw that code, or none was given).
    pub profile: Option<gpulens_diagnostics::profile::Measured>,
}

/// The source line under a finding, as text output shows it.
pub struct Snippet {
    /// The line, or for a very long one a window of it around the span.
    pub source: String,
    pub cut_before: bool,
    pub cut_after: bool,
    /// What goes before the carets: the line's tabs kept, the rest spaces.
    pub pad: String,
    pub carets: usize,
}

/// Which parts of [`Shown`] an output needs.
#[derive(Clone, Copy)]
pub struct Needs {
    pub snippets: bool,
    pub fixes: bool,
}

/// Places `records` in `text` for the outputs (fix edits are dropped when
/// `needs.fixes` is false).
pub fn locate(records: Vec<Finding>, text: &str, needs: Needs) -> Vec<Shown> {
    if records.is_empty() {
        return Vec::new();
    }
    let index = LineIndex::new(text);
    let line_col = |offset: usize| {
        let p = index.position(text, offset, PositionEncoding::Utf32);
        (p.line as usize + 1, p.character as usize + 1)
    };
    records
        .into_iter()
        .map(|mut record| {
            let (start, end) = (line_col(record.range.start), line_col(record.range.end));
            let edits = match &record.fix {
                Some(fix) if needs.fixes => fix.edits.iter().map(|e| (line_col(e.range.start), line_col(e.range.end))).collect(),
                _ => Vec::new(),
            };
            if !needs.fixes {
                record.fix = None;
            }
            let snippet = needs.snippets.then(|| snippet(text, &index, &record, start.0, end.0));
            Shown { record, start, end, edits, snippet, cell: None, edit_cells: Vec::new(), profile: None }
        })
        .collect()
}

/// Places `records`, found in a notebook's joined Python, in its cells:
/// each line and column relative to the cell it falls in.
pub fn locate_in_notebook(records: Vec<Finding>, notebook: &gpulens_syntax::notebook::Notebook, needs: Needs) -> Vec<Shown> {
    let mut shown = locate(records, &notebook.original, needs);
    let in_cell = |(line, column): (usize, usize)| {
        let (cell, line) = notebook.cell_line(line - 1);
        (cell + 1, (line + 1, column))
    };
    for f in &mut shown {
        let (cell, start) = in_cell(f.start);
        let (end_cell, end) = in_cell(f.end);
        f.start = start;
        // (A span never leaves its cell; were it to, it ends where the cell does.)
        f.end = if end_cell == cell { end } else { start };
        f.cell = Some(cell);
        for (a, b) in &mut f.edits {
            let (cell, start) = in_cell(*a);
            f.edit_cells.push(cell);
            (*a, *b) = (start, in_cell(*b).1);
        }
    }
    shown
}

fn snippet(text: &str, index: &LineIndex, f: &Finding, line: usize, end_line: usize) -> Snippet {
    let range = index.line_range(text, line - 1);
    // Underline from the start to the end of the span, or of the line if the span goes on.
    let start = f.range.start.clamp(range.start, range.end);
    let end = if end_line == line { f.range.end.clamp(start, range.end) } else { range.end };
    // A very long line (minified or generated code) is shown around the span only.
    let shown = window(text, range.clone(), start);
    let end = end.min(shown.end);
    Snippet {
        source: text[shown.clone()].to_string(),
        cut_before: shown.start > range.start,
        cut_after: shown.end < range.end,
        pad: text[shown.start..start].chars().map(|c| if c == '\t' { '\t' } else { ' ' }).collect(),
        carets: text[start..end].chars().count().max(1),
    }
}

/// Longest source line shown whole, in characters.
const LONGEST_SHOWN: usize = 200;
/// Characters shown before the span when a line is cut.
const CONTEXT_BEFORE: usize = 40;

/// The bytes of `line` to show for a span starting at `start`: all of it,
/// or for a line longer than [`LONGEST_SHOWN`] characters a window of that
/// many starting a little before the span.
fn window(text: &str, line: std::ops::Range<usize>, start: usize) -> std::ops::Range<usize> {
    if text[line.clone()].chars().nth(LONGEST_SHOWN).is_none() {
        return line;
    }
    let from = text[line.start..start].char_indices().rev().nth(CONTEXT_BEFORE - 1).map_or(line.start, |(i, _)| line.start + i);
    let to = text[from..line.end].char_indices().nth(LONGEST_SHOWN).map_or(line.end, |(i, _)| from + i);
    from..to
}
