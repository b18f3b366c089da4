"""A model provider for tests: real HTTP/1.1 on loopback, answering each request with the next
scripted reply, a server-sent event stream (or an HTTP error), and recording every request.

Replies: `{"events": [(event name or None, data: dict or str)], "delay": s, "hang": bool}`
(hang: after the events, keep the stream open until the client goes away, to stop it in the
middle); `{"status": 429, "headers": {...}, "json": {...}}`; or a callable(request) giving one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Provider:
    replies: list[Any] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    port: int = 0
    hung: asyncio.Event = field(default_factory=asyncio.Event)
    gone: asyncio.Event = field(default_factory=asyncio.Event)  # a hung stream's client went away
    _server: asyncio.AbstractServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> Provider:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)

    async def __aenter__(self) -> Provider:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            request = Request(method, path, headers, body)
            self.requests.append(request)
            reply = self.replies.pop(0) if self.replies else {"status": 500, "json": {"error": {"message": "no reply scripted"}}}
            if callable(reply):
                reply = reply(request)
            await self._answer(reply, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, reply: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if "status" in reply:
            payload = json.dumps(reply.get("json", {})).encode()
            extra = "".join(f"{k}: {v}\r\n" for k, v in reply.get("headers", {}).items())
            writer.write(f"HTTP/1.1 {reply['status']} Error\r\ncontent-type: application/json\r\n"
                         f"content-length: {len(payload)}\r\n{extra}connection: close\r\n\r\n".encode() + payload)
            await writer.drain()
            return
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
                     b"connection: close\r\n\r\n")
        for name, data in reply["events"]:
            text = data if isinstance(data, str) else json.dumps(data)
            writer.write(((f"event: {name}\n" if name else "") + f"data: {text}\n\n").encode())
            await writer.drain()
            if reply.get("delay"):
                await asyncio.sleep(reply["delay"])
        if reply.get("hang"):
            self.hung.set()
            await reader.read()  # until the client closes the connection
            self.gone.set()


Scripted = Callable[[Request], dict[str, Any]]
