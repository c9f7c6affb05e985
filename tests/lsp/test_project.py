"""The workspace's project index: what a module's functions declare they
return is known where an open document of another module calls them, and a
saved change to that module re-analyses the open documents."""

from __future__ import annotations

import asyncio
import time

from lsprotocol import types
from pytest_lsp import client_capabilities

from support import TIMEOUT, GpulensClient, session

UTILS = 'import pandas as pd\n\n\ndef load(path) -> pd.DataFrame:\n    return pd.read_csv(path)\n'
# No pandas import here: only the index says `sales` is a DataFrame.
REPORT = 'from . import utils\n\n\ndef summarize(path):\n    sales = utils.load(path)\n    return sales.groupby("store").agg({"sales": "sum"})\n'


async def codes_become(client: GpulensClient, uri: str, codes: list[str]) -> None:
    """Waits until the latest diagnostics published for `uri` have `codes`."""
    deadline = time.monotonic() + TIMEOUT
    latest = None
    while time.monotonic() < deadline:
        published = [p for p in client.published if p.uri == uri]
        if published:
            latest = sorted(str(d.code) for d in published[-1].diagnostics)
            if latest == sorted(codes):
                return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{uri}: diagnostics {latest}, expected {codes}")


async def test_a_value_another_module_returns_is_known_and_follows_its_changes(tmp_path):
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    utils = package / "utils.py"
    utils.write_text(UTILS)
    report = package / "report.py"
    report.write_text(REPORT)
    uri = report.as_uri()
    async with session(client_capabilities("visual-studio-code"), tmp_path) as client:
        client.open(uri, REPORT)
        # The workspace is read in the background; the open document is
        # analysed again once it is.
        await codes_become(client, uri, ["CUDF002"])

        # `load` now declares a path string: the group-by is no longer on a table.
        utils.write_text(UTILS.replace("-> pd.DataFrame", "-> str"))
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=utils.as_uri())))
        await codes_become(client, uri, [])

        # And back.
        utils.write_text(UTILS)
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=utils.as_uri())))
        await codes_become(client, uri, ["CUDF002"])
