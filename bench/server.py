#!/usr/bin/env python3
"""Start time and memory of a language server on stdio (standard library only).

usage: server.py --cmd "gpulens serve" --corpus DIR [--files 50] [--starts 7] [--json]

- start: from spawning the server to its answer to `initialize`, the median
  of --starts fresh processes;
- memory: one server with the --files largest .py files of DIR open (each
  didOpen'ed, then waited for until diagnostics were published for it); the
  peak (VmHWM) and current (VmRSS) resident memory of the server process,
  read from /proc.

The client declares no pull-diagnostics support, so every server pushes
textDocument/publishDiagnostics.
"""
import argparse
import json
import os
import pathlib
import shlex
import statistics
import subprocess
import threading
import time


class Client:
    """JSON-RPC over the server's stdin/stdout with Content-Length framing."""

    def __init__(self, cmd, cwd):
        self.proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.cond = threading.Condition()
        self.responses = {}
        self.published = set()
        self.next_id = 0
        self.send_lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self.cond:
                        self.cond.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode().partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            msg = json.loads(out.read(length))
            if "method" in msg and "id" in msg:
                # A request from the server (configuration, registration...): answer null.
                items = msg.get("params", {}).get("items") if msg["method"] == "workspace/configuration" else None
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": [None] * len(items) if items else None})
            with self.cond:
                if "id" in msg and "method" not in msg:
                    self.responses[msg["id"]] = msg
                elif msg.get("method") == "textDocument/publishDiagnostics":
                    self.published.add(msg["params"]["uri"])
                self.cond.notify_all()

    def _send(self, msg):
        data = json.dumps(msg).encode()
        with self.send_lock:  # the reader thread answers the server's requests
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(data), data))
            self.proc.stdin.flush()

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params, timeout=60):
        self.next_id += 1
        rid = self.next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        with self.cond:
            while rid not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"no answer to {method}")
                self.cond.wait(left)
            return self.responses.pop(rid).get("result")

    def initialize(self, root):
        capabilities = {
            "general": {"positionEncodings": ["utf-16"]},
            "textDocument": {"synchronization": {"dynamicRegistration": False}, "publishDiagnostics": {}},
            "workspace": {"configuration": True, "workspaceFolders": True},
        }
        result = self.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": capabilities,
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        })
        self.notify("initialized", {})
        return result

    def wait_published(self, uris, timeout):
        deadline = time.monotonic() + timeout
        with self.cond:
            while not uris <= self.published:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    break
                self.cond.wait(left)
            return len(uris & self.published)

    def close(self):
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except (TimeoutError, OSError, subprocess.TimeoutExpired):
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def start_ms(cmd, root):
    started = time.perf_counter()
    client = Client(cmd, root)
    client.initialize(root)
    elapsed = (time.perf_counter() - started) * 1e3
    client.close()
    return elapsed


def status_kb(pid, field):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def memory(cmd, root, count, timeout):
    files = sorted(root.rglob("*.py"), key=lambda p: p.stat().st_size)[-count:]
    client = Client(cmd, root)
    client.initialize(root)
    uris = set()
    started = time.perf_counter()
    for path in files:
        uri = path.resolve().as_uri()
        uris.add(uri)
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    published = client.wait_published(uris, timeout)
    seconds = time.perf_counter() - started
    pid = client.proc.pid
    hwm, rss = status_kb(pid, "VmHWM"), status_kb(pid, "VmRSS")
    client.close()
    return {"files": len(files), "mb": round(sum(p.stat().st_size for p in files) / 1e6, 1), "published": published,
            "open_s": round(seconds, 2), "hwm_mb": round(hwm / 1024), "rss_mb": round(rss / 1024)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cmd", required=True, help="the server command line")
    ap.add_argument("--corpus", required=True, type=pathlib.Path)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--starts", type=int, default=7)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    cmd = shlex.split(a.cmd)
    root = a.corpus.resolve()
    starts = [start_ms(cmd, root) for _ in range(a.starts)]
    result = {"start_ms": round(statistics.median(starts), 1), "start_min_ms": round(min(starts), 1)}
    result.update(memory(cmd, root, a.files, a.timeout))
    print(json.dumps(result) if a.json else result)


if __name__ == "__main__":
    main()
