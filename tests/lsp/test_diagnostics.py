"""Diagnostics: ranges in each position encoding, push with versions, pull
with result ids, incremental sync, and settings that change them."""

from __future__ import annotations

import asyncio
import time
import random

import attrs
import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import client_capabilities

from programs import IDENTIFIER_CHARS, INSERTED_LINES, SENSOR_REPORT, SPECTRUM, SPECTRUM_CJK
from support import CUPY_DOCS, GpulensClient, session, sliced, span, summary, to_position

URI = "file:///work/project/analysis.py"


def by_text(text: str, diagnostics: list[types.Diagnostic], encoding: str) -> dict[str, types.Diagnostic]:
    return {sliced(text, d.range, encoding): d for d in diagnostics}


# ---------------------------------------------------------- ranges in encodings


async def test_ranges_count_code_units_of_the_negotiated_encoding(client: GpulensClient):
    """CJK identifiers and an emoji before `np.fft.fft(数据)` on the same line:
    its range must cover exactly that text in UTF-16 (VS Code) and in UTF-8 (Neovim)."""
    client.open(URI, SPECTRUM_CJK)
    diagnostics = await client.diagnostics_at(URI, 1)
    found = by_text(SPECTRUM_CJK, diagnostics, client.encoding)
    assert "np.fft.fft(数据)" in found, f"ranges slice to {sorted(found)}"
    assert "np.random.rand(10_000_000)" in found

    fft = found["np.fft.fft(数据)"].range
    line = SPECTRUM_CJK.splitlines()[2]
    before = line[: line.index("np.fft.fft")]
    # Counted independently of the slicing helper: code units of the text before it.
    units = len(before.encode("utf-16-le")) // 2 if client.encoding == "utf-16" else len(before.encode("utf-8"))
    assert (fft.start.line, fft.start.character) == (2, units)
    assert fft.end.line == 2
    # In UTF-16, 数据 is two units; in UTF-8 it is six bytes.
    width = len("np.fft.fft(") + (2 if client.encoding == "utf-16" else 6) + 1
    assert fft.end.character - fft.start.character == width


async def test_diagnostic_fields(client: GpulensClient):
    client.open(URI, SPECTRUM)
    diagnostics = await client.diagnostics_at(URI, 1)
    assert [sliced(SPECTRUM, d.range, client.encoding) for d in diagnostics] == [
        "np.random.rand(10_000_000)",
        "np.fft.fft(signal)",
        "np.abs(spectrum)",
    ]
    for d in diagnostics:
        assert d.source == "gpulens"
        assert d.code == "CUPY001"
        assert d.code_description is not None and d.code_description.href.startswith(CUPY_DOCS)
        assert "CuPy" in d.message
        assert d.severity is not None


async def test_small_arrays_get_no_diagnostic(client: GpulensClient):
    text = "import numpy as np\n\nx = np.random.rand(16)\ny = np.fft.fft(x)\n"
    client.open(URI, text)
    assert await client.diagnostics_at(URI, 1) == []


# ------------------------------------------------------------------------ push


async def test_pushed_diagnostics_carry_the_document_version(vscode: GpulensClient):
    enc = vscode.encoding
    vscode.open(URI, SPECTRUM, version=7)
    first = await vscode.wait_published(URI)
    assert first.version == 7
    assert len(first.diagnostics) == 3

    # Version 8 deletes the line with np.abs.
    line = SPECTRUM.splitlines(keepends=True)[4]
    at = SPECTRUM.index(line)
    mark = len(vscode.published)
    vscode.change(URI, 8, [(span(SPECTRUM, at, at + len(line), enc), "")])
    second = await vscode.wait_published(URI, after=mark)
    assert second.version == 8
    after = SPECTRUM.replace(line, "")
    assert [sliced(after, d.range, enc) for d in second.diagnostics] == [
        "np.random.rand(10_000_000)",
        "np.fft.fft(signal)",
    ]


async def test_an_edit_undone_publishes_the_first_findings_under_its_own_version(vscode: GpulensClient):
    """Delete the np.abs line (version 2), put it back (version 3): the text of
    version 1 again, whose findings the server remembers. Version 3's publish
    must carry version 3 and version 1's ranges; an edit after it (version 4)
    is analysed as usual."""
    enc = vscode.encoding
    vscode.open(URI, SPECTRUM, version=1)
    first = await vscode.wait_published(URI, version=1)
    line = SPECTRUM.splitlines(keepends=True)[4]
    at = SPECTRUM.index(line)
    vscode.change(URI, 2, [(span(SPECTRUM, at, at + len(line), enc), "")])
    second = await vscode.wait_published(URI, version=2)
    assert len(second.diagnostics) == 2
    vscode.change(URI, 3, [(span(SPECTRUM, at, at, enc), line)])
    third = await vscode.wait_published(URI, version=3)
    assert [sliced(SPECTRUM, d.range, enc) for d in third.diagnostics] == [
        sliced(SPECTRUM, d.range, enc) for d in first.diagnostics
    ]
    assert len(third.diagnostics) == 3
    # A new text after the recalled one: a real analysis, from the right tree.
    renamed = SPECTRUM.replace("spectrum", "power")
    vscode.change(URI, 4, [(span(SPECTRUM, 0, len(SPECTRUM), enc), renamed)])
    fourth = await vscode.wait_published(URI, version=4)
    assert [sliced(renamed, d.range, enc) for d in fourth.diagnostics] == [
        "np.random.rand(10_000_000)",
        "np.fft.fft(signal)",
        "np.abs(power)",
    ]


async def test_closing_clears_pushed_diagnostics(vscode: GpulensClient):
    vscode.open(URI, SPECTRUM)
    await vscode.wait_published(URI, version=1)
    mark = len(vscode.published)
    vscode.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI))
    )
    cleared = await vscode.wait_published(URI, after=mark)
    assert cleared.diagnostics == ()


# ------------------------------------------------------------------------ pull


async def test_pull_full_then_unchanged_then_full_after_an_edit(neovim: GpulensClient):
    enc = neovim.encoding
    neovim.open(URI, SPECTRUM)
    first = await neovim.pull_report(URI)
    assert first.kind == "full"
    assert first.result_id
    assert len(first.items) == 3

    again = await neovim.pull_report(URI, previous=first.result_id)
    assert again.kind == "unchanged"
    assert again.result_id == first.result_id

    # An edit that changes the findings: the line with np.abs goes.
    line = SPECTRUM.splitlines(keepends=True)[4]
    at = SPECTRUM.index(line)
    neovim.change(URI, 2, [(span(SPECTRUM, at, at + len(line), enc), "")])
    edited = await neovim.pull_report(URI, previous=first.result_id)
    assert edited.kind == "full"
    assert edited.result_id and edited.result_id != first.result_id
    text = SPECTRUM.replace(line, "")
    assert [sliced(text, d.range, enc) for d in edited.items] == [
        "np.random.rand(10_000_000)",
        "np.fft.fft(signal)",
    ]


async def test_pull_with_a_stale_result_id_gets_a_full_report(neovim: GpulensClient):
    neovim.open(URI, SPECTRUM)
    first = await neovim.pull_report(URI)
    stale = await neovim.pull_report(URI, previous="not-a-result-id")
    assert stale.kind == "full"
    assert summary(stale.items) == summary(first.items)


async def test_pull_does_not_push(neovim: GpulensClient):
    neovim.open(URI, SPECTRUM)
    await neovim.pull_report(URI)  # the open was handled
    assert neovim.published == []


# ---------------------------------------------------------- incremental sync


def random_edits(text: str, encoding: str, rng: random.Random, count: int):
    """`count` didChange notifications of random edits, and the text after each.

    Edits are what typing does to a script: identifier characters inserted in
    or after a name, runs of identifier characters deleted, whole lines
    inserted or deleted. The `import numpy as np` line is left alone, so the
    edited script keeps findings to compare. Each notification holds one to
    four changes; each change's range refers to the text left by the change
    before it, as in LSP."""

    def ident(ch: str) -> bool:
        return ch.isalnum() or ch == "_"

    notifications = []
    while len(notifications) < count:
        changes = []
        for _ in range(rng.choice([1, 1, 1, 2, 3, 4])):
            lines = text.splitlines(keepends=True)
            starts = [sum(len(x) for x in lines[:i]) for i in range(len(lines) + 1)]
            editable = [i for i, line in enumerate(lines) if not line.startswith("import ")]
            n = rng.choice(editable)
            body = lines[n].rstrip("\n")
            op = rng.choice(["insert", "insert", "delete", "delete", "line", "line", "drop"])
            after_name = [i for i in range(1, len(body) + 1) if body[i - 1].isalpha() or body[i - 1] == "_"]
            in_name = [i for i in range(len(body)) if ident(body[i])]
            if op == "insert" and after_name:
                at = starts[n] + rng.choice(after_name)
                new = "".join(rng.choice(IDENTIFIER_CHARS) for _ in range(rng.randint(1, 4)))
                start, end = at, at
            elif op == "delete" and in_name:
                a = rng.choice(in_name)
                b = a + 1
                while b < len(body) and b - a < 4 and ident(body[b]):
                    b += 1
                start, end, new = starts[n] + a, starts[n] + b, ""
            elif op == "drop" and len(lines) > 8:
                start, end, new = starts[n], starts[n + 1], ""
            else:  # insert a whole line before line n, or at the end
                n = rng.randint(0, len(lines))
                start = end = starts[n] if n < len(lines) else len(text)
                new = rng.choice(INSERTED_LINES)
                if start == len(text) and not text.endswith("\n"):
                    new = "\n" + new
            changes.append((span(text, start, end, encoding), new))
            text = text[:start] + new + text[end:]
        notifications.append((changes, text))
    return notifications


async def test_random_incremental_edits_match_a_fresh_open(client: GpulensClient):
    """60 seeded random didChange notifications; at checkpoints and at the end,
    the edited document's diagnostics must equal those of the same text opened
    fresh under another URI."""
    enc = client.encoding
    rng = random.Random(20240611)
    client.open(URI, SENSOR_REPORT, version=1)
    notifications = random_edits(SENSOR_REPORT, enc, rng, 60)
    assert sum(len(c) for c, _ in notifications) > 80, "some notifications carry several changes"
    checkpoints = {15, 30, 45, 60}
    for version, (changes, text) in enumerate(notifications, start=2):
        client.change(URI, version, changes)
        n = version - 1
        if n not in checkpoints:
            continue
        edited = await client.diagnostics_at(URI, version)
        fresh_uri = URI.replace("analysis.py", f"analysis_fresh_{n}.py")
        client.open(fresh_uri, text)
        fresh = await client.diagnostics_at(fresh_uri, 1)
        assert len(fresh) >= 5, "the edits should leave plenty of findings to compare"
        assert summary(edited) == summary(fresh), f"after {n} notifications"
        # And the ranges fall where the text says they do.
        for d in edited:
            if d.code == "CUPY001":
                covered = sliced(text, d.range, enc)
                assert covered.endswith(")") and "." in covered, covered


async def test_late_analyses_publish_moved_findings_then_their_own(tmp_path):
    """With no time budget, every edit is published twice at most: first the
    findings before it, moved with the text (those it touched dropped), then
    the analysis of the new text when that differs. The last word for each
    version is the analysis, and after 30 random edits it equals a fresh open."""
    caps = client_capabilities("visual-studio-code")
    async with session(caps, tmp_path, env={"GPULENS_EDIT_BUDGET_MS": "0"}) as client:
        enc = client.encoding
        client.open(URI, SENSOR_REPORT, version=1)
        before = (await client.wait_published(URI, version=1)).diagnostics
        # A line with a new finding at the top: everything below moves one line down.
        added = "spectrum = np.fft.fft(np.random.rand(4_000_000))\n"
        at = SENSOR_REPORT.index("\n", SENSOR_REPORT.index("import numpy")) + 1
        mark = len(client.published)
        client.change(URI, 2, [(span(SENSOR_REPORT, at, at, enc), added)])
        first = await client.wait_published(URI, version=2, after=mark)
        assert [(d.code, d.range.start.line) for d in first.diagnostics] == [
            (d.code, d.range.start.line + 1) for d in before
        ], "first the old findings, one line lower"
        text = SENSOR_REPORT[:at] + added + SENSOR_REPORT[at:]
        client.open(URI.replace("analysis.py", "fresh_2.py"), text)
        fresh = await client.diagnostics_at(URI.replace("analysis.py", "fresh_2.py"), 1)
        assert len(fresh) > len(before)
        second = await client.wait_published(URI, version=2, after=client.published.index(first) + 1)
        assert summary(second.diagnostics) == summary(fresh)
        # Random edits: each version's last publish is its analysis.
        rng = random.Random(7)
        for version, (changes, text) in enumerate(random_edits(text, enc, rng, 30), start=3):
            client.change(URI, version, changes)
        client.open(URI.replace("analysis.py", "fresh_end.py"), text)
        fresh = await client.diagnostics_at(URI.replace("analysis.py", "fresh_end.py"), 1)
        deadline = time.monotonic() + 30
        while True:
            last = [p for p in client.published if p.uri == URI and p.version == version]
            if last and summary(last[-1].diagnostics) == summary(fresh):
                break
            assert time.monotonic() < deadline, (summary(last[-1].diagnostics) if last else None, summary(fresh))
            await asyncio.sleep(0.01)


async def test_edits_inside_multibyte_text_stay_in_step(client: GpulensClient):
    """Insert before the emoji and CJK names, delete one CJK character: the
    flagged call after them must still be found exactly, in both encodings."""
    enc = client.encoding
    text = SPECTRUM_CJK
    client.open(URI, text)
    changes = []
    # Before the emoji, inside the string.
    at = text.index("😀")
    changes.append((span(text, at, at, enc), "🚀标"))
    text = text[:at] + "🚀标" + text[at:]
    # Drop the 果 of 结果.
    at = text.index("结果 =") + 1
    changes.append((span(text, at, at + 1, enc), ""))
    text = text[:at] + text[at + 1 :]
    client.change(URI, 2, changes)
    diagnostics = await client.diagnostics_at(URI, 2)
    found = by_text(text, diagnostics, enc)
    assert "np.fft.fft(数据)" in found, sorted(found)
    assert found["np.fft.fft(数据)"].range.start == to_position(text, text.index("np.fft.fft"), enc)


# ------------------------------------------------------------------ settings


async def test_ignore_setting_removes_cupy_diagnostics_push(vscode: GpulensClient):
    vscode.open(URI, SPECTRUM)
    first = await vscode.wait_published(URI, version=1)
    assert any(str(d.code).startswith("CUPY") for d in first.diagnostics)

    mark = len(vscode.published)
    vscode.configure({"gpulens": {"ignore": ["CUPY"]}})
    republished = await vscode.wait_published(URI, after=mark)
    assert republished.version == 1
    assert [d for d in republished.diagnostics if str(d.code).startswith("CUPY")] == []

    # And back: an empty ignore list brings them back.
    mark = len(vscode.published)
    vscode.configure({"gpulens": {"ignore": []}})
    restored = await vscode.wait_published(URI, after=mark)
    assert summary(restored.diagnostics) == summary(first.diagnostics)


async def test_ignore_setting_removes_cupy_diagnostics_pull(neovim: GpulensClient):
    neovim.open(URI, SPECTRUM)
    first = await neovim.pull_report(URI)
    assert first.items
    neovim.configure({"gpulens": {"ignore": ["CUPY001"]}})
    after = await neovim.pull_report(URI, previous=first.result_id)
    assert after.kind == "full", "the settings changed the findings: the old result id is stale"
    assert list(after.items) == []


async def test_ignore_in_initialization_options(tmp_path):
    caps = client_capabilities("visual-studio-code")
    async with session(caps, tmp_path, {"gpulens": {"ignore": ["CUPY"]}}) as client:
        client.open(URI, SPECTRUM)
        assert (await client.wait_published(URI, version=1)).diagnostics == ()


async def test_pyproject_in_the_workspace_is_read(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gpulens]\nignore = ["CUPY001"]\n')
    async with session(client_capabilities("visual-studio-code"), tmp_path) as client:
        client.open((tmp_path / "analysis.py").as_uri(), SPECTRUM)
        published = await client.wait_published((tmp_path / "analysis.py").as_uri(), version=1)
        assert published.diagnostics == ()


def with_refresh_support(preset: str, supported: bool):
    caps = client_capabilities(preset)
    workspace = attrs.evolve(
        caps.workspace, diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=supported)
    )
    return attrs.evolve(caps, workspace=workspace)


async def refreshes_after_settings_change(client: GpulensClient) -> int:
    client.open(URI, SPECTRUM)
    first = await client.pull_report(URI)
    client.configure({"gpulens": {"ignore": ["CUPY"]}})
    after = await client.pull_report(URI, previous=first.result_id)  # the settings were applied
    assert list(after.items) == []
    await asyncio.sleep(0.3)  # the server sends its refresh request from a task of its own
    return client.diagnostic_refresh_count


async def test_pull_client_with_refresh_support_is_asked_to_refresh(tmp_path):
    async with session(with_refresh_support("neovim", True), tmp_path) as client:
        assert await refreshes_after_settings_change(client) == 1


async def test_pull_client_without_refresh_support_is_not_sent_a_refresh(tmp_path):
    async with session(with_refresh_support("neovim", False), tmp_path) as client:
        assert await refreshes_after_settings_change(client) == 0


async def test_pull_on_a_closed_document_is_an_error(neovim: GpulensClient):
    neovim.open(URI, SPECTRUM)
    assert (await neovim.pull_report(URI)).kind == "full"
    neovim.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI)))
    with pytest.raises(JsonRpcException):
        await neovim.pull_report(URI)


async def test_a_changed_pyproject_is_reloaded(tmp_path):
    """VS Code watches pyproject.toml for the server; a change there re-analyses open files."""
    uri = (tmp_path / "analysis.py").as_uri()
    async with session(client_capabilities("visual-studio-code"), tmp_path) as client:
        client.open(uri, SPECTRUM)
        assert len((await client.wait_published(uri, version=1)).diagnostics) == 3

        pyproject = tmp_path / "pyproject.toml"
        pyproject.write_text('[project]\nname = "sensors"\n\n[tool.gpulens]\nignore = ["CUPY001"]\n')
        mark = len(client.published)
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Created)]
            )
        )
        assert list((await client.wait_published(uri, after=mark)).diagnostics) == []

        # A broken pyproject.toml is reported to the user, not fatal.
        pyproject.write_text("[tool.gpulens]\nignroe = [\"CUPY001\"]\n")
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]
            )
        )
        for _ in range(200):
            if client.messages:
                break
            await asyncio.sleep(0.01)
        assert any("pyproject.toml" in m.message for m in client.messages), client.messages
        client.open(uri.replace("analysis", "other"), SPECTRUM)
        assert len((await client.wait_published(uri.replace("analysis", "other"), version=1)).diagnostics) == 3


async def test_bad_initialization_options_are_reported_not_fatal(tmp_path):
    async with session(client_capabilities("visual-studio-code"), tmp_path, {"gpulens": {"minElements": "many"}}) as client:
        client.open(URI, SPECTRUM)
        assert len((await client.wait_published(URI, version=1)).diagnostics) == 3
        for _ in range(200):
            if client.messages:
                break
            await asyncio.sleep(0.01)
        assert [m.type for m in client.messages] == [types.MessageType.Warning]
        assert "initializationOptions" in client.messages[0].message
