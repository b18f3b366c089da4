"""The async clients (E2B's AsyncSandbox, Daytona's AsyncDaytona) on real states: they are the
sync adapters' twins (kshell.compat.aio), so these tests check what only the async side does:
awaited calls, `async def` callbacks run in order on the caller's loop (delivered with nobody
waiting; one that raises fails its command), `watch_dir`'s `on_event`, an async iterator
for Daytona's `list`, and twins handed back to the client (`delete(sandbox)`)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kshell.compat.daytona import AsyncDaytona, SessionExecuteRequest
from kshell.compat.e2b import AsyncCommandHandle, AsyncSandbox, CommandExitException, FilesystemEventType, Unsupported

HANG = 120.0  # only a hang fails: never a speed claim


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, HANG))


def test_e2b_async_commands_files_and_lifecycle() -> None:
    async def main() -> None:
        sandbox = await AsyncSandbox.create(envs={"STAGE": "dev"})
        try:
            result = await sandbox.commands.run("echo $STAGE; cd /tmp")
            assert (result.stdout, result.exit_code) == ("dev\n", 0)
            assert (await sandbox.commands.run("pwd")).stdout == "/home/user\n"  # nothing leaks
            with pytest.raises(CommandExitException) as caught:
                await sandbox.commands.run("echo no >&2; exit 4")
            assert (caught.value.exit_code, caught.value.stderr) == (4, "no\n")
            await sandbox.files.write("/home/user/notes/a.txt", "hi")
            assert await sandbox.files.read("notes/a.txt") == "hi"
            assert [e.name for e in await sandbox.files.list("/home/user/notes")] == ["a.txt"]
            assert await sandbox.is_running()
            again = await AsyncSandbox.connect(sandbox.sandbox_id)
            assert (await again.files.read("/home/user/notes/a.txt")) == "hi"
            assert (await sandbox.get_info()).sandbox_id == sandbox.sandbox_id
            with pytest.raises(Unsupported, match="set_timeout"):
                await sandbox.set_timeout(60)
        finally:
            assert await sandbox.kill() is True
        assert not await sandbox.is_running()
        assert await AsyncSandbox.kill(sandbox.sandbox_id) is False

    run(main())


def test_e2b_async_callbacks_run_in_order_on_the_callers_loop_with_nobody_waiting() -> None:
    async def main() -> None:
        async with await AsyncSandbox.create() as sandbox:
            loop = asyncio.get_running_loop()
            seen: list[str] = []
            three = asyncio.Event()

            async def on_stdout(text: str) -> None:
                assert asyncio.get_running_loop() is loop
                await asyncio.sleep(0)  # an awaiting callback still gets its chunks in order
                seen.extend(text.splitlines())
                if len(seen) >= 3:
                    three.set()

            handle = await sandbox.commands.run("for i in 1 2 3; do echo $i; done; read line; echo got $line",
                                                background=True, stdin=True, on_stdout=on_stdout)
            assert isinstance(handle, AsyncCommandHandle) and handle.pid > 0
            await three.wait()  # delivered while nobody waits
            assert seen == ["1", "2", "3"]
            assert handle.pid in [p.pid for p in await sandbox.commands.list()]
            await handle.send_stdin("x\n")
            result = await handle.wait()
            assert seen == ["1", "2", "3", "got x"]  # wait returns once every callback ran
            assert result.exit_code == 0 and await handle.wait() == result
            assert handle.pid not in [p.pid for p in await sandbox.commands.list()]

    run(main())


def test_e2b_async_callback_that_raises_fails_its_handle_and_ends_the_command() -> None:
    async def main() -> None:
        async with await AsyncSandbox.create() as sandbox:
            async def refuse(text: str) -> None:
                raise RuntimeError(f"callback says no to {text!r}")

            handle = await sandbox.commands.run("echo x; sleep 600", background=True, on_stdout=refuse)
            with pytest.raises(RuntimeError, match="callback says no to 'x\\\\n'"):
                await handle.wait()
            assert handle.pid not in [p.pid for p in await sandbox.commands.list()]

    run(main())


def test_e2b_async_connect_replays_output_and_kill_ends_the_command() -> None:
    async def main() -> None:
        async with await AsyncSandbox.create() as sandbox:
            started = asyncio.Event()
            handle = await sandbox.commands.run("echo ready; sleep 600", background=True,
                                                on_stdout=lambda _: started.set())
            await started.wait()
            chunks: list[str] = []
            other = await sandbox.commands.connect(handle.pid, on_stdout=chunks.append)
            assert await other.kill() is True
            with pytest.raises(CommandExitException):
                await other.wait()
            assert chunks == ["ready\n"]  # the output so far, to the new handle's callback
            assert await sandbox.commands.kill(handle.pid) is False

    run(main())


def test_e2b_async_watch_dir_hands_events_to_on_event() -> None:
    async def main() -> None:
        async with await AsyncSandbox.create() as sandbox:
            await sandbox.files.make_dir("/home/user/w")
            events: list[tuple[str, FilesystemEventType]] = []
            changed = asyncio.Condition()
            exits: list[Any] = []

            async def on_event(event: Any) -> None:
                async with changed:
                    events.append((event.name, event.type))
                    changed.notify_all()

            async def until(wanted: tuple[str, FilesystemEventType]) -> None:
                async with changed:
                    await changed.wait_for(lambda: wanted in events)

            watch = await sandbox.files.watch_dir("/home/user/w", on_event, on_exit=exits.append, timeout=0)
            await sandbox.commands.run("echo a > /home/user/w/f")
            await until(("f", FilesystemEventType.CREATE))
            await sandbox.commands.run("rm /home/user/w/f")
            await until(("f", FilesystemEventType.REMOVE))
            assert events[0] == ("f", FilesystemEventType.CREATE)
            await watch.stop()
            assert exits == [None]

    run(main())


def test_daytona_async_client() -> None:
    async def main() -> None:
        async with AsyncDaytona() as daytona:
            sandbox = await daytona.create()
            try:
                response = await sandbox.process.exec("echo out; echo err >&2; exit 3")
                assert (response.exit_code, response.result) == (3, "out\nerr\n")
                await sandbox.fs.upload_file(b"data", "a.txt")
                assert await sandbox.fs.download_file("a.txt") == b"data"
                assert await sandbox.get_user_home_dir() == "/home/user"
                assert sandbox.id in [s.id async for s in daytona.list()]
                assert (await daytona.get(sandbox.id)).id == sandbox.id

                await sandbox.process.create_session("s")
                await sandbox.process.execute_session_command("s", SessionExecuteRequest(command="cd /tmp; X=1"))
                started = await sandbox.process.execute_session_command(
                    "s", SessionExecuteRequest(command="echo $X $PWD; echo e >&2", run_async=True))
                out: list[str] = []
                err: list[str] = []

                async def on_stderr(text: str) -> None:
                    await asyncio.sleep(0)
                    err.append(text)

                await sandbox.process.get_session_command_logs_async("s", started.cmd_id, out.append, on_stderr)
                assert ("".join(out), "".join(err)) == ("1 /tmp\n", "e\n")  # the session's state lived on
                assert (await sandbox.process.get_session_command("s", started.cmd_id)).exit_code == 0
                with pytest.raises(Unsupported, match="create_lsp_server"):
                    sandbox.create_lsp_server("python", "/home/user")
            finally:
                await daytona.delete(sandbox)  # the AsyncSandbox it made, handed back
            assert sandbox.id not in [s.id async for s in daytona.list()]

    run(main())
