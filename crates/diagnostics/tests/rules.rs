//! Snapshot tests: every `fixtures/*.py` is checked with default settings and
//! the whole output is compared with `snapshots/rules__<name>.snap`. A new
//! case is a new fixture file; review changes with `cargo insta review`
//! (or accept them with `INSTA_UPDATE=always`).

use gpulens_diagnostics::{check, Settings};
use gpulens_gpu::GpuProfile;
use gpulens_syntax::{LineIndex, PositionEncoding};

fn render(text: &str) -> String {
    let tree = gpulens_syntax::parse(text);
    let findings = check(text, &tree, &Settings::default(), &GpuProfile::none());
    let index = LineIndex::new(text);
    let mut out = String::new();
    for f in &findings {
        let start = index.position(text, f.range.start, PositionEncoding::Utf32);
        let end = index.position(text, f.range.end, PositionEncoding::Utf32);
        let source = &text[index.line_range(text, start.line as usize)];
        out.push_str(&format!(
            "{}:{}-{}:{} {} {} {}\n  | {}\n  = {}\n",
            start.line + 1,
            start.character + 1,
            end.line + 1,
            end.character + 1,
            f.code,
            f.library,
            f.severity.as_str(),
            source.trim_end(),
            f.message
        ));
        if !f.details.is_empty() {
            out.push_str(&format!("  + {}\n", f.details));
        }
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str("(no findings)\n");
    }
    out
}

#[test]
fn fixtures() {
    insta::glob!("fixtures/*.py", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        insta::assert_snapshot!(render(&text));
    });
}

/// Longest message, in characters: one line a terminal, a problems panel or
/// virtual text shows whole. (Names of the user's own code can make one a
/// little longer than the ~100 aimed at.)
const LONGEST_MESSAGE: usize = 110;

/// Every finding of every fixture says what it is in one short line; the
/// rest is in its details.
#[test]
fn messages_are_one_short_line() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let mut long = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "py") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let tree = gpulens_syntax::parse(&text);
        for f in check(&text, &tree, &Settings::default(), &GpuProfile::none()) {
            seen += 1;
            let n = f.message.chars().count();
            if n > LONGEST_MESSAGE || f.message.contains('\n') || f.message.ends_with('.') {
                long.push(format!("{} {} ({n}): {}", path.file_name().unwrap().to_string_lossy(), f.code, f.message));
            }
            if let Some(fix) = &f.fix {
                if fix.message.chars().count() > 60 {
                    long.push(format!("{} {} fix title ({}): {}", path.file_name().unwrap().to_string_lossy(), f.code, fix.message.chars().count(), fix.message));
                }
            }
        }
    }
    assert!(seen > 200, "only {seen} findings: the fixtures were not read");
    assert!(long.is_empty(), "{}", long.join("\n"));
}

/// Every rule is shown at work by at least one fixture: its code appears in
/// a recorded snapshot of `fixtures/` (or, for advice that needs a GPU, of
/// `profiles/`).
#[test]
fn every_rule_has_a_fixture() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots");
    let snapshots: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with("rules__fixtures@") || n.starts_with("profiles__")
            })
        })
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(snapshots.len() > 50, "the fixtures' snapshots were not found in {dir}");
    let missing: Vec<&str> = gpulens_diagnostics::RULES
        .iter()
        .map(|r| r.code.as_str())
        .filter(|code| !snapshots.iter().any(|s| s.contains(&format!(" {code} "))))
        .collect();
    assert!(missing.is_empty(), "rules no fixture raises: {missing:?}");
}
