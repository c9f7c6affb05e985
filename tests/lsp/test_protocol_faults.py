"""Faults at the protocol level, byte by byte over stdio: broken frames and
bodies, methods the server does not know, documents it never saw, requests
after shutdown, cancellation, versions out of order, notifications of many
changes. After each, the server must have answered or ignored the message
and must still serve: `raw_still_serving` opens a document and gets a
correct hover back."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from lsprotocol import types

from programs import SPECTRUM
from support import GPULENS_BIN, TIMEOUT, GpulensClient, RawServer, sliced, summary
from test_robustness import raw_still_serving

HOVER_LINE = SPECTRUM.splitlines().index("spectrum = np.fft.fft(signal)")
URI = "file:///work/project/faults.py"


def request_body(msg_id, method: str, params) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


def frame(body: bytes, length: int | None = None) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


async def messages_until_reply(server: RawServer, msg_id, timeout: float = TIMEOUT) -> list[dict]:
    """Every message the server sends up to and including the reply to `msg_id`."""
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        message = await server.read(max(0.01, deadline - time.monotonic()))
        seen.append(message)
        if "method" not in message and message.get("id") == msg_id:
            return seen


async def no_reply_to(server: RawServer, what: str) -> None:
    """Nothing but diagnostics and log messages comes back before the answer to a fresh request."""
    seen = await messages_until_reply(server, (await send_profile_request(server)))
    replies = [m for m in seen[:-1] if "method" not in m]
    assert replies == [], f"{what} was answered: {replies}"


async def send_profile_request(server: RawServer) -> int:
    server._next_id += 1
    await server.send(request_body(server._next_id, "workspace/executeCommand", {"command": "gpulens.gpuProfile"}))
    return server._next_id


async def open_doc(server: RawServer, uri: str, text: str, version: int = 1) -> None:
    await server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}},
    )


# ------------------------------------------------------------ broken frames


async def test_content_length_too_short():
    """The body is cut: it is answered as a parse error, and what is left of
    it on the wire does not hide the next message."""
    async with RawServer.start() as server:
        body = request_body(1, "workspace/executeCommand", {"command": "gpulens.gpuProfile"})
        await server.write(frame(body, len(body) - 7))
        error = await server.reply_to(None)
        assert error["error"]["code"] == -32700, error
        await raw_still_serving(server)


async def test_content_length_too_long():
    """The body swallows the start of the next message: both are lost (the
    first answered as a parse error), the one after them is served."""
    async with RawServer.start() as server:
        body = request_body(1, "workspace/executeCommand", {"command": "gpulens.gpuProfile"})
        await server.write(frame(body, len(body) + 30))
        await server.write(frame(request_body(2, "workspace/executeCommand", {"command": "gpulens.gpuProfile"})))
        error = await server.reply_to(None)
        assert error["error"]["code"] == -32700, error
        await raw_still_serving(server)


BAD_LENGTHS = {
    "negative": b"-12",
    "fraction": b"12.5",
    "hexadecimal": b"0x20",
    "overflowing": b"99999999999999999999999999",
    "empty": b"",
    "too-big-to-accept": b"100000000000",
    "with-text": b"12 bytes",
}


@pytest.mark.parametrize("value", list(BAD_LENGTHS.values()), ids=list(BAD_LENGTHS))
async def test_unusable_content_length_is_dropped(value: bytes):
    async with RawServer.start() as server:
        body = request_body(1, "workspace/executeCommand", {"command": "gpulens.gpuProfile"})
        await server.write(b"Content-Length: " + value + b"\r\n\r\n" + body)
        await raw_still_serving(server)


async def test_a_message_without_content_length_is_dropped():
    async with RawServer.start() as server:
        body = request_body(1, "workspace/executeCommand", {"command": "gpulens.gpuProfile"})
        await server.write(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body)
        await raw_still_serving(server)


async def test_header_variants_real_clients_send_are_accepted():
    """Header names are case-insensitive; Content-Type may come first; a
    message may arrive a byte at a time."""
    async with RawServer.start() as server:
        body = request_body(5, "workspace/executeCommand", {"command": "gpulens.gpuProfile"})
        await server.write(b"content-length: %d\r\n\r\n" % len(body) + body)
        assert "profile" in (await server.reply_to(5))["result"]
        body = request_body(6, "workspace/executeCommand", {"command": "gpulens.gpuProfile"})
        await server.write(
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n" % len(body) + body
        )
        assert "profile" in (await server.reply_to(6))["result"]
        body = request_body(7, "workspace/executeCommand", {"command": "gpulens.gpuProfile"})
        for byte in frame(body):
            await server.write(bytes([byte]))
        assert "profile" in (await server.reply_to(7))["result"]


# ----------------------------------------------------------- broken bodies

MALFORMED_BODIES = {
    "trailing-garbage": b'{"jsonrpc": "2.0", "id": 1, "method": "shutdown"} trailing',
    "deeply-nested": b'{"jsonrpc": "2.0", "method": "x", "params": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "lone-surrogate": b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": '
    b'"file:///work/project/s.py", "languageId": "python", "version": 1, "text": "x = \'\\ud800\'"}}}',
    "method-not-a-string": b'{"jsonrpc": "2.0", "id": 3, "method": 5}',
    "old-jsonrpc-version": b'{"jsonrpc": "1.0", "id": 3, "method": "shutdown"}',
    "batch": b'[{"jsonrpc": "2.0", "id": 3, "method": "shutdown"}]',
    "a-string": b'"textDocument/hover"',
    "nan": b'{"jsonrpc": "2.0", "id": NaN, "method": "shutdown"}',
}


@pytest.mark.parametrize("body", list(MALFORMED_BODIES.values()), ids=list(MALFORMED_BODIES))
async def test_malformed_bodies_get_an_error_and_change_nothing(body: bytes):
    """None of these may take effect (two of them would shut the server down)."""
    async with RawServer.start() as server:
        await server.send(body)
        error = await server.reply_to(None)
        assert error["error"]["code"] in (-32700, -32600), error
        await raw_still_serving(server)


ODD_MESSAGES = {
    "id-object": b'{"jsonrpc": "2.0", "id": {"n": 1}, "method": "workspace/executeCommand", "params": {"command": "gpulens.gpuProfile"}}',
    "id-fraction": b'{"jsonrpc": "2.0", "id": 1.5, "method": "workspace/executeCommand", "params": {"command": "gpulens.gpuProfile"}}',
    "id-boolean": b'{"jsonrpc": "2.0", "id": true, "method": "workspace/executeCommand", "params": {"command": "gpulens.gpuProfile"}}',
    "params-a-string": b'{"jsonrpc": "2.0", "id": 9, "method": "textDocument/hover", "params": "everything"}',
    "params-missing": b'{"jsonrpc": "2.0", "id": 9, "method": "textDocument/hover"}',
    "notification-params-wrong": b'{"jsonrpc": "2.0", "method": "textDocument/didClose", "params": [1, 2, 3]}',
    "empty-method": b'{"jsonrpc": "2.0", "id": 9, "method": ""}',
    "error-response-to-nothing": b'{"jsonrpc": "2.0", "id": 99, "error": {"code": -1, "message": "no"}}',
    "huge-id": b'{"jsonrpc": "2.0", "id": 123456789012345678901234567890, "method": "shutdown"}',
}


@pytest.mark.parametrize("body", list(ODD_MESSAGES.values()), ids=list(ODD_MESSAGES))
async def test_odd_but_parseable_messages_are_survived(body: bytes):
    async with RawServer.start() as server:
        await server.send(body)
        await raw_still_serving(server)


# ---------------------------------------------------------- unknown methods


UNKNOWN_REQUESTS = {
    "gpulens/noSuchRequest": {"textDocument": {"uri": URI}},
    # The protocol: a "$/" request the server does not know still gets MethodNotFound.
    "$/noSuchRequest": {"textDocument": {"uri": URI}},
    # Real LSP methods gpulens does not offer.
    "textDocument/semanticTokens/full": {"textDocument": {"uri": URI}},
    "workspace/symbol": {"query": "fft"},
}


@pytest.mark.parametrize("method,params", list(UNKNOWN_REQUESTS.items()), ids=list(UNKNOWN_REQUESTS))
async def test_unknown_requests_are_method_not_found(method: str, params):
    async with RawServer.start() as server:
        reply = await server.request(method, params)
        assert reply["error"]["code"] == -32601, reply
        await raw_still_serving(server)


@pytest.mark.parametrize("method", ["gpulens/noSuchNotification", "$/noSuchNotification", "$/setTrace", "$/progress"])
async def test_unknown_notifications_are_ignored_silently(method: str):
    async with RawServer.start() as server:
        await server.notify(method, {"value": "verbose", "token": 1})
        await no_reply_to(server, method)
        await raw_still_serving(server)


# -------------------------------------------------------- unopened documents

UNOPENED = "file:///work/project/never_opened.py"
WHOLE = {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}}

UNOPENED_REQUESTS = {
    "hover": ("textDocument/hover", {"textDocument": {"uri": UNOPENED}, "position": {"line": 0, "character": 0}}),
    "codeAction": (
        "textDocument/codeAction",
        {"textDocument": {"uri": UNOPENED}, "range": WHOLE, "context": {"diagnostics": []}},
    ),
    "diagnostic": ("textDocument/diagnostic", {"textDocument": {"uri": UNOPENED}}),
    "inlayHint": ("textDocument/inlayHint", {"textDocument": {"uri": UNOPENED}, "range": WHOLE}),
    "applyFix": ("workspace/executeCommand", {"command": "gpulens.applyFix", "arguments": [UNOPENED, "CUPY001", WHOLE]}),
}


@pytest.mark.parametrize("method,params", list(UNOPENED_REQUESTS.values()), ids=list(UNOPENED_REQUESTS))
async def test_requests_for_unopened_documents_are_invalid_params(method: str, params):
    async with RawServer.start() as server:
        reply = await server.request(method, params)
        # diagnostic is only offered to pulling clients; without the capability it is not found.
        assert reply["error"]["code"] in (-32602, -32601), reply
        if reply["error"]["code"] == -32602:
            assert "never_opened.py" in reply["error"]["message"], reply
        await raw_still_serving(server)


async def test_notifications_for_unopened_documents_are_ignored():
    async with RawServer.start() as server:
        text_document = {"uri": UNOPENED, "version": 2}
        change = {"range": WHOLE, "text": "x = 1\n"}
        await server.notify("textDocument/didChange", {"textDocument": text_document, "contentChanges": [change]})
        await server.notify("textDocument/didClose", {"textDocument": {"uri": UNOPENED}})
        await server.notify("textDocument/didSave", {"textDocument": {"uri": UNOPENED}})
        await no_reply_to(server, "a notification about an unopened document")
        await raw_still_serving(server)


async def test_closing_twice_and_reopening():
    async with RawServer.start() as server:
        await open_doc(server, URI, SPECTRUM)
        await server.notify("textDocument/didClose", {"textDocument": {"uri": URI}})
        await server.notify("textDocument/didClose", {"textDocument": {"uri": URI}})
        hover = {"textDocument": {"uri": URI}, "position": {"line": HOVER_LINE, "character": 14}}
        closed = await server.request("textDocument/hover", hover)
        assert closed["error"]["code"] == -32602, closed
        await open_doc(server, URI, SPECTRUM, version=7)
        await open_doc(server, URI, "x = 1\n" + SPECTRUM, version=8)  # opened twice: the last text wins
        again = await server.request(
            "textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": HOVER_LINE + 1, "character": 14}}
        )
        assert "CuPy" in again["result"]["contents"]["value"], again


# ---------------------------------------------------------------- lifecycle


async def start_raw(initialize: bool = True) -> RawServer:
    process = await asyncio.create_subprocess_exec(
        GPULENS_BIN,
        "serve",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    server = RawServer(process)
    if initialize:
        reply = await server.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        assert "result" in reply, reply
        await server.notify("initialized", {})
    return server


async def exit_status(server: RawServer, timeout: float = 5.0) -> int:
    try:
        return await asyncio.wait_for(server.process.wait(), timeout)
    except asyncio.TimeoutError:
        server.process.kill()
        await server.process.wait()
        raise AssertionError(f"the server did not exit within {timeout}s")


async def test_requests_after_shutdown_are_invalid_then_exit_works():
    server = await start_raw()
    try:
        await open_doc(server, URI, SPECTRUM)
        assert (await server.request("shutdown", None))["result"] is None
        hover = await server.request(
            "textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": HOVER_LINE, "character": 14}}
        )
        assert hover["error"]["code"] == -32600, hover  # InvalidRequest, as the LSP asks
        again = await server.request("shutdown", None)
        assert again["error"]["code"] == -32600, again
        unknown = await server.request("gpulens/noSuchRequest", None)
        assert "error" in unknown, unknown
        # Notifications after shutdown are dropped, not answered.
        await open_doc(server, "file:///work/project/late.py", SPECTRUM)
        await server.notify("exit", None)
        assert await exit_status(server) == 0
    finally:
        if server.alive():
            server.process.kill()
            await server.process.wait()


async def test_shutdown_and_exit_in_one_write_exit_with_status_0():
    """A client that sends exit without waiting for shutdown's answer: the
    shutdown came first, so the status is 0."""
    server = await start_raw()
    exit_frame = frame(json.dumps({"jsonrpc": "2.0", "method": "exit"}).encode())
    await server.write(frame(request_body(90, "shutdown", None)) + exit_frame)
    assert await exit_status(server) == 0


async def test_exit_without_shutdown_exits_with_status_1():
    """The LSP: exit before shutdown means the client gave up; status 1."""
    server = await start_raw()
    await server.notify("exit", None)
    assert await exit_status(server) == 1


async def test_end_of_input_ends_the_server():
    """A client that dies without a word: stdin closes, the server goes too."""
    server = await start_raw()
    await open_doc(server, URI, SPECTRUM)
    assert server.process.stdin is not None
    server.process.stdin.close()
    assert await exit_status(server) != 0


async def test_requests_before_initialize_are_refused_then_initialize_works():
    server = await start_raw(initialize=False)
    try:
        early = await server.request(
            "textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}}
        )
        assert early["error"]["code"] == -32002, early  # ServerNotInitialized
        reply = await server.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        assert "result" in reply, reply
        await server.notify("initialized", {})
        second = await server.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        assert "error" in second, second
        await raw_still_serving(server)
    finally:
        server.process.kill()
        await server.process.wait()


# ------------------------------------------------------------- cancellation


def big_program(blocks: int) -> str:
    block = SPECTRUM.replace("import numpy as np\n\n", "")
    return "import numpy as np\n\n" + block * blocks


async def test_cancelled_requests_are_answered_once_each():
    """`$/cancelRequest` for requests still running, already answered or
    never sent: each request gets exactly one answer, its result or
    RequestCancelled, and the server goes on."""
    async with RawServer.start() as server:
        text = big_program(3000)  # 9,000 findings: every request on it takes a while
        await open_doc(server, URI, text)
        lines = text.count("\n")
        everything = {"start": {"line": 0, "character": 0}, "end": {"line": lines, "character": 0}}
        ids = list(range(500, 520))
        batch = b""
        for n in ids:
            if n % 2:
                params = {"textDocument": {"uri": URI}, "range": everything, "context": {"diagnostics": []}}
                batch += frame(request_body(n, "textDocument/codeAction", params))
            else:
                batch += frame(request_body(n, "textDocument/inlayHint", {"textDocument": {"uri": URI}, "range": everything}))
            batch += frame(json.dumps({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": n}}).encode())
        # Cancellations of requests that don't exist.
        for n in (9_999, "no-such-id"):
            batch += frame(json.dumps({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": n}}).encode())
        await server.write(batch)
        answers: dict = {}
        deadline = time.monotonic() + 60
        while len(answers) < len(ids):
            message = await server.read(max(0.01, deadline - time.monotonic()))
            if "method" in message:
                continue
            assert message.get("id") in ids, f"an answer to something never asked: {message}"
            assert message["id"] not in answers, f"answered twice: {message['id']}"
            answers[message["id"]] = message
        for n, message in answers.items():
            if "error" in message:
                assert message["error"]["code"] == -32800, message  # RequestCancelled
        # A late cancellation of an answered request changes nothing.
        await server.send(json.dumps({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": ids[0]}}).encode())
        await no_reply_to(server, "a late cancellation")
        await raw_still_serving(server)


# ------------------------------------- versions and notifications of many changes
#
# The text model here follows the LSP itself: lines end at "\n", "\r\n" or a
# lone "\r" (support.py's helpers know only "\n"), and a position past the
# end of a line or of the document means that end.


def _line_starts_lsp(text: str) -> list[int]:
    starts, i = [0], 0
    while i < len(text):
        if text[i] == "\r" and text[i + 1 : i + 2] == "\n":
            i += 2
            starts.append(i)
        elif text[i] in "\r\n":
            i += 1
            starts.append(i)
        else:
            i += 1
    return starts


def _width(ch: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(ch.encode("utf-8"))
    return 2 if (encoding == "utf-16" and ord(ch) > 0xFFFF) else 1


def lsp_index(text: str, line: int, character: int, encoding: str) -> int:
    starts = _line_starts_lsp(text)
    if line >= len(starts):
        return len(text)
    i, units = starts[line], 0
    while i < len(text) and text[i] not in "\r\n" and units + _width(text[i], encoding) <= character:
        units += _width(text[i], encoding)
        i += 1
    return i


def lsp_position(text: str, index: int, encoding: str) -> types.Position:
    starts = _line_starts_lsp(text)
    line = max(n for n, s in enumerate(starts) if s <= index)
    return types.Position(line=line, character=sum(_width(c, encoding) for c in text[starts[line] : index]))


def ranged(text: str, start: int, end: int, new: str, encoding: str):
    """A ranged change of `text` (indexes into it), and the text after it."""
    r = types.Range(start=lsp_position(text, start, encoding), end=lsp_position(text, end, encoding))
    return types.TextDocumentContentChangePartial(range=r, text=new), text[:start] + new + text[end:]


def send_changes(client: GpulensClient, uri: str, version: int, changes: list) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=changes
        )
    )


async def fresh_summary(client: GpulensClient, text: str, name: str) -> list[tuple]:
    uri = f"file:///work/project/{name}.py"
    client.open(uri, text)
    return summary(await client.diagnostics_at(uri, 1))


MIXED_ENDINGS = (
    "import numpy as np\r\n"
    "\r\n"
    "数据 = np.random.rand(10_000_000); 标签 = '😀🎉'\r\n"
    "spectrum = np.fft.fft(数据)\r"
    "power = np.abs(spectrum) ** 2\n"
    "print(power.max())"
)


async def test_a_notification_of_many_changes_equals_a_fresh_open(client: GpulensClient):
    """One didChange with seven changes over CRLF, lone CR, CJK and emoji
    text, a range past the end and a whole-document change: the diagnostics
    equal those of the resulting text opened fresh."""
    enc = client.encoding
    text = MIXED_ENDINGS
    client.open(URI, text)
    await client.diagnostics_at(URI, 1)
    changes = []
    # Insert a flagged call just after the emoji pair.
    at = text.index("🎉") + 1
    change, text = ranged(text, at, at, "; 排序 = np.sort(数据)", enc)
    changes.append(change)
    # Join the blank CRLF line with the import line: delete across "\r\n\r\n".
    at = text.index("\r\n")
    change, text = ranged(text, at, at + 2, "", enc)
    changes.append(change)
    # Replace the lone CR with CRLF, and add a lone CR line ending elsewhere.
    at = text.index("\rpower")
    change, text = ranged(text, at, at + 1, "\r\n", enc)
    changes.append(change)
    at = text.index("\nprint")
    change, text = ranged(text, at, at + 1, "\r", enc)
    changes.append(change)
    # Delete one CJK character from the middle of an identifier (数据 -> 数).
    at = text.index("np.fft.fft(数据)") + len("np.fft.fft(数")
    change, text = ranged(text, at, at + 1, "", enc)
    changes.append(change)
    # A range far past the end appends.
    far = types.Range(start=types.Position(line=900, character=0), end=types.Position(line=901, character=7))
    changes.append(types.TextDocumentContentChangePartial(range=far, text="\nu, s, vt = np.linalg.svd(np.random.rand(2_000, 2_000))\n"))
    text = text + "\nu, s, vt = np.linalg.svd(np.random.rand(2_000, 2_000))\n"
    # A character past the end of a line means the line's end.
    line = lsp_position(text, text.index("print"), enc).line
    at = lsp_index(text, line, 10_000, enc)
    changes.append(types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=line, character=10_000), end=types.Position(line=line, character=10_000)),
        text="  # 完",
    ))
    text = text[:at] + "  # 完" + text[at:]
    send_changes(client, URI, 2, changes)
    edited = summary(await client.diagnostics_at(URI, 2))
    assert edited == await fresh_summary(client, text, "fresh_many"), text
    assert len(edited) >= 4, edited

    # A whole-document change in the middle of a notification: what follows
    # it refers to the new text.
    whole = "import numpy as np\r\n\r\nx = np.random.rand(10_000_000)\r\n"
    changes = [types.TextDocumentContentChangeWholeDocument(text=whole)]
    text = whole
    at = len(text)
    change, text = ranged(text, at, at, "y = np.fft.fft(x)\r", enc)
    changes.append(change)
    at = text.index("x = ")
    change, text = ranged(text, at, at, "标签 = '😀'; ", enc)
    changes.append(change)
    send_changes(client, URI, 3, changes)
    edited = summary(await client.diagnostics_at(URI, 3))
    assert edited == await fresh_summary(client, text, "fresh_whole"), text
    assert len(edited) == 2, edited


async def test_versions_out_of_order_are_applied_in_arrival_order(client: GpulensClient):
    """A client that sends stale, repeated or jumping versions: every change
    is applied in the order it arrives (the edits describe the client's
    text), the last one's version is the document's, and the diagnostics
    equal a fresh open of the resulting text."""
    enc = client.encoding
    text = SPECTRUM
    client.open(URI, text, version=5)
    await client.diagnostics_at(URI, 5)
    versions = [3, 3, 9, 4, 2]
    inserts = [
        "a = np.sort(signal)\n",
        "b = np.cov(np.random.rand(2_000, 2_000))\n",
        "c = 1\n",
        "d = np.fft.ifft(spectrum)\n",
        "",
    ]
    for version, insert in zip(versions, inserts):
        at = text.index("print(")
        if insert:
            change, text = ranged(text, at, at, insert, enc)
        else:  # delete the first inserted line again
            start = text.index("a = np.sort")
            change, text = ranged(text, start, text.index("\n", start) + 1, "", enc)
        send_changes(client, URI, version, [change])
    edited = await client.diagnostics_at(URI, versions[-1])
    if not client.pull:
        last = [p for p in client.published if p.uri == URI][-1]
        assert last.version == versions[-1]
    assert summary(edited) == await fresh_summary(client, text, "fresh_versions")
    assert any(sliced(text, d.range, enc) == "np.fft.ifft(spectrum)" for d in edited)
