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


SIGNAL = "import numpy as np\n\n\ndef spectrum(x):\n    return np.abs(np.fft.fft(x))\n"
RUN = "import numpy as np\n\nfrom .signal import spectrum\n\n\ndef main():\n    return spectrum(np.random.rand(50_000_000))\n"


async def test_a_parameter_is_what_another_module_passes_and_follows_its_changes(tmp_path):
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    signal = package / "signal.py"
    signal.write_text(SIGNAL)
    run = package / "run.py"
    run.write_text(RUN)
    uri = signal.as_uri()
    async with session(client_capabilities("visual-studio-code"), tmp_path) as client:
        client.open(uri, SIGNAL)
        # Nothing in signal.py says how large `x` is: only run.py's call does.
        await codes_become(client, uri, ["CUPY001"])

        # run.py, open and saved, now passes 16 samples: the transform is small.
        small = RUN.replace("np.random.rand(50_000_000)", "np.zeros(16)")
        client.open(run.as_uri(), small)
        run.write_text(small)
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=run.as_uri())))
        await codes_become(client, uri, [])

        # And back, through the saved file alone (run.py closed first).
        client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=run.as_uri())))
        run.write_text(RUN)
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=run.as_uri())))
        await codes_become(client, uri, ["CUPY001"])
