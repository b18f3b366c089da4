"""An MCP client: the tools of Model Context Protocol servers as the loop's tools, over the
two standard transports, stdio (a program K starts, newline-delimited JSON-RPC on its stdin and
stdout) and Streamable HTTP (JSON-RPC POSTed to one URL, answered with JSON or an SSE stream,
the session named by the `Mcp-Session-Id` header).

    async with MCPClient.stdio("files", ["python3", "server.py"]) as files:
        agent = session.loop(model, tools=await files.tools())

An MCP server is the operator's code, as an image's command handlers are: it runs on the
host, not in the agent's shell, and its tools act with its own authority, not the session's.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from kshell.agent.errors import ToolExecutionError
from kshell.agent.sse import parse_sse
from kshell.agent.tools import Tool, ToolOutput

__all__ = ["MCPClient", "MCPError"]

PROTOCOL = "2025-06-18"
CLIENT = {"name": "komputer", "version": "0.1.0"}


class MCPError(Exception):
    """An MCP server failed: it could not start, broke the protocol, or answered an error."""


class MCPClient:
    """One MCP server's session. Use `MCPClient.stdio(...)` or `MCPClient.http(...)` as an
    async context manager (the server is initialised on entry, ended on exit)."""

    def __init__(self, name: str) -> None:
        if not name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"MCP server name {name!r}: letters, digits, '_', '-'")
        self.name = name
        self._ids = itertools.count(1)
        self.server_info: dict[str, Any] = {}

    @staticmethod
    def stdio(name: str, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
              cwd: str | None = None) -> MCPClient:
        return _Stdio(name, list(argv), dict(env) if env is not None else None, cwd)

    @staticmethod
    def http(name: str, url: str, *, headers: Mapping[str, str] | None = None, timeout: float = 60.0) -> MCPClient:
        return _HTTP(name, url, dict(headers or {}), timeout)

    async def __aenter__(self) -> MCPClient:
        await self.start()
        try:
            answer = await self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                                       "clientInfo": CLIENT})
            self.server_info = answer.get("serverInfo", {})
            await self.notify("notifications/initialized")
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = await self.request("tools/list", {"cursor": cursor} if cursor else {})
            tools += page.get("tools", [])
            cursor = page.get("nextCursor")
            if not cursor:
                return tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutput:
        """A tool's result: its text content joined (other content named by type), `error`
        status when the server says isError."""
        answer = await self.request("tools/call", {"name": tool, "arguments": arguments})
        parts = []
        for item in answer.get("content", []):
            parts.append(item["text"] if item.get("type") == "text" else f"[{item.get('type')} content]")
        if not parts and "structuredContent" in answer:
            parts.append(json.dumps(answer["structuredContent"]))
        return ToolOutput("".join(parts), "error" if answer.get("isError") else "ok")

    async def tools(self) -> list[Tool]:
        """The server's tools as the loop's, named SERVER__TOOL."""
        made = []
        for spec in await self.list_tools():
            async def run(arguments: dict[str, Any], tool: str = spec["name"]) -> ToolOutput:
                return await self.call(tool, arguments)

            made.append(Tool(f"{self.name}__{spec['name']}", spec.get("description", ""),
                             spec.get("inputSchema") or {"type": "object", "properties": {}}, run))
        return made

    # -- a transport says these -------------------------------------------------------------------

    async def start(self) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        raise NotImplementedError

    def _answer(self, message: dict[str, Any], method: str) -> dict[str, Any]:
        if "error" in message:
            error = message["error"]
            text = f"MCP server {self.name}: {method}: {error.get('message', error)}"
            raise ToolExecutionError(text) if method == "tools/call" else MCPError(text)
        return message.get("result") or {}


class _Stdio(MCPClient):
    def __init__(self, name: str, argv: list[str], env: dict[str, str] | None, cwd: str | None) -> None:
        super().__init__(name)
        self.argv, self.env, self.cwd = argv, env, cwd
        self.proc: asyncio.subprocess.Process | None = None
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL, env=self.env, cwd=self.cwd, limit=16 << 20)
        except OSError as e:
            raise MCPError(f"MCP server {self.name}: {self.argv[0]}: {e.strerror}") from None
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        try:
            async for line in self.proc.stdout:
                with contextlib.suppress(ValueError):
                    message = json.loads(line)
                    waiter = self.waiting.pop(message.get("id"), None) if "method" not in message else None
                    if waiter is not None and not waiter.done():
                        waiter.set_result(message)
        finally:
            for waiter in self.waiting.values():
                if not waiter.done():
                    waiter.set_exception(MCPError(f"MCP server {self.name} ended"))

    def _send(self, message: dict[str, Any]) -> None:
        if self.proc is None or self.proc.stdin is None or self.proc.returncode is not None:
            raise MCPError(f"MCP server {self.name} is not running")
        self.proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        number = next(self._ids)
        waiter = asyncio.get_running_loop().create_future()
        self.waiting[number] = waiter
        self._send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        try:
            return self._answer(await waiter, method)
        finally:
            self.waiting.pop(number, None)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    async def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 2.0)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)


class _HTTP(MCPClient):
    def __init__(self, name: str, url: str, headers: dict[str, str], timeout: float) -> None:
        super().__init__(name)
        self.url, self.headers, self.timeout = url, headers, timeout
        self.client: httpx.AsyncClient | None = None
        self.session = ""

    async def start(self) -> None:
        self.client = httpx.AsyncClient(timeout=self.timeout)

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
                   "mcp-protocol-version": PROTOCOL, **self.headers}
        if self.session:
            headers["mcp-session-id"] = self.session
        return headers

    async def _post(self, message: dict[str, Any]) -> dict[str, Any] | None:
        assert self.client is not None
        try:
            async with self.client.stream("POST", self.url, json=message, headers=self._headers()) as response:
                if response.status_code >= 400:
                    raise MCPError(f"MCP server {self.name}: HTTP {response.status_code}")
                self.session = response.headers.get("mcp-session-id", self.session)
                if "id" not in message:
                    return None
                if response.headers.get("content-type", "").startswith("text/event-stream"):
                    async for event in parse_sse(response.aiter_lines()):
                        data = json.loads(event.data)
                        if data.get("id") == message["id"] and "method" not in data:
                            return data
                    raise MCPError(f"MCP server {self.name}: the stream ended without an answer")
                return json.loads(await response.aread())
        except httpx.HTTPError as e:
            raise MCPError(f"MCP server {self.name}: {type(e).__name__}: {e}") from None

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        message = await self._post({"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params})
        return self._answer(message or {}, method)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self._post({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    async def close(self) -> None:
        client, self.client = self.client, None
        if client is None:
            return
        if self.session:
            with contextlib.suppress(Exception):
                await client.delete(self.url, headers=self._headers())
        await client.aclose()
