"""The MCP client against a test server over stdio and over Streamable HTTP (JSON and SSE
answers): initialise, list tools across pages, call them, errors; and the loop calling them."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from kshell.agent import Agent, ToolExecutionError
from kshell.agent.mcp import MCPClient, MCPError
from kshell.agent.models import ScriptedModel
from kshell.sdk import Komputer
from tests.agent.mcp_server import serve_http

SERVER = Path(__file__).with_name("mcp_server.py")
HANG = 120.0


async def exercise(client: MCPClient) -> None:
    async with client:
        assert client.server_info == {"name": "test-mcp", "version": "1"}
        tools = {t.name: t for t in await client.tools()}
        assert set(tools) == {"calc__add", "calc__fail"}  # both pages
        assert tools["calc__add"].parameters["required"] == ["a", "b"]
        assert (await tools["calc__add"].run({"a": 2, "b": 40})).text == "42"
        failed = await tools["calc__fail"].run({})
        assert (failed.text, failed.status) == ("it failed", "error")
        with pytest.raises(ToolExecutionError, match="unknown tool nope"):
            await client.call("nope", {})


def test_stdio() -> None:
    asyncio.run(asyncio.wait_for(exercise(MCPClient.stdio("calc", [sys.executable, str(SERVER)])), HANG))


@pytest.mark.parametrize("sse", [False, True])
def test_streamable_http(sse: bool) -> None:
    async def main() -> None:
        seen: list[str] = []
        server = await serve_http(seen, sse=sse)
        port = server.sockets[0].getsockname()[1]
        try:
            await exercise(MCPClient.http("calc", f"http://127.0.0.1:{port}/mcp"))
        finally:
            server.close()
        assert seen[:2] == ["initialize", "notifications/initialized"] and "no session id" not in seen
        assert seen[-1] == "DELETE s-1"

    asyncio.run(asyncio.wait_for(main(), HANG))


def test_a_server_that_does_not_start_says_why() -> None:
    async def main() -> None:
        with pytest.raises(MCPError, match="no-such-mcp-server: No such file or directory"):
            async with MCPClient.stdio("x", ["no-such-mcp-server"]):
                pass

    asyncio.run(main())


def test_the_loop_calls_mcp_tools(tmp_path: Path) -> None:
    def script(messages: list) -> object:
        if messages[-1].role == "tool":
            return "the sum is " + messages[-1].content[0]["output"]
        return {"calls": [{"name": "calc__add", "arguments": {"a": 1, "b": 2}}]}

    async def main() -> None:
        async with Komputer.boot(state=tmp_path / "state") as computer, \
                MCPClient.stdio("calc", [sys.executable, str(SERVER)]) as calc:
            await computer.add_agent("alice")
            session = await computer.login("alice")
            agent = Agent(session, ScriptedModel(script), tools=await calc.tools())
            assert (await agent.prompt("add")).text == "the sum is 3"

    asyncio.run(asyncio.wait_for(main(), HANG))
