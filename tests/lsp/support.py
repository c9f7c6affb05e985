"""Helpers for the end-to-end LSP tests: the test client, position encodings
and text edits done in Python, and waiting for what the server sends."""

from __future__ import annotations

import asyncio
import attrs
import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Optional

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES

REPO = Path(__file__).resolve().parents[2]
GPULENS_BIN = os.environ.get("GPULENS_BIN") or str(REPO / "target" / "release" / "gpulens")

# A request or notification the server should answer within this many seconds.
TIMEOUT = 10.0

CUPY_DOCS = "https://docs.cupy.dev"


# ---------------------------------------------------------------- the client


class GpulensClient(LanguageClient):
    """pytest-lsp's client, also keeping every publishDiagnostics (with its
    version) in order and every registration the server asked for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.published: list[types.PublishDiagnosticsParams] = []
        self.registrations: list[types.Registration] = []
        self.inlay_refresh_count = 0
        self.init_result: Optional[types.InitializeResult] = None

    # --- what the server negotiated

    @property
    def encoding(self) -> str:
        assert self.init_result is not None, "initialize first"
        kind = self.init_result.capabilities.position_encoding
        return "utf-16" if kind is None else str(kind.value if hasattr(kind, "value") else kind)

    @property
    def pull(self) -> bool:
        assert self.init_result is not None, "initialize first"
        return self.init_result.capabilities.diagnostic_provider is not None

    def alive(self) -> bool:
        return self._server is not None and self._server.returncode is None

    # --- documents

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
            )
        )

    def change(self, uri: str, version: int, changes: list[tuple[types.Range, str]]) -> None:
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangePartial(range=r, text=t) for r, t in changes],
            )
        )

    def configure(self, settings: Any) -> None:
        self.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=settings))

    async def request(self, coro: Any) -> Any:
        return await asyncio.wait_for(coro, TIMEOUT)

    async def hover(self, uri: str, position: types.Position) -> Optional[types.Hover]:
        return await self.request(
            self.text_document_hover_async(
                types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
            )
        )

    async def pull_report(self, uri: str, previous: Optional[str] = None) -> Any:
        return await self.request(
            self.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(
                    text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=previous
                )
            )
        )

    async def wait_published(
        self,
        uri: str,
        *,
        version: Optional[int] = None,
        after: int = 0,
        timeout: float = TIMEOUT,
    ) -> types.PublishDiagnosticsParams:
        """The first publishDiagnostics for `uri` at index `after` or later in
        `self.published` (and with `version`, when given)."""
        deadline = time.monotonic() + timeout
        while True:
            for p in self.published[after:]:
                if p.uri == uri and (version is None or p.version == version):
                    return p
            if time.monotonic() > deadline:
                seen = [(p.uri, p.version, len(p.diagnostics)) for p in self.published]
                raise AssertionError(f"no publishDiagnostics for {uri} version {version} (got {seen})")
            if not self.alive():
                raise AssertionError("the server exited")
            await asyncio.sleep(0.005)

    async def diagnostics_at(self, uri: str, version: int) -> list[types.Diagnostic]:
        """The document's diagnostics at `version`, pulled or pushed, whichever the server does."""
        if self.pull:
            report = await self.pull_report(uri)
            assert report.kind == "full"
            return list(report.items)
        return list((await self.wait_published(uri, version=version)).diagnostics)


def _publish_diagnostics(client: GpulensClient, params: types.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)


def _register_capability(client: GpulensClient, params: types.RegistrationParams) -> None:
    client.registrations.extend(params.registrations)


def _inlay_hint_refresh(client: GpulensClient, params: None) -> None:
    client.inlay_refresh_count += 1


def make_client() -> GpulensClient:
    client = GpulensClient(converter_factory=default_converter)
    features: dict[str, Callable[..., Any]] = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _publish_diagnostics
    features[types.CLIENT_REGISTER_CAPABILITY] = _register_capability
    features[types.WORKSPACE_INLAY_HINT_REFRESH] = _inlay_hint_refresh
    for method, handler in features.items():
        client.feature(method)(handler)
    return client


SERVER = ClientServerConfig(
    server_command=[GPULENS_BIN, "serve"],
    client_factory=make_client,
    server_env={**os.environ, "GPULENS_LOG": os.environ.get("GPULENS_LOG", "warn")},
)


def initialize_params(
    capabilities: types.ClientCapabilities,
    root: Path,
    initialization_options: Any = None,
) -> types.InitializeParams:
    return types.InitializeParams(
        capabilities=capabilities,
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        initialization_options=initialization_options,
    )


# ------------------------------------------------- positions and text edits


def _units(ch: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(ch.encode("utf-8"))
    if encoding == "utf-16":
        return 2 if ord(ch) > 0xFFFF else 1
    if encoding == "utf-32":
        return 1
    raise ValueError(encoding)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def to_index(text: str, position: types.Position, encoding: str, *, clamp: bool = False) -> int:
    """The index into `text` (code points) of an LSP position counted in
    `encoding`. A position inside a character is an error; past the end of a
    line or of the document it is an error unless `clamp` (then, as the LSP
    says, it means the end of the line, or of the document)."""
    starts = _line_starts(text)
    if position.line >= len(starts):
        if clamp:
            return len(text)
        raise AssertionError(f"{position} is past the last line ({len(starts) - 1})")
    i = starts[position.line]
    end = starts[position.line + 1] - 1 if position.line + 1 < len(starts) else len(text)
    units = 0
    while units < position.character:
        if i >= end:
            if clamp:
                return end
            raise AssertionError(f"{position} is past the end of its line")
        units += _units(text[i], encoding)
        i += 1
    if units != position.character:
        raise AssertionError(f"{position} falls inside a character in {encoding}")
    return i


def to_position(text: str, index: int, encoding: str) -> types.Position:
    starts = _line_starts(text)
    line = max(n for n, s in enumerate(starts) if s <= index)
    character = sum(_units(ch, encoding) for ch in text[starts[line] : index])
    return types.Position(line=line, character=character)


def span(text: str, start: int, end: int, encoding: str) -> types.Range:
    return types.Range(start=to_position(text, start, encoding), end=to_position(text, end, encoding))


def range_of(text: str, needle: str, encoding: str, occurrence: int = 0) -> types.Range:
    at = -1
    for _ in range(occurrence + 1):
        at = text.index(needle, at + 1)
    return span(text, at, at + len(needle), encoding)


def sliced(text: str, r: types.Range, encoding: str) -> str:
    return text[to_index(text, r.start, encoding) : to_index(text, r.end, encoding)]


def apply_change(text: str, r: types.Range, new_text: str, encoding: str, *, clamp: bool = False) -> str:
    start = to_index(text, r.start, encoding, clamp=clamp)
    end = to_index(text, r.end, encoding, clamp=clamp)
    return text[:start] + new_text + text[end:]


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    """TextEdits all refer to the original text; apply them from the last one back."""
    resolved = sorted(
        ((to_index(text, e.range.start, encoding), to_index(text, e.range.end, encoding), e.new_text) for e in edits),
        key=lambda x: (x[0], x[1]),
        reverse=True,
    )
    for start, end, new in resolved:
        text = text[:start] + new + text[end:]
    return text


def whole(text: str, encoding: str) -> types.Range:
    return span(text, 0, len(text), encoding)


def summary(diagnostics: list[types.Diagnostic]) -> list[tuple]:
    """What two sets of diagnostics are compared on."""
    return sorted(
        (
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
            str(d.code),
            d.source,
            d.severity,
            d.message,
        )
        for d in diagnostics
    )


@contextlib.asynccontextmanager
async def session(
    capabilities: types.ClientCapabilities,
    root: Path,
    initialization_options: Any = None,
    env: Optional[dict[str, str]] = None,
) -> AsyncIterator[GpulensClient]:
    """A server of its own, for a test that needs capabilities,
    initializationOptions or environment variables other than the fixtures'."""
    config = SERVER if not env else attrs.evolve(SERVER, server_env={**SERVER.server_env, **env})
    client = await config.start()
    assert isinstance(client, GpulensClient)
    try:
        client.init_result = await asyncio.wait_for(
            client.initialize_session(initialize_params(capabilities, root, initialization_options)), TIMEOUT
        )
        yield client
    finally:
        if client.alive():
            await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
        await client.stop()


class RawServer:
    """`gpulens serve` driven byte by byte, for messages no LSP client library
    would send. Responses are read back as parsed JSON."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._next_id = 1000

    @classmethod
    @contextlib.asynccontextmanager
    async def start(cls, capabilities: Optional[dict] = None) -> AsyncIterator["RawServer"]:
        process = await asyncio.create_subprocess_exec(
            GPULENS_BIN,
            "serve",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        server = cls(process)
        try:
            reply = await server.request("initialize", {"processId": None, "rootUri": None, "capabilities": capabilities or {}})
            assert "result" in reply, reply
            await server.notify("initialized", {})
            yield server
        finally:
            if process.returncode is None:
                process.kill()
            await process.wait()

    def alive(self) -> bool:
        return self.process.returncode is None

    async def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def send(self, message: Any) -> None:
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        await self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def notify(self, method: str, params: Any) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def read(self, timeout: float = TIMEOUT) -> dict:
        """The next message from the server."""
        assert self.process.stdout is not None

        async def one() -> dict:
            length = None
            while True:
                line = await self.process.stdout.readline()
                if not line:
                    raise EOFError("the server closed its output")
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            assert length is not None, "a message without Content-Length"
            return json.loads(await self.process.stdout.readexactly(length))

        return await asyncio.wait_for(one(), timeout)

    async def reply_to(self, msg_id: Any, timeout: float = TIMEOUT) -> dict:
        """The response with `msg_id`, skipping notifications and server requests."""
        deadline = time.monotonic() + timeout
        while True:
            message = await self.read(max(0.01, deadline - time.monotonic()))
            if "method" not in message and message.get("id") == msg_id:
                return message

    async def request(self, method: str, params: Any) -> dict:
        self._next_id += 1
        msg_id = self._next_id
        await self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return await self.reply_to(msg_id)
