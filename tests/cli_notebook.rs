//! `gpulens check` on Jupyter notebooks (tests/fixtures/notebooks): the code
//! cells are one module, positions are the cells', IPython syntax costs
//! nothing, and fixes go back into the cells with nothing else in the file
//! changed. Each notebook's text output and fixed file are snapshots
//! (tests/snapshots/cli_notebook__*.snap), so a new case is a new notebook.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn notebooks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/notebooks")
}

fn gpulens(args: &[&str], dir: &Path) -> Output {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-notebook-cache");
    Command::new(env!("CARGO_BIN_EXE_gpulens")).args(args).current_dir(dir).env("GPULENS_CACHE_DIR", cache).output().expect("gpulens runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The notebooks gpulens reads (the others are refused, see below).
fn readable() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(notebooks())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ipynb") && !n.starts_with("old_"))
        .collect();
    names.sort();
    names
}

#[test]
fn text_output_of_each_notebook() {
    for name in readable() {
        let out = gpulens(&["check", "--no-cache", &name], &notebooks());
        assert!(matches!(out.status.code(), Some(0 | 1)), "{name}: {}", stderr(&out));
        insta::assert_snapshot!(format!("text@{name}"), stdout(&out));
    }
}

#[test]
fn each_notebook_fixed() {
    for name in readable() {
        let dir = tempfile::tempdir().unwrap();
        let original = std::fs::read_to_string(notebooks().join(&name)).unwrap();
        std::fs::write(dir.path().join(&name), &original).unwrap();
        let out = gpulens(&["check", "--fix", "--unsafe-fixes", &name], dir.path());
        assert!(matches!(out.status.code(), Some(0 | 1)), "{name}: {}", stderr(&out));
        let fixed = std::fs::read_to_string(dir.path().join(&name)).unwrap();
        // Still a notebook, with every cell's outputs and metadata as they were.
        let (before, after): (Value, Value) = (serde_json::from_str(&original).unwrap(), serde_json::from_str(&fixed).unwrap());
        let kept = |v: &Value| -> Vec<(Value, Value)> {
            v["cells"].as_array().unwrap().iter().filter(|c| c.get("outputs").is_some_and(|o| o != &Value::Array(vec![]))).map(|c| (c["outputs"].clone(), c["metadata"].clone())).collect()
        };
        assert_eq!(kept(&before), kept(&after), "{name}: outputs and metadata kept");
        assert_eq!(before["metadata"], after["metadata"], "{name}");
        // A mode the fixes switched on leaves none of the advice it carries out.
        if fixed.contains("%load_ext cudf.pandas") {
            let again = gpulens(&["check", "--no-cache", "--format", "json", &name], dir.path());
            let v: Value = serde_json::from_slice(&again.stdout).unwrap();
            let codes: Vec<&str> = v["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap()).collect();
            assert!(!codes.iter().any(|c| matches!(*c, "CUDF001" | "CUDF002")), "{name}: {codes:?}");
        }
        insta::assert_snapshot!(format!("fixed@{name}"), fixed);
    }
}

#[test]
fn json_and_sarif_name_the_cell() {
    let out = gpulens(&["check", "--no-cache", "--format", "json", "explore_sales.ipynb"], &notebooks());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<(u64, u64, u64, &str)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["cell"].as_u64().unwrap(), f["line"].as_u64().unwrap(), f["column"].as_u64().unwrap(), f["code"].as_str().unwrap()))
        .collect();
    // Cell 4 groups the table cell 3 read; cell 6 times an FFT with %timeit.
    assert!(found.contains(&(4, 2, 10, "CUDF002")), "{found:?}");
    assert!(found.contains(&(6, 2, 9, "CUPY001")), "{found:?}");
    // The IPython lines (magics, shell, help, the %%bash cell) produce nothing.
    assert!(found.iter().all(|(cell, _, _, _)| *cell != 5), "{found:?}");
    // A fix's edits are placed in cells too.
    let fix = v["findings"].as_array().unwrap().iter().find_map(|f| f["fix"].as_object().cloned()).expect("a finding with a fix");
    assert!(fix["edits"].as_array().unwrap().iter().all(|e| e["cell"].is_u64()), "{fix:?}");
    // The zero-code-change fix of a notebook is a new first cell, not edits.
    let modes: Vec<&str> = v["findings"].as_array().unwrap().iter().filter_map(|f| f["fix"]["new_cell"].as_str()).collect();
    assert!(modes.contains(&"%load_ext cudf.pandas"), "{modes:?}");

    let out = gpulens(&["check", "--no-cache", "--format", "sarif", "explore_sales.ipynb"], &notebooks());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let regions: Vec<&Value> =
        v["runs"][0]["results"].as_array().unwrap().iter().map(|r| &r["locations"][0]["physicalLocation"]["region"]).collect();
    assert!(!regions.is_empty() && regions.iter().all(|r| r["properties"]["cell"].is_u64()), "{regions:?}");
}

#[test]
fn folders_hold_notebooks_and_a_bad_one_stops_only_itself() {
    let out = gpulens(&["check", "--no-cache", "."], &notebooks());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("old_format.ipynb: notebook format 3 is not supported"), "{}", stderr(&out));
    assert!(stdout(&out).contains("explore_sales.ipynb:cell 4:2:10: CUDF002"), "{}", stdout(&out));
    assert!(stdout(&out).contains("colab_training.ipynb:cell 3:"), "{}", stdout(&out));
}

#[test]
fn the_cache_serves_notebooks() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(notebooks().join("explore_sales.ipynb"), dir.path().join("nb.ipynb")).unwrap();
    let cache = dir.path().join("cache");
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_gpulens"))
            .args(["check", "--cache-dir", cache.to_str().unwrap(), "nb.ipynb"])
            .current_dir(dir.path())
            .env("GPULENS_LOG", "debug")
            .output()
            .unwrap()
    };
    let (first, second) = (run(), run());
    assert_eq!(stdout(&first), stdout(&second));
    assert!(stdout(&first).contains("nb.ipynb:cell 6:2:9: CUPY001"), "{}", stdout(&first));
    assert!(stderr(&second).contains("1 of 1 files reused"), "{}", stderr(&second));
}

#[test]
fn a_diff_previews_the_file_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string(notebooks().join("colab_training.ipynb")).unwrap();
    std::fs::write(dir.path().join("nb.ipynb"), &original).unwrap();
    let out = gpulens(&["check", "--diff", "nb.ipynb"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(dir.path().join("nb.ipynb")).unwrap(), original);
    // Shown cell by cell, as Python: the new first cell and each changed cell.
    insta::assert_snapshot!("diff@colab_training.ipynb", stdout(&out));
    let explore = gpulens(&["check", "--diff", "explore_sales.ipynb"], &notebooks());
    insta::assert_snapshot!("diff@explore_sales.ipynb", stdout(&explore));
}
