"""The agent loop on a real computer (Komputer.boot on a state in a temp dir) against the test
provider: parallel tools, a message sent mid-stream answered in the same run, stop between
steps, mid-stream and mid-tool, the overflow hook, hooks, handing calls back, and every step
in KState and the event stream."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kfs.agents.sessions import list_sessions
from kfs.journal import events_since, receipts_since
from kfs.runtime import conversations, procs, secrets
from kshell.agent import STOPPED, Agent, ContextOverflowError, ConversationBusy, Hooks, Message, StreamError
from kshell.agent.models import AnthropicModel, OpenAIChatModel
from kshell.sdk import Komputer
from tests.agent import transcripts as t
from tests.agent.provider import Provider
from tests.hang import apoll

T = TypeVar("T")
HANG = 120.0


def run(make: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(asyncio.wait_for(make(), HANG))


def turn_events(state: Any, conv: str) -> list[dict[str, Any]]:
    return [e for e in events_since(state, 0) if e["type"].startswith("turn.") and e.get("conversation_id") == conv]


async def setup(tmp_path: Path, provider: Provider, **options: Any) -> tuple[Komputer, Agent]:
    computer = await Komputer.boot(state=tmp_path / "state",
                                   models={"main": OpenAIChatModel("m", base_url=provider.url, key="k")})
    await computer.add_agent("alice")
    session = await computer.login("alice", id="chat")
    return computer, session.loop("main", **options)


def test_parallel_tool_calls_then_the_answer(tmp_path: Path) -> None:
    # each call waits for the other's file: run one after the other, they would never end
    a = "touch ~/a; while [ ! -e ~/b ]; do sleep 0.02; done; echo A"
    b = "touch ~/b; while [ ! -e ~/a ]; do sleep 0.02; done; echo B"

    async def main() -> None:
        async with Provider() as provider:
            computer, agent = await setup(tmp_path, provider)
            async with computer:
                provider.replies += [{"events": t.chat(text="Running both.", calls=[("c1", "shell", {"command": a}),
                                                                                  ("c2", "shell", {"command": b})])},
                                     {"events": t.chat(text="Both ran.")}]
                result = await agent.prompt("run both")
                assert result.status == "done" and result.text == "Both ran."
                assert [m.role for m in result.messages] == ["user", "assistant", "tool", "tool", "assistant"]
                outputs = {m.content[0]["call_id"]: m.content[0]["output"] for m in result.messages if m.role == "tool"}
                assert outputs == {"c1": "A\n", "c2": "B\n"}
                sent = provider.requests[1].json["messages"]
                assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool"]
                # the store has what the run gave, the events say each step in order
                stored = conversations.messages(computer.state, "alice.chat")
                assert [Message.from_json(m).to_json() for m in stored] == [m.to_json() for m in result.messages]
                events = turn_events(computer.state, "alice.chat")
                kinds = [e["type"] for e in events]
                assert kinds[0] == "turn.conversation" and kinds[1] == "turn.start" and kinds[-1] == "turn.end"
                assert kinds.count("turn.start") == kinds.count("turn.end") == 2
                assert kinds.count("turn.tool") == 2 and kinds.count("turn.message") == 2
                chunks = [e for e in events if e["type"] == "turn.chunk"]
                assert [e["chunk_seq"] for e in chunks] == list(range(1, len(chunks) + 1))
                assert {e["response_id"] for e in chunks} == set(result.response_ids)
                assert "".join(e["chunk"].get("text", "") for e in chunks if e["chunk"]["kind"] == "text") == "Running both.Both ran."
                tools = [e for e in events if e["type"] == "turn.tool"]
                assert all(e["status"] == "ok" and e["pid"] >= procs.PID_BASE for e in tools)
                assert [e["status"] for e in events if e["type"] == "turn.end"] == ["tool_calls", "done"]
                # the second call ran in a session of its own, which ends with the loop's session
                assert len(list_sessions(computer.state)) == 2
                await agent.session.detach()
                assert [r.name for r, _ in list_sessions(computer.state)] == ["chat"]

    run(main)


def test_a_message_sent_mid_stream_is_answered_in_the_same_run(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            sent = asyncio.Event()

            async def on_chunk(chunk: Any, response_id: str) -> None:
                if not sent.is_set():
                    sent.set()
                    await agent.send("and also this")

            computer, agent = await setup(tmp_path, provider, hooks=Hooks(chunk=on_chunk))
            async with computer:
                provider.replies += [{"events": t.chat(text="First answer, streamed slowly."), "delay": 0.01},
                                     {"events": t.chat(text="Second answer.")}]
                result = await agent.prompt("first question")
                assert result.status == "done" and len(result.response_ids) == 2
                assert [m.text for m in result.messages] == ["first question", "First answer, streamed slowly.",
                                                              "and also this", "Second answer."]
                assert provider.requests[1].json["messages"][-1] == {"role": "user", "content": "and also this"}
                assert conversations.queued(computer.state, "alice.chat") == []
                events = turn_events(computer.state, "alice.chat")
                finish = [i for i, e in enumerate(events) if e["type"] == "turn.chunk" and e["chunk"]["kind"] == "finish"]
                second = [i for i, e in enumerate(events) if e["type"] == "turn.start"][1]
                assert len(finish) == 2 and finish[0] < second < finish[1]

    run(main)


def test_stop_mid_stream_cancels_the_request(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            spoke = asyncio.Event()
            computer, agent = await setup(tmp_path, provider, hooks=Hooks(chunk=lambda c, r: spoke.set()))
            async with computer:
                provider.replies.append({"events": t.chat(text="This answer never ends")[:4], "hang": True})
                task = asyncio.create_task(agent.prompt("talk"))
                await provider.hung.wait()
                await spoke.wait()
                await agent.stop()
                result = await task
                await asyncio.wait_for(provider.gone.wait(), HANG)  # the client closed the request
                assert result.status == "stopped"
                partial = result.messages[-1]
                assert partial.role == "assistant" and partial.meta.get("stopped") and partial.text
                ends = [e for e in turn_events(computer.state, "alice.chat") if e["type"] == "turn.end"]
                assert [e["status"] for e in ends] == ["stopped"]
                provider.replies.append({"events": t.chat(text="Back.")})
                assert (await agent.prompt("again")).text == "Back."  # the conversation goes on

    run(main)


def test_stop_mid_tool_ends_its_process(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            computer, agent = await setup(tmp_path, provider)
            async with computer:
                provider.replies.append({"events": t.chat(calls=[("c1", "shell", {"command": "sleep 100"}),
                                                                 ("c2", "shell", {"command": "sleep 100"})])})
                task = asyncio.create_task(agent.prompt("sleep"))
                await apoll(lambda: len([r for r in procs.rows(computer.state, agent="alice", live=True)
                                         if "sleep 100" in r["cmd"]]) == 2, "the two sleeps never both ran")
                await agent.stop()
                result = await task
                assert result.status == "stopped"
                assert not [r for r in procs.rows(computer.state, agent="alice", live=True) if "sleep 100" in r["cmd"]]
                results = [m.content[0] for m in result.messages if m.role == "tool"]
                assert [(r["output"], r["status"]) for r in results] == [(STOPPED, "stopped")] * 2
                ends = [e["status"] for e in turn_events(computer.state, "alice.chat") if e["type"] == "turn.end"]
                assert ends == ["stopped"] and len(provider.requests) == 1

    run(main)


def test_stop_between_steps_takes_no_next_step(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            async def on_result(call: Any, output: Any) -> None:
                await agent.stop()

            computer, agent = await setup(tmp_path, provider, hooks=Hooks(tool_result=on_result))
            async with computer:
                provider.replies += [{"events": t.chat(calls=[("c1", "shell", {"command": "echo hi"})])},
                                     {"events": t.chat(text="never asked")}]
                result = await agent.prompt("go")
                assert result.status == "stopped" and len(provider.requests) == 1
                assert result.messages[-1].content[0]["output"] == "hi\n"
                ends = [e["status"] for e in turn_events(computer.state, "alice.chat") if e["type"] == "turn.end"]
                assert ends == ["tool_calls"]

    run(main)


def test_komputer_stop_from_another_process_is_seen(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            computer, agent = await setup(tmp_path, provider)
            async with computer:
                provider.replies.append({"events": t.chat(text="long")[:2], "hang": True})
                task = asyncio.create_task(agent.prompt("talk"))
                await provider.hung.wait()
                await asyncio.to_thread(conversations.request_stop, computer.state, "alice.chat", by="test")
                assert (await task).status == "stopped"
                await asyncio.wait_for(provider.gone.wait(), HANG)

    run(main)


def test_length_stop_calls_the_overflow_hook_or_fails(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            seen: list[int] = []

            async def compact(messages: list[Message]) -> list[Message]:
                seen.append(len(messages))
                return [Message.user("summary of what came before")]

            computer, agent = await setup(tmp_path, provider, on_context_overflow=compact)
            async with computer:
                provider.replies += [{"events": t.chat(text="cut", stop="length")}, {"events": t.chat(text="fits now")}]
                result = await agent.prompt("a long task")
                assert result.text == "fits now" and seen == [2]
                assert provider.requests[1].json["messages"] == [{"role": "user", "content": "summary of what came before"}]
                plain = agent.session.loop("main", conversation="other")
                provider.replies.append({"events": t.chat(text="cut", stop="length")})
                with pytest.raises(ContextOverflowError):
                    await plain.prompt("again")
                ends = [e["status"] for e in turn_events(computer.state, "other") if e["type"] == "turn.end"]
                assert ends == ["length"]

    run(main)


def test_calls_handed_back_or_run_by_a_callable_and_hooks_called(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            computer, agent = await setup(tmp_path, provider, execute_tools=False)
            async with computer:
                provider.replies.append({"events": t.chat(calls=[("c1", "shell", {"command": "rm -rf ~"})])})
                result = await agent.prompt("clean up")
                assert result.status == "tool_calls" and result.calls[0]["arguments"] == {"command": "rm -rf ~"}
                assert await agent.session.fs.exists("~")
                log: list[str] = []

                async def mine(call: dict[str, Any]) -> str:
                    return f"ran {call['name']} myself"

                def prepare(step: int, messages: list[Message]) -> dict[str, Any]:
                    log.append(f"prepare {step}")
                    return {"settings": {"temperature": 0.5}}

                hooks = Hooks(step_start=lambda s, m: log.append(f"start {s}"), step_finish=lambda s, r: log.append(f"finish {s}"),
                              tool_call=lambda c: log.append(f"call {c['id']}"), tool_result=lambda c, o: log.append(f"result {o.text}"))
                other = agent.session.loop("main", conversation="mine", execute_tools=mine, hooks=hooks, prepare_step=prepare)
                provider.replies += [{"events": t.chat(calls=[("c9", "anything", {})])}, {"events": t.chat(text="ok")}]
                assert (await other.prompt("go")).text == "ok"
                assert log == ["prepare 0", "start 0", "finish 0", "call c9", "result ran anything myself",
                               "prepare 1", "start 1", "finish 1"]
                assert provider.requests[-1].json["temperature"] == 0.5

    run(main)


def test_tool_errors_go_back_to_the_model(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            computer, agent = await setup(tmp_path, provider)
            async with computer:
                provider.replies += [{"events": t.chat(calls=[("c1", "read_file", {"path": "nope.txt"}),
                                                              ("c2", "no_such_tool", {}),
                                                              ("c3", "shell", {"command": "echo x; exit 3"})])},
                                     {"events": t.chat(text="ok")}]
                result = await agent.prompt("go")
                outputs = sorted((m.content[0] for m in result.messages if m.role == "tool"), key=lambda r: r["call_id"])
                assert outputs[0]["output"] == "read_file: nope.txt: No such file or directory" and outputs[0]["status"] == "error"
                assert outputs[1]["output"].startswith("no_such_tool: no such tool") and outputs[1]["status"] == "error"
                assert outputs[2]["output"] == "x\n[exit status 3]" and outputs[2]["status"] == "error"

    run(main)


def test_the_key_is_in_no_event_receipt_log_or_error(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    key = "sk-ant-SECRET-0123456789abcdef"
    caplog.set_level("DEBUG")

    async def main() -> None:
        async with Provider() as provider:
            computer = await Komputer.boot(state=tmp_path / "state")
            async with computer:
                secrets.put(computer.state, "anthropic", key.encode(), by="test")
                await computer.add_agent("alice")
                session = await computer.login("alice", id="chat")
                model = AnthropicModel("c", base_url=provider.url, key_secret="anthropic", retries=1, retry_base=0.01)
                agent = session.loop(model)
                provider.replies += [{"events": t.anthropic(calls=[("t1", "shell", {"command": "echo $HOME"})])},
                                     {"events": t.anthropic(text="fine")}]
                assert (await agent.prompt("hi")).text == "fine"
                assert provider.requests[0].headers["x-api-key"] == key
                provider.replies += [{"status": 401, "json": {"error": {"message": f"bad key {key}"}}}]
                with pytest.raises(StreamError) as caught:
                    await agent.prompt("again")
                assert key not in str(caught.value)
                dump = json.dumps(events_since(computer.state, 0)) + json.dumps(receipts_since(computer.state, 0))
                dump += json.dumps(conversations.messages(computer.state, "alice.chat"))
                assert "bad key [redacted]" in dump and key not in dump
        assert key not in caplog.text

    run(main)


def test_a_step_the_state_cannot_keep_is_a_persistence_error(tmp_path: Path) -> None:
    from kfs.kstate import KState
    from kshell.agent import PersistenceError

    async def main() -> None:
        async with Provider() as provider:
            computer, agent = await setup(tmp_path, provider)
            async with computer:
                await agent.open()
                gone = KState(tmp_path / "gone", create=True)
                gone.close()
                agent.state = gone  # a state that went away under the loop: it cannot keep the step
                provider.replies.append({"events": t.chat(text="never streamed")})
                with pytest.raises(PersistenceError, match="conversation alice.chat: "):
                    await agent.prompt("hello")
                assert provider.requests == []  # nothing ran that the store would not remember

    run(main)


def test_turn_events_follow_with_komputer_events_type_turn(tmp_path: Path) -> None:
    import sys

    from kfs.journal import last_event

    async def main() -> None:
        async with Provider() as provider:
            computer, agent = await setup(tmp_path, provider)
            async with computer:
                since = last_event(computer.state)
                follower = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "kshell.cli", "--state", str(tmp_path / "state"), "events", "--follow",
                    "--type", "turn", "--since", str(since), stdout=asyncio.subprocess.PIPE,
                    env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
                try:
                    provider.replies.append({"events": t.chat(text="hi there")})
                    await agent.prompt("hello")
                    kinds: list[str] = []
                    while not kinds or kinds[-1] != "turn.end":  # as the run wrote them, while it follows
                        kinds.append(json.loads(await follower.stdout.readline())["type"])
                finally:
                    follower.terminate()
                    await follower.wait()
            assert kinds[0] == "turn.conversation" and kinds[1] == "turn.start" and kinds[-1] == "turn.end"
            assert set(kinds) == {"turn.conversation", "turn.start", "turn.chunk", "turn.message", "turn.end"}

    run(main)


def test_a_stop_from_outside_while_an_async_hook_waits_stops_at_once(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            inside = asyncio.Event()

            async def slow_hook(chunk: Any, response_id: str) -> None:
                inside.set()
                await asyncio.Event().wait()  # a hook that would never return by itself

            computer, agent = await setup(tmp_path, provider, hooks=Hooks(chunk=slow_hook))
            async with computer:
                provider.replies.append({"events": t.chat(text="words")})
                task = asyncio.create_task(agent.prompt("go"))
                await inside.wait()
                await agent.stop()
                assert (await task).status == "stopped"

    run(main)


def test_a_second_loop_on_a_running_conversation_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            computer, agent = await setup(tmp_path, provider)
            async with computer:
                provider.replies.append({"events": t.chat(text="long")[:2], "hang": True})
                task = asyncio.create_task(agent.prompt("talk"))
                await provider.hung.wait()
                other = (await computer.login("alice", id="two")).loop("main", conversation="alice.chat")
                for call in (other.prompt("me too"), other.resume(), agent.prompt("again")):
                    with pytest.raises(ConversationBusy, match="conversation alice.chat is answering already"):
                        await call
                assert len(provider.requests) == 1 and not task.done()
                held = conversations.get(computer.state, "alice.chat")["run"]
                assert held["owner"]["pid"] == os.getpid()
                await agent.stop()
                assert (await task).status == "stopped"
                assert conversations.get(computer.state, "alice.chat")["run"] is None  # released at the run's end
                provider.replies.append({"events": t.chat(text="Now you.")})
                assert (await other.prompt("me now")).text == "Now you."  # it sees what the first run added
                assert [m["role"] for m in provider.requests[-1].json["messages"]] == ["user", "assistant", "user"]

    run(main)


def test_an_exclusive_tool_runs_alone_after_the_others(tmp_path: Path) -> None:
    from kshell.agent import tool

    async def main() -> None:
        log: list[str] = []
        both = asyncio.Event()
        running = {"n": 0}

        @tool("wait_both", "waits for its sibling", {"name": {"type": "string"}})
        async def wait_both(name: str) -> str:
            running["n"] += 1
            log.append(f"start {name} with {running['n']} running")
            if running["n"] == 2:
                both.set()
            await both.wait()  # run one after the other, these two would never end
            running["n"] -= 1
            return name

        @tool("alone", "runs by itself", {}, exclusive=True)
        async def alone() -> str:
            log.append(f"alone with {running['n']} running")
            return "alone"

        async with Provider() as provider:
            computer, agent = await setup(tmp_path, provider, tools=[wait_both, alone], computer_tools=False)
            async with computer:
                provider.replies += [{"events": t.chat(calls=[("c1", "alone", {}), ("c2", "wait_both", {"name": "a"}),
                                                              ("c3", "wait_both", {"name": "b"})])},
                                     {"events": t.chat(text="done")}]
                result = await agent.prompt("go")
                assert result.text == "done"
                assert log == ["start a with 1 running", "start b with 2 running", "alone with 0 running"]

    run(main)
