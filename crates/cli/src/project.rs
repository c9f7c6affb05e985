//! The project index of a `gpulens check` run: what each checked file's
//! module-level functions declare they return, then what each file passes to
//! the others' functions, read before any file is checked (see `gpulens_diagnostics::project`; the language server builds
//! the same index over its workspace with `gpulens_server::workspace`).

use std::path::PathBuf;
use std::sync::Arc;

use gpulens_diagnostics::project::{Place, ProjectIndex};
use gpulens_server::workspace::{index_files, module_of, place_named};
use rayon::prelude::*;

/// The index over `files`, and each file's module name (by the file's
/// position in `files`; none where it cannot be told). A file named on the
/// command line (`gpulens check shop/report.py`, as pre-commit runs it)
/// brings the other modules of its package into the index too, unchecked.
pub fn index(files: &[PathBuf], named: &[PathBuf]) -> (Arc<ProjectIndex>, Vec<Option<(String, bool)>>) {
    let names: Vec<Option<(String, bool)>> = files.par_iter().map(|p| module_of(p)).collect();
    // (The files' own names are worked out once, for the index and their places.)
    let mut read: Vec<(PathBuf, Option<(String, bool)>)> = files.iter().cloned().zip(names.iter().cloned()).collect();
    let mut roots: Vec<PathBuf> = named.iter().filter(|p| p.is_file()).filter_map(|p| package_root(p)).collect();
    roots.sort();
    roots.dedup();
    if !roots.is_empty() {
        let mut seen: std::collections::HashSet<PathBuf> = files.iter().filter_map(|f| std::path::absolute(f).ok()).collect();
        for root in roots {
            let walk = ignore::WalkBuilder::new(&root).build();
            for entry in walk.flatten().filter(|e| e.file_type().is_some_and(|t| t.is_file())) {
                let path = entry.into_path();
                if path.extension().is_some_and(|e| e == "py") && seen.insert(std::path::absolute(&path).unwrap_or(path.clone())) {
                    let name = module_of(&path);
                    read.push((path, name));
                }
                if read.len() >= gpulens_server::workspace::MAX_FILES {
                    break;
                }
            }
        }
    }
    (Arc::new(index_files(&read, &|_| None)), names)
}

/// The outermost folder above `file` that is a package (holds an
/// `__init__.py`, as every folder between it and the file does).
fn package_root(file: &std::path::Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(file).ok()?;
    let mut root = None;
    for folder in absolute.ancestors().skip(1) {
        if !folder.join("__init__.py").is_file() {
            break;
        }
        root = Some(folder.to_path_buf());
    }
    root
}

/// The place of a file in the index, if it has a module name.
pub fn place(index: &Arc<ProjectIndex>, name: &Option<(String, bool)>) -> Option<Place> {
    place_named(index, name.clone())
}
