"""The server keeps serving whatever the client sends: ranges out of bounds,
positions inside characters, malformed JSON-RPC, documents it never saw."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from programs import SPECTRUM, SPECTRUM_CJK
from support import GpulensClient, RawServer, apply_change, range_of, sliced, summary, to_position

URI = "file:///work/project/robust.py"


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def rng(a: types.Position, b: types.Position) -> types.Range:
    return types.Range(start=a, end=b)


async def still_serving(client: GpulensClient, uri: str = URI, text: str = SPECTRUM) -> None:
    """The server is up and answers a hover on a flagged call correctly."""
    assert client.alive(), "the server exited"
    call = "np.fft.fft(signal)"
    hover = await client.hover(uri, to_position(text, text.index(call) + 3, client.encoding))
    assert hover is not None and "CuPy" in hover.contents.value
    assert sliced(text, hover.range, client.encoding) == call


async def test_change_far_past_the_end_is_clamped(client: GpulensClient):
    enc = client.encoding
    client.open(URI, SPECTRUM)
    far = rng(pos(10_000, 0), pos(10_000, 5))
    appended = "ordered = np.sort(np.random.rand(10_000_000))\n"
    client.change(URI, 2, [(far, appended)])
    text = apply_change(SPECTRUM, far, appended, enc, clamp=True)
    assert text == SPECTRUM + appended
    await still_serving(client, URI, text)
    diagnostics = await client.diagnostics_at(URI, 2)
    last = [d for d in diagnostics if d.range.start.line == len(SPECTRUM.splitlines())]
    assert sorted(sliced(text, d.range, enc) for d in last) == [
        "np.random.rand(10_000_000)",
        "np.sort(np.random.rand(10_000_000))",
    ]


async def test_character_past_the_end_of_a_line_means_its_end(client: GpulensClient):
    """LSP: a character beyond the line's length defaults back to the line's length."""
    enc = client.encoding
    client.open(URI, SPECTRUM_CJK)
    line = 2  # 数据 = np.random.rand(...); 标签 = "😀"; 结果 = np.fft.fft(数据)
    at = rng(pos(line, 999), pos(line, 999))
    added = "; 功率 = np.abs(结果) ** 2"
    client.change(URI, 2, [(at, added)])
    text = apply_change(SPECTRUM_CJK, at, added, enc, clamp=True)
    assert text.splitlines()[line].endswith("np.fft.fft(数据); 功率 = np.abs(结果) ** 2")
    diagnostics = await client.diagnostics_at(URI, 2)
    assert sorted(sliced(text, d.range, enc) for d in diagnostics) == sorted(
        ["np.random.rand(10_000_000)", "np.fft.fft(数据)", "np.abs(结果)"]
    )


async def test_positions_inside_a_character_do_not_break_the_server(client: GpulensClient):
    """A position that splits the emoji (its second UTF-16 unit, or a UTF-8
    continuation byte) is invalid; the server must survive it and keep
    answering for a document it can still be told the text of."""
    enc = client.encoding
    client.open(URI, SPECTRUM_CJK)
    emoji = SPECTRUM_CJK.index("😀")
    start = to_position(SPECTRUM_CJK, emoji, enc)
    inside = pos(start.line, start.character + 1)
    await client.hover(URI, inside)  # any answer, or none, but an answer
    client.change(URI, 2, [(rng(inside, inside), "x")])
    assert client.alive()
    # Reopen with known text: everything is consistent again.
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI)))
    client.open(URI, SPECTRUM, version=3)
    await still_serving(client)


async def test_reversed_range_does_not_break_the_server(client: GpulensClient):
    client.open(URI, SPECTRUM)
    client.change(URI, 2, [(rng(pos(3, 10), pos(2, 4)), "")])
    assert client.alive()
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI)))
    client.open(URI, SPECTRUM, version=3)
    await still_serving(client)


async def test_change_to_an_unopened_document_is_ignored(client: GpulensClient):
    client.open(URI, SPECTRUM)
    client.change("file:///work/project/elsewhere.py", 2, [(rng(pos(0, 0), pos(0, 0)), "x = 1\n")])
    await still_serving(client)
    with pytest.raises(JsonRpcException):
        await client.hover("file:///work/project/elsewhere.py", pos(0, 0))


async def raw_still_serving(server: RawServer) -> None:
    """The raw server answers a hover on a flagged call, opening the document first."""
    uri = "file:///work/project/raw.py"
    await server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SPECTRUM}},
    )
    line = SPECTRUM.splitlines().index("spectrum = np.fft.fft(signal)")
    reply = await server.request(
        "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": line, "character": 14}}
    )
    assert "CuPy" in reply["result"]["contents"]["value"], reply


# Well-formed JSON-RPC with bad or unexpected content: survived today.
WELL_FORMED = {
    "bad-open": b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 42}}',
    "bad-change": b'{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": '
    b'{"uri": "file:///work/project/raw.py", "version": "two"}, "contentChanges": [{"range": {"start": '
    b'{"line": -1, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}]}}',
    "unknown-notification": b'{"jsonrpc": "2.0", "method": "gpulens/noSuchNotification", "params": {}}',
    "response-to-nothing": b'{"jsonrpc": "2.0", "id": 4242, "result": null}',
}

# Messages that are not JSON-RPC at all.
MALFORMED = {
    "truncated-json": b'{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": ',
    "invalid-utf8": b"\xff\xfe not json at all",
    "json-array": b"[]",
    "json-null": b"null",
    "empty-object": b"{}",
    "no-jsonrpc-field": b'{"id": 7, "method": "textDocument/hover"}',
}



@pytest.mark.parametrize("body", list(WELL_FORMED.values()), ids=list(WELL_FORMED))
async def test_well_formed_but_wrong_messages_are_survived(body: bytes):
    async with RawServer.start() as server:
        await server.send(body)
        await raw_still_serving(server)


@pytest.mark.parametrize("body", list(MALFORMED.values()), ids=list(MALFORMED))
async def test_malformed_messages_are_survived(body: bytes):
    async with RawServer.start() as server:
        await server.send(body)
        error = await server.reply_to(None)  # JSON-RPC: a parse error or invalid request, id null
        assert error["error"]["code"] in (-32700, -32600), error
        await raw_still_serving(server)


async def test_a_bad_content_length_header_is_survived():
    async with RawServer.start() as server:
        await server.write(b"Content-Length: lots\r\n\r\n{}")
        await raw_still_serving(server)


async def test_an_empty_message_does_not_stall_the_next_request():
    async with RawServer.start() as server:
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 77, "method": "workspace/executeCommand", "params": {"command": "gpulens.gpuProfile"}}
        ).encode()
        # Both in one write, as a pipe delivers them when the server is busy.
        await server.write(b"Content-Length: 0\r\n\r\n" + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        reply = await server.reply_to(77, timeout=2)
        assert "profile" in reply["result"]


async def test_bad_requests_get_error_responses():
    async with RawServer.start() as server:
        no_position = await server.request("textDocument/hover", {"textDocument": {"uri": "file:///x.py"}})
        assert no_position["error"]["code"] == -32602, no_position  # invalid params
        unknown = await server.request("gpulens/noSuchRequest", None)
        assert unknown["error"]["code"] == -32601, unknown  # method not found
        await raw_still_serving(server)


async def test_a_change_with_an_older_version_is_still_applied(client: GpulensClient):
    """The edits describe the client's text, whatever version it says."""
    enc = client.encoding
    client.open(URI, SPECTRUM, version=10)
    await client.diagnostics_at(URI, 10)
    r = range_of(SPECTRUM, "power = np.abs(spectrum) ** 2\n", enc)
    client.change(URI, 5, [(r, "")])
    text = SPECTRUM.replace("power = np.abs(spectrum) ** 2\n", "")
    diagnostics = await client.diagnostics_at(URI, 5)
    assert [sliced(text, d.range, enc) for d in diagnostics] == ["np.random.rand(10_000_000)", "np.fft.fft(signal)"]


async def test_a_large_document(client: GpulensClient):
    """A few thousand lines open, edit and answer well within the timeouts."""
    enc = client.encoding
    block = SPECTRUM.replace("import numpy as np\n\n", "")
    text = "import numpy as np\n\n" + block * 600
    client.open(URI, text)
    diagnostics = await client.diagnostics_at(URI, 1)
    assert len(diagnostics) == 3 * 600
    last = text.rindex("print(power[0])")
    r = rng(to_position(text, last, enc), to_position(text, last + len("print"), enc))
    client.change(URI, 2, [(r, "repr")])
    after = await client.diagnostics_at(URI, 2)
    assert summary(after) == summary(diagnostics)
