//! `gpulens serve`: the language server.
//!
//! Open documents live in a `DashMap` of [`OpenDoc`]s: a rope + tree
//! (`gpulens_syntax::Document`) and the findings of its current text. Every
//! change is applied to the text inside the notification handler, before
//! its first `.await`, so handlers see edits in order; the reparse and the
//! analysis then run on a blocking thread (see [`Backend::did_change`]).
//! This is the only crate that knows LSP types; rules come from
//! `gpulens-diagnostics` as plain findings.

mod analysis;
mod convert;
mod framing;
mod notebook;
mod profiling;
mod settings;
pub mod workspace;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use dashmap::DashMap;
use gpulens_diagnostics::config::Layer;
use gpulens_diagnostics::{check_incremental, shift_findings, Cache, Finding};
use gpulens_gpu::GpuProfile;
use gpulens_syntax::{Change, Document, PositionEncoding};
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use crate::analysis::*;
use crate::convert::{Converter, FIX_ALL_KIND};
use crate::settings::{EditorSettings, Effective};

pub const COMMAND_APPLY_FIX: &str = "gpulens.applyFix";
pub const COMMAND_GPU_PROFILE: &str = "gpulens.gpuProfile";

struct State {
    docs: DashMap<Uri, OpenDoc>,
    /// Open notebooks (LSP notebook sync), by the notebook's URI.
    notebooks: DashMap<Uri, notebook::OpenNotebook>,
    /// The notebook each open cell is in, by the cell's URI.
    cells: DashMap<Uri, Uri>,
    encoding: RwLock<PositionEncoding>,
    /// The client pulls diagnostics (`textDocument/diagnostic`); otherwise we push.
    pull: AtomicBool,
    /// The client accepts `workspace/diagnostic/refresh`.
    refresh: AtomicBool,
    /// The client accepts `workspace/inlayHint/refresh`.
    inlay_refresh: AtomicBool,
    /// The client runs the command that inserts a notebook cell (see
    /// `notebook::INSERT_CELL`), announced in its experimental capabilities.
    insert_cell: AtomicBool,
    editor: RwLock<EditorSettings>,
    project: RwLock<Option<Layer>>,
    project_file: RwLock<Option<PathBuf>>,
    /// The workspace folder, whose Python files the project index reads.
    root: RwLock<Option<PathBuf>>,
    /// What the workspace's functions declare they return (see `workspace`):
    /// empty until the background scan after `initialized` is done.
    index: RwLock<Arc<gpulens_diagnostics::project::ProjectIndex>>,
    /// The modules whose callers elsewhere the index was last read for (the
    /// open documents'); a document of another module opened reads it again.
    indexed_for: RwLock<std::collections::HashSet<String>>,
    /// A read of the project index is under way (see `rescan`).
    scanning: AtomicBool,
    /// Another read was asked for while one was under way.
    rescan_again: AtomicBool,
    /// How many saved files `reindex` has put into the index: a read begun
    /// before one of them holds an older text of it, and is read again.
    reindexed: AtomicU64,
    effective: RwLock<Arc<Effective>>,
    gpu: RwLock<Arc<GpuProfile>>,
    /// What NVML reported, once the background probe has run.
    attached: RwLock<Option<GpuProfile>>,
    generations: AtomicU64,
    /// Woken whenever an analysis of a document's current text is in.
    analysed: tokio::sync::Notify,
    watch_files: AtomicBool,
    /// `shutdown` was received: `exit` then ends the process with status 0, not 1.
    shut_down: Arc<AtomicBool>,
    /// The `profile` setting's file, as last read.
    profile: profiling::Loaded,
}

pub struct Backend {
    client: Client,
    state: Arc<State>,
}

/// Runs `f`, turning a panic into `None` (logged), so one bad input never
/// takes the server down.
fn guard<T>(what: &str, f: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!("internal error in {what}: {message}");
            None
        }
    }
}

fn internal(what: &str) -> Error {
    let mut e = Error::internal_error();
    e.message = format!("gpulens: internal error in {what} (see the server log)").into();
    e
}

fn unknown_document(uri: &Uri) -> Error {
    Error::invalid_params(format!("gpulens: document {} is not open", uri.as_str()))
}

impl Backend {
    pub fn new(client: Client) -> Self {
        Backend::with_shutdown_flag(client, Arc::default())
    }

    /// A backend that sets `shut_down` when the client sends `shutdown`.
    pub fn with_shutdown_flag(client: Client, shut_down: Arc<AtomicBool>) -> Self {
        let editor = EditorSettings::default();
        let effective = Arc::new(Effective::new(None, &editor));
        Backend {
            client,
            state: Arc::new(State {
                docs: DashMap::new(),
                notebooks: DashMap::new(),
                cells: DashMap::new(),
                encoding: RwLock::new(PositionEncoding::Utf16),
                pull: AtomicBool::new(false),
                refresh: AtomicBool::new(false),
                insert_cell: AtomicBool::new(false),
                inlay_refresh: AtomicBool::new(false),
                editor: RwLock::new(editor),
                project: RwLock::new(None),
                project_file: RwLock::new(None),
                root: RwLock::new(None),
                index: RwLock::new(Arc::default()),
                indexed_for: RwLock::new(std::collections::HashSet::new()),
                scanning: AtomicBool::new(false),
                rescan_again: AtomicBool::new(false),
                reindexed: AtomicU64::new(0),
                effective: RwLock::new(effective),
                gpu: RwLock::new(Arc::new(GpuProfile::none())),
                attached: RwLock::new(None),
                generations: AtomicU64::new(1),
                analysed: tokio::sync::Notify::new(),
                watch_files: AtomicBool::new(false),
                shut_down,
                profile: profiling::Loaded::default(),
            }),
        }
    }

    fn encoding(&self) -> PositionEncoding {
        *self.state.encoding.read().unwrap()
    }

    fn effective(&self) -> Arc<Effective> {
        self.state.effective.read().unwrap().clone()
    }

    fn converter(&self) -> Converter {
        Converter { encoding: self.encoding() }
    }

    /// Where the document at `uri` sits in the workspace's project index.
    fn place_for(&self, uri: &Uri) -> Option<gpulens_diagnostics::project::Place> {
        let index = self.state.index.read().unwrap().clone();
        if index.is_empty() {
            return None;
        }
        let path = uri.to_file_path()?;
        workspace::place_of(&index, &path)
    }

    /// Re-reads what the file at `uri` declares, and what it passes to the
    /// other modules' functions, into the project index (`text`: its
    /// current text). Returns whether the index changed (then every open
    /// document is re-analysed: one file's declarations and calls can
    /// change another's findings), and whether what it declares changed
    /// (then what every file passes is read again: an argument may be a
    /// value the file's functions return).
    fn reindex(&self, uri: &Uri, text: &str) -> (bool, bool) {
        let Some(path) = uri.to_file_path() else { return (false, false) };
        let Some((module, package)) = workspace::module_of(&path) else { return (false, false) };
        let summary = workspace::summarize_bytes(&module, text.as_bytes());
        let mut index = self.state.index.write().unwrap();
        // (Under the index's lock, as a read checks it: see `rescan`.)
        self.state.reindexed.fetch_add(1, Ordering::AcqRel);
        let mut updated = (**index).clone();
        updated.replace_module(&module, summary);
        let redeclared = updated.declared_digest() != index.declared_digest();
        let place = gpulens_diagnostics::project::Place { index: Arc::new(updated.clone()), module: module.clone(), package };
        let passes = place.passes(text);
        updated.set_passes([(module, passes)]);
        if updated.digest() == index.digest() {
            return (false, redeclared);
        }
        *index = Arc::new(updated);
        (true, redeclared)
    }

    /// Reads the project index of the workspace folder again, off the
    /// path of the edits (the open documents' texts in place of the files
    /// on disk), then analyses the open documents again with it.
    fn rescan(&self) {
        if self.state.root.read().unwrap().is_none() {
            return;
        }
        // One read at a time: asked for while one is under way (documents
        // opened one after another), it is read once more after it, with
        // the documents open then.
        self.state.rescan_again.store(true, Ordering::Release);
        if self.state.scanning.swap(true, Ordering::AcqRel) {
            return;
        }
        let client = self.client.clone();
        let state = self.state.clone();
        tokio::spawn(async move {
            loop {
                state.rescan_again.store(false, Ordering::Release);
                let Some(root) = state.root.read().unwrap().clone() else { break };
                let reindexed = state.reindexed.load(Ordering::Acquire);
                let open: std::collections::HashMap<PathBuf, String> =
                    state.docs.iter().filter_map(|e| Some((e.key().to_file_path()?.into_owned(), e.doc.text().to_string()))).collect();
                // (What other modules pass is read only into the open documents' modules.)
                let wanted: std::collections::HashSet<String> = open.keys().filter_map(|p| workspace::module_of(p)).map(|(m, _)| m).collect();
                state.indexed_for.write().unwrap().extend(wanted.iter().cloned());
                let started = std::time::Instant::now();
                let scanned = tokio::task::spawn_blocking(move || {
                    analysis::index_pool().install(|| workspace::scan(&root, &|path| open.get(path).cloned(), Some(&wanted)))
                });
                let Ok(index) = scanned.await else { break };
                tracing::info!(
                    "project index: {} functions and type aliases declare what they hold, other modules pass known values to {} functions ({} bytes), read in {:?}",
                    index.len(),
                    index.receiving_len(),
                    index.memory_bytes(),
                    started.elapsed()
                );
                let replaced = {
                    let mut current = state.index.write().unwrap();
                    // A file saved while this read was under way is in the
                    // index as saved, and here as it was before: read again
                    // (a read that finishes late must not bring back an old text).
                    if state.reindexed.load(Ordering::Acquire) != reindexed {
                        state.rescan_again.store(true, Ordering::Release);
                        false
                    } else if index.digest() != current.digest() {
                        *current = Arc::new(index);
                        true
                    } else {
                        false
                    }
                };
                if replaced {
                    let backend = Backend { client: client.clone(), state: state.clone() };
                    let uris = backend.reconfigure();
                    backend.refresh_all(uris);
                }
                if state.rescan_again.load(Ordering::Acquire) {
                    continue;
                }
                state.scanning.store(false, Ordering::Release);
                // (Asked for between the check and the release: read again,
                // unless that request started its own read.)
                if !state.rescan_again.load(Ordering::Acquire) || state.scanning.swap(true, Ordering::AcqRel) {
                    return;
                }
            }
            state.scanning.store(false, Ordering::Release);
        });
    }

    fn next_generation(&self) -> u64 {
        self.state.generations.fetch_add(1, Ordering::Relaxed)
    }

    /// Runs the rules on a document's current text (reparsing it first if an
    /// edit is not yet parsed).
    fn analyse(&self, doc: &mut Document, cache: &mut Cache) -> Arc<Vec<Finding>> {
        let effective = self.effective();
        let gpu = self.state.gpu.read().unwrap().clone();
        let started = std::time::Instant::now();
        let findings = guard("analysis", || {
            doc.reparse(&mut |_| false);
            let text = doc.text();
            check_incremental(&text, doc.tree(), &effective.settings, &gpu, cache)
        });
        tracing::debug!("analysis took {:?}, reused {:?} definitions", started.elapsed(), cache.last_reuse);
        if findings.is_none() {
            *cache = Cache::default(); // it may be half-updated
        }
        Arc::new(findings.unwrap_or_default())
    }

    /// Whether the document's latest edit is still edit `seq` of `counter`'s document.
    fn is_current(&self, uri: &Uri, seq: u64, counter: &Arc<AtomicU64>) -> bool {
        self.state.docs.get(uri).is_some_and(|e| e.at_edit(seq, counter))
    }

    /// Whether the document's text is still that of `version` and its
    /// findings are an analysis of it made by someone else (new settings
    /// re-analyse every document, and stop the analysis of an edit under way).
    fn analysed_elsewhere(&self, uri: &Uri, version: i32, counter: &Arc<AtomicU64>) -> bool {
        self.state.docs.get(uri).is_some_and(|e| Arc::ptr_eq(&e.edits, counter) && e.version == version && e.exact)
    }

    /// Takes an analysis's outcome for edit `seq`, if that edit is still the
    /// latest. Returns whether it was (and so there is something to publish).
    fn install(&self, uri: &Uri, seq: u64, counter: &Arc<AtomicU64>, outcome: Outcome) -> bool {
        if matches!(outcome, Outcome::Superseded) {
            return false;
        }
        let current = {
            let Some(mut entry) = self.state.docs.get_mut(uri) else { return false };
            if !entry.at_edit(seq, counter) {
                return false;
            }
            if let Outcome::Done(doc, findings) = outcome {
                entry.doc = doc;
                if findings != entry.findings {
                    entry.findings = findings;
                    entry.generation = self.next_generation();
                }
            }
            entry.exact = true;
            true
        };
        self.state.analysed.notify_waiters();
        current
    }

    /// The diagnostics to publish for `uri`, when we push them.
    fn push_payload(&self, uri: &Uri) -> Option<(Vec<Diagnostic>, i32)> {
        if self.state.pull.load(Ordering::Relaxed) {
            return None;
        }
        let entry = self.state.docs.get(uri)?;
        let mut diagnostics = guard("diagnostics", || self.converter().diagnostics(&entry.doc, &entry.findings))?;
        self.apply_profile(uri, &entry.doc, &entry.findings, &mut diagnostics);
        Some((diagnostics, entry.version))
    }

    async fn publish(&self, uri: Uri) {
        if let Some((diagnostics, version)) = self.push_payload(&uri) {
            self.client.publish_diagnostics(uri, diagnostics, Some(version)).await;
        }
    }

    /// Settings changed: recompute what depends on them and re-analyse every open document.
    fn reconfigure(&self) -> Vec<Uri> {
        let editor = self.state.editor.read().unwrap().clone();
        let project = self.state.project.read().unwrap().clone();
        let effective = Arc::new(Effective::new(project.as_ref(), &editor));
        // The GPU: a target named in the settings, else what NVML found, else none.
        let attached = self.state.attached.read().unwrap().clone().unwrap_or_default();
        let gpu = match effective.target_gpu.as_deref() {
            Some(name) => GpuProfile::target(name).unwrap_or_else(|e| {
                self.warn(format!("gpulens: target GPU: {e}"));
                attached
            }),
            None => attached,
        };
        *self.state.gpu.write().unwrap() = Arc::new(gpu);
        *self.state.effective.write().unwrap() = effective;
        let uris: Vec<Uri> = self.state.docs.iter().map(|e| e.key().clone()).collect();
        for uri in &uris {
            if let Some(mut entry) = self.state.docs.get_mut(uri) {
                let entry = &mut *entry;
                // An analysis under way used the old settings: stop it.
                entry.edits.fetch_add(1, Ordering::AcqRel);
                let memory = entry.memory.clone();
                let mut cache = memory.cache();
                cache.set_place(self.place_for(uri));
                memory.recent().clear(); // found under the old settings
                let findings = self.analyse(&mut entry.doc, &mut cache);
                drop(cache);
                memory.recent().put(entry.doc.text_hash(), findings.clone());
                entry.exact = true;
                // Same findings, same result id: a pull answers `unchanged`
                // (the background NVML probe often changes nothing).
                if findings != entry.findings {
                    entry.findings = findings;
                    entry.generation = self.next_generation();
                }
            }
        }
        self.state.analysed.notify_waiters();
        // Open notebooks, under the new settings too.
        self.reconfigure_notebooks();
        uris
    }

    /// Tells the client diagnostics changed: push them, or ask it to pull again.
    fn refresh_all(&self, uris: Vec<Uri>) {
        let client = self.client.clone();
        if self.state.pull.load(Ordering::Relaxed) {
            if !self.state.refresh.load(Ordering::Relaxed) {
                return; // the client pulls again on its own schedule
            }
            // Never await a client request in a handler: spawn it.
            tokio::spawn(async move {
                let _ = client.workspace_diagnostic_refresh().await;
            });
        } else {
            let mut payloads: Vec<_> = uris.into_iter().filter_map(|u| self.push_payload(&u).map(|p| (u, p))).collect();
            let cells: Vec<Uri> = self.state.notebooks.iter().flat_map(|nb| nb.cells.iter().map(|c| c.uri.clone()).collect::<Vec<_>>()).collect();
            payloads.extend(cells.into_iter().filter_map(|u| self.cell_diagnostics(&u).map(|p| (u, p))));
            tokio::spawn(async move {
                for (uri, (diagnostics, version)) in payloads {
                    client.publish_diagnostics(uri, diagnostics, Some(version)).await;
                }
            });
        }
    }

    fn load_project(&self) -> Option<String> {
        let path = self.state.project_file.read().unwrap().clone()?;
        let (config, problem) = match std::fs::read_to_string(&path) {
            Ok(text) => match Layer::from_pyproject(&text) {
                Ok(config) => (config, None),
                Err(e) => (None, Some(format!("gpulens: {}: {e}", path.display()))),
            },
            Err(_) => (None, None), // no pyproject.toml: defaults
        };
        *self.state.project.write().unwrap() = config;
        problem
    }

    fn warn(&self, message: String) {
        tracing::warn!("{message}");
        let client = self.client.clone();
        tokio::spawn(async move { client.show_message(MessageType::WARNING, message).await });
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let encoding = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .filter(|offered| offered.contains(&PositionEncodingKind::UTF8))
            .map_or(PositionEncoding::Utf16, |_| PositionEncoding::Utf8);
        *self.state.encoding.write().unwrap() = encoding;
        let text_document = params.capabilities.text_document.as_ref();
        let pull = text_document.and_then(|t| t.diagnostic.as_ref()).is_some();
        self.state.pull.store(pull, Ordering::Relaxed);
        let refresh = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.diagnostics.as_ref())
            .and_then(|d| d.refresh_support)
            .unwrap_or(false);
        self.state.refresh.store(refresh, Ordering::Relaxed);
        let inlay_refresh = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.inlay_hint.as_ref())
            .and_then(|i| i.refresh_support)
            .unwrap_or(false);
        self.state.inlay_refresh.store(inlay_refresh, Ordering::Relaxed);
        let insert_cell = params.capabilities.experimental.as_ref().and_then(|e| e.pointer("/gpulens/insertNotebookCell")).and_then(|v| v.as_bool());
        self.state.insert_cell.store(insert_cell.unwrap_or(false), Ordering::Relaxed);
        let watch = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false);
        self.state.watch_files.store(watch, Ordering::Relaxed);

        #[allow(deprecated)] // root_uri: older clients send only that
        let root = params
            .workspace_folders
            .as_ref()
            .and_then(|f| f.first())
            .map(|f| f.uri.clone())
            .or(params.root_uri.clone())
            .and_then(|u| u.to_file_path().map(|p| p.into_owned()));
        *self.state.project_file.write().unwrap() = root.as_ref().map(|r| r.join("pyproject.toml"));
        *self.state.root.write().unwrap() = root;
        let mut problems: Vec<String> = self.load_project().into_iter().collect();
        if let Some(options) = &params.initialization_options {
            match EditorSettings::from_json(options) {
                Ok(editor) => *self.state.editor.write().unwrap() = editor,
                Err(e) => problems.push(format!("gpulens: ignoring initializationOptions: {e}")),
            }
        }
        self.reconfigure();
        for p in problems {
            self.warn(p);
        }

        let encoding_kind = match encoding {
            PositionEncoding::Utf8 => PositionEncodingKind::UTF8,
            _ => PositionEncodingKind::UTF16,
        };
        Ok(InitializeResult {
            server_info: Some(ServerInfo { name: "gpulens".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            capabilities: ServerCapabilities {
                position_encoding: Some(encoding_kind),
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    // (A saved file's declared returns go into the project index.)
                    save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                    ..Default::default()
                })),
                notebook_document_sync: Some(notebook::sync_capability()),
                diagnostic_provider: pull.then(|| {
                    DiagnosticServerCapabilities::Options(DiagnosticOptions {
                        identifier: Some("gpulens".into()),
                        // One module's declared returns change another's findings (the project index).
                        inter_file_dependencies: true,
                        workspace_diagnostics: false,
                        ..Default::default()
                    })
                }),
                code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                    code_action_kinds: Some(vec![
                        CodeActionKind::QUICKFIX,
                        CodeActionKind::new(FIX_ALL_KIND),
                        CodeActionKind::new(notebook::NOTEBOOK_FIX_ALL_KIND),
                    ]),
                    resolve_provider: Some(false),
                    ..Default::default()
                })),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                inlay_hint_provider: Some(OneOf::Left(true)),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![COMMAND_APPLY_FIX.into(), COMMAND_GPU_PROFILE.into()],
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        // The analysis threads start (and warm up) now, not at the first
        // edit, where a thread's start is a millisecond or more of its wait
        // in a VM; nor before `initialize` is answered, which they would slow.
        analysis_pool();
        if self.state.watch_files.load(Ordering::Relaxed) {
            let client = self.client.clone();
            tokio::spawn(async move {
                let options = DidChangeWatchedFilesRegistrationOptions {
                    watchers: vec![FileSystemWatcher {
                        glob_pattern: GlobPattern::String("**/pyproject.toml".into()),
                        kind: None,
                    }],
                };
                let registration = Registration {
                    id: "gpulens-pyproject".into(),
                    method: "workspace/didChangeWatchedFiles".into(),
                    register_options: serde_json::to_value(options).ok(),
                };
                if let Err(e) = client.register_capability(vec![registration]).await {
                    tracing::warn!("could not watch pyproject.toml: {e}");
                }
            });
        }
        // NVML can take a while to load: probe it off the path of `initialize`,
        // then re-analyse with what it found.
        let client = self.client.clone();
        let state = self.state.clone();
        tokio::spawn(async move {
            let Ok(report) = tokio::task::spawn_blocking(gpulens_gpu::probe).await else { return };
            match &report.nvml.error {
                Some(e) => tracing::info!("no NVIDIA GPU found ({e}); advice is generic unless a target GPU is set"),
                None => tracing::info!("NVML: {} device(s)", report.devices.len()),
            }
            let profile = report.with_target(None).map(|r| r.profile).unwrap_or_default();
            *state.attached.write().unwrap() = Some(profile);
            let backend = Backend { client, state };
            let before = backend.state.gpu.read().unwrap().clone();
            let uris = backend.reconfigure();
            if *backend.state.gpu.read().unwrap() != before {
                backend.refresh_all(uris); // only when the advice changed
            }
        });
        self.watch_profile();
        // The project index: every Python file of the workspace, read off
        // the path of the first edits; then the open documents are analysed
        // again with it.
        self.rescan();
        tracing::info!("gpulens {} ready", env!("CARGO_PKG_VERSION"));
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        let uri = params.text_document.uri;
        let text = self.state.docs.get(&uri).map(|e| e.doc.text().to_string());
        let changed = guard("didSave", || match &text {
            Some(text) => self.reindex(&uri, text),
            None => {
                let text = uri.to_file_path().and_then(|p| std::fs::read_to_string(p).ok()).unwrap_or_default();
                self.reindex(&uri, &text)
            }
        });
        if let Some((changed, redeclared)) = changed {
            if changed {
                let uris = self.reconfigure();
                self.refresh_all(uris);
            }
            if redeclared {
                self.rescan();
            }
        }
    }

    async fn shutdown(&self) -> Result<()> {
        self.state.shut_down.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let item = params.text_document;
        let index = self.state.index.read().unwrap().clone();
        let opened = guard("didOpen", || {
            let mut doc = Document::new(&item.text);
            let mut cache = Cache::default();
            cache.set_place(self.place_for(&item.uri));
            let findings = self.analyse(&mut doc, &mut cache);
            let memory = Memory::new(cache, doc.text_hash(), findings.clone());
            OpenDoc {
                version: item.version,
                doc,
                findings,
                exact: true,
                memory: Arc::new(memory),
                edits: Arc::default(),
                generation: self.next_generation(),
            }
        });
        if let Some(open) = opened {
            if let Some(old) = self.state.docs.insert(item.uri.clone(), open) {
                old.edits.fetch_add(1, Ordering::AcqRel); // stops its analysis, if one is under way
            }
            // The project index came in while this was analysed without it
            // (its re-analysis of the open documents missed this one).
            if !Arc::ptr_eq(&index, &self.state.index.read().unwrap()) {
                self.reconfigure();
            }
            // What other modules pass is read for the open documents'
            // modules: a document of another one reads it again, off the
            // path of the edits.
            let module = item.uri.to_file_path().and_then(|p| workspace::module_of(&p)).map(|(m, _)| m);
            if module.is_some_and(|m| !self.state.indexed_for.read().unwrap().contains(&m)) {
                self.rescan();
            }
            self.publish(item.uri).await;
        }
    }

    /// Applies the edits to the text at once (so handlers see them in
    /// order), then reparses and analyses on an analysis thread (see
    /// [`analysis_pool`]), and publishes
    /// the result. Most edits take a millisecond or two; some take tens in a
    /// large file (tree-sitter recovering from a half-typed statement, or
    /// re-reading a class whose indentation it changed; a re-analysis of
    /// everything after a change outside functions). Past a budget of a few
    /// ms the handler publishes the previous findings moved with the edit,
    /// then the analysis's own result, if different, when it is in. A newer
    /// edit stops an older analysis; its own result answers.
    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let arrived = std::time::Instant::now();
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        let job = {
            let Some(mut entry) = self.state.docs.get_mut(&uri) else {
                tracing::warn!("didChange for {} which is not open: ignored", uri.as_str());
                return;
            };
            if params.text_document.version < entry.version {
                // The client's edits still describe its text; apply them, but say so.
                tracing::warn!("didChange for {} with older version {} < {}", uri.as_str(), params.text_document.version, entry.version);
            }
            let changes: Vec<Change> = params
                .content_changes
                .into_iter()
                .map(|c| Change { range: c.range.map(convert::range_in), text: c.text })
                .collect();
            let entry = &mut *entry;
            let seq = entry.edits.fetch_add(1, Ordering::AcqRel) + 1;
            let Some(edits) = guard("didChange", || entry.doc.edit(&changes, encoding)) else {
                // The document may be half-edited; the client's next full sync or reopen repairs it.
                return;
            };
            entry.version = params.text_document.version;
            entry.generation = self.next_generation();
            // An edit undone (a character typed and deleted): the text of a
            // version analysed lately, whose tree and findings are at hand,
            // published now without a trip to the analysis threads.
            let recalled = guard("recalling findings", || {
                if entry.doc.reuse_recent() { entry.memory.recent().get(entry.doc.text_hash()) } else { None }
            })
            .flatten();
            if let Some(findings) = recalled {
                entry.findings = findings;
                entry.exact = true;
                None
            } else {
                let moved = guard("moving findings", || shift_findings(&entry.findings, &edits)).unwrap_or_default();
                entry.findings = Arc::new(moved);
                entry.exact = false;
                Some(Job {
                    doc: entry.doc.clone(),
                    memory: entry.memory.clone(),
                    edits: entry.edits.clone(),
                    seq,
                    effective: self.effective(),
                    gpu: self.state.gpu.read().unwrap().clone(),
                })
            }
        };
        let Some(job) = job else {
            self.state.analysed.notify_waiters();
            self.publish(uri).await;
            tracing::debug!("edit: published the findings of an earlier version of the same text {:?} after it arrived", arrived.elapsed());
            return;
        };
        let (seq, counter, version) = (job.seq, job.edits.clone(), params.text_document.version);
        match analyse_in_budget(job).await {
            Waited::InTime(outcome) => {
                let installed = outcome.is_some_and(|outcome| self.install(&uri, seq, &counter, outcome));
                if installed || self.analysed_elsewhere(&uri, version, &counter) {
                    self.publish(uri).await;
                    tracing::debug!("edit {seq}: published its analysis {:?} after it arrived", arrived.elapsed());
                }
            }
            Waited::Late(rx) => {
                // Past the budget: what the editor has now, then the analysis.
                if self.is_current(&uri, seq, &counter) {
                    self.publish(uri.clone()).await;
                    tracing::debug!("edit {seq}: published the moved findings {:?} after it arrived", arrived.elapsed());
                }
                let backend = Backend { client: self.client.clone(), state: self.state.clone() };
                tokio::spawn(async move {
                    let before = backend.state.docs.get(&uri).map(|e| e.findings.clone());
                    let installed = rx.await.is_ok_and(|outcome| backend.install(&uri, seq, &counter, outcome));
                    if installed || backend.analysed_elsewhere(&uri, version, &counter) {
                        let after = backend.state.docs.get(&uri).map(|e| e.findings.clone());
                        if before != after {
                            backend.publish(uri).await;
                        }
                    }
                });
            }
        }
    }

    async fn notebook_did_open(&self, params: DidOpenNotebookDocumentParams) {
        self.open_notebook(params).await;
    }

    async fn notebook_did_change(&self, params: DidChangeNotebookDocumentParams) {
        self.change_notebook(params).await;
    }

    async fn notebook_did_save(&self, _: DidSaveNotebookDocumentParams) {}

    async fn notebook_did_close(&self, params: DidCloseNotebookDocumentParams) {
        self.close_notebook(params).await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        if let Some((_, closed)) = self.state.docs.remove(&uri) {
            closed.edits.fetch_add(1, Ordering::AcqRel); // stops its analysis, if one is under way
        }
        if !self.state.pull.load(Ordering::Relaxed) {
            self.client.publish_diagnostics(uri, Vec::new(), None).await;
        }
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        // Some clients (eglot) announce "no settings" with null or `{}` right
        // after start: that changes nothing, and must not wipe what came in
        // initializationOptions.
        let empty = match &params.settings {
            serde_json::Value::Null => true,
            serde_json::Value::Object(map) => map.is_empty(),
            _ => false,
        };
        if empty {
            return;
        }
        match EditorSettings::from_json(&params.settings) {
            Ok(editor) => *self.state.editor.write().unwrap() = editor,
            Err(e) => {
                self.warn(format!("gpulens: ignoring settings: {e}"));
                return;
            }
        }
        let uris = self.reconfigure();
        self.refresh_all(uris);
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        if !params.changes.iter().any(|c| c.uri.as_str().ends_with("pyproject.toml")) {
            return;
        }
        if let Some(problem) = self.load_project() {
            self.warn(problem);
        }
        let uris = self.reconfigure();
        self.refresh_all(uris);
    }

    async fn diagnostic(&self, params: DocumentDiagnosticParams) -> Result<DocumentDiagnosticReportResult> {
        let uri = params.text_document.uri;
        if !self.state.docs.contains_key(&uri) && self.is_cell(&uri) {
            return self.cell_report(&uri, params.previous_result_id).await.ok_or_else(|| unknown_document(&uri));
        }
        // A pull answers for the current text: wait (a little) for its analysis.
        let deadline = tokio::time::Instant::now() + PULL_WAIT;
        loop {
            let analysed = self.state.analysed.notified();
            tokio::pin!(analysed);
            analysed.as_mut().enable();
            let exact = self.state.docs.get(&uri).ok_or_else(|| unknown_document(&uri))?.exact;
            if exact || tokio::time::timeout_at(deadline, analysed).await.is_err() {
                break;
            }
        }
        let entry = self.state.docs.get(&uri).ok_or_else(|| unknown_document(&uri))?;
        let result_id = entry.generation.to_string();
        if params.previous_result_id.as_deref() == Some(result_id.as_str()) {
            return Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Unchanged(
                RelatedUnchangedDocumentDiagnosticReport {
                    related_documents: None,
                    unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport { result_id },
                },
            )));
        }
        let mut items = guard("diagnostic", || self.converter().diagnostics(&entry.doc, &entry.findings))
            .ok_or_else(|| internal("diagnostic"))?;
        self.apply_profile(&uri, &entry.doc, &entry.findings, &mut items);
        Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id: Some(result_id), items },
        })))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri.clone();
        if !self.state.docs.contains_key(&uri) && self.is_cell(&uri) {
            return self.cell_code_actions(&uri, &params).map(Some).ok_or_else(|| internal("codeAction"));
        }
        let entry = self.state.docs.get(&uri).ok_or_else(|| unknown_document(&uri))?;
        let actions = guard("codeAction", || self.converter().code_actions(&uri, &entry.doc, &entry.findings, &params))
            .ok_or_else(|| internal("codeAction"))?;
        Ok(Some(actions))
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let uri = params.text_document_position_params.text_document.uri;
        let gpu = self.state.gpu.read().unwrap().clone();
        let position = params.text_document_position_params.position;
        if !self.state.docs.contains_key(&uri) {
            if let Some(hover) = self.in_cell(&uri, |doc, findings| self.converter().hover(doc, findings, position, &gpu, None)) {
                return hover.ok_or_else(|| internal("hover"));
            }
        }
        let entry = self.state.docs.get(&uri).ok_or_else(|| unknown_document(&uri))?;
        let shares = self.shares(&uri, &entry.doc, &entry.findings);
        guard("hover", || self.converter().hover(&entry.doc, &entry.findings, position, &gpu, shares.as_deref()))
            .ok_or_else(|| internal("hover"))
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let uri = params.text_document.uri;
        if !self.effective().inlay_hints {
            return Ok(Some(Vec::new()));
        }
        let gpu = self.state.gpu.read().unwrap().clone();
        if !self.state.docs.contains_key(&uri) {
            if let Some(hints) = self.in_cell(&uri, |doc, findings| self.converter().inlay_hints(doc, findings, params.range, &gpu, None)) {
                return hints.map(Some).ok_or_else(|| internal("inlayHint"));
            }
        }
        let entry = self.state.docs.get(&uri).ok_or_else(|| unknown_document(&uri))?;
        let shares = self.shares(&uri, &entry.doc, &entry.findings);
        guard("inlayHint", || self.converter().inlay_hints(&entry.doc, &entry.findings, params.range, &gpu, shares.as_deref()))
            .map(Some)
            .ok_or_else(|| internal("inlayHint"))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        match params.command.as_str() {
            COMMAND_GPU_PROFILE => {
                let gpu = self.state.gpu.read().unwrap().clone();
                Ok(Some(json!({
                    "profile": serde_json::to_value(&*gpu).unwrap_or(Value::Null),
                    "target": self.effective().target_gpu,
                })))
            }
            COMMAND_APPLY_FIX => {
                let args: Option<(Uri, String, Range)> = params
                    .arguments
                    .first()
                    .and_then(|a| serde_json::from_value::<(Uri, String, Range)>(a.clone()).ok())
                    .or_else(|| {
                        let [u, c, r] = params.arguments.as_slice() else { return None };
                        Some((serde_json::from_value(u.clone()).ok()?, serde_json::from_value(c.clone()).ok()?, serde_json::from_value(r.clone()).ok()?))
                    });
                let Some((uri, code, range)) = args else {
                    return Err(Error::invalid_params("gpulens.applyFix takes [uri, code, range]"));
                };
                let edit = {
                    let entry = self.state.docs.get(&uri).ok_or_else(|| unknown_document(&uri))?;
                    guard("applyFix", || self.converter().fix_edit(&uri, &entry.doc, &entry.findings, &code, range))
                        .ok_or_else(|| internal("applyFix"))?
                };
                let Some(edit) = edit else {
                    return Err(Error::invalid_params(format!("no fix for {code} at that range")));
                };
                let client = self.client.clone();
                tokio::spawn(async move {
                    if let Err(e) = client.apply_edit(edit).await {
                        tracing::warn!("workspace/applyEdit failed: {e}");
                    }
                });
                Ok(None)
            }
            other => Err(Error::invalid_params(format!("unknown command {other:?}"))),
        }
    }
}

/// Serves LSP on stdin/stdout until the client exits. Logs go to stderr at
/// the level `GPULENS_LOG` names (`info` by default).
pub fn run() -> std::process::ExitCode {
    let filter = tracing_subscriber::EnvFilter::try_from_env("GPULENS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).try_init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("gpulens: cannot start the server: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let shut_down = Arc::new(AtomicBool::new(false));
    runtime.block_on(async {
        let flag = shut_down.clone();
        let (service, socket) = LspService::new(move |client| Backend::with_shutdown_flag(client, flag));
        // Malformed frames are answered and dropped before they reach the
        // service; the service's output and those answers share stdout frame
        // by frame (see framing.rs).
        let (to_server, from_client) = tokio::io::duplex(1 << 20);
        let (server_out, from_server) = tokio::io::duplex(1 << 20);
        let (frames_tx, frames_rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(framing::filter(tokio::io::stdin(), to_server, frames_tx.clone(), shut_down.clone()));
        tokio::spawn(framing::frames(from_server, frames_tx));
        let writer = tokio::spawn(framing::write_out(frames_rx, tokio::io::stdout()));
        Server::new(from_client, server_out, socket).serve(service).await;
        // Let the last replies (the answer to `shutdown`) reach the client.
        let _ = tokio::time::timeout(std::time::Duration::from_millis(200), writer).await;
    });
    // Reading stdin blocks a thread that may never see end-of-file: don't wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    // The protocol: status 0 after a `shutdown` request, 1 otherwise (an
    // `exit` without it, or the client closing the stream).
    if shut_down.load(Ordering::SeqCst) {
        std::process::ExitCode::SUCCESS
    } else {
        tracing::info!("exiting without a shutdown request");
        std::process::ExitCode::from(1)
    }
}
