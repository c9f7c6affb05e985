"""What the server negotiates with each editor in `initialize`."""

from __future__ import annotations

import asyncio

import attrs
import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from support import GpulensClient, session


def with_encodings(preset: str, encodings: list[str]) -> types.ClientCapabilities:
    caps = client_capabilities(preset)
    general = caps.general or types.GeneralClientCapabilities()
    return attrs.evolve(
        caps,
        general=attrs.evolve(general, position_encodings=[types.PositionEncodingKind(e) for e in encodings]),
    )


@pytest.mark.parametrize(
    "offered, negotiated",
    [
        (["utf-8", "utf-16"], "utf-8"),
        (["utf-16", "utf-8"], "utf-8"),
        (["utf-16"], "utf-16"),
        (["utf-32", "utf-16"], "utf-16"),
    ],
)
async def test_position_encoding_follows_what_the_client_offers(tmp_path, offered, negotiated):
    async with session(with_encodings("visual-studio-code", offered), tmp_path) as client:
        assert client.init_result.capabilities.position_encoding == negotiated


async def test_vscode_preset_gets_utf16_and_push_diagnostics(vscode: GpulensClient):
    assert vscode.capabilities.general.position_encodings is None  # the preset offers nothing: UTF-16
    caps = vscode.init_result.capabilities
    assert caps.position_encoding == types.PositionEncodingKind.Utf16
    assert caps.diagnostic_provider is None, "VS Code 1.65 cannot pull diagnostics: the server must push"
    assert vscode.init_result.server_info.name == "gpulens"


async def test_neovim_preset_gets_utf8_and_pull_diagnostics(neovim: GpulensClient):
    caps = neovim.init_result.capabilities
    assert caps.position_encoding == types.PositionEncodingKind.Utf8
    assert caps.diagnostic_provider is not None
    # What one module declares it returns changes findings in another (the project index).
    assert caps.diagnostic_provider.inter_file_dependencies is True


async def test_older_neovim_offering_only_utf16_gets_utf16(tmp_path):
    async with session(client_capabilities("neovim@v0.10.0"), tmp_path) as client:
        assert client.init_result.capabilities.position_encoding == types.PositionEncodingKind.Utf16


async def test_capabilities_announced(client: GpulensClient):
    caps = client.init_result.capabilities
    sync = caps.text_document_sync
    assert sync.change == types.TextDocumentSyncKind.Incremental
    assert sync.open_close is True
    assert caps.hover_provider
    assert caps.inlay_hint_provider
    assert types.CodeActionKind.QuickFix in caps.code_action_provider.code_action_kinds
    assert "gpulens.gpuProfile" in caps.execute_command_provider.commands


async def test_vscode_gets_a_pyproject_watcher_registered(vscode: GpulensClient):
    # VS Code supports dynamic registration of file watchers: the server asks
    # to hear about pyproject.toml changes after `initialized`.
    for _ in range(200):
        if vscode.registrations:
            break
        await asyncio.sleep(0.01)
    methods = [r.method for r in vscode.registrations]
    assert methods == ["workspace/didChangeWatchedFiles"]
    watchers = vscode.registrations[0].register_options["watchers"]
    assert [w["globPattern"] for w in watchers] == ["**/pyproject.toml"]
