"""The computer's tools act through the agent's session: its mode refuses writes, an `ask` rule
pauses the model's command until someone decides, edits are exact, and the image's commands are
tools."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kfs.journal import events_since
from kfs.runtime import conversations
from kshell.agent import Agent
from kshell.agent.models import ScriptedModel
from kshell.agent.tools import computer_tools
from kshell.sdk import Komputer
from kshell.server.config import ServerConfig
from tests.hang import apoll

T = TypeVar("T")
HANG = 120.0


def run(make: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(asyncio.wait_for(make(), HANG))


def calls(*pairs: tuple[str, dict[str, Any]]) -> Callable[[list], Any]:
    """A model that makes these calls once, then says what the results were."""
    def script(messages: list) -> Any:
        if messages[-1].role == "tool":
            return " | ".join(b["output"] for m in messages if m.role == "tool" for b in m.content)
        return {"calls": [{"name": n, "arguments": a} for n, a in pairs]}

    return script


def test_a_readonly_session_refuses_the_models_writes(tmp_path: Path) -> None:
    async def main() -> None:
        async with Komputer.boot(state=tmp_path / "state") as computer:
            await computer.add_agent("alice")
            session = await computer.login("alice", mode="readonly")
            agent = Agent(session, ScriptedModel(calls(("write_file", {"path": "x.txt", "content": "no"}),
                                                       ("shell", {"command": "echo no > y.txt"}))))
            result = await agent.prompt("write")
            outputs = {b["name"]: b for m in result.messages if m.role == "tool" for b in m.content}
            assert outputs["write_file"]["output"] == "write_file: x.txt: Read-only file system"
            assert outputs["write_file"]["status"] == outputs["shell"]["status"] == "error"
            assert "Read-only file system" in outputs["shell"]["output"]
            assert not await session.fs.exists("~/x.txt") and not await session.fs.exists("~/y.txt")

    run(main)


def test_an_ask_rule_pauses_the_models_command_until_decided(tmp_path: Path) -> None:
    config = ServerConfig(policy=({"on": "command", "pattern": "rm *", "action": "ask", "agent": "alice"},))

    async def main() -> None:
        async with Komputer.boot(state=tmp_path / "state", config=config) as computer:
            await computer.add_agent("alice")
            session = await computer.login("alice", id="w")
            await session.exec("touch doomed")
            agent = Agent(session, ScriptedModel(calls(("shell", {"command": "rm doomed && echo removed"}))))
            task = asyncio.create_task(agent.prompt("clean"))
            pending = await apoll(session.approvals, "no approval was asked")
            assert not task.done() and pending[0]["action"] == "rm doomed"
            await session.decide(pending[0]["id"], "allow", reason="fine")
            assert (await task).text == "removed\nK: waiting for approval 1: rm doomed\n"  # the model sees it waited
            # the loop knew which approval its call waited for (a crash meanwhile would pause the call)
            [call] = conversations.calls(computer.state, agent.conversation)
            assert (call["approval"], call["session"], call["status"]) == (1, "w", "ok")
            linked = [e for e in events_since(computer.state, 0) if e["type"] == "turn.approval"]
            assert [(e["call_id"], e["approval"]) for e in linked] == [(call["id"], 1)]

    run(main)


ASK_WRITE = {"on": "path", "pattern": "/home/alice/guarded/*", "action": "ask", "agent": "alice"}


async def asking_writer(computer: Komputer) -> tuple[Any, Agent, asyncio.Task[Any], dict[str, Any]]:
    """alice's loop with a model that writes ~/guarded/plan (an `ask` rule's path) and then
    says what the result was: the run's task once the write waits, and its pending approval."""
    await computer.add_agent("alice")
    session = await computer.login("alice", id="w")
    await session.exec("mkdir guarded")
    agent = Agent(session, ScriptedModel(calls(("write_file", {"path": "guarded/plan", "content": "the plan"}))))
    task = asyncio.create_task(agent.prompt("write the plan"))
    [pending] = await apoll(session.approvals, "no approval was asked")
    assert not task.done() and not await session.fs.exists("~/guarded/plan")
    return session, agent, task, pending


def test_an_ask_rule_pauses_the_models_file_write_until_allowed(tmp_path: Path) -> None:
    async def main() -> None:
        async with Komputer.boot(state=tmp_path / "state", config=ServerConfig(policy=(ASK_WRITE,))) as computer:
            session, agent, task, pending = await asking_writer(computer)
            # the record a shell session makes for a write, the tool call named for its replay
            assert (pending["kind"], pending["action"], pending["session"]) == ("write", "write /home/alice/guarded/plan",
                                                                                "w")
            [call] = conversations.calls(computer.state, agent.conversation)
            assert (call["approval"], call["session"], call["status"]) == (pending["id"], "w", "running")
            assert pending["replay"]["call"] == call["id"]
            with pytest.raises(PermissionError) as refused:  # agent.fs outside a tool call: nobody waits
                await session.fs.write_file("~/guarded/other", "no")
            assert "which only a shell session can wait for" in refused.value.why
            assert len(await session.approvals()) == 1
            await session.decide(pending["id"], "allow", reason="fine")
            result = await task
            assert result.text == "wrote 8 bytes to guarded/plan"
            assert await session.fs.read_text("~/guarded/plan") == "the plan"
            from kfs.runtime import approvals

            assert approvals.get(computer.state, pending["id"])["status"] == "applied"
            [call] = conversations.calls(computer.state, agent.conversation)
            assert call["status"] == "ok"
            linked = [e for e in events_since(computer.state, 0) if e["type"] == "turn.approval"]
            assert [(e["call_id"], e["approval"], e["name"]) for e in linked] == [(call["id"], pending["id"],
                                                                                   "write_file")]

    run(main)


def test_a_rejected_file_write_is_one_error_result_with_the_reason(tmp_path: Path) -> None:
    async def main() -> None:
        async with Komputer.boot(state=tmp_path / "state", config=ServerConfig(policy=(ASK_WRITE,))) as computer:
            session, agent, task, pending = await asking_writer(computer)
            await session.decide(pending["id"], "reject", reason="not now")
            result = await task
            [output] = [b for m in result.messages if m.role == "tool" for b in m.content]
            assert output["status"] == "error"
            assert output["output"] == (f"write_file: guarded/plan: Permission denied (approval {pending['id']} "
                                        f"rejected by sdk alice/w (not now))")
            assert not await session.fs.exists("~/guarded/plan")

    run(main)


def test_a_stop_while_a_file_write_waits_withdraws_its_approval(tmp_path: Path) -> None:
    async def main() -> None:
        from kfs.runtime import approvals
        from kshell.agent import STOPPED

        async with Komputer.boot(state=tmp_path / "state", config=ServerConfig(policy=(ASK_WRITE,))) as computer:
            session, agent, task, pending = await asking_writer(computer)
            await agent.stop()
            result = await task
            assert result.status == "stopped"
            [output] = [b for m in result.messages if m.role == "tool" for b in m.content]
            assert (output["output"], output["status"]) == (STOPPED, "stopped")
            record = approvals.get(computer.state, pending["id"])
            assert (record["status"], record["reason"]) == ("withdrawn", "interrupted")
            with pytest.raises(ValueError, match="withdrawn"):  # a decision now reaches nobody
                await session.decide(pending["id"], "allow")
            assert not await session.fs.exists("~/guarded/plan")
            assert [tr["status"] for tr in conversations.turns(computer.state, agent.conversation)] == ["stopped"]

    run(main)


def test_edit_read_list_search_and_the_image_commands(tmp_path: Path) -> None:
    image = tmp_path / "image"
    (image / "commands").mkdir(parents=True)
    (image / "komputer.toml").write_text('[commands.hello]\nmarkdown = "commands/hello.md"\ndescription = "greets"\n')
    (image / "commands" / "hello.md").write_text("```sh\necho hello \"$@\"\n```\n")

    async def main() -> None:
        async with Komputer.boot(image, state=tmp_path / "state") as computer:
            await computer.add_agent("alice")
            session = await computer.login("alice")
            tools = {t.name: t for t in computer_tools(session)}
            assert set(tools) == {"shell", "read_file", "write_file", "edit_file", "list_files", "search", "hello"}
            assert tools["hello"].description == "greets"
            assert (await tools["hello"].run({"args": ["ann", "bo b"]})).text == "hello ann bo b\n"
            await tools["write_file"].run({"path": "src/a.py", "content": "x = 1\ny = 1\n"})
            assert await session.fs.read_text("~/src/a.py") == "x = 1\ny = 1\n"
            from kshell.agent import ToolExecutionError

            try:
                await tools["edit_file"].run({"path": "src/a.py", "old_text": "1", "new_text": "2"})
                raise AssertionError("an ambiguous edit went through")
            except ToolExecutionError as e:
                assert str(e) == "edit_file: src/a.py: old_text occurs 2 times; give more context or all"
            await tools["edit_file"].run({"path": "src/a.py", "old_text": "y = 1", "new_text": "y = 2"})
            assert await tools["read_file"].run({"path": "src/a.py", "offset": 2, "limit": 1}) == "y = 2\n"
            assert "a.py" in (await tools["list_files"].run({"path": "src"})).text
            assert (await tools["search"].run({"pattern": "y = 2", "path": "src"})).text == "src/a.py:2:y = 2\n"
            assert (await tools["search"].run({"pattern": "zzz"})).text == "no matches"

    run(main)
