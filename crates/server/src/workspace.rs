//! The workspace's project index (see `gpulens_diagnostics::project`): what
//! each Python file's module-level functions declare they return, and what
//! each file passes to the others' functions, read from the files under the
//! workspace folder, so that a value another module's function returns is
//! known where an open document calls it, and a value another module passes
//! is known in the function it calls. `gpulens
//! check` builds the same index over the files it checks.

use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use gpulens_diagnostics::project::{module_name, Passed, Place, ProjectIndex, Summary};

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
    read_file(path, buffer)?;
    Some(summarize_bytes(module, buffer))
}

/// Reads the regular file at `path` into `buffer` (a pipe read here would
/// be empty when checked).
fn read_file(path: &Path, buffer: &mut Vec<u8>) -> Option<()> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    buffer.clear();
    std::fs::File::open(path).and_then(|mut f| f.read_to_end(buffer)).ok()?;
    Some(())
}

/// What the file at `path` passes to the other modules' functions, read
/// from disk with `place` (its place in an index of what they declare).
pub fn passes_of_file(path: &Path, place: &Place, buffer: &mut Vec<u8>) -> Option<Vec<Passed>> {
    read_file(path, buffer)?;
    // (Only a file that imports something can call another module.)
    memchr::memmem::find(buffer, b"import")?;
    Some(place.passes(&gpulens_syntax::decode(buffer).ok()?))
}

/// The index of `files` (each with its module name, where it has one):
/// what their functions declare, then what each passes to the others'
/// functions (read with the first). `texts` gives the current text of a
/// file an editor holds, in place of what is on disk. With `wanted`, only
/// what is passed to the functions of those modules is read (the language
/// server's open documents: the findings of no other module are shown).
pub fn index_files(
    files: &[(PathBuf, Option<(String, bool)>)],
    texts: &(dyn Fn(&Path) -> Option<String> + Sync),
    wanted: Option<&std::collections::HashSet<String>>,
) -> ProjectIndex {
    use rayon::prelude::*;
    use std::collections::HashSet as FxHashSet;
    // What `read` makes of a file's text, as the editor holds it or as it
    // is on disk (read into `buffer`, not copied).
    fn with_text<R>(texts: &(dyn Fn(&Path) -> Option<String> + Sync), path: &Path, buffer: &mut Vec<u8>, read: impl FnOnce(&str) -> R) -> Option<R> {
        match texts(path) {
            Some(text) => Some(read(&text)),
            None => {
                read_file(path, buffer)?;
                Some(read(&gpulens_syntax::decode(buffer).ok()?))
            }
        }
    }
    // (Each file's summary, and whether its functions may have findings:
    // the functions whose callers elsewhere count.)
    let summaries: Vec<(Summary, Option<String>)> = files
        .par_iter()
        .map_init(Vec::new, |buffer, (path, name)| {
            let module = &name.as_ref()?.0;
            with_text(texts, path, buffer, |text| {
                let summary = summarize_bytes(module, text.as_bytes());
                (summary, gpulens_diagnostics::might_have_findings(text).then(|| module.clone()))
            })
        })
        .flatten()
        .collect();
    let mut working: FxHashSet<String> = FxHashSet::default();
    let mut index = ProjectIndex::new(summaries.into_iter().flat_map(|(summary, module)| {
        working.extend(module);
        summary
    }));
    for module in &working {
        index.add_module(module.clone(), Vec::new());
    }
    // The functions some module may call (read from the bytes), and of
    // those the ones that read their callers (read from their modules).
    let first = Arc::new(index);
    let called: FxHashSet<String> = files
        .par_iter()
        .map_init(Vec::new, |buffer, (path, name)| {
            let place = place_named(&first, name.clone())?;
            with_text(texts, path, buffer, |text| place.called(text))
        })
        .flatten()
        .flatten()
        .collect();
    let targets: FxHashSet<&str> = called
        .iter()
        .filter_map(|q| q.rsplit_once('.').map(|(m, _)| m))
        .filter(|m| wanted.is_none_or(|w| w.contains(*m)))
        .collect();
    let functions: Vec<(String, Vec<String>)> = files
        .par_iter()
        .filter(|(_, name)| name.as_ref().is_some_and(|(m, _)| targets.contains(m.as_str())))
        .map_init(Vec::new, |buffer, (path, name)| {
            let module = name.as_ref()?.0.clone();
            let read = with_text(texts, path, buffer, ProjectIndex::functions_of)?;
            let read: Vec<String> = read.into_iter().filter(|f| called.contains(&format!("{module}.{f}"))).collect();
            Some((module, read))
        })
        .flatten()
        .collect();
    let mut index = Arc::try_unwrap(first).unwrap_or_else(|shared| (*shared).clone());
    for (module, read) in functions {
        index.add_module(module, read);
    }
    let declared = Arc::new(index);
    let passes: Vec<(String, Vec<Passed>)> = files
        .par_iter()
        .map_init(Vec::new, |buffer, (path, name)| {
            let place = place_named(&declared, name.clone())?;
            let passes = match texts(path) {
                Some(text) => place.passes(&text),
                None => passes_of_file(path, &place, buffer)?,
            };
            (!passes.is_empty()).then_some((place.module, passes))
        })
        .flatten()
        .collect();
    let mut index = Arc::try_unwrap(declared).unwrap_or_else(|shared| (*shared).clone());
    index.set_passes(passes);
    index
}

/// The Python files under `root` (as `gpulens check` finds them:
/// .gitignore respected), at most [`MAX_FILES`] of them, with their module names.
pub fn python_files(root: &Path) -> Vec<(PathBuf, Option<(String, bool)>)> {
    let walk = ignore::WalkBuilder::new(root).build();
    walk.flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter(|e| e.path().extension().is_some_and(|e| e == "py" || e == "pyi"))
        .take(MAX_FILES)
        .map(|e| {
            let name = module_of(e.path());
            (e.into_path(), name)
        })
        .collect()
}

/// The index of the Python files under `root` (see [`python_files`] and
/// [`index_files`]).
pub fn scan(
    root: &Path,
    texts: &(dyn Fn(&Path) -> Option<String> + Sync),
    wanted: Option<&std::collections::HashSet<String>>,
) -> ProjectIndex {
    index_files(&python_files(root), texts, wanted)
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
