//! `gpulens check` on big and strange input: a 20 MB file against the clock,
//! a 1 MB line, NUL bytes and other binary content, every kind of line end,
//! and files that change or vanish between being listed and being read.
//! (tests/cli.rs holds the everyday cases: deep nesting, latin-1, a binary
//! file beside good ones.)

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn gpulens(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpulens")).args(args).current_dir(dir).output().expect("gpulens runs")
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", String::from_utf8_lossy(&o.stdout), stderr(o)))
}

/// `path:line:column code` of every finding.
fn found(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{}:{}:{} {}", f["path"].as_str().unwrap(), f["line"], f["column"], f["code"].as_str().unwrap()))
        .collect()
}

const GOOD: &str = "import numpy as np\nx = np.sort(np.random.rand(1_000_000))\n";

#[test]
fn twenty_megabytes_of_real_code_within_a_minute() {
    // Not padding: 20 MB of functions, one in ten full of NumPy and pandas
    // work, so the rules run all over the file (the debug build is tested
    // here; the release build takes about half as long).
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("import numpy as np\nimport pandas as pd\n\n");
    let mut n = 0;
    while text.len() < 20_000_000 {
        if n % 10 == 0 {
            text.push_str(&format!(
                "def step_{n}(signal, frame):\n    spectrum = np.fft.fft(signal)\n    ordered = np.sort(np.abs(spectrum))\n    \
                 for i in range(len(signal)):\n        signal[i] = signal[i] * 2\n    return frame.groupby('k')['v'].mean(), ordered\n\n"
            ));
        } else {
            text.push_str(&format!(
                "def helper_{n}(items, prefix='item'):\n    out = []\n    for k, item in enumerate(items):\n        \
                 if item is None:\n            continue\n        out.append(f'{{prefix}}-{{k}}: {{item!r}}')\n    return out\n\n"
            ));
        }
        n += 1;
    }
    write(dir.path(), "huge.py", &text);
    let child = Command::new(env!("CARGO_BIN_EXE_gpulens"))
        .args(["check", "--format", "json", "huge.py"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_with_limit(child, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = json(&out);
    let findings = v["findings"].as_array().unwrap();
    assert!(findings.len() >= n / 5, "{} findings for {n} functions", findings.len());
    let last_line = text.lines().count() as u64;
    assert!(findings.iter().any(|f| f["line"].as_u64().unwrap() + 80 >= last_line), "the end of the file was analysed");
}

#[test]
fn one_line_of_a_megabyte() {
    // Minified or generated code: everything on one line, findings at its
    // start and past its first megabyte, CJK and an emoji before the last.
    let dir = tempfile::tempdir().unwrap();
    let numbers: Vec<String> = (0..170_000).map(|i| i.to_string()).collect();
    let filler = numbers.join(", ");
    let line = format!(
        "import numpy as np; y = np.sort(np.random.rand(1_000_000)); z = [{filler}]; 标签 = '😀'; w = np.fft.fft(y)\n"
    );
    assert!(line.len() > 1_000_000);
    write(dir.path(), "minified.py", &line);

    let out = gpulens(&["check", "--format", "json", "minified.py"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = json(&out);
    let fft = v["findings"].as_array().unwrap().iter().find(|f| f["message"].as_str().unwrap().contains("fft")).unwrap();
    let column = line[..line.find("np.fft.fft").unwrap()].chars().count() + 1;
    assert_eq!((fft["line"].as_u64(), fft["column"].as_u64()), (Some(1), Some(column as u64)));

    // The text output shows a window of the line around each finding, not a megabyte per finding.
    let out = gpulens(&["check", "minified.py"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.len() < 20_000, "{} bytes of output", text.len());
    assert!(text.contains("1 | …") && text.contains("w = np.fft.fft(y)"), "{text}");
    // The carets still sit under the call: same column as in the shown source.
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.contains("w = np.fft.fft(y)")).unwrap();
    let source_col = lines[at].chars().position(|c| c == 'w').unwrap() + "w = ".len();
    let caret_col = lines[at + 1].chars().position(|c| c == '^').unwrap();
    assert_eq!(source_col, caret_col, "{}\n{}", lines[at], lines[at + 1]);
}

#[test]
fn binary_content_of_every_kind_is_reported_and_the_rest_checked() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "good.py", GOOD);
    // A NUL in the middle of otherwise good source (Python refuses it too).
    write(dir.path(), "nul_inside.py", format!("{GOOD}name = 'a\0b'\n"));
    // UTF-16 with a BOM: what some Windows editors save.
    let utf16: Vec<u8> = [0xFF, 0xFE].into_iter().chain(GOOD.encode_utf16().flat_map(|u| u.to_le_bytes())).collect();
    write(dir.path(), "utf16.py", utf16);
    // High bytes and control characters, no NUL: not UTF-8, no coding line.
    let noise: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 | 1).collect();
    write(dir.path(), "noise.py", noise);
    // A file of nothing, and one of a single NUL.
    write(dir.path(), "empty.py", "");
    write(dir.path(), "one_nul.py", "\0");

    for format in ["json", "text"] {
        let out = gpulens(&["check", "--format", format, "."], dir.path());
        assert_eq!(out.status.code(), Some(2), "{format}: {}", stderr(&out));
        let err = stderr(&out);
        for bad in ["nul_inside.py", "utf16.py", "noise.py", "one_nul.py"] {
            assert!(err.lines().any(|l| l.starts_with("gpulens: error: ") && l.contains(bad)), "{format}: {bad} not named in {err}");
        }
        assert!(!err.contains("good.py") && !err.contains("empty.py"), "{err}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("good.py:2:5") || stdout.contains("\"good.py\""), "{format}: {stdout}");
        if format == "json" {
            assert_eq!(found(&json(&out)), ["good.py:2:5 CUPY001", "good.py:2:13 CUPY001"]);
        }
    }
}

#[test]
fn every_kind_of_line_end() {
    // Lines end at "\n", "\r\n" or a lone "\r" (old Mac files); form feeds
    // and U+2028 inside a line are not line ends.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "crlf.py", GOOD.replace('\n', "\r\n"));
    write(dir.path(), "cr.py", GOOD.replace('\n', "\r"));
    write(dir.path(), "mixed.py", "import numpy as np\r\n\x0c\ns = '\u{2028}'\rx = np.sort(np.random.rand(1_000_000))\n");
    write(dir.path(), "bom.py", format!("\u{feff}{GOOD}"));
    let out = gpulens(&["check", "--format", "json", "."], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        found(&json(&out)),
        [
            "bom.py:2:5 CUPY001",
            "bom.py:2:13 CUPY001",
            "cr.py:2:5 CUPY001",
            "cr.py:2:13 CUPY001",
            "crlf.py:2:5 CUPY001",
            "crlf.py:2:13 CUPY001",
            "mixed.py:4:5 CUPY001",
            "mixed.py:4:13 CUPY001",
        ]
    );
}

/// Makes a named pipe (POSIX `mkfifo`).
#[cfg(unix)]
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success());
}

/// Waits for `child` for at most `limit` (killing it and failing after
/// that), reading its output meanwhile so a full pipe cannot stall it.
fn wait_with_limit(child: std::process::Child, limit: Duration) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output().unwrap()));
    match rx.recv_timeout(limit) {
        Ok(out) => out,
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("gpulens did not finish within {limit:?}");
        }
    }
}

/// A file whose content is not there when it is listed and arrives before it
/// is read. A named pipe makes that deterministic: listing sees an empty
/// file, reading gets whatever the test writes then — here Python source,
/// then binary bytes. gpulens must use what it read, not what it listed
/// (no size taken from the listing, no memory map), and handle each outcome.
#[cfg(unix)]
#[test]
fn a_file_that_changes_between_listing_and_reading() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "good.py", GOOD);
    for (content, expect_status) in [
        (b"import pandas as pd\n\ndf = pd.read_csv('big.csv')\n".to_vec(), 1),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00".to_vec(), 2),
        (Vec::new(), 1),
    ] {
        let pipe = dir.path().join("arriving.py");
        let _ = std::fs::remove_file(&pipe);
        mkfifo(&pipe);
        let child = Command::new(env!("CARGO_BIN_EXE_gpulens"))
            .args(["check", "--format", "json", "arriving.py", "good.py"])
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Opening the pipe for writing waits for gpulens to open it for reading.
        let writer = std::thread::spawn({
            let pipe = pipe.clone();
            let content = content.clone();
            move || {
                let mut w = std::fs::OpenOptions::new().write(true).open(pipe).unwrap();
                w.write_all(&content).unwrap();
            }
        });
        let out = wait_with_limit(child, Duration::from_secs(60));
        writer.join().unwrap();
        assert_eq!(out.status.code(), Some(expect_status), "{}", stderr(&out));
        let v = json(&out);
        let mut want = vec![];
        if content.starts_with(b"import pandas") {
            want.push("arriving.py:3:6 CUDF001".to_string());
        } else if expect_status == 2 {
            assert!(stderr(&out).contains("arriving.py") && stderr(&out).contains("binary"), "{}", stderr(&out));
        }
        want.extend(["good.py:2:5 CUPY001".to_string(), "good.py:2:13 CUPY001".to_string()]);
        assert_eq!(found(&v), want);
    }
}

/// Gone by the time it is read: a link whose target was removed. Named on
/// the command line it is an error naming it; met while walking a folder it
/// is not followed, as links never are there.
#[cfg(unix)]
#[test]
fn a_file_that_disappears() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "good.py", GOOD);
    write(dir.path(), "doomed.py", GOOD);
    std::os::unix::fs::symlink("doomed.py", dir.path().join("link.py")).unwrap();
    std::fs::remove_file(dir.path().join("doomed.py")).unwrap();
    let out = gpulens(&["check", "--format", "json", "link.py", "good.py"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("link.py"), "{}", stderr(&out));
    assert_eq!(found(&json(&out)), ["good.py:2:5 CUPY001", "good.py:2:13 CUPY001"]);
    let out = gpulens(&["check", "--format", "json", "."], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(found(&json(&out)), ["good.py:2:5 CUPY001", "good.py:2:13 CUPY001"]);
}

/// Files deleted, recreated, turned into folders or into binary while
/// `check` walks and reads them. The timing is not deterministic, so this
/// asserts what must hold whatever it is: an exit status of 0, 1 or 2, JSON
/// on stdout, no panic, and every error naming a file.
#[test]
fn files_churning_while_checked() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    for i in 0..200 {
        write(&root, &format!("pkg/m{i:03}.py"), GOOD);
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn = std::thread::spawn({
        let (root, stop) = (root.clone(), stop.clone());
        move || {
            let mut i = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let path = root.join(format!("pkg/m{:03}.py", (i * 7) % 200));
                let _ = std::fs::remove_file(&path).or_else(|_| std::fs::remove_dir_all(&path));
                match i % 4 {
                    0 => {}
                    1 => drop(std::fs::create_dir(&path)),
                    2 => drop(std::fs::write(&path, b"\0\x01binary")),
                    _ => drop(std::fs::write(&path, GOOD)),
                }
                i += 1;
            }
        }
    });
    let started = Instant::now();
    let mut runs = 0;
    while runs < 20 && started.elapsed() < Duration::from_secs(30) {
        let out = gpulens(&["check", "--format", "json", "pkg"], &root);
        let err = stderr(&out);
        assert!(matches!(out.status.code(), Some(0..=2)), "{:?}: {err}", out.status);
        assert!(!err.contains("panicked"), "{err}");
        json(&out);
        for line in err.lines() {
            assert!(line.starts_with("gpulens: error: ") && line.contains(".py"), "an error naming no file: {line}");
        }
        runs += 1;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    churn.join().unwrap();
}
