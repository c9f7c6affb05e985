"""Notebooks through LSP 3.17 notebook sync: the cells are analysed as one
module, each cell gets its own findings in its own positions, an edit in one
cell re-publishes the others it changes, and a removed cell's findings are
cleared."""

from __future__ import annotations

import asyncio
import time

from lsprotocol import types
from pytest_lsp import client_capabilities

from support import TIMEOUT, GpulensClient, session

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
    # (These capabilities get pushed diagnostics; Neovim's pull them.)
    async with session(client_capabilities("visual-studio-code"), tmp_path) as client:
        capability = client.init_result.capabilities.notebook_document_sync
        assert capability is not None
        open_notebook(client)
        # Cell 3 groups the table cell 2 read; the magic and the shell escape cost nothing.
        group = await published_for(client, cell_uri(2), ["CUDF002"])
        assert group[0].range.start == types.Position(line=1, character=9)
        read = await published_for(client, cell_uri(1), ["CUDF001"])
        assert read[0].range.start.line == 2
        assert "%load_ext cudf.pandas" in group[0].message

        # Hover, inlay hints and code actions answer on the cell too.
        hover = await client.hover(cell_uri(2), types.Position(line=1, character=12))
        assert hover is not None and "cudf" in str(hover.contents).lower()
        actions = await client.request(
            client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=cell_uri(2)),
                    range=group[0].range,
                    context=types.CodeActionContext(diagnostics=group),
                )
            )
        )
        titles = [a.title for a in actions or []]
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
