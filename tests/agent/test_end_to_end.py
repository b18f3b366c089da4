"""End to end: a scripted model drives an agent to write a small Python project in K, run its
tests with delegated python3 (the local remote: bubblewrap over the state's FUSE mount), read
the failure, fix it and finish; the transcript, the turn events, the process rows and the
receipts agree."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from kfs.journal import events_since, receipts_since
from kfs.runtime import conversations, procs
from kshell.agent.messages import Message
from kshell.agent.models import ScriptedModel
from kshell.sdk import Komputer, local_remote

HANG = 240.0
CALC = "def add(a, b):\n    return a - b\n"
TESTS = ("import unittest\n\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n"
         "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n\n"
         "if __name__ == '__main__':\n    unittest.main()\n")
# -B: no __pycache__. The fix keeps calc.py's size, and a .pyc records its source's mtime in
# whole seconds: an edit within the second of the first run would be run as the old bytecode
# (Python's own staleness check, on any filesystem), and the model would see the same failure.
RUN = "cd ~/proj && python3 -B -m unittest -v test_calc 2>&1"


def script(messages: list[Message]) -> dict[str, Any]:
    """What a model would do: write, test, read the failure, fix, test again, report."""
    results = [b for m in messages if m.role == "tool" for b in m.content]
    last = results[-1]["output"] if results else ""
    if not results:
        return {"text": "I will write the project.", "calls": [
            {"name": "write_file", "arguments": {"path": "proj/calc.py", "content": CALC}},
            {"name": "write_file", "arguments": {"path": "proj/test_calc.py", "content": TESTS}}]}
    if len(results) == 2:
        return {"text": "Now the tests.", "calls": [{"name": "shell", "arguments": {"command": RUN}}]}
    if "FAILED" in last and "AssertionError: -1 != 5" in last:  # the shell is in ~/proj now: a path from home
        return {"text": "add subtracts; fixing.", "calls": [
            {"name": "edit_file", "arguments": {"path": "~/proj/calc.py", "old_text": "a - b", "new_text": "a + b"}}]}
    if last.startswith("replaced"):
        return {"calls": [{"name": "shell", "arguments": {"command": RUN}}]}
    assert "OK" in last, last
    return "All tests pass: add(2, 3) == 5."


def test_a_scripted_model_writes_tests_and_fixes_a_project(tmp_path: Path) -> None:
    async def main() -> None:
        async with Komputer.boot(state=tmp_path / "state", remotes={"local": local_remote()}) as computer:
            await computer.add_agent("alice")
            session = await computer.login("alice", id="dev")
            result = await session.loop(ScriptedModel(script)).prompt("Write calc.add with a test, and make it pass.")
            assert result.status == "done" and result.text == "All tests pass: add(2, 3) == 5."
            assert await session.fs.read_text("~/proj/calc.py") == "def add(a, b):\n    return a + b\n"
            state = computer.state
            transcript = [Message.from_json(m) for m in conversations.messages(state, "alice.dev")]
            outputs = [b for m in transcript if m.role == "tool" for b in m.content]
            assert [b["name"] for b in outputs] == ["write_file", "write_file", "shell", "edit_file", "shell"]
            assert outputs[2]["status"] == "error" and "FAILED (failures=1)" in outputs[2]["output"]
            assert outputs[4]["status"] == "ok" and "OK" in outputs[4]["output"]
            events = [e for e in events_since(state, 0) if e.get("conversation_id") == "alice.dev"]
            tool_events = [e for e in events if e["type"] == "turn.tool"]
            assert [e["call_id"] for e in tool_events] == [b["call_id"] for b in outputs]
            assert [e["status"] for e in tool_events] == [b["status"] for b in outputs]
            # each shell result names its process row, which ran that command line
            for event in (e for e in tool_events if e["name"] == "shell"):
                row = procs.get(state, event["pid"])
                assert row is not None and row["cmd"] == RUN and row["session"] == "dev" and row["state"] != "running"
            assert [e["status"] for e in events if e["type"] == "turn.end"] == ["tool_calls"] * 4 + ["done"]
            text = "".join(e["chunk"].get("text", "") for e in events
                           if e["type"] == "turn.chunk" and e["chunk"]["kind"] == "text")
            assert text == "".join(m.text for m in transcript if m.role == "assistant")
            written = {r.get("path") for r in receipts_since(state, 0) if r.get("status") == "committed"}
            assert {"/home/alice/proj/calc.py", "/home/alice/proj/test_calc.py"} <= written

    asyncio.run(asyncio.wait_for(main(), HANG))
