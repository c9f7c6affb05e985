//! End-to-end tests of the `gpulens` binary: exit codes, the three output
//! formats, folder walking, configuration and bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn gpulens(args: &[&str], dir: &Path) -> Output {
    // Some tests run in the fixtures folder: the cache goes to the build folder, not there.
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-cache");
    Command::new(env!("CARGO_BIN_EXE_gpulens")).args(args).current_dir(dir).env("GPULENS_CACHE_DIR", cache).output().expect("gpulens runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The rule fixtures double as realistic inputs here.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../diagnostics/tests/fixtures")
}

fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn json_check(args: &[&str], dir: &Path) -> (Value, Output) {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    let out = gpulens(&all, dir);
    let value: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(&out), stderr(&out)));
    (value, out)
}

fn libraries(v: &Value) -> Vec<String> {
    v["findings"].as_array().unwrap().iter().map(|f| f["library"].as_str().unwrap().to_string()).collect()
}

#[test]
fn exit_codes_clean_findings_and_missing() {
    let dir = fixtures();
    let clean = gpulens(&["check", "no_gpu_libraries.py"], &dir);
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
    assert!(stdout(&clean).contains("No findings in 1 file"));

    let findings = gpulens(&["check", "seed_numpy.py"], &dir);
    assert_eq!(findings.status.code(), Some(1));

    // A missing path is an error, reported on stderr; the other file is still checked.
    let missing = gpulens(&["check", "does_not_exist.py", "seed_numpy.py"], &dir);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("does_not_exist.py"), "{}", stderr(&missing));
    assert!(stdout(&missing).contains("seed_numpy.py:5:"), "{}", stdout(&missing));
}

#[test]
fn text_output_shows_path_line_and_source() {
    let out = gpulens(&["check", "seed_numpy.py"], &fixtures());
    let text = stdout(&out);
    assert!(text.contains("seed_numpy.py:5:12: CUPY001 [cupy]"), "{text}");
    assert!(text.contains("5 | spectrum = np.fft.fft(samples)"), "{text}");
    assert!(text.contains("  |            ^^^^^^^^^^^^^^^^^^^"), "{text}");
    assert!(!text.contains("uv add cupy-cuda12x"), "the install line is a detail\n{text}");
    assert!(text.contains("Found 3 findings in 1 file."), "{text}");
    let details = stdout(&gpulens(&["check", "--show-details", "seed_numpy.py"], &fixtures()));
    assert!(details.contains("uv add cupy-cuda12x"), "{details}");
}

#[test]
fn json_names_the_right_library_for_each_seed_example() {
    let dir = fixtures();
    for (file, library, count) in [
        ("seed_numpy.py", "cupy", 3),
        ("seed_pandas.py", "cudf", 2),
        ("seed_sklearn.py", "cuml", 2),
        ("seed_networkx.py", "cugraph", 2),
    ] {
        let (v, out) = json_check(&[file], &dir);
        assert_eq!(out.status.code(), Some(1), "{file}");
        let libs = libraries(&v);
        assert_eq!(libs.len(), count, "{file}: {libs:?}");
        assert!(libs.iter().all(|l| l == library), "{file}: {libs:?}");
        assert_eq!(v["version"], 1);
        assert_eq!(v["gpu"]["source"], "none");
        let f = &v["findings"][0];
        for key in ["path", "line", "column", "end_line", "end_column", "code", "severity", "message", "details"] {
            assert!(!f[key].is_null(), "{file}: {key} missing in {f}");
        }
        // The message is one line; the install line is among the details.
        assert!(f["message"].as_str().unwrap().chars().count() <= 110, "{file}: {f}");
        assert!(f["details"].as_str().unwrap().contains("Install: `uv add"), "{file}: {f}");
        assert!(f["fix"]["message"].as_str().unwrap().chars().count() <= 60, "{file}: {f}");
        // Every seed example has its rewrite, marked unsafe (it changes where the work runs).
        assert_eq!(f["fix"]["applicability"], "unsafe", "{file}: {f}");
        assert!(!f["fix"]["edits"].as_array().unwrap().is_empty(), "{file}: {f}");
        assert_eq!(f["path"], file);
    }
    let (v, out) = json_check(&["no_gpu_libraries.py"], &dir);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(v["findings"].as_array().unwrap().len(), 0);
}

#[test]
fn json_columns_count_unicode_scalars() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "wide.py", "import numpy as np\nx = np.random.rand(9_000_000); y = '数据'; z = np.sort(x)\n");
    let (v, _) = json_check(&["wide.py"], dir.path());
    let sort = &v["findings"][1];
    assert_eq!(sort["line"], 2);
    // "x = np.random.rand(9_000_000); y = '数据'; z = " is 45 scalars (49 bytes); the call starts at 46.
    assert_eq!(sort["column"], 46);
    assert_eq!(sort["end_column"], 56);
}

#[test]
fn sarif_is_a_valid_non_empty_run() {
    let out = gpulens(&["check", "--format", "sarif", "seed_pandas.py", "seed_sklearn.py"], &fixtures());
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], "2.1.0");
    assert!(v["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let run = &v["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "gpulens");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for r in results {
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], r["ruleId"], "ruleIndex points at the rule");
        assert!(["note", "warning", "error"].contains(&r["level"].as_str().unwrap()));
        assert!(!r["message"]["text"].as_str().unwrap().is_empty());
        let loc = &r["locations"][0]["physicalLocation"];
        assert!(loc["artifactLocation"]["uri"].as_str().unwrap().ends_with(".py"));
        assert!(loc["region"]["startLine"].as_u64().unwrap() >= 1);
        assert!(loc["region"]["startColumn"].as_u64().unwrap() >= 1);
    }
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
}

#[test]
fn github_format_annotates_each_finding() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["seed_pandas.py", "seed_sklearn.py"] {
        std::fs::copy(fixtures().join(name), dir.path().join(name)).unwrap();
    }
    // A message with a percent sign and a path with a comma, both escaped.
    write(dir.path(), "a,b.py", "import numpy as np\nx = np.random.rand(4096, 4096)\ny = np.fft.fft(x)  # 100% CPU\n");
    let (json, _) = json_check(&["--no-cache", "."], dir.path());
    let out = gpulens(&["check", "--no-cache", "--format", "github", ".", "missing.py"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(String::from).collect();
    let (annotations, problems): (Vec<&String>, Vec<&String>) = lines.iter().partition(|l| l.contains("title=gpulens "));
    assert_eq!(annotations.len(), json["findings"].as_array().unwrap().len(), "{lines:#?}");
    for (line, finding) in annotations.iter().zip(json["findings"].as_array().unwrap()) {
        let level = match finding["severity"].as_str().unwrap() {
            "error" => "error",
            "warning" => "warning",
            _ => "notice",
        };
        let path = finding["path"].as_str().unwrap().replace(',', "%2C");
        let expected = format!(
            "::{level} file={path},line={},col={},endLine={},endColumn={},title=gpulens {} [{}]::",
            finding["line"], finding["column"], finding["end_line"], finding["end_column"], finding["code"].as_str().unwrap(), finding["library"].as_str().unwrap()
        );
        assert!(line.starts_with(&expected), "{line}\n{expected}");
        assert!(!line.contains('\r'));
        // The one-line message, then the details on lines of their own (escaped newlines).
        let escape = |s: &str| s.replace('%', "%25");
        let body = format!("{}%0A%0A{}", escape(finding["message"].as_str().unwrap()), escape(finding["details"].as_str().unwrap()));
        assert!(line.ends_with(&body), "{line}");
    }
    assert!(annotations.iter().any(|l| l.starts_with("::") && l.contains("file=a%2Cb.py")), "{lines:#?}");
    assert_eq!(problems.len(), 1, "{lines:#?}");
    assert!(problems[0].starts_with("::error file=missing.py,title=gpulens::"), "{}", problems[0]);
}

#[test]
fn select_and_ignore() {
    let dir = fixtures();
    let (v, _) = json_check(&["--select", "CUDF001", "seed_pandas.py"], &dir);
    let codes: Vec<_> = v["findings"].as_array().unwrap().iter().map(|f| f["code"].clone()).collect();
    assert_eq!(codes, ["CUDF001"]);
    let (v, out) = json_check(&["--ignore", "CUDF", "seed_pandas.py"], &dir);
    assert_eq!(v["findings"].as_array().unwrap().len(), 0);
    assert_eq!(out.status.code(), Some(0));
    let (v, _) = json_check(&["--select", "cupy,CUDF002", "seed_pandas.py", "seed_numpy.py"], &dir);
    assert_eq!(v["findings"].as_array().unwrap().len(), 4);
}

#[test]
fn folders_are_walked_and_gitignore_respected() {
    let dir = tempfile::tempdir().unwrap();
    let src = "import numpy as np\nx = np.fft.fft(np.random.rand(1_000_000))\n";
    write(dir.path(), "pkg/a.py", src);
    write(dir.path(), "pkg/sub/b.py", src);
    write(dir.path(), "build/generated.py", src);
    write(dir.path(), "pkg/notes.txt", src);
    write(dir.path(), ".gitignore", "build/\n");
    let (v, _) = json_check(&["."], dir.path());
    let mut paths: Vec<_> = v["findings"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
    paths.dedup();
    assert_eq!(paths, ["pkg/a.py", "pkg/sub/b.py"]);
    // With no path at all, the current folder is checked.
    let (v2, _) = json_check(&[], dir.path());
    assert_eq!(v["findings"], v2["findings"]);
}

#[test]
fn pyproject_configuration_applies_to_files_below_it() {
    let dir = tempfile::tempdir().unwrap();
    let src = "import numpy as np\nimport pandas as pd\nx = np.sort(np.random.rand(1_000_000))\ndf = pd.read_csv('a.csv')\n";
    write(dir.path(), "app/pyproject.toml", "[project]\nname = \"app\"\n\n[tool.gpulens]\nignore = [\"CUPY\"]\n");
    write(dir.path(), "app/src/main.py", src);
    write(dir.path(), "other/main.py", src);
    let (v, _) = json_check(&["."], dir.path());
    let found: Vec<_> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{} {}", f["path"].as_str().unwrap(), f["code"].as_str().unwrap()))
        .collect();
    assert_eq!(found, ["app/src/main.py CUDF001", "other/main.py CUPY001", "other/main.py CUPY001", "other/main.py CUDF001"]);
    // --select on the command line replaces the file's select; its ignore still applies.
    let (v, _) = json_check(&["--select", "CUPY", "app"], dir.path());
    assert_eq!(v["findings"].as_array().unwrap().len(), 0);
}

#[test]
fn bad_configuration_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pyproject.toml", "[tool.gpulens]\nslect = [\"CUPY\"]\n");
    write(dir.path(), "a.py", "import numpy as np\nx = np.sort(np.random.rand(1_000_000))\n");
    let out = gpulens(&["check", "."], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("slect"), "{}", stderr(&out));
    assert!(stdout(&out).contains("a.py:2:"), "the file is still checked with defaults");
}

#[test]
fn undecodable_and_binary_files_are_reported_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let src = "import numpy as np\nx = np.sort(np.random.rand(1_000_000))\n";
    write(dir.path(), "good.py", src);
    write(dir.path(), "latin.py", b"# -*- coding: latin-1 -*-\nimport numpy as np\nname = '\xe9'\nx = np.sort(np.random.rand(1_000_000))\n");
    write(dir.path(), "broken.py", b"import numpy as np\nname = '\xff\xfe'\n");
    write(dir.path(), "binary.py", b"\x7fELF\x00\x00\x01");
    let (v, out) = json_check(&["."], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("broken.py") && err.contains("UTF-8"), "{err}");
    assert!(err.contains("binary.py") && err.contains("binary"), "{err}");
    let mut paths: Vec<_> = v["findings"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
    paths.dedup();
    assert_eq!(paths, ["good.py", "latin.py"]);
    // The column after a latin-1 'é' counts it as one character.
    let latin_sort = v["findings"].as_array().unwrap().iter().find(|f| f["path"] == "latin.py").unwrap();
    assert_eq!(latin_sort["line"], 4);
}

#[test]
fn big_and_deeply_nested_input_does_not_crash() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!("import numpy as np\nx = {}1{}\ny = np.sort(np.random.rand(1_000_000))\n", "(".repeat(20_000), ")".repeat(20_000));
    write(dir.path(), "deep.py", deep);
    let attr = format!("import numpy as np\ny = np.sort({}x)\n", "a.".repeat(20_000));
    write(dir.path(), "attr.py", attr);
    let mut big = String::from("import numpy as np\n");
    while big.len() < 20_000_000 {
        big.push_str("values = [i * 2 for i in range(100)]  # a line of padding text\n");
    }
    big.push_str("last = np.sort(np.random.rand(1_000_000))\n");
    write(dir.path(), "big.py", big);
    let out = gpulens(&["check", "--format", "json", "."], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut found: Vec<_> = v["findings"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
    found.dedup();
    assert_eq!(found, ["attr.py", "big.py", "deep.py"]);
}

#[test]
fn rules_and_explain() {
    let dir = fixtures();
    let out = gpulens(&["rules", "--json"], &dir);
    let rules: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<_> = rules.as_array().unwrap().iter().map(|r| r["code"].as_str().unwrap()).collect();
    for code in ["CUPY001", "CUDF001", "CUDF002", "CUDF003", "CUML001", "CUML002", "CUGRAPH001", "RAFT001"] {
        assert!(codes.contains(&code), "{code}");
    }
    let explain = gpulens(&["explain", "cuml002"], &dir);
    assert_eq!(explain.status.code(), Some(0));
    let text = stdout(&explain);
    assert!(text.contains("## Why") && text.contains("positive=True") && text.contains("uv add cuml-cu12"), "{text}");
    // When and against what the library's facts were checked.
    assert!(text.contains("## Checked\nThe status and install facts above were last checked on 20"), "{text}");
    assert!(text.contains("- cuml-cu12 >=26.10: requires scikit-learn>=1.6 (its package metadata)"), "{text}");
    // A kernel rule says which package it writes for, and when the older one is still right.
    let numba = stdout(&gpulens(&["explain", "NUMBA001"], &dir));
    assert!(numba.contains("from numba_cuda_mlir import cuda") && numba.contains("uv add \"numba-cuda-mlir[cu12]\""), "{numba}");
    assert!(numba.contains("Older package: numba-cuda (maintenance)") && numba.contains("compute capability below 7.0"), "{numba}");
    let unknown = gpulens(&["explain", "NOPE001"], &dir);
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn readme_lists_every_rule() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    for rule in gpulens_diagnostics::RULES {
        let row = format!("| {} |", rule.code);
        assert!(readme.contains(&row), "README.md's rule table lacks {}", rule.code);
        assert!(readme.contains(rule.summary), "README.md's summary of {} is stale", rule.code);
    }
}

#[test]
fn gpu_report_without_a_gpu_and_with_a_target() {
    let dir = fixtures();
    let out = gpulens(&["gpu", "--json"], &dir);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in ["available", "error", "driver_version", "cuda_driver_version"] {
        assert!(v["nvml"].get(key).is_some(), "nvml.{key} missing: {v}");
    }
    if v["nvml"]["available"] == false {
        assert_eq!(v["devices"].as_array().unwrap().len(), 0);
        assert_eq!(v["profile"]["source"], "none");
        assert!(stdout(&gpulens(&["gpu"], &dir)).contains("No NVIDIA GPU found"));
    }
    let target: Value = serde_json::from_slice(&gpulens(&["gpu", "--json", "--target-gpu", "4090"], &dir).stdout).unwrap();
    assert_eq!(target["profile"]["source"], "target");
    assert_eq!(target["profile"]["name"], "NVIDIA GeForce RTX 4090");
    let bad = gpulens(&["gpu", "--target-gpu", "Voodoo 3"], &dir);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("unknown GPU"));
}

#[test]
fn target_gpu_tunes_the_advice() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "matrices.py", "import cupy as cp\nimport pandas as pd\na = cp.random.rand(4096, 4096)\nb = a @ a\ndf = pd.read_parquet('x.parquet')\n");
    let (rtx, _) = json_check(&["--target-gpu", "RTX 4090", "matrices.py"], dir.path());
    assert_eq!(rtx["gpu"]["source"], "target");
    assert_eq!(rtx["gpu"]["name"], "NVIDIA GeForce RTX 4090");
    let codes = |v: &Value| v["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert!(codes(&rtx).contains(&"GPU010".to_string()), "{rtx}");
    let (h100, _) = json_check(&["--target-gpu", "H100 SXM", "matrices.py"], dir.path());
    assert!(!codes(&h100).contains(&"GPU010".to_string()), "{h100}");
    let (gtx, _) = json_check(&["--target-gpu", "GTX 1080", "matrices.py"], dir.path());
    let cudf = gtx["findings"].as_array().unwrap().iter().find(|f| f["library"] == "cudf").unwrap();
    assert!(cudf["message"].as_str().unwrap().contains("cannot run on"), "{cudf}");
    // The same target from pyproject.toml.
    write(dir.path(), "pyproject.toml", "[tool.gpulens]\ntarget-gpu = \"T4\"\n");
    let (t4, _) = json_check(&["matrices.py"], dir.path());
    assert_eq!(t4["gpu"]["name"], "Tesla T4");
}

#[test]
fn diff_previews_every_fix_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let numpy = "import numpy as np\na = np.random.rand(10_000_000)\nb = np.fft.fft(a)\nc = np.sort(b.real)\n";
    write(dir.path(), "spectrum.py", numpy);
    write(dir.path(), "clean.py", "import numpy as np\nx = np.zeros(10)\nprint(x.sum())\n");
    let out = gpulens(&["check", "--diff", "."], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let diff = stdout(&out);
    assert!(diff.contains("--- a/spectrum.py") && diff.contains("+b = cp.fft.fft(a)") && diff.contains("+import cupy as cp"), "{diff}");
    assert!(!diff.contains("clean.py"), "{diff}");
    assert_eq!(std::fs::read_to_string(dir.path().join("spectrum.py")).unwrap(), numpy);
}

#[test]
fn fix_applies_safe_fixes_and_unsafe_ones_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let timing = "import time\n\nimport cupy as cp\n\n\ndef bench(n):\n    x = cp.random.rand(n)\n    t0 = time.perf_counter()\n    y = cp.fft.fft(x)\n    return y, time.perf_counter() - t0\n";
    let pandas = "import pandas as pd\ndf = pd.read_parquet(\"big.parquet\")\nprint(df.groupby(\"a\")[\"b\"].mean())\n";
    write(dir.path(), "timing.py", timing);
    write(dir.path(), "report.py", pandas);
    let out = gpulens(&["check", "--fix", "."], dir.path());
    assert_eq!(out.status.code(), Some(1), "the pandas findings remain: {}", stderr(&out));
    let fixed = std::fs::read_to_string(dir.path().join("timing.py")).unwrap();
    assert!(fixed.contains("    cp.cuda.Device().synchronize()\n    return y, time.perf_counter() - t0"), "{fixed}");
    assert_eq!(std::fs::read_to_string(dir.path().join("report.py")).unwrap(), pandas, "unsafe fix applied without asking");
    let out = gpulens(&["check", "--fix", "--unsafe-fixes", "report.py"], dir.path());
    assert!(stderr(&out).contains("applied"), "{}", stderr(&out));
    let rewritten = std::fs::read_to_string(dir.path().join("report.py")).unwrap();
    assert!(rewritten.starts_with("import cudf.pandas\ncudf.pandas.install()\nimport pandas as pd\n"), "{rewritten}");
}

#[test]
fn fix_keeps_a_latin1_file_in_latin1() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"# -*- coding: latin-1 -*-\n# caf\xe9\nimport pandas as pd\ndf = pd.read_csv(\"x.csv\")\n".to_vec();
    bytes.extend_from_slice(b"print(df.groupby(\"a\").size())\n");
    write(dir.path(), "latin.py", &bytes);
    let out = gpulens(&["check", "--fix", "--unsafe-fixes", "latin.py"], dir.path());
    assert_ne!(out.status.code(), Some(2), "{}", stderr(&out));
    let after = std::fs::read(dir.path().join("latin.py")).unwrap();
    assert!(after.windows(5).any(|w| w == b"caf\xe9\n"), "still latin-1");
    assert!(std::str::from_utf8(&after).is_err());
    assert!(after.windows(21).any(|w| w == b"cudf.pandas.install()"));
}
