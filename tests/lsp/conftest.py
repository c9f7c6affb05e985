"""Fixtures: a `gpulens serve` process per test, driven by pytest-lsp's
client with the capabilities a real editor sends."""

from __future__ import annotations

import os

import pytest
import pytest_lsp
from pytest_lsp import client_capabilities

from support import GPULENS_BIN, SERVER, GpulensClient, initialize_params

# The editors whose capabilities the tests speak with. VS Code 1.65 offers only
# UTF-16 positions and takes pushed diagnostics; Neovim 0.11 offers UTF-8 and
# pulls diagnostics (textDocument/diagnostic).
EDITORS = {
    "vscode": "visual-studio-code",
    "neovim": "neovim@v0.11.0",
}


def pytest_configure(config: pytest.Config) -> None:
    if not (os.path.isfile(GPULENS_BIN) and os.access(GPULENS_BIN, os.X_OK)):
        raise pytest.UsageError(
            f"gpulens binary not found at {GPULENS_BIN}: build it with `cargo build --release` "
            "or set GPULENS_BIN"
        )


async def _start(client: GpulensClient, editor: str, tmp_path) -> None:
    params = initialize_params(client_capabilities(EDITORS[editor]), tmp_path)
    client.init_result = await client.initialize_session(params)


@pytest_lsp.fixture(config=SERVER)
async def vscode(lsp_client: GpulensClient, tmp_path):
    """A server talking to VS Code (UTF-16, pushed diagnostics)."""
    await _start(lsp_client, "vscode", tmp_path)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def neovim(lsp_client: GpulensClient, tmp_path):
    """A server talking to Neovim (UTF-8, pulled diagnostics)."""
    await _start(lsp_client, "neovim", tmp_path)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER, params=list(EDITORS), ids=list(EDITORS))
async def client(lsp_client: GpulensClient, request, tmp_path):
    """A server talking to each editor in turn."""
    await _start(lsp_client, request.param, tmp_path)
    yield
    await lsp_client.shutdown_session()
