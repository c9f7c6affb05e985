//! End-to-end tests of the cache of `gpulens check`: a warm run prints
//! exactly what a run without the cache prints, reuses what it can, and
//! analyses afresh whatever changed — a file's bytes, the settings, the GPU,
//! the binary. A damaged or unwritable cache is never an error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

/// Runs `bin check ARGS` in `dir`, with the cache's statistics on stderr.
fn check_with(bin: &Path, args: &[&str], dir: &Path) -> Output {
    let mut tries = 0;
    loop {
        let run = Command::new(bin)
            .arg("check")
            .args(args)
            .current_dir(dir)
            .env_remove("GPULENS_CACHE_DIR")
            .env("GPULENS_LOG", "debug")
            .output();
        match run {
            // A binary just copied can be "busy" while a process that another
            // test thread forks still holds the copy's descriptor.
            Err(e) if e.raw_os_error() == Some(26) && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            run => return run.expect("gpulens runs"),
        }
    }
}

fn check(args: &[&str], dir: &Path) -> Output {
    check_with(Path::new(env!("CARGO_BIN_EXE_gpulens")), args, dir)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// (files reused, files checked) from the debug line, or None without a cache.
fn reused(o: &Output) -> Option<(usize, usize)> {
    let err = stderr(o);
    let line = err.lines().find(|l| l.starts_with("gpulens: debug: cache "))?;
    let tail = line.rsplit_once(": ")?.1;
    let mut words = tail.split(' ');
    let reused = words.next()?.parse().ok()?;
    let total = words.nth(1)?.parse().ok()?;
    Some((reused, total))
}

/// Asserts that `cached` printed and exited exactly as `fresh` did.
fn assert_same(cached: &Output, fresh: &Output, what: &str) {
    assert_eq!(cached.status.code(), fresh.status.code(), "{what}: exit status\n{}", stderr(cached));
    assert!(cached.stdout == fresh.stdout, "{what}: output differs\n--- cached\n{}\n--- fresh\n{}", stdout(cached), stdout(fresh));
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../diagnostics/tests/fixtures")
}

/// A project of a few rule fixtures (findings with and without fixes,
/// suppressions, a file with none) and a file in Latin-1.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["seed_numpy.py", "seed_pandas.py", "loops_kernels.py", "suppressions.py", "no_gpu_libraries.py"] {
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::copy(fixtures().join(name), dir.path().join("src").join(name)).unwrap();
    }
    let mut latin1 = b"# -*- coding: latin-1 -*-\n# caf\xe9\nimport numpy as np\n".to_vec();
    latin1.extend_from_slice(b"x = np.fft.fft(np.random.rand(1_000_000))  # \xe9\xe9\n");
    std::fs::write(dir.path().join("src/latin1.py"), latin1).unwrap();
    dir
}

const FILES: usize = 6;

#[test]
fn a_warm_run_prints_what_a_run_without_the_cache_prints() {
    let dir = project();
    let d = dir.path();
    for format in ["text", "json", "sarif"] {
        let fresh = check(&["--no-cache", "--format", format, "src"], d);
        assert_eq!(fresh.status.code(), Some(1), "{}", stderr(&fresh));
        assert_eq!(reused(&fresh), None, "--no-cache uses no cache");
        // The text run fills the cache; JSON, which shows fixes too, reads it.
        let first = check(&["--format", format, "src"], d);
        assert_same(&first, &fresh, format);
        let warm = check(&["--format", format, "src"], d);
        assert_same(&warm, &fresh, format);
        assert_eq!(reused(&warm), Some((FILES, FILES)), "{format}: {}", stderr(&warm));
    }
    // The fixes came back from the cache whole.
    let json: serde_json::Value = serde_json::from_slice(&check(&["--format", "json", "src"], d).stdout).unwrap();
    let fixes = json["findings"].as_array().unwrap().iter().filter(|f| !f["fix"].is_null()).count();
    assert!(fixes > 0, "{json}");
}

/// Replaces `from` with `to` (of the same length) in `path`, keeping its
/// modification time, so only the content tells that it changed.
fn edit_in_place(path: &Path, from: &str, to: &str) {
    assert_eq!(from.len(), to.len());
    let modified = std::fs::metadata(path).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from:?} not in {}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
    std::fs::File::options().write(true).open(path).unwrap().set_modified(modified).unwrap();
}

#[test]
fn an_edited_file_is_analysed_again_and_only_it() {
    let dir = project();
    let d = dir.path();
    check(&["src"], d);
    let before = check(&["src"], d);
    assert_eq!(reused(&before), Some((FILES, FILES)));
    // Same size, same modification time: the bytes differ.
    edit_in_place(&d.join("src/seed_numpy.py"), "spectrum = np.fft.fft(", "spectrum =np.fft.ifft(");
    let after = check(&["src"], d);
    assert_eq!(reused(&after), Some((FILES - 1, FILES)), "{}", stderr(&after));
    assert_same(&after, &check(&["--no-cache", "src"], d), "after the edit");
    assert!(stdout(&after) != stdout(&before), "the edit changes the findings");
    assert!(stdout(&after).contains("ifft"), "{}", stdout(&after));
}

#[test]
fn settings_invalidate_the_files_they_apply_to() {
    let dir = project();
    let d = dir.path();
    check(&["src"], d);
    // --select: every file is analysed again, once.
    let select = check(&["--select", "CUPY", "src"], d);
    assert_eq!(reused(&select), Some((0, FILES)));
    assert_same(&select, &check(&["--no-cache", "--select", "CUPY", "src"], d), "--select");
    assert!(stdout(&select) != stdout(&check(&["src"], d)), "--select changes the output");
    assert_eq!(reused(&check(&["--select", "CUPY", "src"], d)), Some((FILES, FILES)));
    // Both configurations stay cached side by side.
    assert_eq!(reused(&check(&["src"], d)), Some((FILES, FILES)));

    // A pyproject.toml applies to the files below it only.
    std::fs::create_dir_all(d.join("src/sub")).unwrap();
    std::fs::rename(d.join("src/seed_pandas.py"), d.join("src/sub/seed_pandas.py")).unwrap();
    let moved = check(&["src"], d);
    assert_eq!(reused(&moved), Some((FILES - 1, FILES)), "a new path is a new entry");
    std::fs::write(d.join("src/sub/pyproject.toml"), "[tool.gpulens]\nignore = [\"CUDF\"]\n").unwrap();
    let configured = check(&["src"], d);
    assert_eq!(reused(&configured), Some((FILES - 1, FILES)), "{}", stderr(&configured));
    assert_same(&configured, &check(&["--no-cache", "src"], d), "pyproject.toml");
    let cudf = |o: &Output| stdout(o).lines().any(|l| l.starts_with("src/sub/seed_pandas.py:") && l.contains(" CUDF"));
    assert!(!cudf(&configured), "{}", stdout(&configured));
    std::fs::write(d.join("src/sub/pyproject.toml"), "[tool.gpulens]\nmin-elements = 5\n").unwrap();
    let changed = check(&["src"], d);
    assert_eq!(reused(&changed), Some((FILES - 1, FILES)));
    assert_same(&changed, &check(&["--no-cache", "src"], d), "pyproject.toml changed");
    assert!(cudf(&changed), "{}", stdout(&changed));
}

#[test]
fn the_target_gpu_invalidates() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("matrices.py"), "import cupy as cp\na = cp.random.rand(4096, 4096)\nb = a @ a\n").unwrap();
    for gpu in ["RTX 4090", "H100 SXM"] {
        let first = check(&["--format", "json", "--target-gpu", gpu, "."], d);
        assert_eq!(reused(&first), Some((0, 1)), "{gpu}");
        assert_same(&first, &check(&["--no-cache", "--format", "json", "--target-gpu", gpu, "."], d), gpu);
    }
    // The float64 advice is for the RTX 4090 only: had its result been
    // reused for the H100, the two outputs would be equal.
    let rtx = check(&["--format", "json", "--target-gpu", "RTX 4090", "."], d);
    let h100 = check(&["--format", "json", "--target-gpu", "H100 SXM", "."], d);
    assert_eq!((reused(&rtx), reused(&h100)), (Some((1, 1)), Some((1, 1))));
    assert!(stdout(&rtx).contains("GPU010") && !stdout(&h100).contains("GPU010"), "{}\n{}", stdout(&rtx), stdout(&h100));
    // The same from pyproject.toml.
    std::fs::write(d.join("pyproject.toml"), "[tool.gpulens]\ntarget-gpu = \"RTX 4090\"\n").unwrap();
    let configured = check(&["--format", "json", "."], d);
    assert_same(&configured, &check(&["--no-cache", "--format", "json", "."], d), "target-gpu in pyproject.toml");
    assert!(stdout(&configured).contains("GPU010"));
}

/// Every cache file under `dir`.
/// The findings' cache files under `dir` (not the stored project index).
fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for version in std::fs::read_dir(dir).unwrap() {
        let version = version.unwrap().path();
        if version.is_dir() {
            found.extend(std::fs::read_dir(&version).unwrap().map(|e| e.unwrap().path()).filter(|p| !p.ends_with("project-index")));
        }
    }
    found
}

#[test]
fn a_damaged_cache_is_rebuilt() {
    let dir = project();
    let d = dir.path();
    let fresh = check(&["--format", "json", "src"], d);
    let files = cache_files(&d.join(".gpulens_cache"));
    assert_eq!(files.len(), 1, "{files:?}");
    let good = std::fs::read(&files[0]).unwrap();
    let damages: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("garbage", b"not a cache at all".repeat(100)),
        ("cut short", good[..good.len() / 2].to_vec()),
        ("one byte changed", {
            let mut b = good.clone();
            let at = b.len() - 10;
            b[at] ^= 0x20;
            b
        }),
        ("header only", good[..44].to_vec()),
    ];
    for (what, bytes) in damages {
        std::fs::write(&files[0], &bytes).unwrap();
        let run = check(&["--format", "json", "src"], d);
        assert_same(&run, &fresh, what);
        assert!(!stderr(&run).contains("error") && !stderr(&run).contains("warning"), "{what}: {}", stderr(&run));
        assert_eq!(reused(&run), Some((0, FILES)), "{what}");
        // ...and written anew.
        assert_eq!(reused(&check(&["--format", "json", "src"], d)), Some((FILES, FILES)), "{what}");
    }
}

#[test]
fn an_unwritable_cache_costs_a_warning_only() {
    let dir = project();
    let d = dir.path();
    std::fs::write(d.join("not-a-folder"), "").unwrap();
    let fresh = check(&["--no-cache", "src"], d);
    let run = check(&["--cache-dir", "not-a-folder/cache", "src"], d);
    assert_same(&run, &fresh, "unwritable");
    assert!(stderr(&run).contains("warning: cannot write the cache"), "{}", stderr(&run));
    assert!(!stderr(&run).contains("gpulens: error"), "{}", stderr(&run));
}

#[test]
fn where_the_cache_goes_and_no_cache() {
    let dir = project();
    let d = dir.path();
    // --no-cache writes nothing, wherever the cache would have gone.
    let env_dir = d.join("from-env");
    let out = Command::new(env!("CARGO_BIN_EXE_gpulens"))
        .args(["check", "--no-cache", "src"])
        .current_dir(d)
        .env("GPULENS_CACHE_DIR", &env_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!env_dir.exists() && !d.join(".gpulens_cache").exists());
    assert_eq!(reused(&check(&["--no-cache", "src"], d)), None);
    assert!(!d.join(".gpulens_cache").exists());
    // Nor does fixing, which always reads the files afresh.
    check(&["--diff", "src"], d);
    assert!(!d.join(".gpulens_cache").exists());

    // By default: .gpulens_cache here, kept out of version control and backups.
    check(&["src"], d);
    let default = d.join(".gpulens_cache");
    assert_eq!(std::fs::read_to_string(default.join(".gitignore")).unwrap().lines().last(), Some("*"));
    assert!(std::fs::read_to_string(default.join("CACHEDIR.TAG")).unwrap().starts_with("Signature: 8a477f597d28d172789f06886806bc55"));
    assert_eq!(cache_files(&default).len(), 1);
    // The walk does not enter it, nor count it.
    let out = check(&["."], d);
    assert!(stdout(&out).contains(&format!("in {FILES} files")), "{}", stdout(&out));

    // GPULENS_CACHE_DIR, and --cache-dir over it.
    let out = Command::new(env!("CARGO_BIN_EXE_gpulens"))
        .args(["check", "src"])
        .current_dir(d)
        .env("GPULENS_CACHE_DIR", &env_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(cache_files(&env_dir).len(), 1);
    let flag_dir = d.join("from-flag");
    let out = Command::new(env!("CARGO_BIN_EXE_gpulens"))
        .args(["check", "--cache-dir"])
        .arg(&flag_dir)
        .arg("src")
        .current_dir(d)
        .env("GPULENS_CACHE_DIR", d.join("unused"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(cache_files(&flag_dir).len(), 1);
    assert!(!d.join("unused").exists());
}

#[test]
fn fixing_never_reuses_results_of_the_text_before() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let timing = "import time\n\nimport cupy as cp\n\n\ndef bench(n):\n    x = cp.random.rand(n)\n    t0 = time.perf_counter()\n    y = cp.fft.fft(x)\n    return y, time.perf_counter() - t0\n";
    std::fs::write(d.join("timing.py"), timing).unwrap();
    let before = check(&["."], d);
    assert!(stdout(&before).contains("GPU005"), "{}", stdout(&before));
    let fixed = check(&["--fix", "."], d);
    assert_eq!(reused(&fixed), None, "fixing reads no cache");
    let after = check(&["."], d);
    assert_eq!(reused(&after), Some((0, 1)));
    assert_same(&after, &check(&["--no-cache", "."], d), "after --fix");
    assert!(!stdout(&after).contains("GPU005"), "{}", stdout(&after));
}

#[test]
fn another_build_does_not_reuse_results() {
    let dir = project();
    let d = dir.path();
    // A copy of the binary stands for a rebuilt one: a new modification time.
    let bin = d.join("gpulens-copy");
    std::fs::copy(env!("CARGO_BIN_EXE_gpulens"), &bin).unwrap();
    check_with(&bin, &["src"], d);
    assert_eq!(reused(&check_with(&bin, &["src"], d)), Some((FILES, FILES)));
    let later = SystemTime::now() + Duration::from_secs(60);
    std::fs::File::options().write(true).open(&bin).unwrap().set_modified(later).unwrap();
    assert_eq!(reused(&check_with(&bin, &["src"], d)), Some((0, FILES)));
}

#[test]
fn runs_at_the_same_time_leave_a_good_cache() {
    let dir = project();
    let d = dir.path();
    let fresh = check(&["--no-cache", "--format", "json", "src"], d);
    let children: Vec<_> = (0..6)
        .map(|i| {
            let format = if i % 2 == 0 { "json" } else { "text" };
            Command::new(env!("CARGO_BIN_EXE_gpulens"))
                .args(["check", "--format", format, "src"])
                .current_dir(d)
                .env_remove("GPULENS_CACHE_DIR")
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert_eq!(child.wait().unwrap().code(), Some(1));
    }
    let after = check(&["--format", "json", "src"], d);
    assert_same(&after, &fresh, "after parallel runs");
    assert_eq!(reused(&after), Some((FILES, FILES)));
}

/// One module's declared return is another's evidence (the project index):
/// `report.py` groups what `utils.load` declares to be a DataFrame. When
/// `utils.py` changes what it declares, the cached findings of `report.py`
/// (whose own bytes did not change) are not reused.
#[test]
fn a_module_reads_what_another_declares_and_the_cache_follows_it() {
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path().join("shop");
    std::fs::create_dir_all(&package).unwrap();
    std::fs::write(package.join("__init__.py"), "").unwrap();
    std::fs::write(package.join("utils.py"), "import pandas as pd\n\n\ndef load(path) -> pd.DataFrame:\n    return pd.read_csv(path)\n").unwrap();
    std::fs::write(
        package.join("report.py"),
        "from . import utils\n\n\ndef summarize(path):\n    sales = utils.load(path)\n    return sales.groupby(\"store\").sum()\n",
    )
    .unwrap();
    // (What the guess rests on is among the details.)
    let first = check(&["--show-details"], dir.path());
    let out = stdout(&first);
    assert!(out.contains("report.py:6:12: CUDF002"), "{out}");
    assert!(out.contains("`sales` is what `shop.utils.load` returns"), "{out}");
    // Named alone (as pre-commit names the files it checks), a file still
    // reads what the other modules of its package declare.
    let alone = stdout(&check(&["--no-cache", "shop/report.py"], dir.path()));
    assert!(alone.contains("report.py:6:12: CUDF002"), "{alone}");
    edit_in_place(&package.join("utils.py"), "-> pd.DataFrame", "-> str         ");
    let second = check(&[], dir.path());
    assert!(!stdout(&second).contains("report.py"), "{}", stdout(&second));
    assert_same(&second, &check(&["--no-cache"], dir.path()), "after the declaration changed");
}

/// A type alias one module defines (`Table = pd.Series | list`) types the
/// parameters another module annotates with it (`y: types.Table`); when the
/// alias changes, the cached findings of the module using it are not reused.
#[test]
fn a_type_alias_from_another_module_types_a_parameter() {
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path().join("enc");
    std::fs::create_dir_all(&package).unwrap();
    std::fs::write(package.join("__init__.py"), "").unwrap();
    std::fs::write(package.join("types.py"), "import pandas as pd\n\nTable = list | pd.Series\n").unwrap();
    std::fs::write(
        package.join("fit.py"),
        "import numpy as np\n\nimport enc.types as t\n\n\ndef means(y: t.Table, keys):\n    return y.groupby(keys).mean() + np.pi\n",
    )
    .unwrap();
    let first = stdout(&check(&[], dir.path()));
    assert!(first.contains("fit.py:7:12: CUDF002"), "{first}");
    edit_in_place(&package.join("types.py"), "pd.Series", "pd.Foo   ");
    let second = check(&[], dir.path());
    assert!(!stdout(&second).contains("fit.py"), "{}", stdout(&second));
    assert_same(&second, &check(&["--no-cache"], dir.path()), "after the alias changed");
}

/// A parameter is what callers in other modules pass it (the project
/// index's second pass): `signal.spectrum(x)` works on the 50-million-sample
/// array `run.main` makes, and `report.describe(frame)` on the table it
/// reads. A test module's call does not count. When the caller changes what
/// it passes, the cached findings of the callee's module (whose own bytes
/// did not change) are not reused.
#[test]
fn a_parameter_is_what_callers_in_other_modules_pass_and_the_cache_follows_it() {
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path().join("shop");
    std::fs::create_dir_all(package.join("tests")).unwrap();
    std::fs::write(package.join("__init__.py"), "").unwrap();
    std::fs::write(package.join("tests").join("__init__.py"), "").unwrap();
    std::fs::write(
        package.join("signal.py"),
        "import numpy as np\n\n\ndef spectrum(x):\n    return np.abs(np.fft.fft(x))\n\n\ndef describe(frame, digits: int):\n    return frame.describe().round(digits)\n",
    )
    .unwrap();
    std::fs::write(
        package.join("run.py"),
        "import numpy as np\nimport pandas as pd\n\nfrom shop import signal\nfrom .signal import spectrum\n\n\n\
         def main(path):\n    samples = np.random.rand(50_000_000)\n    table = pd.read_parquet(path)\n    \
         return spectrum(samples), signal.describe(table, digits=2)\n",
    )
    .unwrap();
    // (What a test passes is small by design, and does not count.)
    std::fs::write(
        package.join("tests").join("test_signal.py"),
        "import numpy as np\nfrom shop.signal import spectrum\n\n\ndef test_spectrum():\n    assert spectrum(np.zeros(8)).shape == (8,)\n",
    )
    .unwrap();
    let first = check(&["--show-details"], dir.path());
    let out = stdout(&first);
    assert!(out.contains("signal.py:5:19: CUPY001"), "{out}");
    assert!(out.contains("50,000,000 elements"), "{out}");
    assert!(out.contains("signal.py:9:12: CUDF002"), "{out}");
    assert!(out.contains("`frame` is what `shop.run.main` passes it: `table`"), "{out}");
    // Named alone, the module still reads what the rest of its package passes.
    let alone = stdout(&check(&["--no-cache", "shop/signal.py"], dir.path()));
    assert!(alone.contains("signal.py:5:19: CUPY001") && alone.contains("signal.py:9:12: CUDF002"), "{alone}");
    // The caller now passes a 16-element array and a string: nothing known
    // is large, or a table.
    edit_in_place(&package.join("run.py"), "np.random.rand(50_000_000)", "np.zeros(16)              ");
    edit_in_place(&package.join("run.py"), "signal.describe(table, ", "signal.describe(path,  ");
    let second = check(&[], dir.path());
    assert!(!stdout(&second).contains("signal.py"), "{}", stdout(&second));
    assert_same(&second, &check(&["--no-cache"], dir.path()), "after the caller changed");
}

/// The project index is kept in the cache folder beside the findings, and
/// read back while the files it was made from hold the same bytes; one
/// that is damaged is made again, with the same findings.
#[test]
fn the_project_index_is_kept_and_a_damaged_one_is_made_again() {
    let dir = project();
    let d = dir.path();
    let fresh = check(&["--format", "json", "src"], d);
    let stored: Vec<PathBuf> = std::fs::read_dir(d.join(".gpulens_cache"))
        .unwrap()
        .map(|v| v.unwrap().path().join("project-index"))
        .filter(|p| p.is_file())
        .collect();
    assert_eq!(stored.len(), 1, "{stored:?}");
    let good = std::fs::read(&stored[0]).unwrap();
    for damage in [Vec::new(), b"not an index".repeat(20), good[..good.len() / 2].to_vec()] {
        std::fs::write(&stored[0], &damage).unwrap();
        let run = check(&["--format", "json", "src"], d);
        assert_same(&run, &fresh, "a damaged index");
        assert!(!stderr(&run).contains("error") && !stderr(&run).contains("warning"), "{}", stderr(&run));
        assert_eq!(std::fs::read(&stored[0]).unwrap(), good, "the index made again is the one made before");
    }
}
