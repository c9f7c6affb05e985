"""Big and strange documents through `gpulens serve`: 20 MB, a 20,000-deep
expression, one line of a megabyte, NUL and control characters, text that
is really binary. Each is opened, analysed, edited and answered for, and
the server keeps serving."""

from __future__ import annotations

import random
import time

import pytest
from lsprotocol import types

from programs import SPECTRUM
from pytest_lsp import client_capabilities
from support import GpulensClient, session, sliced, span, summary, to_position
from test_robustness import still_serving

URI = "file:///work/project/big.py"
SORT = "ordered = np.sort(np.random.rand(1_000_000))\n"


@pytest.mark.timeout(180)
async def test_twenty_megabytes_open_edit_and_answer_within_a_minute(tmp_path):
    # Each edit here takes the server a second or two; by default it would
    # first publish the findings before the edit, moved with it, then the
    # new ones (test_diagnostics.py checks that path). This test reads the
    # first publish of each version, so the server is told to wait.
    async with session(client_capabilities("visual-studio-code"), tmp_path, env={"GPULENS_EDIT_BUDGET_MS": "600000"}) as vscode:
        await twenty_megabytes(vscode)


async def twenty_megabytes(vscode: GpulensClient):
    enc = vscode.encoding
    block = (
        "def helper_{n}(items, prefix='item'):\n    out = []\n    for k, item in enumerate(items):\n"
        "        out.append(f'{{prefix}}-{{k}}: {{item!r}}')\n    return out\n\n"
    )
    parts, size, n = ["import numpy as np\n\n"], 0, 0
    while size < 20_000_000:
        part = block.format(n=n) if n % 200 else f"def step_{n}(x):\n    return np.fft.fft(x)\n\n"
        parts.append(part)
        size += len(part)
        n += 1
    text = "".join(parts) + SORT
    # Positions are computed here directly: the helpers in support.py walk the
    # whole text for each position, which on 20 MB takes seconds apiece.
    last = text.count("\n") - 1  # the SORT line, ASCII only
    pos = types.Position
    started = time.monotonic()
    vscode.open(URI, text)
    first = await vscode.wait_published(URI, version=1, timeout=60)
    assert time.monotonic() - started < 60
    steps = len(range(0, n, 200))
    assert len(first.diagnostics) == steps + 2, (len(first.diagnostics), steps)
    # An edit at the very end, then one at the very start.
    at = SORT.index("1_000_000")
    vscode.change(URI, 2, [(types.Range(start=pos(line=last, character=at), end=pos(line=last, character=at + 1)), "2")])
    second = await vscode.wait_published(URI, version=2, timeout=60)
    assert summary(second.diagnostics) != summary(first.diagnostics)  # the messages name the new size
    sort = [d for d in second.diagnostics if d.range.start == pos(line=last, character=SORT.index("np.sort"))]
    assert sort and "2,000,000" in sort[0].message, sort
    vscode.change(URI, 3, [(types.Range(start=pos(line=0, character=0), end=pos(line=0, character=0)), "# 头\n")])
    third = await vscode.wait_published(URI, version=3, timeout=60)
    assert len(third.diagnostics) == len(second.diagnostics)
    assert all(a.range.start.line == b.range.start.line + 1 for a, b in zip(third.diagnostics, second.diagnostics))
    hover = await vscode.hover(URI, pos(line=last + 1, character=SORT.index("np.sort") + 3))
    assert hover is not None and "CuPy" in hover.contents.value
    assert time.monotonic() - started < 150


async def test_a_twenty_thousand_deep_expression(client: GpulensClient):
    enc = client.encoding
    deep = "(" * 20_000 + "1" + ")" * 20_000
    text = f"import numpy as np\nx = {deep}\ny = [[[[{deep}]]]]\n{SORT}"
    client.open(URI, text)
    diagnostics = await client.diagnostics_at(URI, 1)
    assert sorted(sliced(text, d.range, enc) for d in diagnostics) == [
        "np.random.rand(1_000_000)",
        "np.sort(np.random.rand(1_000_000))",
    ]
    # Unbalance it from the middle: a syntax error 20,000 levels down, then mend it.
    middle = text.index("1)") + 1
    client.change(URI, 2, [(span(text, middle, middle + 1, enc), "")])
    broken = text[:middle] + text[middle + 1 :]
    await client.diagnostics_at(URI, 2)
    client.change(URI, 3, [(span(broken, middle, middle, enc), ")")])
    diagnostics = await client.diagnostics_at(URI, 3)
    assert sorted(sliced(text, d.range, enc) for d in diagnostics) == [
        "np.random.rand(1_000_000)",
        "np.sort(np.random.rand(1_000_000))",
    ]
    hover = await client.hover(URI, to_position(text, text.rindex("np.sort") + 3, enc))
    assert hover is not None and "CuPy" in hover.contents.value


async def test_one_line_of_a_megabyte(client: GpulensClient):
    enc = client.encoding
    filler = ", ".join(str(i) for i in range(170_000))
    line = f"import numpy as np; 标签 = '😀'; y = np.sort(np.random.rand(1_000_000)); z = [{filler}]; w = np.fft.fft(y)"
    text = line + "\n"
    assert len(text) > 1_000_000
    client.open(URI, text)
    diagnostics = await client.diagnostics_at(URI, 1)
    found = {sliced(text, d.range, enc) for d in diagnostics}
    assert "np.fft.fft(y)" in found, found
    fft = next(d for d in diagnostics if sliced(text, d.range, enc) == "np.fft.fft(y)")
    assert fft.range.start == to_position(text, text.index("np.fft.fft"), enc)
    # Edit the far end of the line, and hover there.
    at = text.index("w = np.fft.fft(y)")
    client.change(URI, 2, [(span(text, at, at + 1, enc), "功率")])
    text = text[:at] + "功率" + text[at + 1 :]
    diagnostics = await client.diagnostics_at(URI, 2)
    assert "np.fft.fft(y)" in {sliced(text, d.range, enc) for d in diagnostics}
    hover = await client.hover(URI, to_position(text, text.index("np.fft.fft") + 3, enc))
    assert hover is not None and "CuPy" in hover.contents.value


async def test_nul_and_control_characters(client: GpulensClient):
    """NUL, escape, delete, a BOM, vertical tab, form feed, NEL and U+2028 in
    the text: none of them ends a line for the protocol, so the ranges
    after them on the same line must still be exact."""
    enc = client.encoding
    odd = "\ufeff\x00\x1b[31m\x7f\x0b\x0c\x85\u2028\u2029"
    text = f"import numpy as np\ns = '{odd}'; y = np.sort(np.random.rand(1_000_000))\n"
    client.open(URI, text)
    diagnostics = await client.diagnostics_at(URI, 1)
    assert sorted(sliced(text, d.range, enc) for d in diagnostics) == [
        "np.random.rand(1_000_000)",
        "np.sort(np.random.rand(1_000_000))",
    ]
    for d in diagnostics:
        assert d.range.start.line == 1
    at = text.index("\x00")
    client.change(URI, 2, [(span(text, at, at + 1, enc), "\x00\x00")])
    text = text[:at] + "\x00\x00" + text[at + 1 :]
    diagnostics = await client.diagnostics_at(URI, 2)
    assert len(diagnostics) == 2
    assert all(sliced(text, d.range, enc).startswith("np.") for d in diagnostics)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_binary_content_as_text(client: GpulensClient, seed: int):
    """What an editor sends for a binary file opened as Python: every code
    point from 0 to 255 (as latin-1 decoding gives), or random ones from
    every plane. The server answers and goes on."""
    r = random.Random(seed)
    if seed == 1:
        text = bytes(r.randrange(256) for _ in range(64_000)).decode("latin-1")
    else:
        text = "".join(chr(r.choice([r.randrange(0x20), r.randrange(0xD800), r.randrange(0xE000, 0x110000)])) for _ in range(20_000))
    client.open(URI, text)
    await client.diagnostics_at(URI, 1)
    # Random ranges, many past the end.
    changes = []
    for _ in range(20):
        a = types.Position(line=r.randrange(200), character=r.randrange(400))
        b = types.Position(line=a.line + r.randrange(3), character=r.randrange(400))
        changes.append((types.Range(start=a, end=b), text[r.randrange(len(text)) :][:10]))
    client.change(URI, 2, changes)
    await client.diagnostics_at(URI, 2)
    await client.hover(URI, types.Position(line=3, character=5))
    other = "file:///work/project/after_binary.py"
    client.open(other, SPECTRUM)
    await still_serving(client, other, SPECTRUM)
