"""A program running an agent loop on a state, for the crash tests to SIGKILL: `python
crash_child.py STATE SCENARIO`. Scenarios: `tool` (one quick call that commits, one that
sleeps), `stream` (a tool call whose arguments stream forever)."""

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


async def main(state: str, scenario: str) -> None:
    model = ScriptedModel(tool_script if scenario == "tool" else stream_script,
                          piece=4, delay=0.0 if scenario == "tool" else 0.05)
    computer = await Komputer.boot(state=state)
    await computer.add_agent("alice")
    session = await computer.login("alice", id="chat")
    await session.loop(model).prompt("do two things")
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
