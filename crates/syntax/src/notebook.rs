//! Jupyter notebooks (nbformat 4) as one Python module: the code cells in
//! order, joined, with IPython's own syntax masked so that the Python parser
//! reads the rest, every byte at the place it has in its cell.
//!
//! What is masked (each line keeps its length, so positions carry over):
//! line magics (`%matplotlib inline`) and shell escapes (`!pip install x`,
//! `files = !ls`) at the start of a statement (a comment where the line
//! stands at the cell's top level: `#load_ext cudf.pandas` still says what
//! it switches on); help (`np.fft?`, `??x`);
//! automagics (`pip install x`, `cd data`: a magic's name followed by a word,
//! which Python never writes); `%time`/`%timeit`/`%prun` before a statement,
//! which stays and is read (as `if 1: statement`). A cell magic that runs
//! Python (`%%time`, `%%capture` …) has its first line masked; a cell under
//! any other (`%%bash`, `%%sql`, `%%writefile`) is not Python and is left
//! out, as are markdown and raw cells and cells in another language.

use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;

/// A notebook read from its JSON.
#[derive(Debug)]
pub struct Notebook {
    /// Every cell, in the notebook's order.
    pub cells: Vec<Cell>,
    /// The Python cells joined (one newline after any cell not ending in one),
    /// IPython syntax masked: what is analysed.
    pub python: String,
    /// The same cells joined as written (same length, byte for byte the
    /// same outside masked lines): what is shown.
    pub original: String,
    /// Where each Python cell lies in the joined text, in order.
    pub parts: Vec<Part>,
    /// `nbformat_minor` (4.5 and later give every cell an `id`).
    pub minor: u64,
}

/// One cell of a notebook.
#[derive(Debug)]
pub struct Cell {
    /// `code`, `markdown` or `raw`.
    pub kind: String,
    /// Its source, joined.
    pub text: String,
    /// Where the cell's JSON object and its `source` value lie in the
    /// file's text, and whether the source is written as a list of lines
    /// (the common form) or one string.
    pub span: Range<usize>,
    pub source_span: Range<usize>,
    pub source_is_list: bool,
    /// Whether it is analysed (a code cell in Python).
    pub python: bool,
    /// The plain text of its saved result (`execute_result`), if any.
    pub result: Option<String>,
}

/// A Python cell's place in the joined text.
#[derive(Debug, Clone, Copy)]
pub struct Part {
    /// Index of the cell in [`Notebook::cells`] (0-based; the number Jupyter
    /// and editors show is this plus one, markdown cells counted).
    pub cell: usize,
    /// Byte offset and 0-based line where the cell starts in the joined text.
    pub start: usize,
    pub first_line: usize,
    /// Its length in the joined text (without the newline added after it).
    pub len: usize,
}

#[derive(Deserialize)]
struct RawNotebook<'a> {
    nbformat: Option<u64>,
    #[serde(default)]
    nbformat_minor: u64,
    #[serde(borrow)]
    cells: Option<Vec<&'a RawValue>>,
    #[serde(default)]
    metadata: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RawCell<'a> {
    cell_type: String,
    #[serde(borrow)]
    source: &'a RawValue,
    #[serde(default)]
    metadata: Option<serde_json::Value>,
    #[serde(default, borrow)]
    outputs: Option<Vec<&'a RawValue>>,
}

/// One saved output of a code cell, its data left unread but for the plain text.
#[derive(Deserialize)]
struct RawOutput<'a> {
    output_type: String,
    #[serde(default, borrow)]
    data: Option<std::collections::HashMap<String, &'a RawValue>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Source {
    One(String),
    Lines(Vec<String>),
}

impl Notebook {
    /// Reads a notebook from the bytes of its file: UTF-8 JSON in nbformat 4.
    pub fn read(bytes: &[u8]) -> Result<Notebook, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "not a notebook: the file is not UTF-8".to_string())?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let raw: RawNotebook<'_> = serde_json::from_str(text).map_err(|e| format!("not a readable notebook: {e}"))?;
        match raw.nbformat {
            Some(4) => {}
            Some(v) => return Err(format!("notebook format {v} is not supported (nbformat 4 is)")),
            None => return Err("not a notebook: no `nbformat` field".to_string()),
        }
        let cells = raw.cells.ok_or("not a notebook: no `cells` list")?;
        // The notebook's language, where it says one.
        let language = raw.metadata.as_ref().and_then(|m| {
            m.pointer("/language_info/name").or_else(|| m.pointer("/kernelspec/language")).and_then(|l| l.as_str()).map(str::to_ascii_lowercase)
        });
        let python_notebook = language.as_deref().is_none_or(|l| l == "python" || l == "python3");
        let mut out = Notebook { cells: Vec::with_capacity(cells.len()), python: String::new(), original: String::new(), parts: Vec::new(), minor: raw.nbformat_minor };
        let mut line = 0;
        // (The raw values borrow from the file's text: their places there.)
        let span_of = |raw: &RawValue| {
            let start = raw.get().as_ptr() as usize - bytes.as_ptr() as usize;
            start..start + raw.get().len()
        };
        for (i, raw_cell) in cells.into_iter().enumerate() {
            let cell: RawCell<'_> = serde_json::from_str(raw_cell.get()).map_err(|e| format!("cell {}: {e}", i + 1))?;
            let source: Source =
                serde_json::from_str(cell.source.get()).map_err(|e| format!("cell {}: its source is not text: {e}", i + 1))?;
            let (text, source_is_list) = match source {
                Source::One(s) => (s, false),
                Source::Lines(lines) => (lines.concat(), true),
            };
            let source_span = span_of(cell.source);
            let cell_language = cell.metadata.as_ref().and_then(|m| m.pointer("/vscode/languageId")).and_then(|l| l.as_str());
            let code = cell.cell_type == "code" && python_notebook && cell_language.is_none_or(|l| l == "python");
            let masked = if code { mask(&text) } else { None };
            let python = masked.is_some();
            if let Some(masked) = masked {
                out.push(i, &text, &masked, &mut line);
            }
            // (An output that cannot be read is no reason to refuse the notebook.)
            let result = cell.outputs.iter().flatten().find_map(|o| {
                let output: RawOutput<'_> = serde_json::from_str(o.get()).ok()?;
                let plain = output.data.filter(|_| output.output_type == "execute_result")?.remove("text/plain")?;
                match serde_json::from_str::<Source>(plain.get()).ok()? {
                    Source::One(s) => Some(s),
                    Source::Lines(lines) => Some(lines.concat()),
                }
            });
            out.cells.push(Cell { kind: cell.cell_type, text, span: span_of(raw_cell), source_span, source_is_list, python, result });
        }
        Ok(out)
    }

    /// The Python cells of an editor's notebook, each as (its index among
    /// all cells, its text); what other cells there are does not matter.
    /// (`cells` of the result is left empty: an editor keeps its own.)
    pub fn from_cells<'a>(python_cells: impl IntoIterator<Item = (usize, &'a str)>) -> Notebook {
        let mut out = Notebook { cells: Vec::new(), python: String::new(), original: String::new(), parts: Vec::new(), minor: 5 };
        let mut line = 0;
        for (i, text) in python_cells {
            if let Some(masked) = mask(text) {
                out.push(i, text, &masked, &mut line);
            }
        }
        out
    }

    /// Adds the cell `i` to the joined texts (`line`: the next line's number).
    fn push(&mut self, i: usize, text: &str, masked: &str, line: &mut usize) {
        self.parts.push(Part { cell: i, start: self.python.len(), first_line: *line, len: text.len() });
        *line += text.matches('\n').count();
        self.python.push_str(masked);
        self.original.push_str(text);
        if !text.ends_with('\n') {
            self.python.push('\n');
            self.original.push('\n');
            *line += 1;
        }
    }

    /// The sizes the Python cells' saved results show, by name (see
    /// [`recorded_size`]): each as (name, first dimension, elements). A
    /// name two results disagree about is left out.
    pub fn recorded_sizes(&self) -> Vec<(String, Option<u64>, Option<u64>)> {
        let mut sizes: Vec<(String, Option<u64>, Option<u64>)> = Vec::new();
        let mut disputed: Vec<String> = Vec::new();
        for cell in self.cells.iter().filter(|c| c.python) {
            let Some((name, rows, elements)) = cell.result.as_deref().and_then(|r| recorded_size(&cell.text, r)) else { continue };
            match sizes.iter_mut().find(|s| s.0 == name) {
                None => sizes.push((name, rows, elements)),
                Some(known) => {
                    let agree = |a: Option<u64>, b: Option<u64>| a.zip(b).is_none_or(|(a, b)| a == b);
                    if agree(known.1, rows) && agree(known.2, elements) {
                        known.1 = known.1.or(rows);
                        known.2 = known.2.or(elements);
                    } else {
                        disputed.push(name);
                    }
                }
            }
        }
        sizes.retain(|s| !disputed.contains(&s.0));
        sizes
    }

    /// The cell (index into [`Notebook::cells`]) and 0-based line within it
    /// of the joined text's 0-based `line`.
    pub fn cell_line(&self, line: usize) -> (usize, usize) {
        let i = self.parts.partition_point(|p| p.first_line <= line).saturating_sub(1);
        match self.parts.get(i) {
            Some(p) => (p.cell, line - p.first_line),
            None => (0, line),
        }
    }

    /// The part holding the joined text's byte `offset` (the last one for
    /// the end of the text).
    pub fn part_at(&self, offset: usize) -> Option<&Part> {
        part_at(&self.parts, offset)
    }
}

/// The part of `parts` (in order, as [`Notebook::parts`]) holding the
/// joined text's byte `offset` (the last one for the end of the text).
pub fn part_at(parts: &[Part], offset: usize) -> Option<&Part> {
    let i = parts.partition_point(|p| p.start <= offset).checked_sub(1)?;
    parts.get(i)
}

/// What a cell's saved result `result` says of the size of a name, read
/// from the cell's last line: `x.shape` and a tuple of numbers (`(48000000,
/// 7)`: 48M rows, 336M elements), `x.shape[0]` or `len(x)` and a number
/// (rows), `x.size` and a number (elements), or `x` alone displayed as a
/// pandas table (`[48000000 rows x 7 columns]`) or Series (`Length:
/// 48000000`). Returns (name, first dimension, elements).
pub fn recorded_size(cell: &str, result: &str) -> Option<(String, Option<u64>, Option<u64>)> {
    let last = cell.lines().map(str::trim_end).rfind(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))?;
    if last.starts_with(char::is_whitespace) {
        return None; // inside a block: not the cell's result
    }
    let is_name = |s: &str| {
        let mut chars = s.chars();
        chars.next().is_some_and(|c| c.is_alphabetic() || c == '_') && chars.all(|c| c.is_alphanumeric() || c == '_')
    };
    let number = |s: &str| s.trim().replace('_', "").parse::<u64>().ok();
    let result = result.trim();
    let (name, rows, elements) = if let Some(name) = last.strip_suffix(".shape").filter(|n| is_name(n)) {
        let inner = result.strip_prefix('(')?.strip_suffix(')')?;
        let dims: Vec<u64> = inner.split(',').map(str::trim).filter(|d| !d.is_empty()).map(number).collect::<Option<_>>()?;
        let elements = dims.iter().try_fold(1u64, |a, d| a.checked_mul(*d));
        (name, dims.first().copied(), elements)
    } else if let Some(name) = last.strip_suffix(".shape[0]").filter(|n| is_name(n)) {
        (name, Some(number(result)?), None)
    } else if let Some(name) = last.strip_prefix("len(").and_then(|r| r.strip_suffix(')')).filter(|n| is_name(n)) {
        (name, Some(number(result)?), None)
    } else if let Some(name) = last.strip_suffix(".size").filter(|n| is_name(n)) {
        (name, None, Some(number(result)?))
    } else if is_name(last) {
        let tail = result.lines().last()?.trim();
        if let Some(dims) = tail.strip_prefix('[').and_then(|t| t.strip_suffix(" columns]")) {
            let (rows, columns) = dims.split_once(" rows x ")?;
            let (rows, columns) = (number(rows)?, number(columns)?);
            (last, Some(rows), rows.checked_mul(columns))
        } else {
            let length = tail.split(", ").find_map(|part| part.strip_prefix("Length: ")).and_then(number)?;
            (last, Some(length), Some(length))
        }
    } else {
        return None;
    };
    Some((name.to_string(), rows, elements))
}

/// The magics of IPython that may be called without `%` (automagic), as
/// IPython 8 defines them.
const AUTOMAGICS: &[&str] = &[
    "alias", "alias_magic", "autoawait", "autocall", "automagic", "bookmark", "cd", "clear", "colors", "conda",
    "config", "connect_info", "debug", "dhist", "dirs", "doctest_mode", "ed", "edit", "env", "gui", "hist",
    "history", "killbgscripts", "ldir", "less", "load", "load_ext", "loadpy", "logoff", "logon", "logstart",
    "logstate", "logstop", "ls", "lsmagic", "macro", "magic", "mamba", "matplotlib", "micromamba", "mkdir", "more",
    "notebook", "page", "pastebin", "pdb", "pdef", "pdoc", "pfile", "pinfo", "pinfo2", "pip", "popd", "pprint",
    "precision", "prun", "psearch", "psource", "pushd", "pwd", "pycat", "pylab", "quickref", "recall", "rehashx",
    "reload_ext", "rerun", "reset", "reset_selective", "rm", "rmdir", "run", "save", "sc", "set_env", "store", "sx",
    "system", "tb", "time", "timeit", "unalias", "unload_ext", "who", "who_ls", "whos", "xdel", "xmode",
];

/// Cell magics whose body is Python that IPython runs.
const PYTHON_CELL_MAGICS: &[&str] = &["time", "timeit", "capture", "prun", "debug", "python", "python3", "ipython"];

/// Line magics followed by a Python statement that IPython runs.
const PYTHON_LINE_MAGICS: &[&str] = &["time", "timeit", "prun"];

const KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else", "except",
    "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
    "return", "try", "while", "with", "yield", "None", "True", "False",
];

/// A code cell's text with IPython syntax masked, each line keeping its
/// length; `None` for a cell under a cell magic that does not run Python.
pub fn mask(cell: &str) -> Option<String> {
    let mut out = String::with_capacity(cell.len());
    let mut state = State::default();
    let mut first = true;
    for line in cell.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let ending = &line[body.len()..];
        let indent = body.len() - body.trim_start_matches([' ', '\t']).len();
        let code = &body[indent..];
        let at_statement = state.at_statement_start();
        if first && code.starts_with("%%") {
            let name = code[2..].split(|c: char| c.is_whitespace()).next().unwrap_or("");
            if !PYTHON_CELL_MAGICS.contains(&name) {
                return None;
            }
            out.push_str(&blank(body, indent));
            out.push_str(ending);
            first = false;
            continue;
        }
        if !code.is_empty() {
            first = false;
        }
        if at_statement && !code.is_empty() {
            if let Some(masked) = mask_line(body, indent) {
                out.push_str(&masked);
                out.push_str(ending);
                continue;
            }
        }
        state.read(body);
        out.push_str(line);
    }
    Some(out)
}

/// The masked form of a line of IPython syntax at a statement's start, or
/// `None` for a line of Python.
fn mask_line(body: &str, indent: usize) -> Option<String> {
    let code = &body[indent..];
    let trimmed = code.trim_end();
    // Help: `x?`, `x??`, `?x`, `??x` (Python has no `?` outside strings).
    if trimmed.starts_with('?') || (trimmed.ends_with('?') && !trimmed.contains('#')) {
        return Some(blank(body, indent));
    }
    if let Some(magic) = code.strip_prefix('%') {
        let name = magic.split(|c: char| c.is_whitespace()).next().unwrap_or("");
        if PYTHON_LINE_MAGICS.contains(&name) {
            // `%timeit -n 10 f(x)`: the statement after the magic and its
            // options, read as `if 1: f(x)` with the columns kept.
            let mut at = 1 + name.len();
            loop {
                let rest = &code[at..];
                let skipped = rest.len() - rest.trim_start().len();
                let word_start = at + skipped;
                let word = code[word_start..].split(|c: char| c.is_whitespace()).next().unwrap_or("");
                if word.starts_with('-') {
                    at = word_start + word.len();
                    // An option's value (`-n 10`, `-r3`): a number after a short option.
                    let rest = &code[at..];
                    let next = rest.trim_start().split(|c: char| c.is_whitespace()).next().unwrap_or("");
                    if word.len() == 2 && !next.is_empty() && next.chars().all(|c| c.is_ascii_digit()) {
                        at += rest.len() - rest.trim_start().len() + next.len();
                    }
                    continue;
                }
                at = word_start;
                break;
            }
            if at < code.len() && at >= 5 {
                let mut s = String::with_capacity(body.len());
                s.push_str(&body[..indent]);
                s.push_str("if 1:");
                s.push_str(&" ".repeat(at - 5));
                s.push_str(&code[at..]);
                return Some(s);
            }
        }
        return Some(commented(body, indent));
    }
    if code.starts_with('!') {
        return Some(commented(body, indent));
    }
    // `files = !ls`, `out = %sx ls`: a name (or names) given the output.
    if let Some(eq) = code.find('=') {
        let (left, right) = (&code[..eq], &code[eq + 1..]);
        let names = !left.trim().is_empty()
            && left.split(',').all(|n| {
                let n = n.trim();
                !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_') && !n.starts_with(|c: char| c.is_ascii_digit())
            });
        let value = right.trim_start();
        if names && !right.starts_with('=') && (value.starts_with('!') || value.starts_with('%')) {
            let at = indent + eq + 1 + (right.len() - value.len());
            let mut s = String::with_capacity(body.len());
            s.push_str(&body[..at]);
            s.push('_');
            s.push_str(&" ".repeat(body.len() - at - 1));
            return Some(s);
        }
    }
    // Automagic: `pip install x`, `cd data`: a magic's name, then a word.
    let name_len = code.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(code.len());
    let (name, rest) = code.split_at(name_len);
    if AUTOMAGICS.contains(&name) && rest.starts_with([' ', '\t']) {
        let next = rest.trim_start();
        let word: String = next.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let starts_word = next.starts_with(|c: char| c.is_alphanumeric() || c == '_') && !KEYWORDS.contains(&word.as_str());
        let path = next.starts_with(['/', '~', '$']) || next.starts_with("..") || next.starts_with("./");
        // (`ls -l`, `ls -1` are arithmetic in Python: left alone.)
        if starts_word || path {
            return Some(blank(body, indent));
        }
    }
    None
}

/// A magic or shell line as a comment where it stands alone (`%load_ext
/// cudf.pandas` → `#load_ext cudf.pandas`: what it switches on stays
/// readable), else blanked (a block can't hold only a comment).
fn commented(body: &str, indent: usize) -> String {
    if indent > 0 {
        return blank(body, indent);
    }
    let mut s = String::with_capacity(body.len());
    s.push('#');
    s.push_str(&body[1..]);
    s
}

/// The line with its text after the indentation replaced by a statement
/// that does nothing (`pass`, or `0` where the line is shorter), padded
/// with spaces to its length.
fn blank(body: &str, indent: usize) -> String {
    let rest = body.len() - indent;
    let word = if rest >= 4 { "pass" } else { "0" };
    let mut s = String::with_capacity(body.len());
    s.push_str(&body[..indent]);
    s.push_str(word);
    s.push_str(&" ".repeat(rest.saturating_sub(word.len())));
    s
}

/// What the lines read so far leave open: brackets, a triple-quoted string,
/// a backslash continuation.
#[derive(Default)]
struct State {
    depth: usize,
    /// The quote of the triple-quoted string still open.
    string: Option<&'static str>,
    continued: bool,
}

impl State {
    fn at_statement_start(&self) -> bool {
        self.depth == 0 && self.string.is_none() && !self.continued
    }

    /// Reads one line of Python (without its line ending).
    fn read(&mut self, line: &str) {
        let b = line.as_bytes();
        let mut i = 0;
        self.continued = false;
        while i < b.len() {
            if let Some(quote) = self.string {
                match line[i..].find(quote) {
                    Some(at) => {
                        // (A quote escaped by a backslash does not close it.)
                        let end = i + at;
                        let backslashes = b[..end].iter().rev().take_while(|c| **c == b'\\').count();
                        i = end + if backslashes % 2 == 1 { 1 } else { quote.len() };
                        if backslashes % 2 == 0 {
                            self.string = None;
                        }
                    }
                    None => return,
                }
                continue;
            }
            match b[i] {
                b'#' => return,
                b'(' | b'[' | b'{' => self.depth += 1,
                b')' | b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                b'\\' if i + 1 == b.len() => {
                    self.continued = true;
                    return;
                }
                q @ (b'"' | b'\'') => {
                    let triple = if q == b'"' { "\"\"\"" } else { "'''" };
                    if line[i..].starts_with(triple) {
                        self.string = Some(triple);
                        i += 3;
                        continue;
                    }
                    // A one-line string: to its closing quote (or the line's end).
                    let mut j = i + 1;
                    while j < b.len() && b[j] != q {
                        j += if b[j] == b'\\' { 2 } else { 1 };
                    }
                    i = j + 1;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(cell: &str) -> String {
        let out = mask(cell).expect("a Python cell");
        assert_eq!(out.len(), cell.len(), "lengths kept");
        assert_eq!(out.matches('\n').count(), cell.matches('\n').count(), "lines kept");
        out
    }

    #[test]
    fn ipython_syntax_is_masked_in_place() {
        assert_eq!(masked("%matplotlib inline\nx = 1\n"), "#matplotlib inline\nx = 1\n");
        assert_eq!(masked("!pip install cudf\n"), "#pip install cudf\n");
        assert_eq!(masked("for f in files:\n    !rm $f\n"), "for f in files:\n    pass  \n");
        assert_eq!(masked("files = !ls data\n"), "files = _       \n");
        assert_eq!(masked("np.fft.fft?\n??np\nx?\n"), "pass       \npass\n0 \n");
        assert_eq!(masked("pip install numba\ncd ..\n"), "pass             \npass \n");
        assert_eq!(masked("%timeit -n 10 np.sort(x)\n"), "if 1:         np.sort(x)\n");
        assert_eq!(masked("%time y = f(x)\n"), "if 1: y = f(x)\n");
        assert_eq!(masked("%%time\ny = f(x)\n"), "pass  \ny = f(x)\n");
        assert_eq!(masked("if a:\n    %time f()\n"), "if a:\n    if 1: f()\n");
    }

    #[test]
    fn python_is_left_alone() {
        for cell in [
            "x = (a\n     % b)\n",
            "s = '''\n%s\n!x\n'''\n",
            "time = 3\nls = [time]\npip.main()\ncd = ls[0]\n",
            "run if ok else stop\n",
            "x = a \\\n  % b\n",
            "ls -1\n",
            "print('why?')\n",
        ] {
            assert_eq!(masked(cell), cell, "{cell:?}");
        }
    }

    #[test]
    fn cells_under_other_magics_are_not_python() {
        assert!(mask("%%bash\nls -la\n").is_none());
        assert!(mask("%%writefile a.py\nimport os\n").is_none());
        assert!(mask("%%sql\nselect 1\n").is_none());
    }

    #[test]
    fn a_notebook_is_its_python_cells_in_order() {
        let nb = r##"{
 "cells": [
  {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n"]},
  {"cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": [], "source": ["import pandas as pd\n", "%load_ext cudf.pandas\n", "df = pd.read_csv('a.csv')"]},
  {"cell_type": "code", "metadata": {}, "execution_count": 2, "outputs": [], "source": "%%bash\nls\n"},
  {"cell_type": "code", "metadata": {}, "execution_count": 3, "outputs": [], "source": ["df.groupby('a').sum()\n"]}
 ],
 "metadata": {"language_info": {"name": "python"}},
 "nbformat": 4,
 "nbformat_minor": 5
}"##;
        let notebook = Notebook::read(nb.as_bytes()).unwrap();
        assert_eq!(notebook.cells.len(), 4);
        assert_eq!(notebook.original, "import pandas as pd\n%load_ext cudf.pandas\ndf = pd.read_csv('a.csv')\ndf.groupby('a').sum()\n");
        assert_eq!(notebook.python, "import pandas as pd\n#load_ext cudf.pandas\ndf = pd.read_csv('a.csv')\ndf.groupby('a').sum()\n");
        assert_eq!(notebook.parts.iter().map(|p| p.cell).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(notebook.cell_line(2), (1, 2));
        assert_eq!(notebook.cell_line(3), (3, 0));
        // The source spans are the JSON values as written.
        let cell = &notebook.cells[2];
        assert_eq!(&nb[cell.source_span.clone()], r#""%%bash\nls\n""#);
        assert!(!cell.python && !cell.source_is_list);
    }

    #[test]
    fn other_formats_and_languages() {
        assert!(Notebook::read(br#"{"nbformat": 3, "worksheets": []}"#).unwrap_err().contains("format 3"));
        assert!(Notebook::read(b"not json").is_err());
        let r = br#"{"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"language": "R", "name": "ir"}}, "cells": [{"cell_type": "code", "metadata": {}, "source": "x <- 1"}]}"#;
        let notebook = Notebook::read(r).unwrap();
        assert!(notebook.parts.is_empty() && notebook.python.is_empty());
    }
}

#[cfg(test)]
mod recorded {
    use super::recorded_size;

    #[test]
    fn sizes_read_from_a_cells_result() {
        let size = |cell: &str, result: &str| recorded_size(cell, result);
        let got = |name: &str, rows: Option<u64>, elements: Option<u64>| Some((name.to_string(), rows, elements));
        assert_eq!(size("df = load()\ndf.shape", "(48000000, 7)"), got("df", Some(48_000_000), Some(336_000_000)));
        assert_eq!(size("x.shape\n\n# done\n", "(1000,)"), got("x", Some(1000), Some(1000)));
        assert_eq!(size("len(trips)", "48000000"), got("trips", Some(48_000_000), None));
        assert_eq!(size("df.shape[0]", "12"), got("df", Some(12), None));
        assert_eq!(size("a.size", "64"), got("a", None, Some(64)));
        assert_eq!(size("df", "   a  b\n0  1  2\n..\n\n[48000000 rows x 2 columns]"), got("df", Some(48_000_000), Some(96_000_000)));
        assert_eq!(size("s", "0    1.0\n...\nName: fare, Length: 5000, dtype: float64"), got("s", Some(5000), Some(5000)));
        // Not a size, or not of a name: nothing.
        assert_eq!(size("df.head()", "   a  b\n0  1  2"), None);
        assert_eq!(size("df", "   a  b\n0  1  2"), None);
        assert_eq!(size("for x in y:\n    x.shape", "(3, 3)"), None);
        assert_eq!(size("df.a.shape", "(3,)"), None);
        assert_eq!(size("x.shape", "torch.Size([3, 4])"), None);
    }
}
