//! The text-like outputs of `check`, recorded whole: the one-line messages
//! of the default text and `--format concise`, what `--show-details` adds
//! under each finding, and `--statistics` as text and JSON. A new case is
//! a new entry in `CASES`; review changes with `cargo insta review`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The rule fixtures double as realistic inputs here.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../diagnostics/tests/fixtures")
}

/// (snapshot name, arguments after `check`): always for a named GPU, so the
/// output is the same on machines with and without one.
const CASES: &[(&str, &[&str])] = &[
    ("text", &["seed_numpy.py", "seed_pandas.py", "cuml_fallbacks.py"]),
    ("concise", &["--format", "concise", "seed_numpy.py", "seed_pandas.py", "cuml_fallbacks.py"]),
    ("show_details", &["--show-details", "seed_numpy.py", "seed_pandas.py", "cuml_fallbacks.py"]),
    ("concise_show_details", &["--format", "concise", "--show-details", "seed_sklearn.py"]),
    ("statistics", &["--statistics", "seed_numpy.py", "seed_pandas.py", "cuml_fallbacks.py", "gpu_mistakes.py"]),
    ("statistics_json", &["--statistics", "--format", "json", "seed_numpy.py", "seed_pandas.py", "cuml_fallbacks.py", "gpu_mistakes.py"]),
    ("statistics_none", &["--statistics", "--select", "CUSPATIAL", "seed_numpy.py"]),
];

#[test]
fn outputs() {
    for (name, args) in CASES {
        let out = Command::new(env!("CARGO_BIN_EXE_gpulens"))
            .arg("check")
            .args(["--no-cache", "--target-gpu", "H100 SXM"])
            .args(*args)
            .current_dir(fixtures())
            .output()
            .expect("gpulens runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{name}: {stderr}");
        insta::assert_snapshot!(*name, String::from_utf8_lossy(&out.stdout));
    }
}
