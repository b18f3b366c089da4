"""openai-agents' Sandbox Agents on K: the real `openai-agents` package runs a `SandboxAgent`
with `SandboxRunConfig(client=KSandboxClient())`, its model an OpenAI Responses model pointed at
the test provider (tests/agent/provider.py: real HTTP and SSE on loopback) replaying a scripted
conversation: the model calls the framework's shell tool, K runs it, and the output goes back in
the next request; the files it wrote are in the K sandbox."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest

try:
    import agents  # noqa: F401 - the real package, or the test fails saying what to install
except ImportError as e:  # pragma: no cover - the environment lacks it
    raise ImportError("install openai-agents (make test-deps: pip install -e '.[test]')") from e

from agents import RunConfig, Runner, set_tracing_disabled
from agents.models.openai_responses import OpenAIResponsesModel
from agents.sandbox import ExecTimeoutError, Manifest, SandboxAgent, SandboxRunConfig
from openai import AsyncOpenAI

from kshell.compat import core
from kshell.compat.openai_agents import DEFAULT_ROOT, KSandboxClient, KSandboxClientOptions
from tests.agent import transcripts as t
from tests.agent.provider import Provider

HANG = 180.0  # only a hang fails: never a speed claim
set_tracing_disabled(True)  # the framework's traces go to OpenAI's servers: never from a test


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, HANG))


def _tool_output(request: Any, call_id: str) -> str:
    for item in request.json["input"]:
        if item.get("type") == "function_call_output" and item.get("call_id") == call_id:
            return item["output"] if isinstance(item["output"], str) else str(item["output"])
    raise AssertionError(f"no output for {call_id} in the request")


def test_sandbox_agent_runs_its_shell_tool_on_k() -> None:
    async def main() -> None:
        async with Provider() as provider:
            provider.replies += [
                {"events": t.responses(calls=[("call_1", "exec_command",
                                               {"cmd": "echo hello from K > note.txt && pwd"})], id="resp_1")},
                {"events": t.responses(calls=[("call_2", "exec_command", {"cmd": "cat note.txt; echo $STAGE"})],
                                       id="resp_2")},
                {"events": t.responses(text="The note says hello.", id="resp_3")},
            ]
            model = OpenAIResponsesModel("test-model", AsyncOpenAI(base_url=provider.url + "/v1", api_key="test"))
            agent = SandboxAgent(name="k", instructions="Use the shell.", model=model)
            before = set(core.sandboxes())
            result = Runner.run_streamed(agent, "write a note", run_config=RunConfig(
                sandbox=SandboxRunConfig(client=KSandboxClient(), options=KSandboxClientOptions(envs={"STAGE": "dev"})),
                tracing_disabled=True))
            async for _ in result.stream_events():
                pass
            assert result.final_output == "The note says hello."
            assert len(provider.requests) == 3
            first = _tool_output(provider.requests[1], "call_1")
            assert "exited with code 0" in first and DEFAULT_ROOT + "\n" in first  # run in the workspace root
            assert "hello from K\ndev\n" in _tool_output(provider.requests[2], "call_2")
            assert set(core.sandboxes()) == before  # the run made its K sandbox and killed it at its end

    run(main())


def test_a_session_the_caller_holds_stays_theirs() -> None:
    async def main() -> None:
        async with Provider() as provider:
            provider.replies += [
                {"events": t.responses(calls=[("call_1", "exec_command", {"cmd": "echo kept > kept.txt"})])},
                {"events": t.responses(text="done", id="resp_2")},
            ]
            model = OpenAIResponsesModel("test-model", AsyncOpenAI(base_url=provider.url + "/v1", api_key="test"))
            agent = SandboxAgent(name="k", instructions="Use the shell.", model=model)
            client = KSandboxClient()
            session = await client.create()
            try:
                async with session:
                    streamed = Runner.run_streamed(agent, "keep a file", run_config=RunConfig(
                        sandbox=SandboxRunConfig(session=session), tracing_disabled=True))
                    async for _ in streamed.stream_events():
                        pass
                    assert streamed.final_output == "done"
                    # the file is in the K sandbox, read through K's own fs
                    sandbox = core.sandboxes()[session._inner.sandbox_id]  # noqa: SLF001
                    data = await asyncio.wrap_future(core.submit(sandbox.session.fs.read_file(DEFAULT_ROOT + "/kept.txt")))
                    assert data == b"kept\n"
            finally:
                await client.delete(session)
            assert session._inner.sandbox_id not in core.sandboxes()  # noqa: SLF001 - killed

    run(main())


def test_client_lifecycle_files_archive_and_resume() -> None:
    async def main() -> None:
        client = KSandboxClient()
        session = await client.create(manifest=Manifest(root=DEFAULT_ROOT))
        async with session:
            await session.write(Path("src/a.txt"), io.BytesIO(b"one"))
            assert (await session.read(Path("src/a.txt"))).read() == b"one"
            assert [e.path for e in await session.ls("src")] == [DEFAULT_ROOT + "/src/a.txt"]
            failed = await session.exec("exit 3")
            assert failed.exit_code == 3
            with pytest.raises(ExecTimeoutError):  # the command is interrupted, the framework's error raised
                await session.exec("sleep 600", timeout=1)
            archive = await session.persist_workspace()
            # resume from the serialized state finds the same K sandbox by id
            payload = client.serialize_session_state(session.state)
            again = await client.resume(client.deserialize_session_state(payload))
            assert again._inner._sandbox is session._inner._sandbox  # noqa: SLF001
            # a fresh sandbox hydrated from the archive has the files
            other = await client.create()
            async with other:
                await other.hydrate_workspace(archive)
                assert (await other.read(Path("src/a.txt"))).read() == b"one"
            await client.delete(other)
        await client.delete(session)
        with pytest.raises(core.SandboxGone):
            await session.exec("true")

    run(main())


def test_a_root_the_agent_may_not_write_fails_at_start() -> None:
    async def main() -> None:
        client = KSandboxClient()
        session = await client.create(manifest=Manifest())  # upstream's default root, /workspace
        try:
            with pytest.raises(Exception) as caught:
                await session.start()
            assert "Permission denied" in repr(caught.value) + repr(caught.value.__cause__)
        finally:
            await client.delete(session)

    run(main())
