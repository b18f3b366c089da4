"""A program running an agent loop on a state, for the crash tests to SIGKILL: `python
crash_child.py STATE SCENARIO [PROVIDER_URL]`. Scenarios: `tool` (one quick call that commits,
one that sleeps), `stream` (a tool call whose arguments stream forever), `ask` (a command an
`ask` rule pauses for a decision), `fs` (write_file waiting for an `ask` path rule's decision,
next to a call that sleeps), `kinds` (a call of each kind of tool, some committed, some running:
shell, write_file, an image command, an MCP server's tool). With PROVIDER_URL the model is an OpenAI Chat Completions
adapter talking to the test provider there (tests/agent/provider.py) instead of a script."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kshell.agent.models import ScriptedModel  # noqa: E402
from kshell.sdk import Komputer  # noqa: E402

QUICK = "echo run >> ~/runs; echo quick"
SLOW = "sleep 100"


def tool_script(messages: list) -> dict:
    return {"text": "Two things.", "calls": [{"id": "quick", "name": "shell", "arguments": {"command": QUICK}},
                                             {"id": "slow", "name": "shell", "arguments": {"command": SLOW}}]}


def stream_script(messages: list) -> dict:
    return {"calls": [{"id": "never", "name": "shell", "arguments": {"command": "echo " + "x" * 100_000}}]}


def ask_script(messages: list) -> dict:
    return {"calls": [{"id": "rm", "name": "shell", "arguments": {"command": "rm doomed && echo removed"}}]}


def fs_script(messages: list) -> dict:
    return {"calls": [{"id": "write", "name": "write_file", "arguments": {"path": "guarded/plan", "content": "x"}},
                      {"id": "slow", "name": "shell", "arguments": {"command": SLOW}}]}


def kinds_script(messages: list) -> dict:
    """First the calls that commit, then, once they have, the ones that never end."""
    if messages[-1].role == "user":
        return {"calls": [{"id": "sh", "name": "shell", "arguments": {"command": QUICK}},
                          {"id": "file", "name": "write_file", "arguments": {"path": "notes.txt", "content": "noted"}},
                          {"id": "cmd", "name": "hello", "arguments": {"args": ["ann"]}},
                          {"id": "mcp", "name": "log__note", "arguments": {}}]}
    return {"calls": [{"id": "sh-slow", "name": "shell", "arguments": {"command": SLOW}},
                      {"id": "cmd-slow", "name": "nap", "arguments": {}},
                      {"id": "mcp-slow", "name": "log__wait", "arguments": {}}]}


def kinds_image(where: Path) -> Path:
    """The image of the `kinds` scenario: `hello` (notes its run in ~/hellos) and `nap`."""
    (where / "commands").mkdir(parents=True)
    (where / "komputer.toml").write_text('[commands.hello]\nmarkdown = "commands/hello.md"\n'
                                         '[commands.nap]\nmarkdown = "commands/nap.md"\n')
    (where / "commands" / "hello.md").write_text('```sh\necho hello >> ~/hellos; echo hello "$@"\n```\n')
    (where / "commands" / "nap.md").write_text("```sh\nsleep 100\n```\n")
    return where


ASK = {"on": "command", "pattern": "rm *", "action": "ask", "agent": "alice"}
ASK_WRITE = {"on": "path", "pattern": "/home/alice/guarded/*", "action": "ask", "agent": "alice"}


async def main(state: str, scenario: str, url: str = "") -> None:
    from kshell.agent.mcp import MCPClient
    from kshell.agent.models import OpenAIChatModel
    from kshell.server.config import ServerConfig

    script = {"tool": tool_script, "stream": stream_script, "ask": ask_script, "fs": fs_script,
              "kinds": kinds_script}[scenario]
    model = OpenAIChatModel("m", base_url=url, key="k") if url else \
        ScriptedModel(script, piece=4, delay=0.05 if scenario == "stream" else 0.0)
    image = [kinds_image(Path(state).parent / "image")] if scenario == "kinds" else []
    computer = await Komputer.boot(*image, state=state, config=ServerConfig(policy=(ASK, ASK_WRITE)))
    await computer.add_agent("alice")
    session = await computer.login("alice", id="chat")
    if scenario == "ask":
        await session.exec("touch doomed")
    if scenario == "fs":
        await session.exec("mkdir guarded")
    tools = []
    if scenario == "kinds":
        log = MCPClient.stdio("log", [sys.executable, str(Path(__file__).with_name("mcp_server.py")),
                                      str(Path(state).parent / "mcp.log")])
        tools = await (await log.__aenter__()).tools()
    await session.loop(model, tools=tools).prompt("do two things")
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
