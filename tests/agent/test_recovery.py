"""A SIGKILL in the middle of an agent loop, then recovery: every recorded tool call has exactly
one result (a committed one kept and never run again, a running one uncertain, one waiting for
an `ask` approval the approved command's output once the loop resumes, or its rejection, the
same for a file tool's write; a stop while a resumed call waits ends the wait), a call only the stream
saw gets an uncertain tool event and no invented message, and no turn is left running; the
conversation goes on. One loop at a time on a conversation, across processes; a holder that
died holds nothing."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kfs.journal import events_since, last_event
from kfs.kstate import KState
from kfs.runtime import conversations, procs
from kshell.agent import ConversationBusy
from kshell.agent.models import OpenAIChatModel, ScriptedModel
from kshell.sdk import Komputer
from tests.agent import transcripts as t
from tests.agent.provider import Provider

HANG = 120.0
CHILD = Path(__file__).with_name("crash_child.py")


def start(tmp_path: Path, scenario: str, url: str = "") -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, str(CHILD), str(tmp_path / "state"), scenario, *([url] if url else [])],
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


async def until(ready: Callable[[], bool]) -> None:
    """Poll `ready()` in this event loop (a hang bound only)."""
    deadline = time.monotonic() + HANG
    while not ready():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)


async def crash_while_asking(tmp_path: Path, provider: Provider) -> None:
    """Run the `ask` scenario against `provider` and SIGKILL it once the call's command waits
    for its approval and the loop has recorded which."""
    from kfs.runtime import approvals

    child = start(tmp_path, "ask", provider.url)
    try:
        def waiting(state: KState) -> bool:
            calls = conversations.calls(state, "alice.chat") if conversations.get(state, "alice.chat") else []
            return bool(calls and calls[0].get("approval") and approvals.listing(state, ("pending",)))

        await asyncio.to_thread(wait_for, tmp_path / "state", child, waiting)
    finally:
        kill(child)


def test_an_ask_approval_survives_a_restart_and_its_output_is_the_calls_result(tmp_path: Path) -> None:
    from kfs.runtime import approvals
    from kshell.server.config import ServerConfig
    from tests.agent.crash_child import ASK

    async def main() -> None:
        async with Provider() as provider:
            provider.replies.append({"events": t.chat(text="Removing it.", calls=[
                ("rm", "shell", {"command": "rm doomed && echo removed"})])})
            await crash_while_asking(tmp_path, provider)
            model = OpenAIChatModel("m", base_url=provider.url, key="k")
            async with Komputer.boot(state=tmp_path / "state", config=ServerConfig(policy=(ASK,)),
                                     models={"main": model}) as computer:
                state = computer.state
                [pending] = approvals.listing(state, ("pending",))  # it outlived the program that asked
                assert pending["action"] == "rm doomed"
                # recovery paused the call and its turn: no uncertain result, no terminal event yet
                assert [m["role"] for m in conversations.messages(state, "alice.chat")] == ["user", "assistant"]
                [call] = conversations.calls(state, "alice.chat")
                assert (call["id"], call["status"], call["approval"]) == ("rm", "paused", pending["id"])
                assert [tr["status"] for tr in conversations.turns(state, "alice.chat")] == ["paused"]
                kinds = turn_kinds(state)
                assert kinds["turn.approval"] == kinds["turn.pause"] == 1 and kinds["turn.end"] == 0
                assert conversations.get(state, "alice.chat")["run"] is None  # the dead loop holds nothing
                [session] = [s for s in await computer.recover_sessions() if s.id == "chat"]
                assert await session.fs.exists("~/doomed")

                # the resumed loop waits for the decision, as the shell that asked did
                provider.replies.append({"events": t.chat(text="It is gone.")})
                since = last_event(state)
                task = asyncio.create_task(session.loop("main").resume())
                await until(lambda: any(e["type"] == "turn.resume" for e in events_since(state, since)))
                assert not task.done() and len(provider.requests) == 1
                approvals.decide(state, pending["id"], True, "test", "fine")
                run = await task
                assert run.status == "done" and run.text == "It is gone."
                assert not await session.fs.exists("~/doomed")
                assert approvals.get(state, pending["id"])["status"] == "applied"

                # the approved command's output is the original call's one result
                results = [b for m in conversations.messages(state, "alice.chat") for b in m["content"]
                           if b["type"] == "tool_result"]
                assert [(b["call_id"], b["status"]) for b in results] == [("rm", "ok")]
                output = results[0]["output"]
                assert f"K: approval {pending['id']} was allowed by test: rm doomed" in output
                assert "removed" not in output.replace("rm doomed", "")  # the rest of its line did not run
                sent = provider.requests[1].json["messages"]
                assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
                assert sent[1]["tool_calls"][0]["id"] == "rm" and sent[2] == {"role": "tool", "tool_call_id": "rm",
                                                                               "content": output}
                tools = [e for e in events_since(state, 0) if e["type"] == "turn.tool"]
                assert [(e["call_id"], e["status"]) for e in tools] == [("rm", "ok")] and tools[0]["pid"]
                # no dangling turn: the paused one ended once its call had its result
                assert [tr["status"] for tr in conversations.turns(state, "alice.chat")] == ["tool_calls", "done"]
                kinds = turn_kinds(state)
                assert kinds["turn.start"] == kinds["turn.end"] == 2 and kinds["turn.resume"] == 1
                assert conversations.get(state, "alice.chat")["run"] is None

                # the next command's output does not carry the replay
                provider.replies += [{"events": t.chat(calls=[("look", "shell", {"command": "ls"})])},
                                     {"events": t.chat(text="checked")}]
                again = await session.loop("main").prompt("look")
                [look] = [b for m in again.messages if m.role == "tool" for b in m.content]
                assert "approval" not in look["output"] and look["status"] == "ok"

    asyncio.run(asyncio.wait_for(main(), HANG))


def test_a_paused_call_whose_approval_is_rejected_after_the_restart_gets_one_error_result(tmp_path: Path) -> None:
    from kfs.runtime import approvals
    from kshell.server.config import ServerConfig
    from tests.agent.crash_child import ASK

    async def main() -> None:
        async with Provider() as provider:
            provider.replies.append({"events": t.chat(text="Removing it.", calls=[
                ("rm", "shell", {"command": "rm doomed && echo removed"})])})
            await crash_while_asking(tmp_path, provider)
            model = OpenAIChatModel("m", base_url=provider.url, key="k")
            async with Komputer.boot(state=tmp_path / "state", config=ServerConfig(policy=(ASK,)),
                                     models={"main": model}) as computer:
                state = computer.state
                [pending] = approvals.listing(state, ("pending",))
                [session] = [s for s in await computer.recover_sessions() if s.id == "chat"]
                provider.replies.append({"events": t.chat(text="It stays.")})
                since = last_event(state)
                task = asyncio.create_task(session.loop("main").resume())
                await until(lambda: any(e["type"] == "turn.resume" for e in events_since(state, since)))
                approvals.decide(state, pending["id"], False, "test", "keep it")
                run = await task
                assert run.status == "done" and run.text == "It stays."
                assert await session.fs.exists("~/doomed")  # nothing ran
                results = [b for m in conversations.messages(state, "alice.chat") for b in m["content"]
                           if b["type"] == "tool_result"]
                assert [(b["call_id"], b["status"]) for b in results] == [("rm", "error")]
                output = results[0]["output"]
                assert "rejected" in output and "keep it" in output and output.endswith("[exit status 126]")
                assert "removed" not in output.replace("rm doomed", "")
                sent = provider.requests[1].json["messages"]
                assert [m["role"] for m in sent] == ["user", "assistant", "tool"] and sent[2]["content"] == output
                assert [tr["status"] for tr in conversations.turns(state, "alice.chat")] == ["tool_calls", "done"]
                kinds = turn_kinds(state)
                assert kinds["turn.start"] == kinds["turn.end"] == 2 and kinds["turn.resume"] == 1
                assert conversations.get(state, "alice.chat")["run"] is None

    asyncio.run(asyncio.wait_for(main(), HANG))


def test_a_stop_while_a_resumed_call_waits_for_its_approval_ends_the_wait_and_seals_the_turn(
        tmp_path: Path) -> None:
    from kfs.runtime import approvals
    from kshell.agent import STOPPED
    from kshell.server.config import ServerConfig
    from tests.agent.crash_child import ASK

    async def main() -> None:
        async with Provider() as provider:
            provider.replies.append({"events": t.chat(text="Removing it.", calls=[
                ("rm", "shell", {"command": "rm doomed && echo removed"})])})
            await crash_while_asking(tmp_path, provider)
            model = OpenAIChatModel("m", base_url=provider.url, key="k")
            async with Komputer.boot(state=tmp_path / "state", config=ServerConfig(policy=(ASK,)),
                                     models={"main": model}) as computer:
                state = computer.state
                [pending] = approvals.listing(state, ("pending",))
                [session] = [s for s in await computer.recover_sessions() if s.id == "chat"]
                agent = session.loop("main")
                since = last_event(state)
                task = asyncio.create_task(agent.resume())
                await until(lambda: any(e["type"] == "turn.resume" for e in events_since(state, since)))
                await agent.stop()
                run = await task
                assert run.status == "stopped" and len(provider.requests) == 1  # no next step
                record = approvals.get(state, pending["id"])
                assert (record["status"], record["reason"]) == ("withdrawn", "interrupted")  # the wait ended
                assert await session.fs.exists("~/doomed")  # nothing ran
                results = [b for m in conversations.messages(state, "alice.chat") for b in m["content"]
                           if b["type"] == "tool_result"]
                assert [(b["call_id"], b["status"], b["output"]) for b in results] == [("rm", "stopped", STOPPED)]
                assert [tr["status"] for tr in conversations.turns(state, "alice.chat")] == ["stopped"]
                kinds = turn_kinds(state)
                assert kinds["turn.start"] == kinds["turn.end"] == 1 and kinds["turn.resume"] == 1
                assert conversations.get(state, "alice.chat")["run"] is None
                assert conversations.recover(state, everyone=True) == []  # nothing left to seal

    asyncio.run(asyncio.wait_for(main(), HANG))


def crash_while_a_file_tool_asks(tmp_path: Path) -> None:
    """Run the `fs` scenario and SIGKILL it once its write_file call waits for its approval
    (linked to the call) while its sibling's `sleep 100` runs."""
    from kfs.runtime import approvals

    child = start(tmp_path, "fs")
    try:
        def ready(state: KState) -> bool:
            if conversations.get(state, "alice.chat") is None:
                return False
            calls = {c["id"]: c for c in conversations.calls(state, "alice.chat")}
            live = [r for r in procs.rows(state, agent="alice", live=True) if "sleep 100" in r["cmd"]]
            return "write" in calls and bool(calls["write"].get("approval")) and "slow" in calls and bool(live) \
                and bool(approvals.listing(state, ("pending",)))

        wait_for(tmp_path / "state", child, ready)
    finally:
        kill(child)


async def resume_paused_write(computer: Komputer, decide: Callable[[int], None]) -> tuple[list[str], Any]:
    """Resume the conversation the `fs` scenario left paused, decide its approval with
    `decide(id)` once the resumed run waits, and give the tool calls that run made and its result."""
    from kfs.runtime import approvals
    from kshell.agent import Hooks

    state = computer.state
    [pending] = approvals.listing(state, ("pending",))  # it outlived the program that asked
    assert (pending["kind"], pending["action"]) == ("write", "write /home/alice/guarded/plan")
    assert [s.id for s in await computer.recover_sessions()].count("chat") == 1
    session = await computer.login("alice", id="chat-2")
    ran: list[str] = []
    agent = session.loop(ScriptedModel(lambda messages: "Done."), conversation="alice.chat",
                         hooks=Hooks(tool_call=lambda call: ran.append(call["id"])))
    since = last_event(state)
    task = asyncio.create_task(agent.resume())
    await until(lambda: any(e["type"] == "turn.resume" for e in events_since(state, since)))
    assert not task.done() and not await session.fs.exists("~/guarded/plan")
    decide(pending["id"])
    return ran, await task


def test_a_file_tool_waiting_for_an_ask_approval_survives_a_restart_and_writes_once(tmp_path: Path) -> None:
    from kfs.runtime import approvals
    from kshell.server.config import ServerConfig
    from tests.agent.crash_child import ASK_WRITE

    crash_while_a_file_tool_asks(tmp_path)

    async def main() -> None:
        async with Komputer.boot(state=tmp_path / "state", config=ServerConfig(policy=(ASK_WRITE,))) as computer:
            state = computer.state
            # recovery paused the write (its approval still open) and sealed its sibling
            calls = {c["id"]: c["status"] for c in conversations.calls(state, "alice.chat")}
            assert calls == {"write": "paused", "slow": "uncertain"}
            assert [tr["status"] for tr in conversations.turns(state, "alice.chat")] == ["paused"]
            kinds = turn_kinds(state)
            assert kinds["turn.approval"] == kinds["turn.pause"] == 1 and kinds["turn.end"] == 0
            [pending] = approvals.listing(state, ("pending",))
            ran, run = await resume_paused_write(computer, lambda n: approvals.decide(state, n, True, "test"))
            assert run.status == "done" and run.text == "Done."
            assert ran == ["write"]  # the approved write made by the one run of its call, after the decision
            assert await (await computer.login("alice")).fs.read_text("~/guarded/plan") == "x"
            assert approvals.get(state, pending["id"])["status"] == "applied"
            by_call = Counter(b["call_id"] for m in conversations.messages(state, "alice.chat")
                              for b in m["content"] if b["type"] == "tool_result")
            assert by_call == {"write": 1, "slow": 1}
            results = {b["call_id"]: b for m in conversations.messages(state, "alice.chat") for b in m["content"]
                       if b["type"] == "tool_result"}
            assert (results["write"]["status"], results["write"]["output"]) == ("ok", "wrote 1 bytes to guarded/plan")
            assert results["slow"]["status"] == "uncertain"
            assert [tr["status"] for tr in conversations.turns(state, "alice.chat")] == ["tool_calls", "done"]
            kinds = turn_kinds(state)
            assert kinds["turn.start"] == kinds["turn.end"] == 2 and kinds["turn.resume"] == 1
            assert [e["decision"] for e in events_since(state, 0) if e["type"] == "approval.apply"] == ["allowed"]

    asyncio.run(asyncio.wait_for(main(), HANG))


def test_a_paused_file_tool_whose_approval_is_rejected_after_the_restart_gets_one_error_result(
        tmp_path: Path) -> None:
    from kfs.runtime import approvals
    from kshell.server.config import ServerConfig
    from tests.agent.crash_child import ASK_WRITE

    crash_while_a_file_tool_asks(tmp_path)

    async def main() -> None:
        async with Komputer.boot(state=tmp_path / "state", config=ServerConfig(policy=(ASK_WRITE,))) as computer:
            state = computer.state
            [pending] = approvals.listing(state, ("pending",))
            ran, run = await resume_paused_write(computer, lambda n: approvals.decide(state, n, False, "test",
                                                                                         "keep it"))
            assert run.status == "done" and ran == ["write"]
            assert not await (await computer.login("alice")).fs.exists("~/guarded/plan")  # nothing written
            results = [b for m in conversations.messages(state, "alice.chat") for b in m["content"]
                       if b["type"] == "tool_result" and b["call_id"] == "write"]
            assert [(b["status"], b["output"]) for b in results] == [
                ("error", f"write_file: guarded/plan: Permission denied (approval {pending['id']} rejected by test "
                          "(keep it))")]
            assert [tr["status"] for tr in conversations.turns(state, "alice.chat")] == ["tool_calls", "done"]

    asyncio.run(asyncio.wait_for(main(), HANG))


def test_every_kind_of_tool_has_one_result_after_a_crash_and_none_runs_twice(tmp_path: Path) -> None:
    """Shell, file, image command and MCP calls: those that committed keep their result and do
    not run again after the restart; those running get an uncertain one."""
    from kshell.agent.mcp import MCPClient

    log = tmp_path / "mcp.log"
    child = start(tmp_path, "kinds")
    try:
        def ready(state: KState) -> bool:
            if conversations.get(state, "alice.chat") is None:
                return False
            calls = {c["id"]: c["status"] for c in conversations.calls(state, "alice.chat")}
            live = [r["cmd"] for r in procs.rows(state, agent="alice", live=True)]
            return calls.get("mcp-slow") == "running" and any("sleep 100" in c for c in live) \
                and any("nap" in c for c in live) and log.exists() \
                and log.read_text() == "note\nwait\n"

        wait_for(tmp_path / "state", child, ready)
    finally:
        kill(child)

    async def main() -> None:
        async with Komputer.boot(tmp_path / "image", state=tmp_path / "state") as computer, \
                MCPClient.stdio("log", [sys.executable, str(CHILD.with_name("mcp_server.py")), str(log)]) as mcp:
            state = computer.state
            results = {}
            for m in conversations.messages(state, "alice.chat"):
                for b in m["content"]:
                    if b["type"] == "tool_result":
                        assert b["call_id"] not in results  # one result each
                        results[b["call_id"]] = (b["status"], b["output"])
            assert results == {"sh": ("ok", "quick\n"), "file": ("ok", "wrote 5 bytes to notes.txt"),
                               "cmd": ("ok", "hello ann\n"), "mcp": ("ok", "noted"),
                               "sh-slow": ("uncertain", conversations.UNCERTAIN),
                               "cmd-slow": ("uncertain", conversations.UNCERTAIN),
                               "mcp-slow": ("uncertain", conversations.UNCERTAIN)}
            assert [tr["status"] for tr in conversations.turns(state, "alice.chat")] == ["tool_calls", "uncertain"]
            kinds = turn_kinds(state)
            assert kinds["turn.start"] == kinds["turn.end"] == 2
            # the conversation goes on with every tool at hand: none is run again
            session = await computer.login("alice", id="chat-2")
            seen: list[list[str]] = []

            def script(messages: list) -> str:
                seen.append([m.role for m in messages])
                return "Four ran, three are uncertain."

            result = await session.loop(ScriptedModel(script), conversation="alice.chat",
                                        tools=await mcp.tools()).resume()
            assert result.status == "done" and seen == [["user", "assistant", *["tool"] * 4, "assistant",
                                                         *["tool"] * 3]]
            assert await session.fs.read_text("~/runs") == "run\n"
            assert await session.fs.read_text("~/hellos") == "hello\n"
            assert await session.fs.read_text("~/notes.txt") == "noted"
            assert log.read_text() == "note\nwait\n"

    asyncio.run(asyncio.wait_for(main(), HANG))


def test_one_loop_per_conversation_across_processes_and_a_dead_holder_holds_nothing(tmp_path: Path) -> None:
    child = start(tmp_path, "tool")
    try:
        def running(state: KState) -> bool:  # the child's loop is in the middle of its tools
            return conversations.get(state, "alice.chat") is not None and \
                "slow" in {c["id"] for c in conversations.calls(state, "alice.chat")}

        wait_for(tmp_path / "state", child, running)

        async def main() -> None:
            async with Komputer.boot(state=tmp_path / "state") as computer:
                state = computer.state
                session = await computer.login("alice", id="other")
                agent = session.loop(ScriptedModel(lambda messages: "My turn now."), conversation="alice.chat")
                with pytest.raises(ConversationBusy, match=f"answering already .*process {child.pid}"):
                    await agent.prompt("me too")
                assert conversations.get(state, "alice.chat")["run"]["owner"]["pid"] == child.pid
                assert [m["role"] for m in conversations.messages(state, "alice.chat")].count("user") == 1
                await asyncio.to_thread(kill, child)
                # the holder died: its run is over, its turn sealed as recovery seals it, and this run goes on
                result = await agent.prompt("now me")
                assert result.status == "done" and result.text == "My turn now."
                results = Counter(b["call_id"] for m in conversations.messages(state, "alice.chat")
                                  for b in m["content"] if b["type"] == "tool_result")
                assert results == {"quick": 1, "slow": 1}
                assert [tr["status"] for tr in conversations.turns(state, "alice.chat")] == ["uncertain", "done"]
                assert conversations.get(state, "alice.chat")["run"] is None

        asyncio.run(asyncio.wait_for(main(), HANG))
    finally:
        kill(child)


def test_recovery_finds_an_open_turn_whatever_its_number(tmp_path: Path) -> None:
    # turn 47's key ends in the byte "/": recovery once split the key there and lost the turn
    with KState(tmp_path / "state", create=True) as state:
        conversations.open_conversation(state, "c", agent="alice")
        for n in range(48):
            turn, _ = conversations.begin_turn(state, "c", response_id=f"r-{n}")
            if n < 47:
                conversations.end_turn(state, "c", turn, "done")
        sealed = conversations.recover(state, everyone=True)
        assert [(s["conversation_id"], s["turn"]) for s in sealed] == [("c", 47)]
        assert [tr["status"] for tr in conversations.turns(state, "c")] == ["done"] * 47 + ["uncertain"]
