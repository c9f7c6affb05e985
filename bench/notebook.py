#!/usr/bin/env python3
"""Edit -> diagnostics latency in a notebook, through LSP notebook sync
(standard library only; uses bench/server.py's client).

usage: notebook.py --cmd "gpulens serve" --file SOURCE.py... [--cells 200] [--edits 100] [--json]

The notebook is made of the SOURCE files: their top-level statements, one
per code cell, up to --cells code cells in order (a markdown cell before every tenth), opened with
`notebookDocument/didOpen`. Each edit types one character at the end of a
line inside a function of a random code cell and deletes it again, each a
`notebookDocument/didChange` with the cell's text edit, timed until the
server publishes diagnostics for that cell's URI. Prints p50/p95/p99 in ms.
"""
import argparse
import ast
import json
import pathlib
import random
import shlex
import statistics
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from server import Client  # noqa: E402


class NotebookClient(Client):
    """The bench client, counting diagnostics published per URI."""

    def __init__(self, cmd, cwd):
        self.counts = {}
        super().__init__(cmd, cwd)

    def _read(self):
        # (Wraps the base reader: every publish is counted by URI.)
        base_add = set.add
        counts = self.counts

        class Counting(set):
            def add(inner, uri):
                counts[uri] = counts.get(uri, 0) + 1
                base_add(inner, uri)

        self.published = Counting()
        super()._read()

    def wait_count(self, uri, count, timeout=60):
        deadline = time.monotonic() + timeout
        with self.cond:
            while self.counts.get(uri, 0) < count:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"no diagnostics for {uri}")
                self.cond.wait(left)


def cells_of(source, count):
    tree = ast.parse(source)
    lines = source.split("\n")
    starts = [node.lineno - 1 - len(getattr(node, "decorator_list", [])) for node in tree.body]
    per = 1
    cells = []
    for k in range(0, len(starts), per):
        begin = starts[k]
        end = starts[k + per] if k + per < len(starts) else len(lines)
        cells.append("\n".join(lines[begin:end]).rstrip("\n") + "\n")
    return cells[:count]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cmd", required=True)
    ap.add_argument("--file", required=True, type=pathlib.Path, nargs="+", help="one or more sources, joined in order")
    ap.add_argument("--cells", type=int, default=200)
    ap.add_argument("--edits", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    code = []
    for path in a.file:
        code += cells_of(path.read_text(), a.cells - len(code))
        if len(code) >= a.cells:
            break
    root = a.file[0].resolve().parent
    notebook = (root / "bench_notebook.ipynb").as_uri()
    cells = []  # (kind, uri, text)
    for i, text in enumerate(code):
        if i % 10 == 0:
            cells.append((1, f"vscode-notebook-cell:{notebook[5:]}#M{i}", f"## Part {i // 10}\n"))
        cells.append((2, f"vscode-notebook-cell:{notebook[5:]}#C{i}", text))
    client = NotebookClient(shlex.split(a.cmd), str(root))
    client.initialize(root)
    version = 1
    started = time.perf_counter()
    client.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": notebook, "notebookType": "jupyter-notebook", "version": version,
                             "cells": [{"kind": k, "document": u} for k, u, _ in cells]},
        "cellTextDocuments": [{"uri": u, "languageId": "python" if k == 2 else "markdown", "version": 1, "text": t}
                              for k, u, t in cells],
    })
    first_code = next(u for k, u, _ in cells if k == 2)
    client.wait_count(first_code, 1, timeout=120)
    open_ms = (time.perf_counter() - started) * 1e3
    # Edit points: ends of indented plain lines, per code cell.
    points = []
    for k, uri, text in cells:
        if k != 2:
            continue
        for n, line in enumerate(text.split("\n")):
            if line.startswith("        ") and line.strip() and not line.rstrip().endswith(("\\", ",", "(", "[", "{")) \
                    and '"' not in line and "'" not in line and "#" not in line:
                points.append((uri, n, len(line.encode("utf-16-le")) // 2))
    rnd = random.Random(a.seed)
    latencies = []
    cell_versions = {}
    for _ in range(a.edits):
        uri, line, col = rnd.choice(points)
        for op in ("insert", "delete"):
            version += 1
            cell_versions[uri] = cell_versions.get(uri, 1) + 1
            end = col if op == "insert" else col + 1
            change = {"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": end}},
                      "text": "x" if op == "insert" else ""}
            before = client.counts.get(uri, 0)
            s = time.perf_counter()
            client.notify("notebookDocument/didChange", {
                "notebookDocument": {"uri": notebook, "version": version},
                "change": {"cells": {"textContent": [{"document": {"uri": uri, "version": cell_versions[uri]}, "changes": [change]}]}},
            })
            client.wait_count(uri, before + 1)
            latencies.append((time.perf_counter() - s) * 1e3)
    client.close()
    latencies.sort()
    q = lambda p: latencies[min(len(latencies) - 1, int(p * len(latencies)))]
    result = {"cells": len(cells), "code_cells": len(code), "lines": sum(t.count("\n") for t in code),
              "open_ms": round(open_ms, 1), "p50": round(q(0.5), 3), "p95": round(q(0.95), 3), "p99": round(q(0.99), 3),
              "mean": round(statistics.mean(latencies), 3), "n": len(latencies)}
    print(json.dumps(result) if a.json else result)


if __name__ == "__main__":
    main()
