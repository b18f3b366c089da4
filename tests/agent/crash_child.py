"""A program running an agent loop on a state, for the crash tests to SIGKILL: `python
crash_child.py STATE SCENARIO [PROVIDER_URL]`. Scenarios: `tool` (one quick call that commits,
one that sleeps), `stream` (a tool call whose arguments stream forever), `ask` (a command an
`ask` rule pauses for a decision), `fs` (write_file where an `ask` path rule applies, next to one
that sleeps). With PROVIDER_URL the model is an OpenAI Chat Completions
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


ASK = {"on": "command", "pattern": "rm *", "action": "ask", "agent": "alice"}
ASK_WRITE = {"on": "path", "pattern": "/home/alice/guarded*", "action": "ask", "agent": "alice"}


async def main(state: str, scenario: str, url: str = "") -> None:
    from kshell.agent.models import OpenAIChatModel
    from kshell.server.config import ServerConfig

    script = {"tool": tool_script, "stream": stream_script, "ask": ask_script, "fs": fs_script}[scenario]
    model = OpenAIChatModel("m", base_url=url, key="k") if url else \
        ScriptedModel(script, piece=4, delay=0.05 if scenario == "stream" else 0.0)
    computer = await Komputer.boot(state=state, config=ServerConfig(policy=(ASK, ASK_WRITE)))
    await computer.add_agent("alice")
    session = await computer.login("alice", id="chat")
    if scenario == "ask":
        await session.exec("touch doomed")
    await session.loop(model).prompt("do two things")
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
