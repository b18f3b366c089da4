"""A SIGKILL in the middle of an agent loop, then recovery: every recorded tool call has exactly
one result (a committed one kept and never run again, a running one uncertain), a call only
the stream saw gets an uncertain tool event and no invented message, and no turn is left
running; the conversation goes on."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from kfs.journal import events_since
from kfs.kstate import KState
from kfs.runtime import conversations, procs
from kshell.agent.models import ScriptedModel
from kshell.sdk import Komputer

HANG = 120.0
CHILD = Path(__file__).with_name("crash_child.py")


def start(tmp_path: Path, scenario: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, str(CHILD), str(tmp_path / "state"), scenario],
                            env={**os.environ, "PYTHONPATH": str(CHILD.parents[2])})


def wait_for(state_dir: Path, child: subprocess.Popen[bytes], ready: callable) -> None:  # type: ignore[valid-type]
    """Poll the state (another process writes it) until `ready(state)`: a hang bound only."""
    deadline = time.monotonic() + HANG
    state = None
    while state is None:  # the child makes the state: it may not be a whole K state yet
        assert child.poll() is None and time.monotonic() < deadline
        try:
            state = KState(state_dir)
        except Exception:
            time.sleep(0.05)
    try:
        while not ready(state):
            assert child.poll() is None, "the loop's program ended before the crash point"
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        state.close()


def kill(child: subprocess.Popen[bytes]) -> None:
    child.send_signal(signal.SIGKILL)
    child.wait()


def turn_kinds(state: KState) -> Counter[str]:
    return Counter(e["type"] for e in events_since(state, 0) if e["type"].startswith("turn."))


def test_sigkill_during_a_tool_then_recovery(tmp_path: Path) -> None:
    child = start(tmp_path, "tool")
    try:
        def ready(state: KState) -> bool:
            if conversations.get(state, "alice.chat") is None:
                return False
            calls = {c["id"]: c["status"] for c in conversations.calls(state, "alice.chat")}
            live = [r for r in procs.rows(state, agent="alice", live=True) if r["cmd"].endswith("sleep 100")
                    or "sleep 100" in r["cmd"]]
            return calls == {"quick": "ok", "slow": "running"} and bool(live)

        wait_for(tmp_path / "state", child, ready)
    finally:
        kill(child)

    async def main() -> None:
        async with Komputer.boot(state=tmp_path / "state") as computer:  # its start recovers
            state = computer.state
            results = Counter(b["call_id"] for m in conversations.messages(state, "alice.chat")
                              for b in m["content"] if b["type"] == "tool_result")
            assert results == {"quick": 1, "slow": 1}
            by_call = {b["call_id"]: b for m in conversations.messages(state, "alice.chat") for b in m["content"]
                       if b["type"] == "tool_result"}
            assert by_call["quick"]["status"] == "ok" and by_call["quick"]["output"] == "quick\n"
            assert by_call["slow"]["status"] == "uncertain" and by_call["slow"]["output"] == conversations.UNCERTAIN
            assert all(t["status"] != "running" for t in conversations.turns(state, "alice.chat"))
            kinds = turn_kinds(state)
            assert kinds["turn.start"] == kinds["turn.end"] == 1
            end = [e for e in events_since(state, 0) if e["type"] == "turn.end"][0]
            assert end["status"] == "uncertain" and end["recovered"]
            assert conversations.recover(state, everyone=True) == []  # nothing is sealed twice
            # the conversation goes on; the committed tool is not run again
            seen: list[list[str]] = []

            def script(messages: list) -> str:
                seen.append([m.role for m in messages])
                return "The quick one ran; the slow one is uncertain."

            await computer.add_agent("alice")
            session = await computer.login("alice", id="chat-2")
            result = await session.loop(ScriptedModel(script), conversation="alice.chat").resume()
            assert result.text.startswith("The quick one ran") and seen == [["user", "assistant", "tool", "tool"]]
            assert await session.fs.read_text("~/runs") == "run\n"

    asyncio.run(asyncio.wait_for(main(), HANG))


def test_sigkill_while_only_the_stream_saw_a_tool_call(tmp_path: Path) -> None:
    child = start(tmp_path, "stream")
    try:
        def ready(state: KState) -> bool:
            return any(e["type"] == "turn.chunk" and e["chunk"]["kind"] == "tool_args" for e in events_since(state, 0))

        wait_for(tmp_path / "state", child, ready)
    finally:
        kill(child)

    async def main() -> None:
        async with Komputer.boot(state=tmp_path / "state") as computer:
            state = computer.state
            assert [m["role"] for m in conversations.messages(state, "alice.chat")] == ["user"]  # no invented message
            tools = [e for e in events_since(state, 0) if e["type"] == "turn.tool"]
            assert [(e["call_id"], e["status"], e["message"]) for e in tools] == [("never", "uncertain", None)]
            ends = [e for e in events_since(state, 0) if e["type"] == "turn.end"]
            assert [e["status"] for e in ends] == ["uncertain"]
            assert conversations.calls(state, "alice.chat") == []

    asyncio.run(asyncio.wait_for(main(), HANG))


def test_an_ask_approval_survives_a_restart_and_resumes(tmp_path: Path) -> None:
    from kfs.runtime import approvals
    from kshell.server.config import ServerConfig
    from tests.agent.crash_child import ASK

    child = start(tmp_path, "ask")
    try:
        wait_for(tmp_path / "state", child, lambda state: bool(approvals.listing(state, ("pending",))))
    finally:
        kill(child)

    async def main() -> None:
        async with Komputer.boot(state=tmp_path / "state", config=ServerConfig(policy=(ASK,))) as computer:
            state = computer.state
            [pending] = approvals.listing(state, ("pending",))  # it outlived the program that asked
            assert pending["action"] == "rm doomed"
            [result] = [b for m in conversations.messages(state, "alice.chat") for b in m["content"]
                        if b["type"] == "tool_result"]
            assert result["status"] == "uncertain"
            approvals.decide(state, pending["id"], True, "test", "fine")
            [session] = [s for s in await computer.recover_sessions() if s.id == "chat"]
            assert await session.fs.exists("~/doomed")

            def script(messages: list) -> object:
                if messages[-1].role == "tool" and messages[-1].content[0]["call_id"] == "look":
                    return "checked"
                return {"calls": [{"id": "look", "name": "shell", "arguments": {"command": "ls"}}]}

            run = await session.loop(ScriptedModel(script)).resume()
            look = [b for m in run.messages if m.role == "tool" for b in m.content][0]
            assert f"K: approval {pending['id']} was allowed by test" in look["output"]  # applied at the resume
            assert not await session.fs.exists("~/doomed")
            assert approvals.get(state, pending["id"])["status"] == "applied"

    asyncio.run(asyncio.wait_for(main(), HANG))
