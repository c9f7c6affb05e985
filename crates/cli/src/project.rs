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
///
/// With `cache` (a cache folder), an index made before for files holding
/// the same bytes under the same module names is read back instead of made
/// again (made, it is stored there).
pub fn index(files: &[PathBuf], named: &[PathBuf], cache: Option<&std::path::Path>) -> (Arc<ProjectIndex>, Vec<Option<(String, bool)>>) {
    // (A notebook is no module: nothing imports it.)
    let names: Vec<Option<(String, bool)>> =
        files.par_iter().map(|p| if crate::check::is_notebook(p) { None } else { module_of(p) }).collect();
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
    let Some(folder) = cache else { return (Arc::new(index_files(&read, &|_| None, None)), names) };
    // What the index is made from: each file's module name and bytes.
    let digests: Vec<Option<u128>> = read
        .par_iter()
        .map(|(path, name)| {
            let name = name.as_ref()?;
            let bytes = std::fs::metadata(path).ok().filter(|m| m.is_file()).and_then(|_| std::fs::read(path).ok())?;
            let mut h = xxhash_rust::xxh3::Xxh3::new();
            h.update(name.0.as_bytes());
            h.update(&[name.1 as u8, 0]);
            h.update(&xxhash_rust::xxh3::xxh3_128(&bytes).to_le_bytes());
            Some(h.digest128())
        })
        .collect();
    // (In an order of their own: the walk finds files in any order.)
    let mut digests: Vec<u128> = digests.into_iter().flatten().collect();
    digests.sort_unstable();
    let mut key = xxhash_rust::xxh3::Xxh3::new();
    for digest in &digests {
        key.update(&digest.to_le_bytes());
    }
    let key = key.digest128();
    if let Some(index) = crate::cache::load_index(folder, key) {
        return (Arc::new(index), names);
    }
    let index = index_files(&read, &|_| None, None);
    crate::cache::store_index(folder, key, &index);
    (Arc::new(index), names)
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
