"""Notebooks through LSP 3.17 notebook sync: the cells are analysed as one
module, each cell gets its own findings in its own positions, an edit in one
cell re-publishes the others it changes, and a removed cell's findings are
cleared."""

from __future__ import annotations

import asyncio
import time

from lsprotocol import types
from pytest_lsp import client_capabilities

from support import TIMEOUT, GpulensClient, RawServer, session

NOTEBOOK = "file:///work/explore.ipynb"
CELLS = [
    (types.NotebookCellKind.Markup, "markdown", "# Sales\n"),
    (types.NotebookCellKind.Code, "python", "%matplotlib inline\nimport pandas as pd\ndf = pd.read_parquet('sales.parquet')\n"),
    (types.NotebookCellKind.Code, "python", "!ls data\ntotals = df.groupby('store').agg({'sales': 'sum'})\n"),
]


def cell_uri(i: int) -> str:
    return f"vscode-notebook-cell:/work/explore.ipynb#W{i}sZmlsZQ%3D%3D"


def open_notebook(client: GpulensClient, cells=CELLS) -> None:
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=NOTEBOOK,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=kind, document=cell_uri(i)) for i, (kind, _, _) in enumerate(cells)],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=cell_uri(i), language_id=language, version=1, text=text)
                for i, (_, language, text) in enumerate(cells)
            ],
        )
    )


async def code_actions(client: GpulensClient, uri: str, at: types.Range, diagnostics, only=None) -> list:
    """The code actions on `at` in the cell `uri`."""
    actions = await client.request(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=at,
                context=types.CodeActionContext(diagnostics=diagnostics, only=only),
            )
        )
    )
    return list(actions or [])


async def published_for(client: GpulensClient, uri: str, codes: list[str]) -> list[types.Diagnostic]:
    """Waits until the latest diagnostics published for `uri` have `codes`."""
    deadline = time.monotonic() + TIMEOUT
    latest = None
    while time.monotonic() < deadline:
        published = [p for p in client.published if p.uri == uri]
        if published:
            latest = published[-1].diagnostics
            if sorted(str(d.code) for d in latest) == sorted(codes):
                return list(latest)
        await asyncio.sleep(0.01)
    seen = [(p.uri[-12:], [d.code for d in p.diagnostics]) for p in client.published]
    raise AssertionError(f"{uri}: diagnostics {[d.code for d in latest or []]}, expected {codes}; published {seen}")


async def test_cells_are_one_module_with_positions_of_their_own(tmp_path):
    # (These capabilities get pushed diagnostics; Neovim's pull them. VS Code
    # itself takes inlay hint refreshes; pytest-lsp's copy of its
    # capabilities leaves that out.)
    capabilities = client_capabilities("visual-studio-code")
    capabilities.workspace.inlay_hint = types.InlayHintWorkspaceClientCapabilities(refresh_support=True)
    async with session(capabilities, tmp_path) as client:
        capability = client.init_result.capabilities.notebook_document_sync
        assert capability is not None
        open_notebook(client)
        # Cell 3 groups the table cell 2 read; the magic and the shell escape cost nothing.
        group = await published_for(client, cell_uri(2), ["CUDF002"])
        assert group[0].range.start == types.Position(line=1, character=9)
        read = await published_for(client, cell_uri(1), ["CUDF001"])
        assert read[0].range.start.line == 2
        assert len(group[0].message) <= 110, group[0].message

        # Hover, inlay hints and code actions answer on the cell too. The
        # hover's details name the notebook's way to switch cudf.pandas on.
        hover = await client.hover(cell_uri(2), types.Position(line=1, character=12))
        assert hover is not None and "%load_ext cudf.pandas" in str(hover.contents), hover
        actions = await code_actions(client, cell_uri(2), group[0].range, group)
        titles = [a.title for a in actions]
        assert any("Disable CUDF002" in t for t in titles), titles
        hints = await client.request(
            client.text_document_inlay_hint_async(
                types.InlayHintParams(
                    text_document=types.TextDocumentIdentifier(uri=cell_uri(2)),
                    range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=2, character=0)),
                )
            )
        )
        assert hints, hints

        # An edit in cell 2 (the table is now a list) changes cell 3's findings.
        client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                notebook_document=types.VersionedNotebookDocumentIdentifier(uri=NOTEBOOK, version=2),
                change=types.NotebookDocumentChangeEvent(
                    cells=types.NotebookDocumentCellChanges(
                        text_content=[
                            types.NotebookDocumentCellContentChanges(
                                document=types.VersionedTextDocumentIdentifier(uri=cell_uri(1), version=2),
                                changes=[
                                    types.TextDocumentContentChangePartial(
                                        range=types.Range(start=types.Position(line=2, character=5), end=types.Position(line=2, character=36)),
                                        text="[1, 2]",
                                    )
                                ],
                            )
                        ]
                    )
                ),
            )
        )
        await published_for(client, cell_uri(2), [])
        await published_for(client, cell_uri(1), [])
        # Cell 3's text is unchanged: the editor is told to ask for its inlay hints again.
        deadline = time.monotonic() + TIMEOUT
        while client.inlay_refresh_count == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert client.inlay_refresh_count > 0

        # A new cell that reads a table, then the cell removed: its findings cleared.
        client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                notebook_document=types.VersionedNotebookDocumentIdentifier(uri=NOTEBOOK, version=3),
                change=types.NotebookDocumentChangeEvent(
                    cells=types.NotebookDocumentCellChanges(
                        structure=types.NotebookDocumentCellChangeStructure(
                            array=types.NotebookCellArrayChange(
                                start=3, delete_count=0, cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=cell_uri(3))]
                            ),
                            did_open=[types.TextDocumentItem(uri=cell_uri(3), language_id="python", version=1, text="t = pd.read_csv('a.csv')\n")],
                        )
                    )
                ),
            )
        )
        await published_for(client, cell_uri(3), ["CUDF001"])
        client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                notebook_document=types.VersionedNotebookDocumentIdentifier(uri=NOTEBOOK, version=4),
                change=types.NotebookDocumentChangeEvent(
                    cells=types.NotebookDocumentCellChanges(
                        structure=types.NotebookDocumentCellChangeStructure(
                            array=types.NotebookCellArrayChange(start=3, delete_count=1),
                            did_close=[types.TextDocumentIdentifier(uri=cell_uri(3))],
                        )
                    )
                ),
            )
        )
        await published_for(client, cell_uri(3), [])

        # Closing the notebook clears every cell.
        client.published.clear()
        client.notebook_document_did_close(
            types.DidCloseNotebookDocumentParams(
                notebook_document=types.NotebookDocumentIdentifier(uri=NOTEBOOK),
                cell_text_documents=[types.TextDocumentIdentifier(uri=cell_uri(i)) for i in range(3)],
            )
        )
        for i in range(3):
            await published_for(client, cell_uri(i), [])
        assert client.alive()


async def test_cells_answer_pull_diagnostics(tmp_path):
    async with session(client_capabilities("neovim"), tmp_path) as client:
        assert client.pull
        open_notebook(client)
        deadline = time.monotonic() + TIMEOUT
        codes = None
        while time.monotonic() < deadline:
            report = await client.pull_report(cell_uri(2))
            codes = [str(d.code) for d in report.items]
            if codes == ["CUDF002"]:
                break
            await asyncio.sleep(0.05)
        assert codes == ["CUDF002"]


async def zero_code_change_action(client: GpulensClient) -> types.CodeAction:
    """The action on cell 3's CUDF002 that switches cudf.pandas on."""
    group = await published_for(client, cell_uri(2), ["CUDF002"]) if not client.pull else None
    if group is None:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            group = (await client.pull_report(cell_uri(2))).items
            if group:
                break
            await asyncio.sleep(0.05)
    actions = await code_actions(client, cell_uri(2), group[0].range, group)
    found = [a for a in actions if "%load_ext cudf.pandas" in a.title]
    assert len(found) == 1, [a.title for a in actions]
    return found[0]


async def test_a_mode_is_a_first_cell_inserted_by_the_clients_command():
    # (Raw JSON: lsprotocol reads a code action carrying a command as a Command.)
    async with RawServer.start({"experimental": {"gpulens": {"insertNotebookCell": True}}}) as server:
        await server.notify(
            "notebookDocument/didOpen",
            {
                "notebookDocument": {
                    "uri": NOTEBOOK,
                    "notebookType": "jupyter-notebook",
                    "version": 1,
                    "cells": [{"kind": int(kind), "document": cell_uri(i)} for i, (kind, _, _) in enumerate(CELLS)],
                },
                "cellTextDocuments": [
                    {"uri": cell_uri(i), "languageId": language, "version": 1, "text": text}
                    for i, (_, language, text) in enumerate(CELLS)
                ],
            },
        )
        at = {"start": {"line": 1, "character": 12}, "end": {"line": 1, "character": 12}}
        reply = await server.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": cell_uri(2)}, "range": at, "context": {"diagnostics": []}},
        )
        found = [a for a in reply["result"] if "%load_ext cudf.pandas" in a["title"]]
        assert len(found) == 1, reply
        assert "edit" not in found[0]
        assert found[0]["kind"] == "quickfix"
        assert found[0]["command"]["command"] == "gpulens.insertNotebookCell"
        assert found[0]["command"]["arguments"] == [NOTEBOOK, 0, "%load_ext cudf.pandas"]


async def test_without_the_command_the_magic_heads_the_first_code_cell(tmp_path):
    async with session(client_capabilities("visual-studio-code"), tmp_path) as client:
        open_notebook(client)
        action = await zero_code_change_action(client)
        assert action.command is None
        # Cell 1 is markdown: the first code cell is cell 2.
        edits = action.edit.changes
        assert list(edits) == [cell_uri(1)], edits
        (edit,) = edits[cell_uri(1)]
        assert edit.new_text == "%load_ext cudf.pandas\n"
        assert edit.range.start == types.Position(line=0, character=0) == edit.range.end


TIMED = [
    (types.NotebookCellKind.Code, "python", "import time\nimport cupy as cp\nx = cp.ones(10**7)\n"),
    (types.NotebookCellKind.Code, "python", "t0 = time.time()\ny = cp.fft.fft(x)\nt1 = time.time()\n"),
    (types.NotebookCellKind.Markup, "markdown", "Sorting\n"),
    (types.NotebookCellKind.Code, "python", "t0 = time.time()\nz = cp.sort(x)\nt1 = time.time()\n"),
]


async def test_the_notebook_fix_all_edits_each_cell_once(tmp_path):
    async with session(client_capabilities("visual-studio-code"), tmp_path) as client:
        open_notebook(client, TIMED)
        await published_for(client, cell_uri(1), ["GPU005"])
        await published_for(client, cell_uri(3), ["GPU005"])

        async def fix_all(kind: str, cell: int) -> list[types.CodeAction]:
            start = types.Position(line=0, character=0)
            return await code_actions(client, cell_uri(cell), types.Range(start=start, end=start), [], only=[kind])

        # The notebook's fix-all, asked on any cell: one action, each cell's edits on that cell.
        for asked_on in (0, 3):
            (action,) = await fix_all("notebook.source.fixAll", asked_on)
            assert action.kind == "notebook.source.fixAll.gpulens"
            changes = action.edit.changes
            assert sorted(changes) == sorted([cell_uri(1), cell_uri(3)]), changes
            for cell in (1, 3):
                (edit,) = changes[cell_uri(cell)]
                assert edit.new_text == "cp.cuda.Device().synchronize()\n"
                assert edit.range.start == types.Position(line=2, character=0)
        # A file's fix-all asked on a cell fixes that cell alone.
        (action,) = await fix_all("source.fixAll", 3)
        assert list(action.edit.changes) == [cell_uri(3)]
        assert await fix_all("source.fixAll", 0) == []
