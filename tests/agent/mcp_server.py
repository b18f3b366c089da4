"""A small MCP server for the tests, written from the protocol's specification: `initialize`,
`tools/list` (two pages), `tools/call`. As a program it speaks stdio (one JSON-RPC message a
line); `serve_http` answers Streamable HTTP on loopback (JSON, or SSE with `sse=True`).
`mcp_server.py LOG` has two tools more, which write their name as a line of LOG when called:
`note` (answers at once) and `wait` (answers never: it waits for its client to go away)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

TOOLS = [
    {"name": "add", "description": "add two integers",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                     "required": ["a", "b"]}},
    {"name": "fail", "description": "always fails", "inputSchema": {"type": "object", "properties": {}}},
]


LOGGED = [{"name": "note", "description": "note a call", "inputSchema": {"type": "object", "properties": {}}},
          {"name": "wait", "description": "never answer", "inputSchema": {"type": "object", "properties": {}}}]


def handle(message: dict[str, Any], seen: list[str], log: str = "") -> dict[str, Any] | None:
    method = message.get("method", "")
    seen.append(method)
    if "id" not in message:
        return None
    if method == "initialize":
        result: dict[str, Any] = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                                  "serverInfo": {"name": "test-mcp", "version": "1"}}
    elif method == "tools/list":
        page = 1 if message.get("params", {}).get("cursor") == "page-2" else 0
        result = {"tools": [TOOLS[page], *(LOGGED if page and log else [])],
                  **({"nextCursor": "page-2"} if page == 0 else {})}
    elif method == "tools/call":
        name, args = message["params"]["name"], message["params"].get("arguments", {})
        if log and name in ("note", "wait"):
            with open(log, "a") as f:
                f.write(name + "\n")
            if name == "wait":
                sys.stdin.read()  # until the client is gone (a SIGKILLed one included)
                sys.exit(0)
            result = {"content": [{"type": "text", "text": "noted"}], "isError": False}
        elif name == "add":
            result = {"content": [{"type": "text", "text": str(args["a"] + args["b"])}], "isError": False}
        elif name == "fail":
            result = {"content": [{"type": "text", "text": "it failed"}], "isError": True}
        else:
            return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": f"unknown tool {name}"}}
    else:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "method not found"}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


async def serve_http(seen: list[str], *, sse: bool = False) -> asyncio.AbstractServer:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:] if h)}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            if head[0].startswith("DELETE"):
                seen.append("DELETE " + headers.get("mcp-session-id", ""))
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                return
            message = json.loads(body)
            if message.get("method") != "initialize" and headers.get("mcp-session-id") != "s-1":
                seen.append("no session id")
            answer = handle(message, seen)
            if answer is None:
                writer.write(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                return
            if sse:
                payload = f"event: message\ndata: {json.dumps(answer)}\n\n".encode()
                kind = "text/event-stream"
            else:
                payload, kind = json.dumps(answer).encode(), "application/json"
            writer.write(f"HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\nmcp-session-id: s-1\r\n"
                         f"content-length: {len(payload)}\r\nconnection: close\r\n\r\n".encode() + payload)
        finally:
            await writer.drain()
            writer.close()

    return await asyncio.start_server(serve, "127.0.0.1", 0)


def main() -> None:
    seen: list[str] = []
    log = sys.argv[1] if len(sys.argv) > 1 else ""
    for line in sys.stdin:
        answer = handle(json.loads(line), seen, log)
        if answer is not None:
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
