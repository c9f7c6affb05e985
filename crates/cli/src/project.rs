//! The project index of a `gpulens check` run: what each checked file's
//! module-level functions declare they return, read before any file is
//! checked (see `gpulens_diagnostics::project`; the language server builds
//! the same index over its workspace with `gpulens_server::workspace`).

use std::path::PathBuf;
use std::sync::Arc;

use gpulens_diagnostics::project::{Place, ProjectIndex};
use gpulens_server::workspace::{module_of, summarize_file};
use rayon::prelude::*;

/// The index over `files`, and each file's module name (by the file's
/// position in `files`; none where it cannot be told).
pub fn index(files: &[PathBuf]) -> (Arc<ProjectIndex>, Vec<Option<(String, bool)>>) {
    let names: Vec<Option<(String, bool)>> = files.par_iter().map(|p| module_of(p)).collect();
    let summaries: Vec<_> =
        files.par_iter().map_init(Vec::new, |buffer, path| summarize_file(path, buffer).map(|(_, s)| s)).flatten().collect();
    (Arc::new(ProjectIndex::new(summaries.into_iter().flatten())), names)
}

/// The place of a file in the index, if it has a module name.
pub fn place(index: &Arc<ProjectIndex>, name: &Option<(String, bool)>) -> Option<Place> {
    let (module, package) = name.clone()?;
    Some(Place { index: index.clone(), module, package })
}
