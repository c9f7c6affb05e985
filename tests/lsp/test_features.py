"""Code actions, hover, inlay hints and commands."""

from __future__ import annotations

import ast

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import client_capabilities

from programs import SPECTRUM, SPECTRUM_CJK
from support import (
    GpulensClient,
    apply_text_edits,
    range_of,
    session,
    sliced,
    summary,
    to_position,
    whole,
)

URI = "file:///work/project/spectrum.py"
UNOPENED = "file:///work/project/never_opened.py"


def text_edits(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    """The TextEdits a WorkspaceEdit makes to `uri`, in either of its shapes."""
    edits: list[types.TextEdit] = []
    if edit.changes:
        edits.extend(edit.changes.get(uri, []))
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri:
            edits.extend(change.edits)
    return edits


async def code_actions(client: GpulensClient, uri: str, r: types.Range, diagnostics, only=None):
    result = await client.request(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=r,
                context=types.CodeActionContext(diagnostics=list(diagnostics), only=only),
            )
        )
    )
    assert result is not None
    return [a for a in result if isinstance(a, types.CodeAction)]


# --------------------------------------------------------------- code actions


@pytest.mark.parametrize(
    "program, call", [(SPECTRUM, "np.fft.fft(signal)"), (SPECTRUM_CJK, "np.fft.fft(数据)")], ids=["ascii", "cjk-emoji"]
)
async def test_disable_action_suppresses_the_finding(client: GpulensClient, program: str, call: str):
    enc = client.encoding
    client.open(URI, program)
    diagnostics = await client.diagnostics_at(URI, 1)
    target = next(d for d in diagnostics if sliced(program, d.range, enc) == call)

    actions = await code_actions(client, URI, target.range, [target])
    titles = [a.title for a in actions]
    assert "Disable CUPY001 for this line" in titles, titles
    disable = next(a for a in actions if a.title == "Disable CUPY001 for this line")
    assert disable.kind == types.CodeActionKind.QuickFix
    assert disable.diagnostics and disable.diagnostics[0].range == target.range
    for action in actions:
        assert action.edit is not None, f"{action.title} has no edit"
        assert text_edits(action.edit, URI), f"{action.title} edits nothing in {URI}"

    edits = text_edits(disable.edit, URI)
    fixed = apply_text_edits(program, edits, enc)
    line = fixed.splitlines()[target.range.start.line]
    assert line.endswith("# gpulens: ignore[CUPY001]"), line
    assert line.startswith(program.splitlines()[target.range.start.line]), "the code before the comment is unchanged"
    ast.parse(fixed)  # still Python

    # Send the edits as the editor would, as incremental changes.
    client.change(URI, 2, [(e.range, e.new_text) for e in edits])
    after = await client.diagnostics_at(URI, 2)
    assert call not in [sliced(fixed, d.range, enc) for d in after]
    # Every CUPY001 finding on that line goes (there are two on the CJK line), no other.
    line_no = target.range.start.line
    assert summary(after) == summary([d for d in diagnostics if d.range.start.line != line_no])


async def test_disable_action_adds_to_an_existing_ignore_comment(client: GpulensClient):
    enc = client.encoding
    text = SPECTRUM.replace("np.fft.fft(signal)\n", "np.fft.fft(signal)  # gpulens: ignore[CUDF001]\n")
    client.open(URI, text)
    diagnostics = await client.diagnostics_at(URI, 1)
    target = next(d for d in diagnostics if sliced(text, d.range, enc) == "np.fft.fft(signal)")
    actions = await code_actions(client, URI, target.range, [target])
    disable = next(a for a in actions if a.title == "Disable CUPY001 for this line")
    fixed = apply_text_edits(text, text_edits(disable.edit, URI), enc)
    assert "spectrum = np.fft.fft(signal)  # gpulens: ignore[CUDF001, CUPY001]\n" in fixed


async def disable(client: GpulensClient, text: str, call: str) -> str:
    """Opens `text`, applies "Disable CUPY001 for this line" to the finding on
    `call`, sends the edit, and returns the new text once the finding is gone."""
    enc = client.encoding
    client.open(URI, text)
    diagnostics = await client.diagnostics_at(URI, 1)
    target = next(d for d in diagnostics if sliced(text, d.range, enc) == call)
    actions = await code_actions(client, URI, target.range, [target])
    edits = text_edits(next(a for a in actions if a.title == "Disable CUPY001 for this line").edit, URI)
    fixed = apply_text_edits(text, edits, enc)
    client.change(URI, 2, [(e.range, e.new_text) for e in edits])
    after = await client.diagnostics_at(URI, 2)
    assert call not in [sliced(fixed, d.range, enc) for d in after], fixed
    return fixed


@pytest.mark.parametrize(
    "line",
    [
        "spectrum = np.fft.fft(signal)  # the spectrum 😀\n",
        "spectrum = np.fft.fft(signal)  # noqa: E501\n",
        "spectrum = np.fft.fft(\n    signal,\n)\n",
        "both = (np.fft.fft(signal) +\n        np.fft.ifft(signal))\n",
    ],
    ids=["after-a-comment", "after-noqa", "call-over-lines", "open-parenthesis"],
)
async def test_disable_action_keeps_valid_python(client: GpulensClient, line: str):
    text = "import numpy as np\n\nsignal = np.random.rand(10_000_000)\n" + line
    fixed = await disable(client, text, "np.fft.fft(signal)" if "(\n" not in line else "np.fft.fft(\n    signal,\n)")
    ast.parse(fixed)


async def test_disable_action_on_a_backslash_continued_line(client: GpulensClient):
    text = (
        "import numpy as np\n\nsignal = np.random.rand(10_000_000)\n"
        "both = np.fft.fft(signal) + \\\n    np.fft.ifft(signal)\n"
    )
    fixed = await disable(client, text, "np.fft.fft(signal)")
    ast.parse(fixed)


async def test_disable_action_ignores_lookalike_text_in_strings(client: GpulensClient):
    text = (
        "import numpy as np\n\nsignal = np.random.rand(10_000_000)\n"
        "spectrum = np.fft.fft(signal); hint = 'add # gpulens: ignore[CODE] to silence a line'\n"
    )
    fixed = await disable(client, text, "np.fft.fft(signal)")
    assert "hint = 'add # gpulens: ignore[CODE] to silence a line'" in fixed, "the string is unchanged"


async def test_quickfixes_carry_the_fix_of_their_diagnostic(client: GpulensClient):
    """Where a finding has a fix, its quickfix edits exactly what the
    diagnostic's data says; every finding gets its disable action."""
    enc = client.encoding
    client.open(URI, SPECTRUM)
    diagnostics = await client.diagnostics_at(URI, 1)
    actions = await code_actions(client, URI, whole(SPECTRUM, enc), diagnostics)
    disables = [a for a in actions if a.title.startswith("Disable ")]
    assert len(disables) == len(diagnostics)
    for d in diagnostics:
        fix = (d.data or {}).get("fix")
        if fix is None:
            continue
        quickfix = next(a for a in actions if a.title == fix["message"])
        assert quickfix.kind == types.CodeActionKind.QuickFix
        assert [(e.range, e.new_text) for e in text_edits(quickfix.edit, URI)] == [
            (client.protocol._converter.structure(e["range"], types.Range), e["newText"]) for e in fix["edits"]
        ]


async def test_no_actions_away_from_findings(client: GpulensClient):
    enc = client.encoding
    client.open(URI, SPECTRUM)
    diagnostics = await client.diagnostics_at(URI, 1)
    r = range_of(SPECTRUM, "print", enc)
    assert await code_actions(client, URI, r, diagnostics) == []


async def test_code_action_on_an_unopened_document_is_an_error(client: GpulensClient):
    r = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    with pytest.raises(JsonRpcException):
        await code_actions(client, UNOPENED, r, [])


# ---------------------------------------------------------------------- hover


def hover_text(hover: types.Hover) -> str:
    contents = hover.contents
    if isinstance(contents, types.MarkupContent):
        return contents.value
    if isinstance(contents, str):
        return contents
    return "\n".join(c if isinstance(c, str) else c.value for c in contents)


@pytest.mark.parametrize(
    "program, call", [(SPECTRUM, "np.fft.fft(signal)"), (SPECTRUM_CJK, "np.fft.fft(数据)")], ids=["ascii", "cjk-emoji"]
)
async def test_hover_on_a_flagged_call_names_the_library(client: GpulensClient, program: str, call: str):
    enc = client.encoding
    client.open(URI, program)
    target = range_of(program, call, enc)
    # On the `fft` after the CJK/emoji text: the position must be read in the negotiated encoding.
    inside = to_position(program, program.index(call) + len("np.fft.ff"), enc)
    hover = await client.hover(URI, inside)
    assert hover is not None
    text = hover_text(hover)
    assert "CuPy" in text
    assert "CUPY001" in text
    assert "fft" in text
    assert hover.range == target


async def test_hover_gives_the_details_the_message_leaves_out(client: GpulensClient):
    client.open(URI, SPECTRUM)
    diagnostics = await client.diagnostics_at(URI, 1)
    fft = next(d for d in diagnostics if "fft" in d.message)
    # The message is one line; the install line, the why and the fix are in the hover.
    assert len(fft.message) <= 110 and "uv add" not in fft.message, fft.message
    hover = await client.hover(URI, fft.range.start)
    text = hover_text(hover)
    assert "Install: `uv add cupy-cuda12x`" in text, text
    assert "**Fix (unsafe: review the result).** Run these array calls with CuPy." in text, text


async def test_hover_on_an_import_shows_gpu_coverage(client: GpulensClient):
    enc = client.encoding
    client.open(URI, SPECTRUM)
    at = to_position(SPECTRUM, SPECTRUM.index("numpy") + 2, enc)
    hover = await client.hover(URI, at)
    assert hover is not None
    text = hover_text(hover)
    assert "numpy" in text
    assert "CuPy" in text
    assert hover.range == range_of(SPECTRUM, "numpy", enc)


async def test_hover_elsewhere_is_empty(client: GpulensClient):
    enc = client.encoding
    client.open(URI, SPECTRUM)
    assert await client.hover(URI, to_position(SPECTRUM, SPECTRUM.index("print") + 1, enc)) is None


async def test_hover_on_an_unopened_document_is_an_error(client: GpulensClient):
    with pytest.raises(JsonRpcException) as error:
        await client.hover(UNOPENED, types.Position(line=0, character=0))
    assert "not open" in str(error.value)


# ---------------------------------------------------------------- inlay hints


async def inlay_hints(client: GpulensClient, uri: str, text: str) -> list[types.InlayHint]:
    result = await client.request(
        client.text_document_inlay_hint_async(
            types.InlayHintParams(
                text_document=types.TextDocumentIdentifier(uri=uri), range=whole(text, client.encoding)
            )
        )
    )
    return list(result or [])


async def test_inlay_hints_follow_flagged_calls(neovim: GpulensClient):
    enc = neovim.encoding
    neovim.open(URI, SPECTRUM_CJK)
    hints = await inlay_hints(neovim, URI, SPECTRUM_CJK)
    diagnostics = await neovim.diagnostics_at(URI, 1)
    assert hints, "inlay hints are on by default"
    # The library, and the speedup its rewrite measured on a real GPU (knowledge/measured.toml).
    assert all(h.label.startswith("→ CuPy ~") and h.label.endswith("× on H200") for h in hints), [h.label for h in hints]
    assert sorted((h.position.line, h.position.character) for h in hints) == sorted(
        (d.range.end.line, d.range.end.character) for d in diagnostics
    )
    # The position is right after the call, in the negotiated encoding.
    after_fft = to_position(SPECTRUM_CJK, SPECTRUM_CJK.index("np.fft.fft(数据)") + len("np.fft.fft(数据)"), enc)
    assert after_fft in [h.position for h in hints]


RIDGE = """from sklearn.linear_model import Ridge


def fit(X, y):
    return Ridge(alpha=1.0, positive=True).fit(X, y)
"""


async def test_an_inlay_hint_says_what_its_finding_says(neovim: GpulensClient):
    # CUML002: the estimator stays on the CPU under cuml.accel; the hint must not say "→ cuML".
    neovim.open(URI, RIDGE)
    diagnostics = await neovim.diagnostics_at(URI, 1)
    assert [d.code for d in diagnostics] == ["CUML002"], diagnostics
    hints = await inlay_hints(neovim, URI, RIDGE)
    assert [h.label for h in hints] == ["stays on CPU (cuML)"], hints


async def test_inlay_hint_estimates_are_for_the_users_gpu(tmp_path):
    # A GPU is known: the measured speedup is scaled to it and names it.
    async with session(client_capabilities("neovim"), tmp_path, {"gpulens": {"targetGpu": "RTX 4090"}}) as client:
        client.open(URI, SPECTRUM)
        await client.diagnostics_at(URI, 1)
        labels = [h.label for h in await inlay_hints(client, URI, SPECTRUM)]
        assert labels and all(label.startswith("→ CuPy ~") and label.endswith("× on GeForce RTX 4090") for label in labels), labels


async def test_inlay_hints_only_in_the_requested_range(neovim: GpulensClient):
    enc = neovim.encoding
    neovim.open(URI, SPECTRUM)
    r = range_of(SPECTRUM, "spectrum = np.fft.fft(signal)", enc)
    result = await neovim.request(
        neovim.text_document_inlay_hint_async(
            types.InlayHintParams(text_document=types.TextDocumentIdentifier(uri=URI), range=r)
        )
    )
    assert [h.position for h in result] == [r.end]


async def test_inlay_hints_off_after_did_change_configuration(neovim: GpulensClient):
    neovim.open(URI, SPECTRUM)
    assert await inlay_hints(neovim, URI, SPECTRUM)
    neovim.configure({"gpulens": {"inlayHints": False}})
    assert await inlay_hints(neovim, URI, SPECTRUM) == []
    # Diagnostics are unaffected.
    assert len(await neovim.diagnostics_at(URI, 1)) == 3
    neovim.configure({"gpulens": {"inlayHints": True}})
    assert len(await inlay_hints(neovim, URI, SPECTRUM)) == 3


async def test_inlay_hints_off_in_initialization_options(tmp_path):
    async with session(client_capabilities("neovim"), tmp_path, {"inlayHints": False}) as client:
        client.open(URI, SPECTRUM)
        assert await inlay_hints(client, URI, SPECTRUM) == []
        assert len(await client.diagnostics_at(URI, 1)) == 3


# ------------------------------------------------------------------- commands


async def execute(client: GpulensClient, command: str, arguments=None):
    return await client.request(
        client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=arguments))
    )


async def test_gpu_profile_command(client: GpulensClient):
    result = await execute(client, "gpulens.gpuProfile")
    assert set(result) >= {"profile", "target"}
    assert result["profile"]["source"] in ("none", "nvml")
    assert result["target"] is None


async def test_gpu_profile_reports_the_target_gpu_setting(tmp_path):
    async with session(client_capabilities("visual-studio-code"), tmp_path, {"gpulens": {"targetGpu": "A100"}}) as client:
        result = await execute(client, "gpulens.gpuProfile")
        assert result["target"] == "A100"
        client.configure({"gpulens": {"targetGpu": "H100"}})
        assert (await execute(client, "gpulens.gpuProfile"))["target"] == "H100"


async def test_unknown_command_is_an_error(client: GpulensClient):
    with pytest.raises(JsonRpcException):
        await execute(client, "gpulens.noSuchCommand")


async def test_apply_fix_without_a_fix_is_an_error(client: GpulensClient):
    enc = client.encoding
    client.open(URI, SPECTRUM)
    r = range_of(SPECTRUM, "np.fft.fft(signal)", enc)
    with pytest.raises(JsonRpcException):
        await execute(client, "gpulens.applyFix", [URI, "CUPY999", client.protocol._converter.unstructure(r)])
