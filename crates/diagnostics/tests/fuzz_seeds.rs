//! The fuzz target `edits` (fuzz/, run by scripts/fuzz) without libFuzzer:
//! its committed seeds, and the inputs that once failed it, replayed through
//! the same oracle — incremental text, tree and findings equal to a fresh
//! parse and analysis after every notification.

#[path = "../../../fuzz/src/edits.rs"]
mod edits;

use std::path::Path;

#[test]
fn committed_fuzz_inputs_pass() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut count = 0;
    for dir in ["seeds/edits", "regressions/edits"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(dir)) else { continue };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let data = std::fs::read(&path).unwrap();
            eprintln!("replaying {}", path.display()); // shown if it fails
            edits::run(&data);
            count += 1;
        }
    }
    assert!(count >= 5, "the seeds are missing ({count} inputs found)");
}
