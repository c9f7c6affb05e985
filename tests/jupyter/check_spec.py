"""jupyter-lsp finds gpulens through editors/jupyter/gpulens.json and starts it.

Run by tests/jupyter/run in a virtual environment holding jupyter-lsp, with
the gpulens binary first on PATH. Exits non-zero on any failure.
"""
import asyncio
import json
import pathlib
import sys

from jupyter_lsp import LanguageServerManager
from traitlets.config import JSONFileConfigLoader

SPEC = pathlib.Path(__file__).resolve().parents[2] / "editors" / "jupyter" / "gpulens.json"


class Recording(LanguageServerManager):
    """A manager that keeps what the servers send instead of relaying it to browsers."""

    received: list

    async def on_server_message(self, message, session):
        self.received.append(json.loads(message))


async def main() -> int:
    config = JSONFileConfigLoader(SPEC.name, path=str(SPEC.parent)).load_config()
    manager = Recording(config=config)
    manager.received = []
    manager.initialize()
    if "gpulens" not in manager.language_servers or "gpulens" not in manager.sessions:
        print(f"jupyter-lsp did not list gpulens: {sorted(manager.language_servers)}", file=sys.stderr)
        return 1
    session = manager.sessions["gpulens"]
    session.initialize()
    session.write(json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": None, "rootUri": None, "capabilities": {}},
    }))
    try:
        for _ in range(400):
            reply = next((m for m in manager.received if m.get("id") == 1), None)
            if reply:
                break
            await asyncio.sleep(0.05)
        else:
            print("gpulens, started by jupyter-lsp, did not answer `initialize` in 20 s", file=sys.stderr)
            return 1
    finally:
        session.stop()
    info = reply.get("result", {}).get("serverInfo", {})
    if info.get("name") != "gpulens":
        print(f"unexpected answer to `initialize`: {reply}", file=sys.stderr)
        return 1
    print(f"jupyter-lsp listed gpulens and started it: {info['name']} {info.get('version')}")
    return 0


sys.exit(asyncio.run(main()))
