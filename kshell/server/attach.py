"""`komputer attach AGENT/SESSION`'s way in: a Unix socket of the running server, root's only,
beside nothing a network reaches. A thin translator like the SSH session: the client says
which terminal and its window size in one JSON line and gets one back (`{"ok": true}` or
`{"error": ...}`; `{"op": "list"}` gets the terminals as one JSON list instead); then the
terminal's bytes come as they are, and the client sends frames (a kind byte, a 4-byte
big-endian length, the payload): `d` keys, `w` a window size as two 16-bit columns and lines."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kfs.kstate import KState
    from kshell.server.terminals import Terminals


class AttachHost(Protocol):
    """What `komputer attach`'s listener uses of its server (kshell.server.app.KServer): the
    state it serves, its terminals, the audit."""

    state: KState
    terminals: Terminals

    async def audit(self, type_: str, **data: Any) -> None:
        """Append an event and wait until it is written (kshell.server.audit)."""

RUN = Path("/run/komputer")
FRAME = struct.Struct(">cI")
SIZE = struct.Struct(">HH")


def socket_path(state_dir: str | os.PathLike[str]) -> Path:
    """Where the server of the state at `state_dir` listens for `komputer attach`."""
    digest = hashlib.sha256(os.path.realpath(state_dir).encode()).hexdigest()[:16]
    return RUN / f"attach-{digest}.sock"


class AttachListener:
    def __init__(self, server: AttachHost) -> None:
        self.server = server
        self.path = socket_path(server.state.path)
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        RUN.mkdir(mode=0o755, parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a server of this state that was killed left it
        old = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(self._client, path=str(self.path))
        finally:
            os.umask(old)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, KeyError):
            pass
        finally:
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hello = json.loads(await reader.readline())
        if hello.get("op") == "list":  # komputer sessions: which sessions have a terminal, and its state
            rows = [{"agent": t.agent.name, "session": t.record.name, "command": t.doing, "alive": t.alive,
                     "viewers": len(t.viewers), "status": t.status} for t in self.server.terminals.all()]
            writer.write(json.dumps(rows).encode() + b"\n")
            await writer.drain()
            return
        agent, session = str(hello["agent"]), str(hello["session"])
        terminal = self.server.terminals.get(agent, session)
        if terminal is None:
            writer.write(json.dumps({"error": f"{agent}/{session}: no such terminal (komputer sessions "
                                              "lists the sessions that have one)"}).encode() + b"\n")
            await writer.drain()
            return
        writer.write(b'{"ok": true}\n')

        async def write(data: bytes) -> None:
            with contextlib.suppress(ConnectionError):
                writer.write(data)
                await writer.drain()

        size = (int(hello["columns"]), int(hello["lines"])) if hello.get("columns") else None
        await self.server.audit("terminal.attach", agent=agent, session=session, front="komputer attach")
        viewer = await terminal.attach(write, size)
        ended = asyncio.ensure_future(terminal.ended.wait())
        try:
            while True:
                header = asyncio.ensure_future(reader.readexactly(FRAME.size))
                await asyncio.wait({header, ended}, return_when=asyncio.FIRST_COMPLETED)
                if not header.done():
                    header.cancel()
                    break
                kind, length = FRAME.unpack(header.result())
                payload = await reader.readexactly(length)
                if not terminal.is_writer(viewer):
                    continue
                if kind == b"d":
                    await terminal.type(payload)
                elif kind == b"w":
                    await terminal.resize(*SIZE.unpack(payload))
            if ended.done():
                await terminal.flushed(viewer)  # its last output, before the connection ends
        finally:
            terminal.detach(viewer)
            ended.cancel()


def list_terminals(state_dir: str | os.PathLike[str], timeout: float = 5.0) -> list[dict[str, object]] | None:
    """The terminals of the server running on the state (None: no server runs on it)."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(socket_path(state_dir)))
            sock.sendall(b'{"op": "list"}\n')
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError:
            return None
    try:
        return json.loads(data)
    except ValueError:
        return None


__all__ = ["FRAME", "SIZE", "AttachListener", "list_terminals", "socket_path"]
