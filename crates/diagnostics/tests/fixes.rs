//! Fixes, over every fixture:
//! - `fix_all` with unsafe fixes: the whole rewrite, as a unified diff
//!   snapshot (`snapshots/fixes__<name>.snap`); it must add no syntax error;
//! - each fix alone: the result parses with no new syntax error, and the
//!   text outside the fix's edits is byte-for-byte the original.

use gpulens_diagnostics::{apply_fixes, check, fix_all, syntax_errors, Applicability, Settings};
use gpulens_gpu::GpuProfile;

fn diff(before: &str, after: &str) -> String {
    if before == after {
        return "(no change)\n".to_string();
    }
    similar::TextDiff::from_lines(before, after).unified_diff().context_radius(2).header("before", "after").to_string()
}

#[test]
fn every_fixture_rewritten() {
    insta::glob!("fixtures/*.py", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        let fixed = fix_all(&text, &Settings::default(), &GpuProfile::none(), true);
        assert_eq!(fixed.refused, 0, "{}: a pass added a syntax error", path.display());
        let before = syntax_errors(&gpulens_syntax::parse(&text));
        let after = syntax_errors(&gpulens_syntax::parse(&fixed.text));
        assert!(after <= before, "{}: {before} syntax errors before, {after} after", path.display());
        insta::assert_snapshot!(format!("{} fixes applied\n{}", fixed.applied, diff(&text, &fixed.text)));
    });
}

#[test]
fn each_fix_alone_keeps_the_rest_of_the_file() {
    insta::glob!("fixtures/*.py", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        let tree = gpulens_syntax::parse(&text);
        let errors = syntax_errors(&tree);
        for f in check(&text, &tree, &Settings::default(), &GpuProfile::none()) {
            let Some(fix) = &f.fix else { continue };
            let (new, applied) = apply_fixes(&text, [fix]);
            assert_eq!(applied, 1, "{}: {} fix not applied", path.display(), f.code);
            assert!(
                syntax_errors(&gpulens_syntax::parse(&new)) <= errors,
                "{}: the {} fix adds a syntax error:\n{new}",
                path.display(),
                f.code
            );
            // Walk the edits: everything between them is the original, in order.
            let (mut old_at, mut new_at) = (0, 0);
            for e in &fix.edits {
                let kept = &text[old_at..e.range.start];
                assert_eq!(&new[new_at..new_at + kept.len()], kept, "{}: {} changed text outside its edits", path.display(), f.code);
                new_at += kept.len();
                assert_eq!(&new[new_at..new_at + e.text.len()], e.text);
                new_at += e.text.len();
                old_at = e.range.end;
            }
            assert_eq!(&new[new_at..], &text[old_at..], "{}: {} changed the file's tail", path.display(), f.code);
        }
    });
}

#[test]
fn safe_fixes_alone_touch_only_what_cannot_change_behaviour() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/rewrite_timing.py")).unwrap();
    let fixed = fix_all(&text, &Settings::default(), &GpuProfile::none(), false);
    assert_eq!(fixed.applied, 1);
    assert!(fixed.text.contains("    cp.cuda.Device().synchronize()\n    elapsed = time.perf_counter() - start"), "{}", fixed.text);
    // The rewrite of the accelerators is unsafe: not applied without asking.
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/rewrite_accelerators.py")).unwrap();
    let tree = gpulens_syntax::parse(&text);
    let findings = check(&text, &tree, &Settings::default(), &GpuProfile::none());
    assert!(findings.iter().filter_map(|f| f.fix.as_ref()).all(|x| x.applicability == Applicability::Unsafe));
    assert_eq!(fix_all(&text, &Settings::default(), &GpuProfile::none(), false).text, text);
}

#[test]
fn small_data_and_clean_files_are_left_alone() {
    for name in ["small_data.py", "no_gpu_libraries.py", "gpu_correct.py", "loops_not_kernels.py"] {
        let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let fixed = fix_all(&text, &Settings::default(), &GpuProfile::none(), true);
        assert_eq!(fixed.text, text, "{name} was changed");
    }
}
