"""`komputer chat`, `send` and `stop` as programs, against a state whose image declares a model
([models.NAME]) served by the test provider."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from kfs.journal import events_since
from kfs.runtime import conversations
from kshell.sdk import Komputer
from tests.agent import transcripts as t
from tests.agent.provider import Provider

HANG = 120.0
ROOT = Path(__file__).resolve().parents[2]


async def komputer(state: Path, *args: str, stdin: bytes | None = None) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kshell.cli", "--state", str(state), *args, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})


async def prepared(tmp_path: Path, provider: Provider) -> Path:
    image = tmp_path / "image"
    image.mkdir()
    (image / "komputer.toml").write_text(f'[models.local]\nprotocol = "openai-compatible"\nmodel = "llama"\n'
                                         f'base_url = "{provider.url}"\n')
    state = tmp_path / "state"
    async with Komputer.boot(image, state=state) as computer:
        await computer.add_agent("alice")
        assert list(computer.models) == ["local"] and computer.models["local"].base_url == provider.url
    return state


def test_chat_streams_the_answers_of_each_line(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            state = await prepared(tmp_path, provider)
            provider.replies += [{"events": t.chat(calls=[("c1", "shell", {"command": "echo from-the-tool"})])},
                                 {"events": t.chat(text="The tool said hello.")}, {"events": t.chat(text="Bye.")}]
            chat = await komputer(state, "chat", "alice", "--model", "local")
            out, err = await chat.communicate(b"say hello\nbye\n")
            assert chat.returncode == 0, err
            assert out.decode() == "\nThe tool said hello.\nBye.\n"
            assert "[shell {'command': 'echo from-the-tool'}]" in err.decode() and "[shell: ok]" in err.decode()
            assert provider.requests[1].json["messages"][-1] == {"role": "tool", "tool_call_id": "c1",
                                                                 "content": "from-the-tool\n"}

    asyncio.run(asyncio.wait_for(main(), HANG))


def test_send_queues_and_stop_stops_a_running_chat(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            state = await prepared(tmp_path, provider)
            provider.replies.append({"events": t.chat(text="Thinking for ever")[:3], "hang": True})
            chat = await komputer(state, "chat", "alice")
            chat.stdin.write(b"start\n")
            await chat.stdin.drain()
            await provider.hung.wait()
            send = await komputer(state, "send", "alice", "one", "more")
            assert await send.wait() == 0
            stop = await komputer(state, "stop", "alice")
            assert await stop.wait() == 0
            await asyncio.wait_for(provider.gone.wait(), HANG)  # the stop reached the chat: its request ended
            chat.stdin.close()
            out, err = await chat.communicate()
            assert chat.returncode == 0 and "[stopped]" in err.decode()
            from kfs.kstate import KState

            with KState(state) as ks:
                assert [m["content"][0]["text"] for m in conversations.queued(ks, "alice.chat")] == ["one more"]
                kinds = [e["type"] for e in events_since(ks, 0) if e["type"].startswith("turn.")]
                assert "turn.queue" in kinds and "turn.stop" in kinds
                assert [e["status"] for e in events_since(ks, 0) if e["type"] == "turn.end"] == ["stopped"]
            missing = await komputer(state, "stop", "bob")
            _, err = await missing.communicate()
            assert missing.returncode == 1 and err.decode() == "komputer stop: no conversation bob.chat\n"

    asyncio.run(asyncio.wait_for(main(), HANG))


def test_a_second_chat_on_a_running_conversation_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            state = await prepared(tmp_path, provider)
            provider.replies.append({"events": t.chat(text="Thinking for ever")[:3], "hang": True})
            chat = await komputer(state, "chat", "alice")
            chat.stdin.write(b"start\n")
            await chat.stdin.drain()
            await provider.hung.wait()
            other = await komputer(state, "chat", "alice", "--session", "two", "--conversation", "alice.chat")
            out, err = await other.communicate(b"me too\n")
            assert other.returncode == 1 and out == b""
            assert re.fullmatch(r"komputer chat: conversation alice\.chat is answering already \(its loop runs in "
                                rf"process {chat.pid}\): send\(\) or `komputer send` queues a message\n", err.decode())
            same = await komputer(state, "chat", "alice")  # the first one's session
            _, err = await same.communicate(b"hi\n")
            assert same.returncode == 1 and err.decode().startswith("komputer chat: alice/chat: session 'chat' is in use")
            assert len(provider.requests) == 1
            stop = await komputer(state, "stop", "alice")
            assert await stop.wait() == 0
            chat.stdin.close()
            _, err = await chat.communicate()
            assert chat.returncode == 0 and "[stopped]" in err.decode()

    asyncio.run(asyncio.wait_for(main(), HANG))
