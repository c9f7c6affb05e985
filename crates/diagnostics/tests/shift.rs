//! `shift_findings`: the stand-in the server publishes while an edit's
//! analysis runs. Over every fixture: an edit away from every finding moves
//! them to exactly where an analysis of the new text puts them; an edit
//! inside a finding drops it, and only it.

use gpulens_diagnostics::{check_text, shift_findings, Finding, Settings};
use gpulens_gpu::GpuProfile;
use gpulens_syntax::ByteEdit;

fn fixtures() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    out.sort();
    out
}

/// A finding's range, code and the ranges its fix edits.
type Place = (std::ops::Range<usize>, &'static str, Vec<std::ops::Range<usize>>);

/// What a finding is, without its message (messages may quote line numbers).
fn places(findings: &[Finding]) -> Vec<Place> {
    findings
        .iter()
        .map(|f| (f.range.clone(), f.code.as_str(), f.fix.as_ref().map(|x| x.edits.iter().map(|e| e.range.clone()).collect()).unwrap_or_default()))
        .collect()
}

#[test]
fn an_edit_away_from_findings_moves_them_where_an_analysis_puts_them() {
    let (settings, gpu) = (Settings::default(), GpuProfile::target("H200").unwrap());
    let mut checked = 0;
    for (name, text) in fixtures() {
        let before = check_text(&text, &settings, &gpu);
        if before.is_empty() {
            continue;
        }
        // A comment line at the end of the file: after everything.
        let added = if text.ends_with('\n') { "# noted\n" } else { "\n# noted\n" };
        let end = text.len();
        let tail = format!("{text}{added}");
        let edits = [ByteEdit { start: end, old_end: end, new_end: end + added.len() }];
        assert_eq!(places(&shift_findings(&before, &edits)), places(&check_text(&tail, &settings, &gpu)), "{name}: edit at the end");
        // Two comment lines at the top of the file, in two steps (where no
        // finding starts: an insertion at a finding's first byte drops it).
        // Fixes that add an import at the top are dropped too (the edit
        // touches theirs): compare spans and codes.
        if before.iter().all(|f| f.range.start > 0) {
            let (one, two) = ("# one\n", "# two\n");
            let moved = format!("{one}{two}{text}");
            let edits = [
                ByteEdit { start: 0, old_end: 0, new_end: one.len() },
                ByteEdit { start: one.len(), old_end: one.len(), new_end: one.len() + two.len() },
            ];
            let spans = |f: &[Finding]| f.iter().map(|f| (f.range.clone(), f.code)).collect::<Vec<_>>();
            assert_eq!(spans(&shift_findings(&before, &edits)), spans(&check_text(&moved, &settings, &gpu)), "{name}: lines inserted at the top");
        }
        checked += 1;
    }
    assert!(checked > 10, "only {checked} fixtures had findings");
}

#[test]
fn an_edit_inside_a_finding_drops_it_and_only_it() {
    let (settings, gpu) = (Settings::default(), GpuProfile::target("H200").unwrap());
    for (name, text) in fixtures() {
        let before = check_text(&text, &settings, &gpu);
        let Some(target) = before.iter().find(|f| f.range.len() > 2) else { continue };
        let at = target.range.start + 1;
        let edits = [ByteEdit { start: at, old_end: at + 1, new_end: at + 1 }];
        let moved = shift_findings(&before, &edits);
        let touched = |f: &Finding| f.range.start <= at && at < f.range.end;
        assert!(moved.iter().all(|f| !touched(f)), "{name}: a touched finding survived");
        assert_eq!(moved.len(), before.iter().filter(|f| !touched(f)).count(), "{name}: untouched findings were dropped");
    }
}
