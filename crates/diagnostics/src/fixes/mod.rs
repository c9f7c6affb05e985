//! Fixes: the rewrite behind a finding, as edits of the source.
//!
//! Rules find; this module writes. After the rules of one analysis have run,
//! [`attach`] gives each finding whose library has a mechanical rewrite its
//! [`Fix`]. Edits stay inside the function the finding is in (or at its first
//! byte, where a generated kernel goes), so a function's cached findings stay
//! valid when text elsewhere moves; the imports a fix needs are recorded
//! against an [`Anchor`] and placed by [`resolve`] at the end of every
//! analysis, from the module's top-level statements.
//!
//! [`fix_all`] applies fixes to a whole text, re-analysing between passes,
//! and refuses any pass that would add a syntax error.

use gpulens_syntax::NodeExt;
mod accel;
mod arrays;
mod kernels;
mod search;

use std::ops::Range;

use gpulens_syntax::{Node, Tree};

use crate::Code;
use crate::semantic::Module;
pub(crate) use crate::source::{indentation_at, line_start, newline};
use crate::{Applicability, Context, Edit, Finding, Fix};

/// Where an edit that belongs to the whole module goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Anchor {
    /// After the imports at the top of the module (or after its docstring,
    /// `__future__` imports and leading comments when it has none).
    Imports,
    /// Before the first import at the top of the module: for accelerators
    /// that must be installed before the library they replace is imported by
    /// anything.
    FirstImport,
}

/// A fix under construction.
pub(crate) struct Draft {
    applicability: Applicability,
    message: String,
    details: String,
    edits: Vec<Edit>,
    pending: Vec<(Anchor, String)>,
}

impl Draft {
    /// `message`: the title (about 60 characters at most); `details`: the rest.
    pub fn new(applicability: Applicability, message: impl Into<String>, details: impl Into<String>) -> Draft {
        Draft { applicability, message: message.into(), details: details.into(), edits: Vec::new(), pending: Vec::new() }
    }

    pub fn replace(&mut self, range: Range<usize>, text: impl Into<String>) {
        self.edits.push(Edit { range, text: text.into() });
    }

    pub fn insert(&mut self, at: usize, text: impl Into<String>) {
        self.replace(at..at, text);
    }

    /// A module-level line (an import, an accelerator's install call).
    pub fn module_line(&mut self, anchor: Anchor, line: impl Into<String>) {
        let line = line.into();
        if !self.pending.iter().any(|(a, l)| *a == anchor && *l == line) {
            self.pending.push((anchor, line));
        }
    }

    /// Drops a module line requested earlier if no edit ended up using `token`.
    pub fn drop_line_unless_used(&mut self, line: &str, token: &str) {
        if !self.edits.iter().any(|e| e.text.contains(token)) {
            self.pending.retain(|(_, l)| l != line);
        }
    }

    /// Whether an edit falls on (or inserts into) any of these byte ranges.
    pub fn touches_any(&self, ranges: &[Range<usize>]) -> bool {
        self.edits.iter().any(|e| ranges.iter().any(|r| e.range.start <= r.end && r.start <= e.range.end))
    }

    pub fn finish(mut self) -> Option<Fix> {
        if self.edits.is_empty() && self.pending.is_empty() {
            return None;
        }
        self.edits.sort_by_key(|e| (e.range.start, e.range.end));
        // Edits of one fix must not overlap: a generator that produced such
        // edits has misread the code, and no fix is better than a wrong one.
        if self.edits.windows(2).any(|w| w[0].range.end > w[1].range.start) {
            return None;
        }
        Some(Fix {
            applicability: self.applicability,
            message: self.message,
            details: self.details,
            edits: self.edits,
            pending: self.pending,
            cell: None,
        })
    }
}

const MAX_MODULE_LEVEL_TEXT: usize = 1 << 20;
const MAX_FIX_DEPTH: usize = 256;

/// Whether `node` lies more than `limit` levels below `root` (walking down,
/// which is linear in the depth, unlike repeated `parent()` calls).
fn deeper_than(root: Node<'_>, node: Node<'_>, limit: usize) -> bool {
    let mut current = root;
    for _ in 0..limit {
        if current == node {
            return false;
        }
        match current.child_with_descendant(node) {
            Some(next) => current = next,
            None => return false,
        }
    }
    current != node
}

/// Gives each finding its fix, where its library has a mechanical rewrite.
pub(crate) fn attach(cx: &Context<'_, '_>, tree: &Tree, findings: &mut [Finding]) {
    if findings.is_empty() {
        return;
    }
    let root = tree.root_node();
    let mut regions = arrays::Regions::default();
    for i in 0..findings.len() {
        let f = &findings[i];
        let Some(node) = root.descendant_for_byte_range(f.range.start, f.range.end) else { continue };
        // Code nested absurdly deep (generated, or a stress test) gets no fix:
        // the rewrites look at a node's ancestors, and each step up costs a
        // walk down from the root in tree-sitter.
        if deeper_than(root, node, MAX_FIX_DEPTH) {
            continue;
        }
        // Module-level code of a huge file (generated data, say) gets no
        // fixes: naming new variables there would mean scanning it all per finding.
        if cx.module.text.len() > MAX_MODULE_LEVEL_TEXT && node.enclosing_function().is_none() {
            continue;
        }
        if !f.code.rule().fix {
            continue;
        }
        let fix = match f.code {
            Code::CUPY001 | Code::CUCIM001 | Code::RAFT001 => regions.fix(cx, node, findings),
            Code::CUDF001 | Code::CUDF002 => accel::cudf_pandas(cx),
            Code::CUML001 => accel::cuml_accel(cx),
            Code::CUGRAPH001 => accel::nx_backend(cx, node),
            Code::KVIKIO001 => arrays::kvikio_read(cx, node),
            Code::CUVS001 => search::cuvs(cx, node),
            Code::NUMBA001 => kernels::numba(cx, node),
            Code::WARP001 => kernels::warp(cx, node),
            Code::GPU005 => accel::synchronize_before_timer(cx, node),
            _ => None,
        };
        findings[i].fix = fix;
    }
}

/// Places the module-level lines that fixes asked for. Runs at the end of
/// every analysis (after cached findings have been merged in).
pub(crate) fn resolve(text: &str, tree: &Tree, findings: &mut [Finding]) {
    if !findings.iter().any(|f| f.fix.as_ref().is_some_and(|x| !x.pending.is_empty())) {
        return;
    }
    let layout = Layout::new(text, tree);
    for fix in findings.iter_mut().filter_map(|f| f.fix.as_mut()) {
        if fix.pending.is_empty() {
            continue;
        }
        // One edit per line, so that the same import asked for by several
        // fixes is made once when they are applied together.
        let mut index = None;
        for (anchor, line) in fix.pending.drain(..) {
            let (at, text) = layout.place(anchor, line);
            // Module lines go before any edit at the same offset (a kernel
            // inserted before the first function, say), in the order asked.
            let i = match index {
                Some((a, i)) if a == at => i,
                _ => fix.edits.iter().position(|e| e.range.start >= at).unwrap_or(fix.edits.len()),
            };
            fix.edits.insert(i, Edit { range: at..at, text });
            index = Some((at, i + 1));
        }
        // A fix whose module lines land inside one of its own edits is unusable.
        if fix.edits.windows(2).any(|w| w[0].range.end > w[1].range.start) {
            fix.edits.clear();
        }
    }
    for f in findings.iter_mut() {
        if f.fix.as_ref().is_some_and(|x| x.edits.is_empty() && x.cell.is_none()) {
            f.fix = None;
        }
    }
}

/// The top of a module: where its leading imports end.
struct Layout<'a> {
    text: &'a str,
    /// Start of the line of the first top-level import (not `__future__`).
    first_import: Option<usize>,
    /// End of the line of the last import in the leading block.
    after_imports: Option<usize>,
    /// End of the docstring / `__future__` imports / leading comments.
    after_header: usize,
}

impl<'a> Layout<'a> {
    fn new(text: &'a str, tree: &Tree) -> Layout<'a> {
        let root = tree.root_node();
        let mut layout = Layout { text, first_import: None, after_imports: None, after_header: 0 };
        let mut cursor = root.walk();
        for (i, child) in root.named_children(&mut cursor).enumerate() {
            match child.kind_name() {
                "comment" if layout.first_import.is_none() && layout.after_imports.is_none() => {
                    layout.after_header = line_end(text, child.end_byte());
                }
                "comment" => {}
                "future_import_statement" => layout.after_header = line_end(text, child.end_byte()),
                "expression_statement" if i == 0 && child.named_child(0).is_some_and(|s| s.kind_name() == "string") => {
                    layout.after_header = line_end(text, child.end_byte());
                }
                "import_statement" | "import_from_statement" if !child.has_error() => {
                    if layout.first_import.is_none() {
                        layout.first_import = Some(line_start(text, child.start_byte()));
                    }
                    layout.after_imports = Some(line_end(text, child.end_byte()));
                }
                _ => break,
            }
        }
        layout
    }

    /// Offset and text for a line at `anchor`.
    fn place(&self, anchor: Anchor, line: String) -> (usize, String) {
        let at = match anchor {
            Anchor::FirstImport => self.first_import.or(self.after_imports).unwrap_or(self.after_header),
            Anchor::Imports => self.after_imports.unwrap_or(self.after_header),
        };
        let nl = newline(self.text, at.saturating_sub(1));
        // At the end of a file without a final newline, start a new line.
        if at > 0 && !self.text[..at].ends_with('\n') && !self.text[..at].ends_with('\r') {
            (at, format!("{nl}{line}"))
        } else {
            (at, format!("{line}{nl}"))
        }
    }
}

/// Offset just past the line break that ends the line holding `offset`.
fn line_end(text: &str, offset: usize) -> usize {
    let bytes = text.as_bytes();
    match bytes[offset..].iter().position(|&b| b == b'\n' || b == b'\r') {
        Some(i) => {
            let at = offset + i;
            if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') {
                at + 2
            } else {
                at + 1
            }
        }
        None => text.len(),
    }
}

/// The local name under which `target` (a module) is imported at `offset`, if it is.
pub(crate) fn alias_of<'m>(module: &'m Module<'_>, target: &str, offset: usize) -> Option<&'m str> {
    let mut found: Vec<&str> = module.imports_at(offset).filter(|(_, t)| *t == target).map(|(n, _)| n).collect();
    found.sort_unstable();
    found.into_iter().next()
}

/// Whether `name` is in use where code at `at` would be written: imported
/// there, assigned or defined at module level, or a word of the function
/// (outermost) that holds `at`. Only those: what a function's fix depends on
/// must be covered by the key its cached findings are stored under.
pub(crate) fn name_taken(module: &Module<'_>, name: &str, at: Node<'_>) -> bool {
    if module.imports_at(at.start_byte()).any(|(n, _)| n == name) || module.assigned_at_module_level(name) {
        return true;
    }
    let mut root = at;
    let mut outermost = None;
    while let Some(parent) = root.parent() {
        if root.kind_name() == "function_definition" {
            outermost = Some(root);
        }
        root = parent;
    }
    // Looked up in a set built once per module: scanning the module's
    // statements for every fix made big files quadratic.
    let defined = module.defined_at_module_level(name);
    let region = outermost.map_or(module.text, |f| module.text_of(f));
    defined || has_word(region, name)
}

/// Whether `word` occurs in `text` as a whole identifier.
pub(crate) fn has_word(text: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(is_ident) && !text[i + word.len()..].chars().next().is_some_and(is_ident)
    })
}

/// How code at `at` names CuPy, adding `import cupy as cp` when it must.
pub(crate) fn cupy_alias(cx: &Context<'_, '_>, draft: &mut Draft, at: Node<'_>) -> String {
    let offset = at.start_byte();
    if let Some(alias) = alias_of(cx.module, "cupy", offset) {
        return alias.to_string();
    }
    if name_taken(cx.module, "cp", at) {
        draft.module_line(Anchor::Imports, "import cupy");
        "cupy".into()
    } else {
        draft.module_line(Anchor::Imports, "import cupy as cp");
        "cp".into()
    }
}

/// How code at `offset` names a dotted module such as `cupyx.scipy.ndimage`:
/// an alias the module already has for it, else its full name (imported).
pub(crate) fn module_path(cx: &Context<'_, '_>, draft: &mut Draft, path: &str, offset: usize) -> String {
    if let Some(alias) = alias_of(cx.module, path, offset) {
        return alias.to_string();
    }
    draft.module_line(Anchor::Imports, format!("import {path}"));
    path.to_string()
}

/// The statement (a child of a block or of the module) that holds `node`.
pub(crate) fn statement_of(node: Node<'_>) -> Option<Node<'_>> {
    let mut current = node;
    loop {
        let parent = current.parent()?;
        if matches!(parent.kind_name(), "block" | "module") {
            return Some(current);
        }
        current = parent;
    }
}

/// How many syntax errors a tree holds (ERROR and MISSING nodes).
pub fn syntax_errors(tree: &Tree) -> usize {
    let mut count = 0;
    let mut walk = gpulens_syntax::preorder(tree.root_node());
    while let Some(node) = walk.next() {
        if node.is_error() || node.is_missing() {
            count += 1;
        }
        // Only a node that holds an error can hold another.
        if !node.has_error() {
            walk.skip_children();
        }
    }
    count
}

/// Applies as many of `fixes` (in order) as fit together: a fix whose edits
/// overlap an edit already taken is left for a later pass; identical edits
/// from several fixes (the same import) are made once. Returns the new text
/// and how many fixes were applied.
pub fn apply_fixes<'a>(text: &str, fixes: impl IntoIterator<Item = &'a Fix>) -> (String, usize) {
    let mut taken: Vec<&Edit> = Vec::new();
    let mut applied = 0;
    'fixes: for fix in fixes {
        let mut new: Vec<&Edit> = Vec::new();
        for edit in &fix.edits {
            if edit.range.end > text.len() || !text.is_char_boundary(edit.range.start) || !text.is_char_boundary(edit.range.end) {
                continue 'fixes;
            }
            if taken.contains(&edit) {
                continue;
            }
            if taken.iter().any(|t| conflicts(&t.range, &edit.range)) {
                continue 'fixes;
            }
            new.push(edit);
        }
        taken.extend(new);
        applied += 1;
    }
    // Stable: insertions at one offset keep the order their fixes came in.
    taken.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(text.len() + taken.iter().map(|e| e.text.len()).sum::<usize>());
    let mut at = 0;
    for edit in taken {
        out.push_str(&text[at..edit.range.start]);
        out.push_str(&edit.text);
        at = edit.range.end;
    }
    out.push_str(&text[at..]);
    (out, applied)
}

/// Two edits conflict when their ranges overlap, or one inserts strictly
/// inside the range the other replaces. Insertions at one point do not.
fn conflicts(a: &Range<usize>, b: &Range<usize>) -> bool {
    if a.is_empty() && b.is_empty() {
        return false;
    }
    if a.is_empty() {
        return b.start < a.start && a.start < b.end;
    }
    if b.is_empty() {
        return a.start < b.start && b.start < a.end;
    }
    a.start < b.end && b.start < a.end
}

