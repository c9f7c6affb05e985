//! gpulens never executes or imports the code it reads, and opens no network
//! connection, whatever its configuration says. Every configuration path is
//! fed values that look like commands, paths and URLs — `[tool.gpulens]` in
//! pyproject.toml, `initializationOptions`, `workspace/didChangeConfiguration`,
//! a pyproject.toml change the editor reports, command arguments — next to
//! Python files that would leave a mark if anything ran them, with a PATH
//! whose interpreters, shells and download tools leave a mark too. Under
//! `strace -f` the whole run must show no process started (threads aside),
//! no program executed but gpulens itself, and no socket.
//!
//! Needs strace (scripts/test installs it); the strace part is skipped, with
//! a message, only where ptrace is not allowed (some containers).

#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const SOURCE: &str = "import os, subprocess, urllib.request\nimport numpy as np\n\
    open(os.environ['GPULENS_MARK'] + '-imported', 'w').close()\n\
    subprocess.run(['touch', os.environ['GPULENS_MARK'] + '-subprocess'])\n\
    urllib.request.urlopen('http://127.0.0.1:9/')\n\
    x = np.sort(np.random.rand(1_000_000))\n";

/// Values an attacker might hope a tool would run, fetch or read.
fn lures(mark: &Path) -> Vec<String> {
    let m = mark.display();
    vec![
        format!("$(touch {m}-shell)"),
        format!("`touch {m}-backtick`"),
        format!("CUPY; touch {m}-semicolon"),
        format!("| touch {m}-pipe"),
        "http://127.0.0.1:9/rules.toml".into(),
        "file:///etc/passwd".into(),
        "../../../../etc/passwd".into(),
        format!("__import__('os').system('touch {m}-python')"),
    ]
}

/// A project full of bait: code that marks `mark` if imported or run, a
/// pyproject.toml of lures, and a PATH of programs that mark it if started.
fn project(dir: &Path, mark: &Path) -> PathBuf {
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    for name in ["main.py", "setup.py", "conftest.py", "sitecustomize.py", "pkg/__init__.py", "pkg/__main__.py"] {
        write(name, SOURCE);
    }
    write("evil.pth", &format!("import os; open('{}-pth', 'w')\n", mark.display()));
    let quoted = |v: &[String]| v.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ");
    let lures = lures(mark);
    write("pyproject.toml", &format!("[tool.gpulens]\nselect = [\"CUPY\", {}]\nignore = [{}]\n", quoted(&lures), quoted(&lures)));
    let bin = dir.join("trap-bin");
    std::fs::create_dir_all(&bin).unwrap();
    for program in ["python", "python3", "sh", "bash", "git", "curl", "wget", "pip", "uv", "node", "nvidia-smi", "touch"] {
        let path = bin.join(program);
        std::fs::write(&path, format!("#!/bin/sh\n: > '{}-{program}'\n", mark.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

fn marks(mark: &Path) -> Vec<String> {
    let dir = mark.parent().unwrap();
    let prefix = mark.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

/// How the run is watched: under strace, or (where ptrace is refused) not.
enum Tracer {
    Strace,
    Untraced(String),
}

fn tracer() -> Tracer {
    let probe = Command::new("strace").args(["-f", "-qq", "-e", "trace=process", "-o", "/dev/null", "true"]).output();
    match probe {
        Err(e) => panic!(
            "strace is needed for this test and could not be run ({e}); install it (apt-get install strace; \
             scripts/test does this), or set GPULENS_SKIP_STRACE=1 to skip only the syscall part"
        ),
        Ok(out) if out.status.success() => Tracer::Strace,
        Ok(out) => {
            let why = String::from_utf8_lossy(&out.stderr).into_owned();
            let ptrace_refused = why.contains("ptrace") || why.contains("Operation not permitted");
            assert!(ptrace_refused, "strace fails for a reason other than ptrace restrictions: {why}");
            Tracer::Untraced(why)
        }
    }
}

/// Runs gpulens with `args` (feeding it the `stdin` chunks, each once the
/// text beside it has appeared on its stdout), traced when possible; returns
/// its stdout and the syscalls that break the rules.
fn run(args: &[&str], stdin: &[(Vec<u8>, Option<String>)], dir: &Path, trap_bin: &Path, mark: &Path) -> (Vec<u8>, Vec<String>) {
    let skip_strace = std::env::var_os("GPULENS_SKIP_STRACE").is_some();
    let traced = !skip_strace
        && match tracer() {
            Tracer::Strace => true,
            Tracer::Untraced(why) => {
                eprintln!("security: SKIPPING the syscall check: strace cannot trace here (ptrace refused): {why}");
                false
            }
        };
    let trace = dir.join(format!("trace-{}.txt", args[0]));
    let gpulens = env!("CARGO_BIN_EXE_gpulens");
    let mut command = if traced {
        let mut c = Command::new("strace");
        c.args(["-f", "-qq", "-e", "trace=process,network", "-e", "signal=none", "-o"]).arg(&trace).arg(gpulens);
        c
    } else {
        Command::new(gpulens)
    };
    let path = format!("{}:{}", trap_bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut child = command
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .env("GPULENS_MARK", mark)
        .env("PYTHONSTARTUP", dir.join("main.py"))
        .env("GPULENS_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("gpulens starts");
    // The first chunk is sent at once; each next one after the answer to the
    // request before it (a client waits for `initialize` to be answered).
    let output = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut pipe = child.stdin.take().unwrap();
    let chunks: Vec<(Vec<u8>, Option<String>)> = stdin.to_vec();
    let seen = output.clone();
    let writer = std::thread::spawn(move || {
        for (bytes, wait_for) in chunks {
            let started = Instant::now();
            while let Some(needle) = &wait_for {
                if String::from_utf8_lossy(&seen.lock().unwrap()).contains(needle.as_str()) || started.elapsed() > Duration::from_secs(30) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            if pipe.write_all(&bytes).is_err() {
                return;
            }
        }
    });
    let mut out = child.stdout.take().unwrap();
    let mut buffer = [0u8; 65536];
    loop {
        match out.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => output.lock().unwrap().extend_from_slice(&buffer[..n]),
        }
    }
    let stdout = output.lock().unwrap().clone();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < Duration::from_secs(60), "gpulens {args:?} did not finish");
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = writer.join();
    let violations = if traced { violations(&std::fs::read_to_string(&trace).unwrap(), gpulens) } else { Vec::new() };
    (stdout, violations)
}

/// The syscalls in an strace log that start a process, run a program other
/// than gpulens, or touch the network.
fn violations(log: &str, gpulens: &str) -> Vec<String> {
    const NETWORK: &[&str] = &[
        "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto", "sendmsg", "sendmmsg",
        "recvfrom", "recvmsg", "recvmmsg", "shutdown", "getsockopt", "setsockopt", "getsockname", "getpeername",
    ];
    let mut found = Vec::new();
    let mut execs = 0;
    for line in log.lines() {
        // "PID name(args...) = result"; skip the second half of interrupted calls.
        let call = line.split_once(' ').map_or(line, |(_, rest)| rest).trim_start();
        if call.starts_with("<...") {
            continue;
        }
        let name = call.split('(').next().unwrap_or("");
        let bad = match name {
            "execve" | "execveat" => {
                execs += 1;
                execs > 1 || !call.contains(&format!("\"{gpulens}\""))
            }
            "fork" | "vfork" => true,
            "clone" | "clone3" => !call.contains("CLONE_THREAD"),
            n => NETWORK.contains(&n),
        };
        if bad {
            found.push(line.to_string());
        }
    }
    found
}

fn frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

#[test]
fn check_runs_nothing_and_opens_no_socket_whatever_the_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("MARK");
    let trap_bin = project(dir.path(), &mark);
    // Every file, the bait included, is read as text and analysed.
    let (stdout, bad) = run(&["check", "--format", "json", "."], &[], dir.path(), &trap_bin, &mark);
    let v: Value = serde_json::from_slice(&stdout).expect("JSON findings");
    assert!(v["findings"].as_array().unwrap().len() >= 6, "{v}");
    assert!(bad.is_empty(), "forbidden syscalls:\n{}", bad.join("\n"));
    assert!(marks(&mark).is_empty(), "something ran: {:?}", marks(&mark));

    // Lures on the command line and a target GPU that looks like a URL.
    for lure in lures(&mark) {
        let args = ["check", "--select", &lure, "--ignore", &lure, "--target-gpu", &lure, "main.py"];
        let (_, bad) = run(&args, &[], dir.path(), &trap_bin, &mark);
        assert!(bad.is_empty(), "{lure}: forbidden syscalls:\n{}", bad.join("\n"));
    }
    assert!(marks(&mark).is_empty(), "something ran: {:?}", marks(&mark));
}

#[test]
fn serve_runs_nothing_and_opens_no_socket_whatever_the_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("MARK");
    let trap_bin = project(dir.path(), &mark);
    let root = format!("file://{}", dir.path().display());
    let lures = lures(&mark);
    let settings = json!({
        "select": ["CUPY"], "ignore": lures, "targetGpu": lures[4], "minElements": 1, "inlayHints": true,
        // Keys other tools have, and gpulens does not: ignored, never acted on.
        "interpreter": ["/usr/bin/python3"], "pythonPath": "/usr/bin/python3", "command": lures[0],
        "serverPath": lures[1], "env": {"LD_PRELOAD": "/tmp/evil.so"}, "plugins": [lures[7]], "url": lures[4],
    });
    let main = format!("{root}/main.py");
    let whole = json!({"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}});
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": null, "rootUri": root, "capabilities": {},
        "workspaceFolders": [{"uri": root, "name": "bait"}, {"uri": lures[4], "name": "web"}],
        "initializationOptions": {"gpulens": settings}}});
    let mut rest = Vec::new();
    let messages = [
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": main, "languageId": "python", "version": 1, "text": SOURCE}}}),
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": lures[4], "languageId": "python", "version": 1, "text": SOURCE}}}),
        json!({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": settings}}),
        json!({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"gpulens": {
            "select": lures, "targetGpu": lures[0]}}}}),
        json!({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles", "params": {"changes": [
            {"uri": format!("{root}/pyproject.toml"), "type": 2}, {"uri": "http://127.0.0.1:9/pyproject.toml", "type": 2}]}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": main}, "position": {"line": 5, "character": 8}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction", "params": {
            "textDocument": {"uri": main}, "range": whole, "context": {"diagnostics": []}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {
            "command": "gpulens.applyFix", "arguments": [lures[4], lures[0], whole]}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "workspace/executeCommand", "params": {
            "command": lures[0], "arguments": [lures[1]]}}),
        json!({"jsonrpc": "2.0", "id": 6, "method": "workspace/executeCommand", "params": {"command": "gpulens.gpuProfile"}}),
        json!({"jsonrpc": "2.0", "id": 7, "method": "shutdown", "params": null}),
    ];
    let exit = json!({"jsonrpc": "2.0", "method": "exit", "params": null});
    for m in &messages {
        rest.extend(frame(m));
    }
    let input = [(frame(&initialize), None), (rest, Some("\"id\":1".to_string())), (frame(&exit), Some("\"id\":7".to_string()))];
    let (stdout, bad) = run(&["serve"], &input, dir.path(), &trap_bin, &mark);
    let out = String::from_utf8_lossy(&stdout);
    assert!(out.contains(r#"{"jsonrpc":"2.0","result":null,"id":7}"#), "the server answered shutdown: {out}");
    assert!(out.contains(r#""id":2"#) && out.contains("CuPy"), "the hover was answered: {out}");
    assert!(out.contains("publishDiagnostics"), "{out}");
    assert!(bad.is_empty(), "forbidden syscalls:\n{}", bad.join("\n"));
    assert!(marks(&mark).is_empty(), "something ran: {:?}", marks(&mark));
}

#[test]
fn the_syscall_filter_sees_a_child_process_and_a_socket() {
    // The check above is only as good as this filter: feed it what strace
    // prints for a shell spawning curl.
    let log = "100 execve(\"/bin/gpulens\", [\"gpulens\"], 0x0 /* 1 vars */) = 0\n\
        100 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, child_tid=0x1}, 88) = 101\n\
        100 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7) = 102\n\
        102 execve(\"/usr/bin/curl\", [\"curl\"], 0x0 /* 1 vars */) = 0\n\
        102 socket(AF_INET, SOCK_STREAM, IPPROTO_TCP) = 3\n\
        101 <... clone3 resumed> => {parent_tid=[101]}, 88) = 101\n\
        100 exit_group(0) = ?\n";
    let bad = violations(log, "/bin/gpulens");
    assert_eq!(bad.len(), 3, "{bad:?}");
}
