//! Whole-text byte scans: can a file have any finding at all, does it name
//! or import a GPU library.

use super::*;

/// Every rule starts from an import of a CPU library the knowledge base
/// covers, so a file that never names one cannot produce a finding. This
/// byte scan lets whole files skip parsing-dependent work.
pub fn might_have_findings(text: &str) -> bool {
    // One pass over the text for all the names at once, stopping at the
    // first (a search per name read a file that names none twenty times).
    static NAMES: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    NAMES
        .get_or_init(|| {
            names_searcher(Knowledge::get().cpu_modules.iter().map(String::as_str).chain(Knowledge::get().gpu_modules.iter().map(String::as_str)))
        })
        .is_match(text)
}

/// A search for any of `names` (a few short module names). Leftmost-first
/// matching answers "is there a match" as the standard kind does, and lets
/// the search run on SIMD fingerprints of the names; the standard kind
/// walks the automaton byte by byte.
pub(crate) fn names_searcher<'a>(names: impl IntoIterator<Item = &'a str>) -> aho_corasick::AhoCorasick {
    aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostFirst)
        .build(names)
        .expect("a few short module names")
}

/// Whether `text` names one of the GPU libraries anywhere (a byte scan).
pub(crate) fn names_gpu_library(text: &str) -> bool {
    // (One pass for all the names.)
    static NAMES: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| names_searcher(Knowledge::get().gpu_modules.iter().map(String::as_str))).is_match(text)
}

/// Whether some statement of `text` may import a GPU library (the
/// analysis's [`Module::mentions_gpu_library`] can only be true then): an
/// `import` whose statement (on its line, joined over backslash breaks,
/// after any `;` or `:`) is `import …` naming a GPU module among its
/// modules, or `from …` with a GPU module as the package. Read from the
/// bytes, so a docstring's example line counts too.
pub(crate) fn imports_gpu_library(text: &str) -> bool {
    names_gpu_library(text) && imports_module(text, is_gpu_module)
}

/// Whether some statement of `text` may import NumPy (read as
/// [`imports_gpu_library`] reads GPU imports): the matrix-product rule
/// applies only in a module that imports it somewhere.
pub(crate) fn imports_numpy(text: &str) -> bool {
    text.contains("numpy") && imports_module(text, |top| top == "numpy")
}

/// Whether some statement of `text` may import a module whose top-level
/// package `is_wanted` accepts (see [`imports_gpu_library`]).
fn imports_module(text: &str, is_wanted: impl Fn(&str) -> bool) -> bool {
    let bytes = text.as_bytes();
    memchr::memmem::find_iter(bytes, b"import").any(|at| {
        let end = at + "import".len();
        if (at > 0 && name_byte(bytes[at - 1])) || bytes.get(end).is_some_and(|&b| name_byte(b)) {
            return false;
        }
        // The logical line around it.
        let line_end = |from: usize| bytes[from..].iter().position(|&b| b == b'\n' || b == b'\r').map_or(bytes.len(), |i| from + i);
        let mut start = bytes[..at].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |i| i + 1);
        loop {
            let mut before = start;
            while before > 0 && matches!(bytes[before - 1], b'\n' | b'\r') {
                before -= 1;
            }
            if before == 0 || before == start || bytes[before - 1] != b'\\' {
                break;
            }
            start = bytes[..before].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |i| i + 1);
        }
        let mut stop = line_end(end);
        while stop > 0 && stop < bytes.len() && bytes[stop - 1] == b'\\' {
            let next = if bytes[stop..].starts_with(b"\r\n") { stop + 2 } else { stop + 1 };
            stop = line_end(next);
        }
        // Its statement.
        let from = text[start..at].rfind([';', ':']).map_or(start, |i| start + i + 1);
        let to = text[end..stop].find(';').map_or(stop, |i| end + i);
        let statement = &text[from..to];
        let mut words = statement.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')).filter(|w| !w.is_empty());
        match words.next() {
            Some("import") => words.any(|w| is_wanted(w.split('.').next().unwrap_or(w))),
            Some("from") => words.next().is_some_and(|w| is_wanted(w.split('.').next().unwrap_or(w))),
            _ => false,
        }
    })
}
