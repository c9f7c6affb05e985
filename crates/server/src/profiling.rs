//! The `profile` setting: a profile of the user's program (cProfile,
//! speedscope or Scalene, as `gpulens check --profile` reads), kept loaded
//! and read again when the file changes; each open document's findings get
//! their measured share of the run from it, which hover and inlay hints
//! show and which can demote or hide the diagnostics of code under a
//! threshold.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use gpulens_diagnostics::profile::{self, Measured, Profile};
use gpulens_diagnostics::Finding;
use gpulens_syntax::{Document, LineIndex, PositionEncoding};

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
}

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

}

/// What the profile measured for each of a document's findings (`None`
/// for code it never saw); `None` altogether when the profile names no
/// file that is this document.
pub fn shares(profile: &Profile, file: &Path, doc: &Document, findings: &[Finding]) -> Option<Vec<Option<Measured>>> {
    let names = profile.files();
    let path = file.to_string_lossy();
    let ours = profile::paths_for(&names, &path);
    if ours.is_empty() {
        return None;
    }
    let costs = profile.costs_of_any(&ours);
    let text = doc.text().to_string();
    let tree = doc.tree();
    let functions = profile::functions(&text, tree);
    let index = LineIndex::new(&text);
    let line = |offset: usize| index.position(&text, offset, PositionEncoding::Utf8).line + 1;
    Some(
        findings
            .iter()
            .map(|f| {
                let lines = profile::statement_lines(tree, f.range.clone()).unwrap_or(line(f.range.start)..line(f.range.end));
                costs.measure(lines, profile::enclosing(&functions, f.range.start))
            })
            .collect(),
    )
}
