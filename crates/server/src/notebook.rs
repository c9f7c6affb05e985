//! Notebooks as editors sync them (LSP 3.17 `notebookDocument/*`): the
//! cells, each a text document of its own (`vscode-notebook-cell:` URIs),
//! analysed together as one module — the Python code cells in order, IPython
//! syntax masked (see `gpulens_syntax::notebook`) — and the findings handed
//! back to the cells they fall in, in the cells' own positions.

use gpulens_diagnostics::{Finding, Settings};
use gpulens_gpu::GpuProfile;
use gpulens_syntax::notebook::Notebook;
use gpulens_syntax::{Change, Document, PositionEncoding};
use std::sync::atomic::Ordering;

use tower_lsp_server::ls_types::*;

use crate::guard;

/// An open notebook: its cells in order.
pub struct OpenNotebook {
    pub version: i32,
    pub cells: Vec<OpenCell>,
}

/// A cell of an open notebook.
pub struct OpenCell {
    pub uri: Uri,
    pub code: bool,
    pub language: String,
    pub doc: Document,
    /// Its findings, in its own offsets (fixes that reach other cells left out).
    pub findings: Vec<Finding>,
}

impl OpenCell {
    /// Whether the cell is analysed: Python code.
    fn python(&self) -> bool {
        self.code && matches!(self.language.as_str(), "python" | "ipython" | "")
    }
}

impl OpenNotebook {
    /// The notebook as `notebookDocument/didOpen` gives it.
    pub fn open(params: &DidOpenNotebookDocumentParams) -> OpenNotebook {
        let texts: std::collections::HashMap<&Uri, &TextDocumentItem> = params.cell_text_documents.iter().map(|t| (&t.uri, t)).collect();
        let cells = params.notebook_document.cells.iter().map(|cell| new_cell(cell, texts.get(&cell.document).copied())).collect();
        OpenNotebook { version: params.notebook_document.version, cells }
    }

    /// Applies `notebookDocument/didChange`: cells added, removed or moved,
    /// their kinds, and their texts' edits. Returns the URIs of the cells
    /// that left the notebook (their diagnostics are to be cleared).
    pub fn change(&mut self, params: &DidChangeNotebookDocumentParams, encoding: PositionEncoding) -> Vec<Uri> {
        self.version = params.notebook_document.version;
        let mut closed = Vec::new();
        let Some(cells) = &params.change.cells else { return closed };
        if let Some(structure) = &cells.structure {
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
            self.cells.splice(start..start, added);
            closed.extend(removed.into_iter().map(|c| c.uri));
            for gone in structure.did_close.iter().flatten() {
                if !self.cells.iter().any(|c| c.uri == gone.uri) && !closed.contains(&gone.uri) {
                    closed.push(gone.uri.clone());
                }
            }
        }
        for cell in cells.data.iter().flatten() {
            if let Some(open) = self.cells.iter_mut().find(|c| c.uri == cell.document) {
                open.code = cell.kind == NotebookCellKind::CODE;
            }
        }
        for content in cells.text_content.iter().flatten() {
            let Some(open) = self.cells.iter_mut().find(|c| c.uri == content.document.uri) else {
                tracing::warn!("notebook change for cell {} which is not in it: ignored", content.document.uri.as_str());
                continue;
            };
            let changes: Vec<Change> =
                content.changes.iter().map(|c| Change { range: c.range.map(crate::convert::range_in), text: c.text.clone() }).collect();
            if crate::guard("notebook cell edit", || open.doc.edit(&changes, encoding)).is_none() {
                // A bad edit: the cell's text as it was; the next full sync repairs it.
                tracing::warn!("notebook cell {}: an edit could not be applied", content.document.uri.as_str());
            }
        }
        closed
    }

    /// Analyses the Python cells together and gives each cell its findings.
    pub fn analyse(&mut self, settings: &Settings, gpu: &GpuProfile) {
        let texts: Vec<String> = self.cells.iter().map(|c| c.doc.text()).collect();
        let joined = Notebook::from_cells(
            self.cells.iter().zip(&texts).enumerate().filter(|(_, (c, _))| c.python()).map(|(i, (_, t))| (i, t.as_str())),
        );
        let settings = Settings { notebook: true, ..settings.clone() };
        let findings = gpulens_diagnostics::check_text_in(&joined.python, &settings, gpu, None, true);
        for cell in &mut self.cells {
            cell.findings.clear();
        }
        for mut finding in findings {
            let Some(part) = joined.part_at(finding.range.start).copied() else { continue };
            let local = |r: &std::ops::Range<usize>| {
                (r.start >= part.start && r.end <= part.start + part.len).then(|| r.start - part.start..r.end - part.start)
            };
            let Some(range) = local(&finding.range) else { continue };
            finding.range = range;
            // A fix is offered in a cell only when all its edits are in it.
            if let Some(fix) = finding.fix.as_mut() {
                let moved: Option<Vec<std::ops::Range<usize>>> = fix.edits.iter().map(|e| local(&e.range)).collect();
                match moved {
                    Some(ranges) => fix.edits.iter_mut().zip(ranges).for_each(|(e, r)| e.range = r),
                    None => finding.fix = None,
                }
            }
            self.cells[part.cell].findings.push(finding);
        }
    }
}

fn new_cell(cell: &NotebookCell, text: Option<&TextDocumentItem>) -> OpenCell {
    OpenCell {
        uri: cell.document.clone(),
        code: cell.kind == NotebookCellKind::CODE,
        language: text.map(|t| t.language_id.to_ascii_lowercase()).unwrap_or_default(),
        doc: Document::new(text.map_or("", |t| t.text.as_str())),
        findings: Vec::new(),
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
        if let Some(notebook) = opened {
            self.state.notebooks.insert(uri.clone(), notebook);
            self.publish_notebook(&uri, Vec::new()).await;
        }
    }

    pub(crate) async fn change_notebook(&self, params: DidChangeNotebookDocumentParams) {
        let uri = params.notebook_document.uri.clone();
        let (encoding, effective) = (self.encoding(), self.effective());
        let gpu = self.state.gpu.read().unwrap().clone();
        let closed = {
            let Some(mut notebook) = self.state.notebooks.get_mut(&uri) else {
                tracing::warn!("notebookDocument/didChange for {} which is not open: ignored", uri.as_str());
                return;
            };
            guard("notebookDocument/didChange", || {
                let closed = notebook.change(&params, encoding);
                notebook.analyse(&effective.settings, &gpu);
                closed
            })
            .unwrap_or_default()
        };
        self.publish_notebook(&uri, closed).await;
    }

    pub(crate) async fn close_notebook(&self, params: DidCloseNotebookDocumentParams) {
        let removed = self.state.notebooks.remove(&params.notebook_document.uri);
        let mut cells: Vec<Uri> = removed.map(|(_, nb)| nb.cells.into_iter().map(|c| c.uri).collect()).unwrap_or_default();
        cells.extend(params.cell_text_documents.into_iter().map(|c| c.uri).filter(|u| !cells.contains(u)).collect::<Vec<_>>());
        if !self.state.pull.load(Ordering::Relaxed) {
            for cell in cells {
                self.client.publish_diagnostics(cell, Vec::new(), None).await;
            }
        }
    }

    /// `f` of a notebook cell's text and findings (`None`: no open
    /// notebook has the cell; `Some(None)`: `f` failed, logged).
    pub(crate) fn in_cell<R>(&self, cell: &Uri, f: impl FnOnce(&Document, &[Finding]) -> R) -> Option<Option<R>> {
        let notebook = self.state.notebooks.iter().find(|nb| nb.cells.iter().any(|c| &c.uri == cell))?;
        let open = notebook.cells.iter().find(|c| &c.uri == cell)?;
        Some(guard("notebook cell request", || f(&open.doc, &open.findings)))
    }

    /// The diagnostics of a notebook cell, and its notebook's version.
    pub(crate) fn cell_diagnostics(&self, cell: &Uri) -> Option<(Vec<Diagnostic>, i32)> {
        self.state.notebooks.iter().find_map(|nb| {
            let open = nb.cells.iter().find(|c| &c.uri == cell)?;
            Some((self.diagnostics_of(open)?, nb.version))
        })
    }

    /// A cell's findings as diagnostics (`None`: the conversion failed, logged).
    fn diagnostics_of(&self, cell: &OpenCell) -> Option<Vec<Diagnostic>> {
        guard("diagnostics", || self.converter().diagnostics(&cell.doc, &cell.findings))
    }

    /// Publishes every cell's diagnostics of the notebook at `uri` (pushed
    /// where the client does not pull), and clears those of `closed` cells.
    async fn publish_notebook(&self, uri: &Uri, closed: Vec<Uri>) {
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
            Some(nb) => nb.cells.iter().filter_map(|c| Some((c.uri.clone(), self.diagnostics_of(c)?, nb.version))).collect(),
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
