//! Notebooks as editors sync them (LSP 3.17 `notebookDocument/*`): the
//! cells, each a text document of its own (`vscode-notebook-cell:` URIs),
//! analysed together as one module — the Python code cells in order, IPython
//! syntax masked (see `gpulens_syntax::notebook`) — and the findings handed
//! back to the cells they fall in, in the cells' own positions.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use gpulens_diagnostics::{check_incremental, shift_findings, Finding, Settings};
use gpulens_gpu::GpuProfile;
use gpulens_syntax::notebook::{mask, Notebook, Part};
use gpulens_syntax::{Change, Document, PositionEncoding};

use tower_lsp_server::ls_types::*;

use crate::analysis::{analyse_in_budget, Job, Memory, Outcome, Waited, PULL_WAIT};
use crate::guard;
use crate::settings::Effective;

/// An open notebook: its cells in order, and their Python joined.
pub struct OpenNotebook {
    pub version: i32,
    pub cells: Vec<OpenCell>,
    /// The Python cells joined in order, IPython syntax masked (as
    /// `gpulens_syntax::notebook` joins a file's): what is analysed. A cell's
    /// edit is made here too, so the analysis reparses and re-analyses only
    /// what it changed. Its tree is out of date while that is under way.
    pub joined: Document,
    /// Where each Python cell lies in `joined`, in order (`Part::cell`
    /// indexes `cells`).
    parts: Vec<Part>,
    /// What earlier analyses of `joined` found.
    pub memory: Arc<Memory>,
    /// Counts edits: an analysis started for an older count stops.
    pub edits: Arc<AtomicU64>,
    /// The cells' findings are the analysis of exactly the current text.
    pub exact: bool,
}

/// A cell of an open notebook.
pub struct OpenCell {
    pub uri: Uri,
    pub code: bool,
    pub language: String,
    /// The version of its text the client last sent.
    pub version: i32,
    pub doc: Document,
    /// Its findings, in its own offsets (fixes that reach other cells left out).
    pub findings: Vec<Finding>,
    /// Changes whenever its findings may have: the pull-diagnostics result id.
    pub generation: u64,
}

/// What a change did to a notebook.
#[derive(Default)]
pub struct Changed {
    /// Cells that left it (their diagnostics are to be cleared).
    pub closed: Vec<Uri>,
    /// Cells whose text changed or that came in, in the notebook's order.
    pub edited: Vec<Uri>,
}

/// The client-side command that inserts a code cell into a notebook:
/// arguments `[notebook URI, index, text]`. A client announces that it runs
/// it with the experimental capability `gpulens.insertNotebookCell` (the VS
/// Code extension does); LSP 3.17 has no notebook edit of its own.
pub const INSERT_CELL: &str = "gpulens.insertNotebookCell";

/// The code action kind that fixes a whole notebook (asked for once per
/// notebook, on one of its cells).
pub const NOTEBOOK_FIX_ALL_KIND: &str = "notebook.source.fixAll.gpulens";

/// Cells' findings generations (one counter for every notebook).
static GENERATIONS: AtomicU64 = AtomicU64::new(1);

impl OpenCell {
    /// Whether the cell is analysed: Python code.
    pub(crate) fn python(&self) -> bool {
        self.code && matches!(self.language.as_str(), "python" | "ipython" | "")
    }
}

impl OpenNotebook {
    /// The notebook as `notebookDocument/didOpen` gives it (not analysed yet).
    pub fn open(params: &DidOpenNotebookDocumentParams) -> OpenNotebook {
        let texts: std::collections::HashMap<&Uri, &TextDocumentItem> = params.cell_text_documents.iter().map(|t| (&t.uri, t)).collect();
        let cells: Vec<OpenCell> =
            params.notebook_document.cells.iter().map(|cell| new_cell(cell, texts.get(&cell.document).copied())).collect();
        let (text, parts) = joined_text(&cells);
        OpenNotebook {
            version: params.notebook_document.version,
            cells,
            joined: Document::new(&text),
            parts,
            memory: Arc::default(),
            edits: Arc::default(),
            exact: false,
        }
    }

    /// Applies `notebookDocument/didChange`: cells added, removed or moved,
    /// their kinds, and their texts' edits, to the cells and to the joined
    /// text (not analysed yet; the edited cells' findings are moved with
    /// their edits meanwhile).
    pub fn change(&mut self, params: &DidChangeNotebookDocumentParams, encoding: PositionEncoding) -> Changed {
        self.version = params.notebook_document.version;
        self.exact = false;
        let mut changed = Changed::default();
        let Some(cells) = &params.change.cells else { return changed };
        // Cells added, removed, moved or of another kind: the joined text is
        // made again (and edited where it differs).
        let mut rejoin = false;
        if let Some(structure) = &cells.structure {
            rejoin = true;
            let opened: std::collections::HashMap<&Uri, &TextDocumentItem> =
                structure.did_open.iter().flatten().map(|t| (&t.uri, t)).collect();
            let start = (structure.array.start as usize).min(self.cells.len());
            let end = (start + structure.array.delete_count as usize).min(self.cells.len());
            // A moved cell is closed and opened again, or keeps its text
            // when the client sends no didOpen for it.
            let mut removed: Vec<OpenCell> = self.cells.drain(start..end).collect();
            let added: Vec<OpenCell> = structure
                .array
                .cells
                .iter()
                .flatten()
                .map(|cell| match (opened.get(&cell.document), removed.iter().position(|r| r.uri == cell.document)) {
                    (None, Some(i)) => {
                        let mut kept = removed.swap_remove(i);
                        kept.code = cell.kind == NotebookCellKind::CODE;
                        kept
                    }
                    (text, _) => new_cell(cell, text.copied()),
                })
                .collect();
            changed.edited.extend(added.iter().map(|c| c.uri.clone()));
            self.cells.splice(start..start, added);
            changed.closed.extend(removed.into_iter().map(|c| c.uri));
            for gone in structure.did_close.iter().flatten() {
                if !self.cells.iter().any(|c| c.uri == gone.uri) && !changed.closed.contains(&gone.uri) {
                    changed.closed.push(gone.uri.clone());
                }
            }
        }
        for cell in cells.data.iter().flatten() {
            if let Some(open) = self.cells.iter_mut().find(|c| c.uri == cell.document) {
                let code = cell.kind == NotebookCellKind::CODE;
                rejoin |= open.code != code;
                open.code = code;
            }
        }
        for content in cells.text_content.iter().flatten() {
            let Some(i) = self.cells.iter().position(|c| c.uri == content.document.uri) else {
                tracing::warn!("notebook change for cell {} which is not in it: ignored", content.document.uri.as_str());
                continue;
            };
            let open = &mut self.cells[i];
            let changes: Vec<Change> =
                content.changes.iter().map(|c| Change { range: c.range.map(crate::convert::range_in), text: c.text.clone() }).collect();
            let Some(edits) = crate::guard("notebook cell edit", || open.doc.edit(&changes, encoding)) else {
                // A bad edit: the cell's text as it was; the next full sync repairs it.
                tracing::warn!("notebook cell {}: an edit could not be applied", content.document.uri.as_str());
                continue;
            };
            open.version = content.document.version;
            open.findings = shift_findings(&open.findings, &edits);
            if !changed.edited.contains(&open.uri) {
                changed.edited.push(open.uri.clone());
            }
            if !rejoin {
                rejoin = !self.splice(i);
            }
        }
        if rejoin {
            self.rejoin();
        }
        // (A cell moved by closing and opening it again is still here.)
        let cells = &self.cells;
        changed.closed.retain(|u| !cells.iter().any(|c| &c.uri == u));
        changed
    }

    /// Makes the joined text again from the cells, as one edit of the
    /// joined document: what lies between the first and the last byte
    /// that differ.
    fn rejoin(&mut self) {
        let (text, parts) = joined_text(&self.cells);
        let old = self.joined.text();
        let (prefix, suffix) = common_ends(&old, &text);
        self.joined.edit_bytes(prefix, old.len() - suffix, &text[prefix..text.len() - suffix]);
        self.parts = parts;
    }

    /// Carries cell `i`'s new text into the joined text, the parts after it
    /// moved. Returns false where the cell came in or left the Python
    /// (a cell magic written or removed): only a rejoin says where.
    fn splice(&mut self, i: usize) -> bool {
        let k = self.parts.iter().position(|p| p.cell == i);
        let cell = &self.cells[i];
        if !cell.python() {
            return k.is_none();
        }
        let text = cell.doc.text();
        let (k, mut new) = match (k, mask(&text)) {
            (Some(k), Some(masked)) => (k, masked),
            (None, None) => return true,
            _ => return false,
        };
        if !text.ends_with('\n') {
            new.push('\n');
        }
        let start = self.parts[k].start;
        let end = self.parts.get(k + 1).map_or(self.joined.len(), |p| p.start);
        let old: String = self.joined.rope().byte_slice(start..end).to_string();
        let (prefix, suffix) = common_ends(&old, &new);
        self.joined.edit_bytes(start + prefix, end - suffix, &new[prefix..new.len() - suffix]);
        let bytes = new.len() as isize - old.len() as isize;
        let lines = new.matches('\n').count() as isize - old.matches('\n').count() as isize;
        self.parts[k].len = text.len();
        for part in &mut self.parts[k + 1..] {
            part.start = (part.start as isize + bytes) as usize;
            part.first_line = (part.first_line as isize + lines) as usize;
        }
        true
    }

    /// The analysis of the joined text, its tree brought up to date, on the
    /// calling thread (opening, new settings). Returns the cells whose
    /// findings changed.
    pub fn analyse(&mut self, settings: &Settings, gpu: &GpuProfile) -> Vec<usize> {
        let settings = Settings { notebook: Some(Default::default()), ..settings.clone() };
        let mut cache = self.memory.cache();
        let findings = guard("notebook analysis", || {
            self.joined.reparse(&mut |_| false);
            check_incremental(&self.joined.text(), self.joined.tree(), &settings, gpu, &mut cache)
        });
        if findings.is_none() {
            *cache = Default::default(); // it may be half-updated
        }
        drop(cache);
        let findings = findings.unwrap_or_default();
        self.memory.recent().put(self.joined.text_hash(), Arc::new(findings.clone()));
        self.exact = true;
        self.distribute(&findings)
    }

    /// Gives each cell the findings that fall in it, in its own offsets.
    /// Returns the cells whose findings changed.
    pub fn distribute(&mut self, findings: &[Finding]) -> Vec<usize> {
        let mut per_cell: Vec<Vec<Finding>> = (0..self.cells.len()).map(|_| Vec::new()).collect();
        for finding in findings {
            let Some(part) = gpulens_syntax::notebook::part_at(&self.parts, finding.range.start) else { continue };
            let local = |r: &std::ops::Range<usize>| {
                (r.start >= part.start && r.end <= part.start + part.len).then(|| r.start - part.start..r.end - part.start)
            };
            let Some(range) = local(&finding.range) else { continue };
            let mut finding = finding.clone();
            finding.range = range;
            // A fix is offered in a cell only when all its edits are in it.
            if let Some(fix) = finding.fix.as_mut() {
                let moved: Option<Vec<std::ops::Range<usize>>> = fix.edits.iter().map(|e| local(&e.range)).collect();
                match moved {
                    Some(ranges) => fix.edits.iter_mut().zip(ranges).for_each(|(e, r)| e.range = r),
                    None => finding.fix = None,
                }
            }
            if let Some(cell) = per_cell.get_mut(part.cell) {
                cell.push(finding);
            }
        }
        let mut changed = Vec::new();
        for (i, (cell, findings)) in self.cells.iter_mut().zip(per_cell).enumerate() {
            if cell.findings != findings {
                cell.findings = findings;
                cell.generation = GENERATIONS.fetch_add(1, Ordering::Relaxed);
                changed.push(i);
            }
        }
        changed
    }

    /// The job that analyses the current joined text, or `None` where it
    /// is the text of a version analysed lately (an edit undone): its
    /// findings are given to the cells now. Returns the cells whose
    /// findings changed in that case.
    fn job(&mut self, seq: u64, effective: &Effective, gpu: Arc<GpuProfile>) -> Result<Job, Vec<usize>> {
        if self.joined.reuse_recent() {
            let recalled = self.memory.recent().get(self.joined.text_hash());
            if let Some(findings) = recalled {
                self.exact = true;
                return Err(self.distribute(&findings));
            }
        }
        let settings = Settings { notebook: Some(Default::default()), ..effective.settings.clone() };
        Ok(Job {
            doc: self.joined.clone(),
            memory: self.memory.clone(),
            edits: self.edits.clone(),
            seq,
            effective: Arc::new(Effective { settings, ..effective.clone() }),
            gpu,
        })
    }

    /// Whether `counter` counts this notebook's edits and edit `seq` is its latest.
    fn at_edit(&self, seq: u64, counter: &Arc<AtomicU64>) -> bool {
        Arc::ptr_eq(&self.edits, counter) && self.edits.load(Ordering::Acquire) == seq
    }
}

/// The Python cells of `cells` joined, IPython syntax masked, and where each lies.
fn joined_text(cells: &[OpenCell]) -> (String, Vec<Part>) {
    let texts: Vec<String> = cells.iter().map(|c| c.doc.text()).collect();
    let joined =
        Notebook::from_cells(cells.iter().zip(&texts).enumerate().filter(|(_, (c, _))| c.python()).map(|(i, (_, t))| (i, t.as_str())));
    (joined.python, joined.parts)
}

/// How many bytes `a` and `b` share at their start, and then at their end
/// (not overlapping the first), both at character boundaries.
fn common_ends(a: &str, b: &str) -> (usize, usize) {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let mut prefix = x.iter().zip(y).take_while(|(p, q)| p == q).count();
    while !a.is_char_boundary(prefix) || !b.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let most = x.len().min(y.len()) - prefix;
    let mut suffix = x.iter().rev().zip(y.iter().rev()).take(most).take_while(|(p, q)| p == q).count();
    while !a.is_char_boundary(a.len() - suffix) || !b.is_char_boundary(b.len() - suffix) {
        suffix -= 1;
    }
    (prefix, suffix)
}

fn new_cell(cell: &NotebookCell, text: Option<&TextDocumentItem>) -> OpenCell {
    OpenCell {
        uri: cell.document.clone(),
        code: cell.kind == NotebookCellKind::CODE,
        language: text.map(|t| t.language_id.to_ascii_lowercase()).unwrap_or_default(),
        version: text.map_or(0, |t| t.version),
        doc: Document::new(text.map_or("", |t| t.text.as_str())),
        findings: Vec::new(),
        generation: GENERATIONS.fetch_add(1, Ordering::Relaxed),
    }
}

/// The notebook sync the server offers: the Python cells of any notebook.
pub fn sync_capability() -> OneOf<NotebookDocumentSyncOptions, NotebookDocumentSyncRegistrationOptions> {
    OneOf::Left(NotebookDocumentSyncOptions {
        notebook_selector: vec![NotebookSelector::ByCells {
            notebook: Some(Notebook_::String("*".into())),
            cells: vec![NotebookCellSelector { language: "python".into() }],
        }],
        save: Some(true),
    })
}

use tower_lsp_server::ls_types::Notebook as Notebook_;

// ------------------------------------------------ the server's side of it

/// What `Backend` does for notebooks: the handlers of notebook sync (the
/// `LanguageServer` methods call these) and the requests on a cell.
impl crate::Backend {
    pub(crate) async fn open_notebook(&self, params: DidOpenNotebookDocumentParams) {
        let uri = params.notebook_document.uri.clone();
        let effective = self.effective();
        let gpu = self.state.gpu.read().unwrap().clone();
        let opened = guard("notebookDocument/didOpen", || {
            let mut notebook = OpenNotebook::open(&params);
            notebook.analyse(&effective.settings, &gpu);
            notebook
        });
        let Some(notebook) = opened else { return };
        let cells: Vec<Uri> = notebook.cells.iter().map(|c| c.uri.clone()).collect();
        for cell in &cells {
            self.state.cells.insert(cell.clone(), uri.clone());
        }
        if let Some(old) = self.state.notebooks.insert(uri.clone(), notebook) {
            old.edits.fetch_add(1, Ordering::AcqRel); // stops its analysis, if one is under way
        }
        self.publish_cells(&uri, cells, &[], Vec::new()).await;
    }

    /// Applies the change to the cells and the joined text at once, then
    /// analyses on an analysis thread as an edit of a `.py` file is (see
    /// `Backend::did_change`): past the edit budget the edited cells'
    /// findings, moved with the edit, are published first. Then the edited
    /// cells are published, and every other cell whose findings the edit
    /// changed (a name an earlier cell defines).
    pub(crate) async fn change_notebook(&self, params: DidChangeNotebookDocumentParams) {
        let arrived = std::time::Instant::now();
        let uri = params.notebook_document.uri.clone();
        let (encoding, effective) = (self.encoding(), self.effective());
        let gpu = self.state.gpu.read().unwrap().clone();
        let (seq, counter, changed, job) = {
            let Some(mut notebook) = self.state.notebooks.get_mut(&uri) else {
                tracing::warn!("notebookDocument/didChange for {} which is not open: ignored", uri.as_str());
                return;
            };
            let notebook = &mut *notebook;
            let seq = notebook.edits.fetch_add(1, Ordering::AcqRel) + 1;
            // (A change that fails half-way is logged; the client's next sync repairs the text.)
            let changed = guard("notebookDocument/didChange", || notebook.change(&params, encoding)).unwrap_or_default();
            let job = guard("notebook analysis", || notebook.job(seq, &effective, gpu));
            (seq, notebook.edits.clone(), changed, job)
        };
        for cell in &changed.closed {
            self.state.cells.remove(cell);
        }
        for cell in &changed.edited {
            self.state.cells.insert(cell.clone(), uri.clone());
        }
        let job = match job {
            None => return self.publish_cells(&uri, changed.edited, &[], changed.closed).await,
            Some(Err(recalled)) => {
                self.state.analysed.notify_waiters();
                return self.publish_cells(&uri, changed.edited, &recalled, changed.closed).await;
            }
            Some(Ok(job)) => job,
        };
        match analyse_in_budget(job).await {
            Waited::InTime(outcome) => {
                let analysed = outcome.and_then(|outcome| self.install_notebook(&uri, seq, &counter, outcome));
                if let Some(cells) = analysed {
                    self.publish_cells(&uri, changed.edited, &cells, changed.closed).await;
                    tracing::debug!("notebook edit {seq}: published its analysis {:?} after it arrived", arrived.elapsed());
                }
            }
            Waited::Late(rx) => {
                // Past the budget: what the editor has now, then the analysis.
                self.publish_cells(&uri, changed.edited, &[], changed.closed).await;
                tracing::debug!("notebook edit {seq}: published the moved findings {:?} after it arrived", arrived.elapsed());
                let backend = crate::Backend { client: self.client.clone(), state: self.state.clone() };
                tokio::spawn(async move {
                    let analysed = rx.await.ok().and_then(|outcome| backend.install_notebook(&uri, seq, &counter, outcome));
                    if let Some(cells) = analysed {
                        backend.publish_cells(&uri, Vec::new(), &cells, Vec::new()).await;
                    }
                });
            }
        }
    }

    /// Takes an analysis's outcome for edit `seq` of the notebook at `uri`,
    /// if that edit is still its latest: returns the cells whose findings
    /// changed (`None`: nothing to take).
    fn install_notebook(&self, uri: &Uri, seq: u64, counter: &Arc<AtomicU64>, outcome: Outcome) -> Option<Vec<usize>> {
        if matches!(outcome, Outcome::Superseded) {
            return None;
        }
        let changed = {
            let mut notebook = self.state.notebooks.get_mut(uri)?;
            if !notebook.at_edit(seq, counter) {
                return None;
            }
            let changed = match outcome {
                Outcome::Done(doc, findings) => {
                    notebook.joined = doc;
                    guard("notebook findings", || notebook.distribute(&findings)).unwrap_or_default()
                }
                _ => Vec::new(),
            };
            notebook.exact = true;
            changed
        };
        self.state.analysed.notify_waiters();
        Some(changed)
    }

    pub(crate) async fn close_notebook(&self, params: DidCloseNotebookDocumentParams) {
        let removed = self.state.notebooks.remove(&params.notebook_document.uri);
        let mut cells: Vec<Uri> = match removed {
            Some((_, notebook)) => {
                notebook.edits.fetch_add(1, Ordering::AcqRel); // stops its analysis, if one is under way
                notebook.cells.into_iter().map(|c| c.uri).collect()
            }
            None => Vec::new(),
        };
        cells.extend(params.cell_text_documents.into_iter().map(|c| c.uri).filter(|u| !cells.contains(u)).collect::<Vec<_>>());
        for cell in &cells {
            self.state.cells.remove(cell);
        }
        if !self.state.pull.load(Ordering::Relaxed) {
            for cell in cells {
                self.client.publish_diagnostics(cell, Vec::new(), None).await;
            }
        }
    }

    /// `f` of the open notebook holding `cell`, and the cell's index in it.
    fn with_cell<R>(&self, cell: &Uri, f: impl FnOnce(&OpenNotebook, usize) -> R) -> Option<R> {
        let notebook_uri = self.state.cells.get(cell)?.clone();
        let notebook = self.state.notebooks.get(&notebook_uri)?;
        let i = notebook.cells.iter().position(|c| &c.uri == cell)?;
        Some(f(&notebook, i))
    }

    /// `f` of a notebook cell's text and findings (`None`: no open
    /// notebook has the cell; `Some(None)`: `f` failed, logged).
    pub(crate) fn in_cell<R>(&self, cell: &Uri, f: impl FnOnce(&Document, &[Finding]) -> R) -> Option<Option<R>> {
        self.with_cell(cell, |notebook, i| {
            let open = &notebook.cells[i];
            guard("notebook cell request", || f(&open.doc, &open.findings))
        })
    }

    /// The code actions on a cell: its findings' fixes and suppressions (as
    /// for a file; `source.fixAll` fixes that cell alone), a first cell for
    /// a zero-code-change mode (inserted by the client's command where it
    /// has one, else written at the top of the first code cell), and the
    /// notebook's fix-all, each cell's edits once. `None`: no open notebook
    /// has the cell, or the conversion failed (logged).
    pub(crate) fn cell_code_actions(&self, cell: &Uri, params: &CodeActionParams) -> Option<Vec<CodeActionOrCommand>> {
        let notebook_uri = self.state.cells.get(cell)?.clone();
        let mut notebook = self.state.notebooks.get_mut(&notebook_uri)?;
        let i = notebook.cells.iter().position(|c| &c.uri == cell)?;
        // A cell's tree is brought up to date only when asked for (the suppression reads its comments).
        notebook.cells[i].doc.reparse(&mut |_| false);
        let notebook = notebook.downgrade();
        let converter = self.converter();
        let insert_cell = self.state.insert_cell.load(Ordering::Relaxed);
        guard("notebook code actions", || {
            let open = &notebook.cells[i];
            let mut actions = converter.code_actions(cell, &open.doc, &open.findings, params);
            let only = params.context.only.as_ref();
            let wants = |kind: &str| {
                only.is_none_or(|kinds| kinds.iter().any(|k| kind == k.as_str() || kind.starts_with(&format!("{}.", k.as_str()))))
            };
            if wants(CodeActionKind::QUICKFIX.as_str()) {
                let (start, end) = (open.doc.offset(crate::convert::range_in(params.range).start, converter.encoding), open.doc.offset(crate::convert::range_in(params.range).end, converter.encoding));
                let mut offered: Vec<&str> = Vec::new();
                for f in open.findings.iter().filter(|f| f.range.start <= end && start <= f.range.end) {
                    let Some((fix, text)) = f.fix.as_ref().and_then(|x| Some((x, x.cell.as_deref()?))) else { continue };
                    if offered.contains(&text) {
                        continue;
                    }
                    offered.push(text);
                    let mut action = CodeAction {
                        title: fix.message.clone(),
                        kind: Some(CodeActionKind::QUICKFIX),
                        diagnostics: Some(converter.diagnostics(&open.doc, std::slice::from_ref(f))),
                        ..Default::default()
                    };
                    if insert_cell {
                        action.command = Some(Command {
                            title: fix.message.clone(),
                            command: INSERT_CELL.into(),
                            arguments: Some(vec![notebook_uri.as_str().into(), 0.into(), text.into()]),
                        });
                    } else {
                        // No notebook edit: the magic goes on the first line of the first code cell.
                        let Some(first) = notebook.cells.iter().find(|c| c.python()) else { continue };
                        let at = Position::new(0, 0);
                        let edit = TextEdit { range: Range::new(at, at), new_text: format!("{text}\n") };
                        action.edit = Some(WorkspaceEdit { changes: Some([(first.uri.clone(), vec![edit])].into_iter().collect()), ..Default::default() });
                    }
                    actions.push(CodeActionOrCommand::CodeAction(action));
                }
            }
            if only.is_some() && wants(NOTEBOOK_FIX_ALL_KIND) {
                let changes: std::collections::HashMap<Uri, Vec<TextEdit>> = notebook
                    .cells
                    .iter()
                    .map(|c| (c.uri.clone(), converter.safe_fix_edits(&c.doc, &c.findings)))
                    .filter(|(_, edits)| !edits.is_empty())
                    .collect();
                if !changes.is_empty() {
                    actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                        title: "gpulens: apply all safe fixes in the notebook".into(),
                        kind: Some(CodeActionKind::new(NOTEBOOK_FIX_ALL_KIND)),
                        edit: Some(WorkspaceEdit { changes: Some(changes), ..Default::default() }),
                        ..Default::default()
                    }));
                }
            }
            actions
        })
    }

    /// Whether `uri` is a cell of an open notebook.
    pub(crate) fn is_cell(&self, uri: &Uri) -> bool {
        self.state.cells.contains_key(uri)
    }

    /// The diagnostics of a notebook cell, and its version.
    pub(crate) fn cell_diagnostics(&self, cell: &Uri) -> Option<(Vec<Diagnostic>, i32)> {
        self.with_cell(cell, |notebook, i| {
            let open = &notebook.cells[i];
            Some((self.diagnostics_of(open)?, open.version))
        })?
    }

    /// A pull for a cell's diagnostics: answered for the current text (it
    /// waits a little for the analysis of the latest edit), `unchanged`
    /// where the cell's findings are those of `previous`.
    pub(crate) async fn cell_report(&self, cell: &Uri, previous: Option<String>) -> Option<DocumentDiagnosticReportResult> {
        let deadline = tokio::time::Instant::now() + PULL_WAIT;
        loop {
            let analysed = self.state.analysed.notified();
            tokio::pin!(analysed);
            analysed.as_mut().enable();
            let exact = self.with_cell(cell, |notebook, _| notebook.exact)?;
            if exact || tokio::time::timeout_at(deadline, analysed).await.is_err() {
                break;
            }
        }
        self.with_cell(cell, |notebook, i| {
            let open = &notebook.cells[i];
            let result_id = format!("cell{}", open.generation);
            if previous.as_deref() == Some(result_id.as_str()) {
                return Some(DocumentDiagnosticReport::Unchanged(RelatedUnchangedDocumentDiagnosticReport {
                    related_documents: None,
                    unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport { result_id },
                }));
            }
            let items = self.diagnostics_of(open)?;
            Some(DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
                related_documents: None,
                full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id: Some(result_id), items },
            }))
        })?
        .map(DocumentDiagnosticReportResult::Report)
    }

    /// New settings: every open notebook analysed again under them (what
    /// was remembered is forgotten; an analysis under way stops).
    pub(crate) fn reconfigure_notebooks(&self) {
        let (effective, gpu) = (self.effective(), self.state.gpu.read().unwrap().clone());
        for mut notebook in self.state.notebooks.iter_mut() {
            notebook.edits.fetch_add(1, Ordering::AcqRel);
            notebook.memory = Arc::default();
            notebook.analyse(&effective.settings, &gpu);
        }
        self.state.analysed.notify_waiters();
    }

    /// A cell's findings as diagnostics (`None`: the conversion failed, logged).
    fn diagnostics_of(&self, cell: &OpenCell) -> Option<Vec<Diagnostic>> {
        guard("diagnostics", || self.converter().diagnostics(&cell.doc, &cell.findings))
    }

    /// Publishes the diagnostics of the cells `first` and then of the cells
    /// at `changed` of the notebook at `uri`, each once, and clears those of
    /// `closed` cells no longer in it (all pushed where the client does not
    /// pull; a client that pulls is asked to pull again).
    async fn publish_cells(&self, uri: &Uri, first: Vec<Uri>, changed: &[usize], closed: Vec<Uri>) {
        // A cell whose findings changed while its text did not (a name an
        // earlier cell defines; a mode switched on): the editor asks for its
        // inlay hints only when told to.
        let elsewhere = self.state.notebooks.get(uri).is_some_and(|nb| changed.iter().any(|&i| nb.cells.get(i).is_some_and(|c| !first.contains(&c.uri))));
        if elsewhere && self.state.inlay_refresh.load(Ordering::Relaxed) && self.effective().inlay_hints {
            let client = self.client.clone();
            tokio::spawn(async move {
                let _ = client.inlay_hint_refresh().await;
            });
        }
        if self.state.pull.load(Ordering::Relaxed) {
            if self.state.refresh.load(Ordering::Relaxed) {
                // (Never awaited in a handler: spawned.)
                let client = self.client.clone();
                tokio::spawn(async move {
                    let _ = client.workspace_diagnostic_refresh().await;
                });
            }
            return;
        }
        let payload: Vec<(Uri, Vec<Diagnostic>, i32)> = match self.state.notebooks.get(uri) {
            Some(notebook) => {
                let mut order: Vec<usize> = first.iter().filter_map(|u| notebook.cells.iter().position(|c| &c.uri == u)).collect();
                for &i in changed {
                    if !order.contains(&i) {
                        order.push(i);
                    }
                }
                order
                    .into_iter()
                    .filter_map(|i| notebook.cells.get(i))
                    .filter_map(|c| Some((c.uri.clone(), self.diagnostics_of(c)?, c.version)))
                    .collect()
            }
            None => Vec::new(),
        };
        for (cell, diagnostics, version) in payload {
            self.client.publish_diagnostics(cell, diagnostics, Some(version)).await;
        }
        for cell in closed {
            self.client.publish_diagnostics(cell, Vec::new(), None).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(i: usize, kind: NotebookCellKind, text: &str) -> (NotebookCell, TextDocumentItem) {
        let uri: Uri = format!("vscode-notebook-cell:/nb.ipynb#W{i}").parse().unwrap();
        (
            NotebookCell { kind, document: uri.clone(), metadata: None, execution_summary: None },
            TextDocumentItem { uri, language_id: "python".into(), version: 1, text: text.into() },
        )
    }

    #[test]
    fn findings_go_to_the_cells_they_are_in() {
        let cells = [
            cell(0, NotebookCellKind::MARKUP, "# Sales\n"),
            cell(1, NotebookCellKind::CODE, "%matplotlib inline\nimport pandas as pd\ndf = pd.read_parquet('s.parquet')\n"),
            cell(2, NotebookCellKind::CODE, "!ls data\ntotals = df.groupby('store').agg({'sales': 'sum'})\n"),
        ];
        let params = DidOpenNotebookDocumentParams {
            notebook_document: NotebookDocument {
                uri: "file:///nb.ipynb".parse().unwrap(),
                notebook_type: "jupyter-notebook".into(),
                version: 1,
                metadata: None,
                cells: cells.iter().map(|c| c.0.clone()).collect(),
            },
            cell_text_documents: cells.iter().map(|c| c.1.clone()).collect(),
        };
        let mut nb = OpenNotebook::open(&params);
        nb.analyse(&Settings::default(), &GpuProfile::none());
        let codes: Vec<Vec<String>> = nb.cells.iter().map(|c| c.findings.iter().map(|f| f.code.to_string()).collect()).collect();
        assert_eq!(codes, [vec![], vec!["CUDF001".to_string()], vec!["CUDF002".to_string()]]);
        assert_eq!(nb.cells[2].findings[0].range.start, "!ls data\ntotals = ".len());
    }
}

/// The joined text kept up to date edit by edit is the joined text of the
/// cells as they end up, and analysing it gives each cell what a notebook
/// opened with those cells gets.
#[cfg(test)]
mod incremental {
    use super::*;
    use proptest::prelude::*;

    const CELLS: &[(bool, &str)] = &[
        (true, "import numpy as np\nimport pandas as pd\n"),
        (true, "%matplotlib inline\ndf = pd.read_parquet('s.parquet')\n"),
        (false, "# Notes é\n"),
        (true, "x = np.random.rand(4096, 4096)\ny = np.fft.fft(x)\n"),
        (true, "t = df.groupby('a').agg({'b': 'sum'})"),
    ];

    const INSERTS: &[&str] =
        &["", "x", "\n", "%%bash\n", "%%time\n", "%time ", "    ", "df", "(", "é", "!ls\n", "def f():\n    ", "pd.read_csv('a')\n", "?"];

    fn uri(i: usize) -> Uri {
        format!("vscode-notebook-cell:/nb.ipynb#W{i}").parse().unwrap()
    }

    fn opened(cells: &[(bool, String)]) -> OpenNotebook {
        let params = DidOpenNotebookDocumentParams {
            notebook_document: NotebookDocument {
                uri: "file:///nb.ipynb".parse().unwrap(),
                notebook_type: "jupyter-notebook".into(),
                version: 1,
                metadata: None,
                cells: cells
                    .iter()
                    .enumerate()
                    .map(|(i, (code, _))| NotebookCell {
                        kind: if *code { NotebookCellKind::CODE } else { NotebookCellKind::MARKUP },
                        document: uri(i),
                        metadata: None,
                        execution_summary: None,
                    })
                    .collect(),
            },
            cell_text_documents: cells
                .iter()
                .enumerate()
                .map(|(i, (_, text))| TextDocumentItem {
                    uri: uri(i),
                    // (A kind switched keeps the cell's language, as in an editor.)
                    language_id: if CELLS[i].0 { "python" } else { "markdown" }.into(),
                    version: 1,
                    text: text.clone(),
                })
                .collect(),
        };
        OpenNotebook::open(&params)
    }

    /// The UTF-16 position of byte `at` of `text`.
    fn position(text: &str, at: usize) -> Position {
        let before = &text[..at];
        let line = before.matches('\n').count();
        let column = before.rsplit('\n').next().unwrap_or("").encode_utf16().count();
        Position::new(line as u32, column as u32)
    }

    fn floor(text: &str, mut at: usize) -> usize {
        at = at.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    }

    /// An edit: which cell, where (per mille of its length), how many bytes
    /// deleted, what is inserted; or (`kind`) the cell's kind switched.
    type Edit = (usize, usize, usize, usize, bool);

    fn edit_strategy() -> impl Strategy<Value = Edit> {
        (0..CELLS.len(), 0..=1000usize, 0..6usize, 0..INSERTS.len(), proptest::bool::weighted(0.05))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
        #[test]
        fn edits_give_what_opening_the_result_gives(edits in proptest::collection::vec(edit_strategy(), 1..12)) {
            let mut cells: Vec<(bool, String)> = CELLS.iter().map(|(c, t)| (*c, t.to_string())).collect();
            let mut nb = opened(&cells);
            nb.analyse(&Settings::default(), &GpuProfile::none());
            for (n, (cell, place, delete, insert, switch)) in edits.into_iter().enumerate() {
                let version = n as i32 + 2;
                let mut change = NotebookDocumentChangeEvent { metadata: None, cells: None };
                if switch {
                    cells[cell].0 = !cells[cell].0;
                    let kind = if cells[cell].0 { NotebookCellKind::CODE } else { NotebookCellKind::MARKUP };
                    change.cells = Some(NotebookDocumentCellChange {
                        structure: None,
                        data: Some(vec![NotebookCell { kind, document: uri(cell), metadata: None, execution_summary: None }]),
                        text_content: None,
                    });
                } else {
                    let text = &cells[cell].1;
                    let start = floor(text, text.len() * place / 1000);
                    let end = floor(text, start + delete);
                    let range = Range::new(position(text, start), position(text, end));
                    cells[cell].1.replace_range(start..end, INSERTS[insert]);
                    change.cells = Some(NotebookDocumentCellChange {
                        structure: None,
                        data: None,
                        text_content: Some(vec![NotebookDocumentChangeTextContent {
                            document: VersionedTextDocumentIdentifier { uri: uri(cell), version },
                            changes: vec![TextDocumentContentChangeEvent { range: Some(range), range_length: None, text: INSERTS[insert].into() }],
                        }]),
                    });
                }
                let params = DidChangeNotebookDocumentParams {
                    notebook_document: VersionedNotebookDocumentIdentifier { uri: "file:///nb.ipynb".parse().unwrap(), version },
                    change,
                };
                nb.change(&params, PositionEncoding::Utf16);
                if n % 3 == 0 {
                    nb.analyse(&Settings::default(), &GpuProfile::none());
                }
            }
            let mut fresh = opened(&cells);
            let (text, parts) = joined_text(&fresh.cells);
            prop_assert_eq!(nb.joined.text(), text);
            let places = |parts: &[Part]| parts.iter().map(|p| (p.cell, p.start, p.first_line, p.len)).collect::<Vec<_>>();
            prop_assert_eq!(places(&nb.parts), places(&parts));
            nb.analyse(&Settings::default(), &GpuProfile::none());
            fresh.analyse(&Settings::default(), &GpuProfile::none());
            for (i, (a, b)) in nb.cells.iter().zip(&fresh.cells).enumerate() {
                prop_assert_eq!(&a.findings, &b.findings, "cell {}", i);
            }
        }
    }
}
