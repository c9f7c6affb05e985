//! The `profile` setting: a profile of the user's program (cProfile,
//! speedscope or Scalene, as `gpulens check --profile` reads), kept loaded
//! and read again when the file changes; each open document's findings get
//! their measured share of the run from it, which hover and inlay hints
//! show and which can demote or hide the diagnostics of code under a
//! threshold.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use gpulens_diagnostics::profile::{self, Measured, Profile};
use gpulens_diagnostics::Finding;
use gpulens_syntax::Document;
use tower_lsp_server::ls_types::{Diagnostic, DiagnosticSeverity, DiagnosticTag, Uri};

use crate::{guard, Backend};

/// What is done with the diagnostics of code below the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Below {
    /// Shown as they are.
    #[default]
    Keep,
    /// Shown as hints (the least severity), faded (tagged unnecessary).
    Demote,
    /// Not shown.
    Hide,
}

/// The file last read, by path, modification time and length.
type Stamp = (PathBuf, Option<SystemTime>, u64);
/// What reading it gave.
type Read = Result<Arc<Profile>, String>;

/// The loaded profile, shared by the server's tasks.
#[derive(Default)]
pub struct Loaded {
    inner: Mutex<Option<(Stamp, Read)>>,
    /// The functions of the documents' texts last measured, by text hash:
    /// each publish of an edited document asks for its findings' shares,
    /// and walking a large file's tree for its functions every time cost
    /// more than the analysis of the edit.
    functions: Mutex<std::collections::HashMap<u64, Arc<Vec<profile::FunctionSpan>>>>,
}

/// How many texts' functions [`Loaded`] keeps (the open documents' latest
/// texts, and the ones an undo brings back).
const FUNCTIONS_KEPT: usize = 64;

impl Loaded {
    /// The profile at `path`, read again when its modification time or
    /// length changed; with `Some(message)` the first time a version of the
    /// file cannot be read (to show the user once), and `changed` when this
    /// call read a new version.
    pub fn get(&self, path: &Path) -> (Option<Arc<Profile>>, Option<String>, bool) {
        let meta = std::fs::metadata(path);
        let stamp: Stamp = (path.to_path_buf(), meta.as_ref().ok().and_then(|m| m.modified().ok()), meta.as_ref().map_or(0, |m| m.len()));
        let mut inner = self.inner.lock().unwrap();
        if let Some((known, result)) = inner.as_ref() {
            if *known == stamp {
                return (result.as_ref().ok().cloned(), None, false);
            }
        }
        let result = std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| Profile::read(&bytes))
            .map(Arc::new)
            .map_err(|e| format!("gpulens: profile {}: {e}", path.display()));
        let problem = result.as_ref().err().cloned();
        let profile = result.as_ref().ok().cloned();
        *inner = Some((stamp, result));
        (profile, problem, true)
    }

    /// The functions of `doc`'s text (see [`profile::functions`]), from
    /// memory when the same text was measured before.
    fn functions_of(&self, doc: &Document, text: &str) -> Arc<Vec<profile::FunctionSpan>> {
        let hash = doc.text_hash();
        if let Some(known) = self.functions.lock().unwrap().get(&hash) {
            return known.clone();
        }
        let found = Arc::new(profile::functions(text, doc.tree()));
        let mut kept = self.functions.lock().unwrap();
        if kept.len() >= FUNCTIONS_KEPT {
            kept.clear();
        }
        kept.insert(hash, found.clone());
        found
    }
}

/// What the profile measured for each of a document's findings (`None`
/// for code it never saw); `None` altogether when the profile names no
/// file that is this document.
pub fn shares(loaded: &Loaded, profile: &Profile, file: &Path, doc: &Document, findings: &[Finding]) -> Option<Vec<Option<Measured>>> {
    let names = profile.files();
    let path = file.to_string_lossy();
    let ours = profile::paths_for(&names, &path);
    if ours.is_empty() {
        return None;
    }
    let costs = profile.costs_of_any(&ours);
    let text = doc.text();
    let functions = loaded.functions_of(doc, &text);
    Some(profile::measure_ranges(&costs, &text, doc.tree(), &functions, findings.iter().map(|f| f.range.clone())))
}

/// How often the `profile` setting's file is checked for a new version.
const PROFILE_POLL: std::time::Duration = std::time::Duration::from_secs(1);

impl Backend {
    /// The `profile` setting's file: absolute, or in the workspace folder.
    pub(crate) fn profile_path(&self) -> Option<PathBuf> {
        let setting = PathBuf::from(self.effective().profile.as_deref()?);
        if setting.is_absolute() {
            return Some(setting);
        }
        let root = self.state.root.read().unwrap().clone();
        Some(root.map_or(setting.clone(), |r| r.join(&setting)))
    }

    /// The profile, read again if its file changed (a problem reading it is
    /// shown once per version of the file); whether this read a new version.
    pub(crate) fn profile(&self) -> (Option<Arc<gpulens_diagnostics::profile::Profile>>, bool) {
        let Some(path) = self.profile_path() else { return (None, false) };
        let (profile, problem, changed) = self.state.profile.get(&path);
        if let Some(problem) = problem {
            self.warn(problem);
        }
        (profile, changed)
    }

    /// What the profile measured for each of a document's findings; `None`
    /// without a profile, or when it does not measure this file.
    pub(crate) fn shares(&self, uri: &Uri, doc: &gpulens_syntax::Document, findings: &[gpulens_diagnostics::Finding]) -> Option<Vec<Option<gpulens_diagnostics::profile::Measured>>> {
        let profile = self.profile().0?;
        let path = uri.to_file_path()?;
        guard("profile", || shares(&self.state.profile, &profile, &path, doc, findings)).flatten()
    }

    /// Demotes or hides, as the settings ask, the diagnostics of findings
    /// in code the profile measured below the threshold (or never saw).
    pub(crate) fn apply_profile(&self, uri: &Uri, doc: &gpulens_syntax::Document, findings: &[gpulens_diagnostics::Finding], diagnostics: &mut Vec<Diagnostic>) {
        let effective = self.effective();
        if effective.profile_below == Below::Keep || diagnostics.len() != findings.len() {
            return;
        }
        let Some(shares) = self.shares(uri, doc, findings) else { return };
        let below = |m: &Option<gpulens_diagnostics::profile::Measured>| m.as_ref().map_or(0.0, |m| m.share) < effective.profile_threshold;
        match effective.profile_below {
            Below::Demote => {
                // The least severity, and faded rather than underlined (advice
                // is a hint already: the tag is what an editor shows).
                for (d, m) in diagnostics.iter_mut().zip(&shares) {
                    if below(m) {
                        d.severity = Some(DiagnosticSeverity::HINT);
                        d.tags.get_or_insert_with(Vec::new).push(DiagnosticTag::UNNECESSARY);
                    }
                }
            }
            Below::Hide => {
                let mut i = 0;
                diagnostics.retain(|_| {
                    i += 1;
                    !below(&shares[i - 1])
                });
            }
            Below::Keep => {}
        }
    }

    /// Starts the task that reads the profile again when its file changes.
    pub(crate) fn watch_profile(&self) {
        // The profile setting's file: read again when it changes (a profiler
        // run writes it anew), and the open documents' diagnostics and hints
        // follow. Polled: its path is any the user names, which not every
        // client can watch.
        let backend = Backend { client: self.client.clone(), state: self.state.clone() };
        tokio::spawn(async move {
            while !backend.state.shut_down.load(Ordering::Relaxed) {
                tokio::time::sleep(PROFILE_POLL).await;
                if backend.profile_path().is_none() || !backend.profile().1 {
                    continue;
                }
                let uris: Vec<Uri> = backend.state.docs.iter().map(|e| e.key().clone()).collect();
                backend.refresh_all(uris);
                if backend.state.inlay_refresh.load(Ordering::Relaxed) {
                    let _ = backend.client.inlay_hint_refresh().await;
                }
            }
        });
    }
}
