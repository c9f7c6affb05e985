//! `gpulens check --profile`: the findings of the example programs ranked
//! by profiles their profilers made of them (tests/fixtures/profiles, made
//! by tests/profiles/make with cProfile, py-spy and Scalene), a cProfile
//! made here and now, and the errors an unusable profile gets.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn gpulens(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpulens"))
        .arg("check")
        .arg("--no-cache")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("gpulens runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Each profiler's profile of each example, as text: ranked, with shares.
#[test]
fn findings_ranked_by_each_profilers_profile() {
    for program in ["image_filters", "spectral_analysis"] {
        for format in ["prof", "speedscope.json", "scalene.json"] {
            let profile = format!("tests/fixtures/profiles/{program}.{format}");
            let out = gpulens(&["--format", "concise", "--profile", &profile, &format!("examples/{program}.py")], &root());
            assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
            let text = stdout(&out);
            // Every finding of the program is in code the profile measured.
            assert!(!text.contains("not in the profile"), "{text}");
            insta::assert_snapshot!(format!("{program}.{format}"), text);
        }
    }
}

/// The heaviest loop comes first whichever profiler measured it.
#[test]
fn the_three_profilers_agree_on_the_hottest_finding() {
    for format in ["prof", "speedscope.json", "scalene.json"] {
        let profile = format!("tests/fixtures/profiles/image_filters.{format}");
        let text = stdout(&gpulens(&["--format", "concise", "--profile", &profile, "examples/image_filters.py"], &root()));
        let first = text.lines().find(|l| l.starts_with("examples/")).unwrap_or_default();
        assert!(first.starts_with("examples/image_filters.py:26:5: NUMBA001"), "{format}: {text}");
    }
}

/// JSON: each finding's measured share and where it came from; the
/// profile's own summary.
#[test]
fn json_carries_each_findings_share() {
    let out = gpulens(
        &["--format", "json", "--profile", "tests/fixtures/profiles/image_filters.speedscope.json", "examples/image_filters.py", "examples/spectral_analysis.py"],
        &root(),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["profile"]["format"], "speedscope");
    assert_eq!(v["profile"]["unit"], "seconds");
    assert_eq!(v["profile"]["files"], 1);
    let findings = v["findings"].as_array().unwrap();
    let blur = findings.iter().find(|f| f["line"] == 26).unwrap();
    assert_eq!(blur["profile"]["source"], "speedscope");
    assert_eq!(blur["profile"]["level"], "line");
    assert!(blur["profile"]["share"].as_f64().unwrap() > 0.5, "{blur}");
    // A file the profile never saw: its findings say so with null.
    let other = findings.iter().find(|f| f["path"] == "examples/spectral_analysis.py").unwrap();
    assert!(other["profile"].is_null(), "{other}");
}

/// A cProfile made now, of a program whose only hot function gets no
/// advice: named, with the reason.
#[test]
fn hot_code_without_advice_is_named_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("orbit.py"),
        "def logistic(n):\n    x = 0.5\n    for _ in range(n):\n        x = 3.9 * x * (1 - x)\n    return x\n\n\n\
         def main():\n    return logistic(2_000_000)\n\n\nif __name__ == \"__main__\":\n    main()\n",
    )
    .unwrap();
    let made = Command::new("python3").args(["-m", "cProfile", "-o", "run.prof", "orbit.py"]).current_dir(dir.path()).status();
    // (python3 is on every machine the test command runs on: it installs with it.)
    assert!(made.is_ok_and(|s| s.success()), "python3 -m cProfile failed");
    let out = gpulens(&["--profile", "run.prof", "orbit.py"], dir.path());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("Hot code with no advice:"), "{text}");
    assert!(text.contains("orbit.py:1: `logistic` (") && text.contains("its loop is a recurrence"), "{text}");
    assert!(text.contains("orbit.py:8: `main` (") && text.contains("spent in the functions it calls"), "{text}");
}

/// A missing file, a file that is no profile, and a profile of other
/// files: each a clear error (exit 2), the findings still shown.
#[test]
fn unusable_profiles_are_clear_errors() {
    for (profile, says) in [
        ("tests/fixtures/profiles/missing.prof", "missing.prof"),
        ("README.md", "not a profile gpulens reads"),
        ("tests/fixtures/profiles/image_filters.prof", "measured none of the checked files (it names image_filters.py"),
    ] {
        let out = gpulens(&["--profile", profile, "examples/spectral_analysis.py"], &root());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{profile}: {stderr}");
        assert!(stderr.contains(says), "{profile}: {stderr}");
        assert!(stdout(&out).contains("examples/spectral_analysis.py:"), "{profile}: the findings are still shown");
    }
}
