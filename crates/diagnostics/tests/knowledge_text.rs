//! What users read must say what knowledge/ says. The install lines, driver
//! minimums, statuses and kernel imports in the reference pages, the rules'
//! documentation (`explain`, hover), the API notes and the messages recorded
//! in the snapshots are compared with libraries.toml: a page that still shows
//! an old install line, or a rule whose example imports the package a
//! library moved away from, fails here. (tests/knowledge/check_index.py holds
//! the data itself to the package index.)

use std::path::Path;

use gpulens_diagnostics::RULES;
use gpulens_knowledge::{Knowledge, Library, Status};

/// Every `uv add ...` command in a text: its options and requirements, up to
/// the first word that is neither (prose, a comment, a closing quote).
fn uv_add_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("uv add").map(|i| from + i) {
        from = at + "uv add".len();
        let before_ok = at == 0 || !text.as_bytes()[at - 1].is_ascii_alphanumeric();
        if !before_ok || !text[from..].starts_with([' ', '\t']) {
            continue;
        }
        let mut words = Vec::new();
        let mut rest = &text[from..];
        loop {
            let trimmed = rest.trim_start_matches([' ', '\t']);
            if trimmed.len() == rest.len() && !words.is_empty() {
                break; // words are separated by blanks
            }
            let word = if let Some(quoted) = trimmed.strip_prefix('"') {
                quoted.find('"').map(|end| &trimmed[..end + 2])
            } else if let Some(quoted) = trimmed.strip_prefix('\'') {
                quoted.find('\'').map(|end| &trimmed[..end + 2])
            } else {
                let end = trimmed
                    .find(|c: char| !(c.is_ascii_alphanumeric() || "_.-[],<>=!~*:/".contains(c)))
                    .unwrap_or(trimmed.len());
                // A sentence's full stop or comma is not part of the word.
                let word = trimmed[..end].trim_end_matches(['.', ',', ':']);
                let looks_like = word.starts_with("--") || word.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric);
                looks_like.then_some(word)
            };
            let Some(word) = word else { break };
            words.push(word.to_string());
            rest = &trimmed[word.len()..];
        }
        if !words.is_empty() {
            out.push(format!("uv add {}", words.join(" ")));
        }
    }
    out
}

/// Every `uv add` line the data itself shows for a library: its install
/// lines (and its older package's) and the ones its install note names.
fn lines_of(lib: &Library) -> Vec<String> {
    let mut lines: Vec<String> = lib.install_lines().map(str::to_string).collect();
    lines.extend(lib.install_note.iter().flat_map(|n| uv_add_commands(n)));
    lines
}

/// Each library that has a reference page, with the page.
fn pages(k: &Knowledge) -> impl Iterator<Item = (&Library, &'static str)> {
    k.libraries.iter().filter_map(|lib| Some((lib, k.reference_page(&lib.id)?)))
}

fn all_lines(k: &Knowledge) -> Vec<String> {
    k.libraries.iter().flat_map(lines_of).collect()
}

#[test]
fn the_command_reader_reads_commands_in_prose_and_code() {
    assert_eq!(uv_add_commands("add the extra (uv add \"cupy-cuda12x[ctk]\") so"), ["uv add \"cupy-cuda12x[ctk]\""]);
    assert_eq!(
        uv_add_commands("uv add --extra-index-url=https://pypi.nvidia.com nx-cugraph-cu12   # CUDA 12"),
        ["uv add --extra-index-url=https://pypi.nvidia.com nx-cugraph-cu12"]
    );
    assert_eq!(uv_add_commands("pin `uv add \"warp-lang<1.18\"`. Then uv add zarr."), ["uv add \"warp-lang<1.18\"", "uv add zarr"]);
}

#[test]
fn reference_pages_show_the_install_lines_of_the_data() {
    let k = Knowledge::get();
    let mut wrong = Vec::new();
    for (lib, page) in pages(k) {
        let known = lines_of(lib);
        for command in uv_add_commands(page) {
            if !known.contains(&command) {
                wrong.push(format!("reference/{}.md shows `{command}`, which libraries.toml does not", lib.id));
            }
        }
        for line in lib.install_lines() {
            if !page.contains(line) {
                wrong.push(format!("reference/{}.md does not show the install line `{line}`", lib.id));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// "driver 535 or newer" / "driver 535+" next to an install line is that line's minimum.
#[test]
fn reference_pages_give_the_drivers_of_the_data() {
    let k = Knowledge::get();
    let mut wrong = Vec::new();
    for (lib, page) in pages(k) {
        let mut pairs = vec![(lib.install.cu12.as_str(), lib.min_driver.cu12)];
        pairs.extend(lib.install.cu13.as_deref().zip(lib.min_driver.cu13));
        if let Some(legacy) = &lib.legacy {
            pairs.push((legacy.install.cu12.as_str(), legacy.min_driver.cu12));
            pairs.extend(legacy.install.cu13.as_deref().zip(legacy.min_driver.cu13));
        }
        for text_line in page.lines() {
            let Some((_, driver)) = pairs.iter().find(|(install, _)| uv_add_commands(text_line).iter().any(|c| c == install))
            else {
                continue;
            };
            if let Some(at) = text_line.find("driver ") {
                let digits: String = text_line[at + 7..].chars().take_while(char::is_ascii_digit).collect();
                if !digits.is_empty() && digits != driver.to_string() {
                    wrong.push(format!("reference/{}.md: `{}` says driver {digits}, the data {driver}", lib.id, text_line.trim()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A page's status banner (`**Status: …**`) is the library's status; an
/// active library has none.
#[test]
fn reference_pages_give_the_status_of_the_data() {
    let k = Knowledge::get();
    let mut wrong = Vec::new();
    for (lib, page) in pages(k) {
        let banner = page.find("**Status: ").map(|at| {
            let rest = &page[at + "**Status: ".len()..];
            rest[..rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len())].to_ascii_lowercase()
        });
        match (lib.status, banner) {
            (Status::Active, Some(b)) => wrong.push(format!("reference/{}.md says status {b}; the data says active", lib.id)),
            (Status::Active, None) => {}
            (s, None) => wrong.push(format!("reference/{}.md has no status banner; the data says {}", lib.id, s.as_str())),
            (s, Some(b)) if b != s.as_str() => {
                wrong.push(format!("reference/{}.md says status {b}; the data says {}", lib.id, s.as_str()))
            }
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The rules' documentation (explain, hover), the API notes and fallback
/// reasons, and every message recorded in a snapshot show only install lines
/// of the data, and never `pip install`.
#[test]
fn rules_notes_and_messages_show_only_install_lines_of_the_data() {
    let k = Knowledge::get();
    let known = all_lines(k);
    let mut texts: Vec<(String, String)> = Vec::new();
    for r in RULES {
        for (field, text) in [("what", r.what()), ("why", r.why()), ("example", r.example()), ("use_instead", r.use_instead())] {
            texts.push((format!("rule {} {field}", r.code), text.to_string()));
        }
    }
    for api in &k.apis {
        texts.extend(api.note.iter().map(|n| (format!("note of {}", api.cpu), n.clone())));
        texts.extend(api.fallbacks.iter().map(|f| (format!("fallback of {}", api.cpu), f.reason.clone())));
    }
    for lib in &k.libraries {
        texts.push((format!("{} summary", lib.id), lib.summary.clone()));
        texts.extend(lib.successor.iter().map(|s| (format!("{} successor", lib.id), s.clone())));
        texts.extend(lib.legacy.iter().map(|l| (format!("{} legacy", lib.id), l.when.clone())));
    }
    texts.extend(pages(k).map(|(lib, page)| (format!("reference/{}.md", lib.id), page.to_string())));
    let snapshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut read = 0;
    for entry in std::fs::read_dir(&snapshots).unwrap() {
        let path = entry.unwrap().path();
        texts.push((format!("snapshot {}", path.file_name().unwrap().to_string_lossy()), std::fs::read_to_string(&path).unwrap()));
        read += 1;
    }
    assert!(read > 50, "the snapshots were not found in {}", snapshots.display());
    let mut wrong = Vec::new();
    let mut seen = 0;
    for (place, text) in &texts {
        if text.contains("pip install") {
            wrong.push(format!("{place} says `pip install`; gpulens says `uv add`"));
        }
        for command in uv_add_commands(text) {
            seen += 1;
            if !known.contains(&command) {
                wrong.push(format!("{place} shows `{command}`, which libraries.toml does not"));
            }
        }
    }
    assert!(seen > 100, "only {seen} install lines found: the reader is broken");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Code that imports a kernel package (rule examples, reference pages)
/// imports it as the data says: Numba-CUDA-MLIR's line, or the older
/// package's line where the text says it is the older one.
#[test]
fn kernel_imports_are_those_of_the_data() {
    let k = Knowledge::get();
    let numba = k.library("numba").unwrap();
    let current = numba.import_line.as_deref().unwrap();
    let legacy = numba.legacy.as_ref().and_then(|l| l.import_line.as_deref()).unwrap();
    for r in RULES.iter().filter(|r| r.library == "numba" && r.code.as_str().starts_with("NUMBA")) {
        assert!(r.use_instead().contains(current), "{}'s example should import `{current}`", r.code);
        assert!(!r.use_instead().contains(legacy), "{}'s example imports the older `{legacy}`", r.code);
    }
    let page = k.reference_page("numba").unwrap();
    assert!(page.contains(current) && page.contains(legacy), "reference/numba.md names both packages' imports");
}
