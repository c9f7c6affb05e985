//! The workspace's project index (see `gpulens_diagnostics::project`): what
//! each Python file's module-level functions declare they return, read from
//! the files under the workspace folder, so that a value another module's
//! function returns is known where an open document calls it. `gpulens
//! check` builds the same index over the files it checks.

use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use gpulens_diagnostics::project::{module_name, Place, ProjectIndex, Summary};

/// At most this many files are read into the index of a workspace (a
/// folder of a whole virtual environment or monorepo would otherwise take
/// the index's time and memory without bound).
pub const MAX_FILES: usize = 20_000;

/// The dotted module name of the file at `path`, and whether it is a
/// package's `__init__.py`: its stem after the names of the folders above
/// it that hold an `__init__.py`.
pub fn module_of(path: &Path) -> Option<(String, bool)> {
    let absolute = std::path::absolute(path).ok()?;
    let parts: Vec<&str> = absolute
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => part.to_str(),
            _ => None,
        })
        .collect();
    let folders: Vec<PathBuf> = (0..parts.len().saturating_sub(1))
        .map(|i| absolute.ancestors().nth(parts.len() - 1 - i).map(Path::to_path_buf).unwrap_or_default())
        .collect();
    module_name(&parts, &|i| folders.get(i).is_some_and(|f| f.join("__init__.py").is_file()))
}

/// The summary of a file's bytes as module `module` (nothing for a file that
/// declares no return: no `->`, no Returns section, no `:rtype:`).
pub fn summarize_bytes(module: &str, bytes: &[u8]) -> Summary {
    let declares = |needle: &[u8]| memchr::memmem::find(bytes, needle).is_some();
    // (A type alias names the type of data it stands for.)
    let aliases = || ["DataFrame", "Series", "ndarray", "NDArray", "ArrayLike", "Graph"].iter().any(|w| declares(w.as_bytes()));
    if !(declares(b"->") || declares(b"Returns") || declares(b":rtype:") || aliases()) {
        return Vec::new();
    }
    match gpulens_syntax::decode(bytes) {
        Ok(text) => ProjectIndex::summarize(module, &text),
        Err(_) => Vec::new(),
    }
}

/// The summary of the file at `path` (module `module`), read from disk.
pub fn summarize_file(path: &Path, module: &str, buffer: &mut Vec<u8>) -> Option<Summary> {
    // (Only a regular file: a pipe read here would be empty when checked.)
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    buffer.clear();
    std::fs::File::open(path).and_then(|mut f| f.read_to_end(buffer)).ok()?;
    Some(summarize_bytes(module, buffer))
}

/// The index of the Python files under `root` (as `gpulens check` finds
/// them: .gitignore respected), at most [`MAX_FILES`] of them.
pub fn scan(root: &Path) -> ProjectIndex {
    let mut buffer = Vec::new();
    let mut summaries = Vec::new();
    let walk = ignore::WalkBuilder::new(root).build();
    for entry in walk.flatten().filter(|e| e.file_type().is_some_and(|t| t.is_file())).take(MAX_FILES) {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "py" || e == "pyi") {
            if let Some(summary) = module_of(path).and_then(|(module, _)| summarize_file(path, &module, &mut buffer)) {
                summaries.extend(summary);
            }
        }
    }
    ProjectIndex::new(summaries)
}

/// Where the file at `path` sits in `index`.
pub fn place_of(index: &Arc<ProjectIndex>, path: &Path) -> Option<Place> {
    place_named(index, module_of(path))
}

/// The place in `index` of a file whose module name is `name` (see [`module_of`]).
pub fn place_named(index: &Arc<ProjectIndex>, name: Option<(String, bool)>) -> Option<Place> {
    let (module, package) = name?;
    Some(Place { index: index.clone(), module, package })
}
