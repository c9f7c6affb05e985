"""The `profile` setting: a profile of the user's program (made by its
profiler, tests/fixtures/profiles) ranks the advice in the editor. Hover and
inlay hints show each finding's measured share; diagnostics in code under
the threshold are demoted or hidden when asked; a new profile written over
the file is picked up without restarting."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from lsprotocol import types
from pytest_lsp import client_capabilities

from support import session

ROOT = Path(__file__).resolve().parents[2]
PROFILES = ROOT / "tests" / "fixtures" / "profiles"
PROGRAM = (ROOT / "examples" / "image_filters.py").read_text()
# Not where the profile was recorded (/home/ana/project): matched by the file's name and folders.
URI = "file:///work/project/image_filters.py"


def hover_text(hover: types.Hover) -> str:
    contents = hover.contents
    return contents.value if isinstance(contents, types.MarkupContent) else str(contents)


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line - 1, character=character - 1)


async def hints(client, text: str) -> list[types.InlayHint]:
    end = types.Position(line=len(text.splitlines()), character=0)
    result = await client.request(
        client.text_document_inlay_hint_async(
            types.InlayHintParams(
                text_document=types.TextDocumentIdentifier(uri=URI),
                range=types.Range(start=types.Position(line=0, character=0), end=end),
            )
        )
    )
    return list(result or [])


async def test_hover_and_hints_show_the_measured_share(tmp_path):
    profile = str(PROFILES / "image_filters.speedscope.json")
    async with session(client_capabilities("neovim"), tmp_path, {"gpulens": {"profile": profile}}) as client:
        client.open(URI, PROGRAM)
        diagnostics = await client.diagnostics_at(URI, 1)
        assert len(diagnostics) == 5, diagnostics
        blur = await client.hover(URI, at(26, 6))
        assert "**Profile.** 69% of run time (speedscope (py-spy))" in hover_text(blur), hover_text(blur)
        labels = sorted(h.label for h in await hints(client, PROGRAM))
        assert any(label.endswith("· 69% of run time") for label in labels), labels
        assert any(label.endswith("· 1.5% of run time") for label in labels), labels


async def test_code_under_the_threshold_is_hidden_or_demoted_and_a_new_profile_is_read(tmp_path):
    profile = tmp_path / "run.json"
    shutil.copy(PROFILES / "image_filters.speedscope.json", profile)
    settings = {"gpulens": {"profile": "run.json", "profileThreshold": 0.05, "profileBelow": "hide"}}
    async with session(client_capabilities("visual-studio-code"), tmp_path, settings) as client:
        client.open(URI, PROGRAM)
        shown = await client.diagnostics_at(URI, 1)
        # The sin and cos of the frame's synthesis took 1.5% each: hidden.
        assert sorted(d.range.start.line + 1 for d in shown) == [26, 40, 50], shown
        client.configure({"gpulens": {"profile": "run.json", "profileThreshold": 0.05, "profileBelow": "demote"}})
        after = len(client.published)
        demoted = (await client.wait_published(URI, after=after)).diagnostics
        assert len(demoted) == 5
        faded = [d for d in demoted if types.DiagnosticTag.Unnecessary in (d.tags or [])]
        assert sorted(d.range.start.line + 1 for d in faded) == [18, 18], demoted
        assert all(d.severity == types.DiagnosticSeverity.Hint for d in faded)
        # A profile of another program written over the file: this file is
        # no longer measured, so nothing is demoted any more.
        after = len(client.published)
        shutil.copy(PROFILES / "spectral_analysis.speedscope.json", profile)
        for _ in range(50):
            published = (await client.wait_published(URI, after=after)).diagnostics
            if not any(types.DiagnosticTag.Unnecessary in (d.tags or []) for d in published):
                break
            after = len(client.published)
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the new profile was not read")
        assert len(published) == 5


async def test_an_unreadable_profile_is_reported_once(tmp_path):
    (tmp_path / "broken.prof").write_text("not a profile")
    async with session(client_capabilities("neovim"), tmp_path, {"gpulens": {"profile": "broken.prof", "profileBelow": "hide"}}) as client:
        client.open(URI, PROGRAM)
        assert len(await client.diagnostics_at(URI, 1)) == 5, "nothing hidden without a profile"
        await client.hover(URI, at(26, 6))
        warnings = [m.message for m in client.messages if "broken.prof" in m.message]
        assert len(warnings) == 1 and "not a profile gpulens reads" in warnings[0], client.messages
