"""One small surface over the native SDK and each adapter, so that the conformance tests
(test_conformance.py) say once what all of them must do: a background command with output
callbacks, its wait (any number of times), the sandbox's live pids, a kill by pid, a second
handle to the same sandbox, a start that fails, and the sandbox's end.

`wait` answers (stdout, status) or raises what the flavour raises; `failure(call)` names the
error a flavour raised, as one of: "exit", "callback", "gone", "invalid"."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from kshell.compat import core
from kshell.compat import daytona as k_daytona
from kshell.compat import e2b as k_e2b
from kshell.sdk import Komputer as NativeKomputer
from kshell.sdk import KomputerClosed, memory_state
from tests.hang import HANG


class Native:
    """The K SDK itself: a computer and the agent `user`; a background command is an exec in
    a session of its own, awaited as a task (on the adapters' loop thread, to share it)."""

    name = "native"

    def create(self) -> Any:
        async def boot() -> Any:
            computer = await NativeKomputer.boot(state=memory_state(64 << 20))
            await computer.add_agent("user")
            return {"computer": computer, "session": await computer.login("user", "sandbox")}

        return core.run(boot())

    def state(self, sandbox: Any) -> Any:
        return sandbox["computer"].state

    def start(self, sandbox: Any, cmd: str, on_stdout: Callable[[str], None] | None = None,
              env: dict[str, str] | None = None) -> Any:
        async def go() -> Any:
            from kfs.runtime import procs

            computer = sandbox["computer"]
            session = await computer.login("user")

            def output(stream: str, chunk: bytes) -> None:
                if stream == "stdout" and on_stdout is not None:
                    on_stdout(chunk.decode())

            async def run_and_end() -> Any:  # the session is this command's: ended with it
                try:
                    return await session.exec(cmd, env=env, on_output=output)
                finally:
                    if not computer.gone.done():  # a closing computer ends its sessions itself
                        await session.close()

            task = asyncio.get_running_loop().create_task(run_and_end())
            deadline = time.monotonic() + HANG
            while True:  # its process row (ended already, when a failing callback ended it at once)
                assert time.monotonic() < deadline, "the command's process row never came"
                rows = procs.rows(computer.state, agent="user")
                found = [r["pid"] for r in rows if r["session"] == session.id]
                if found:
                    return {"task": task, "pid": min(found)}
                if task.done():
                    task.result()  # a start that failed raises here
                    return {"task": task, "pid": task.result().pid}
                await asyncio.sleep(0.005)

        return core.run(go())

    def start_failing(self, sandbox: Any) -> None:
        self.start(sandbox, "true", env={"A B": "1"})

    def pid(self, handle: Any) -> int:
        return handle["pid"]

    def wait(self, handle: Any) -> tuple[str, int]:
        async def go() -> tuple[str, int]:
            result = await asyncio.shield(handle["task"])
            return result.stdout.decode(), result.status

        return core.run(go())

    def pids(self, sandbox: Any) -> list[int]:
        from kfs.runtime import procs

        return [r["pid"] for r in procs.rows(self.state(sandbox), agent="user", live=True)]

    def kill(self, sandbox: Any, pid: int) -> bool:
        from kshell.worker.procs import send

        return send(self.state(sandbox), pid, 9, "user")

    def second(self, sandbox: Any) -> Any:
        return sandbox  # one computer: another handle is the same object

    def destroy(self, sandbox: Any) -> None:
        core.run(sandbox["computer"].close())

    def failure(self, error: BaseException) -> str:
        if isinstance(error, KomputerClosed):
            return "gone"
        if isinstance(error, ValueError) and "valid variable name" in str(error):
            return "invalid"
        if isinstance(error, RuntimeError) and "callback" in str(error):
            return "callback"
        return type(error).__name__


class E2B:
    name = "e2b"

    def create(self) -> Any:
        return k_e2b.Sandbox.create()

    def state(self, sandbox: Any) -> Any:
        return sandbox._sandbox.computer.state  # noqa: SLF001

    def start(self, sandbox: Any, cmd: str, on_stdout: Callable[[str], None] | None = None,
              env: dict[str, str] | None = None) -> Any:
        return sandbox.commands.run(cmd, background=True, on_stdout=on_stdout, envs=env)

    def start_failing(self, sandbox: Any) -> None:
        sandbox.commands.run("true", background=True, envs={"A B": "1"})

    def pid(self, handle: Any) -> int:
        return handle.pid

    def wait(self, handle: Any) -> tuple[str, int]:
        try:
            result = handle.wait()
        except k_e2b.CommandExitException as e:
            return e.stdout, e.exit_code
        return result.stdout, result.exit_code

    def pids(self, sandbox: Any) -> list[int]:
        return [p.pid for p in sandbox.commands.list()]

    def kill(self, sandbox: Any, pid: int) -> bool:
        return sandbox.commands.kill(pid)

    def second(self, sandbox: Any) -> Any:
        return k_e2b.Sandbox.connect(sandbox.sandbox_id)

    def destroy(self, sandbox: Any) -> None:
        sandbox.kill()

    def failure(self, error: BaseException) -> str:
        if isinstance(error, k_e2b.InvalidArgumentException):
            return "invalid"
        if isinstance(error, k_e2b.SandboxException) and "was killed" in str(error):
            return "gone"
        if isinstance(error, RuntimeError) and "callback" in str(error):
            return "callback"
        return type(error).__name__


class Daytona:
    """Background commands are async session commands (each in a session of its own, so they
    run side by side, as the others' do)."""

    name = "daytona"

    def __init__(self) -> None:
        self.client = k_daytona.Daytona()
        self.count = 0

    def create(self) -> Any:
        return self.client.create()

    def state(self, sandbox: Any) -> Any:
        return sandbox._sandbox.computer.state  # noqa: SLF001

    def start(self, sandbox: Any, cmd: str, on_stdout: Callable[[str], None] | None = None,
              env: dict[str, str] | None = None) -> Any:
        self.count += 1
        session = f"s{self.count}"
        sandbox.process.create_session(session)
        if env:
            cmd = "".join(f"export {k}={v}; " for k, v in env.items()) + cmd
        response = sandbox.process.execute_session_command(
            session, k_daytona.SessionExecuteRequest(command=cmd, run_async=True))
        handle = {"sandbox": sandbox, "session": session, "id": response.cmd_id}
        if on_stdout is not None:  # the logs stream on a thread of the caller's, as upstream's async logs
            import threading

            thread = threading.Thread(target=self._follow, args=(handle, on_stdout), daemon=True)
            thread.start()
        return handle

    def _follow(self, handle: Any, on_stdout: Callable[[str], None]) -> None:
        import contextlib

        with contextlib.suppress(Exception):
            handle["sandbox"].process.get_session_command_logs_async(handle["session"], handle["id"], on_stdout,
                                                                     lambda _: None)

    def start_failing(self, sandbox: Any) -> None:
        sandbox.process.exec("true", env={"A B": "1"})

    def pid(self, handle: Any) -> int:
        return int(handle["id"])

    def wait(self, handle: Any) -> tuple[str, int]:
        sandbox = handle["sandbox"]
        process = sandbox.process._process(handle["session"], handle["id"])  # noqa: SLF001
        outcome = core.run(process.wait())
        if outcome.exception is not None:
            if isinstance(outcome.exception, core.SandboxGone):
                raise k_daytona.DaytonaError(str(outcome.exception), 410)
            raise outcome.exception
        command = sandbox.process.get_session_command(handle["session"], handle["id"])
        logs = sandbox.process.get_session_command_logs(handle["session"], handle["id"])
        return logs.stdout, command.exit_code

    def pids(self, sandbox: Any) -> list[int]:
        from kfs.runtime import procs

        return [r["pid"] for r in procs.rows(self.state(sandbox), agent="user", live=True)]

    def kill(self, sandbox: Any, pid: int) -> bool:
        return core.run(sandbox._sandbox.kill(pid))  # noqa: SLF001 - Daytona kills by session, K by pid

    def second(self, sandbox: Any) -> Any:
        return self.client.get(sandbox.id)

    def destroy(self, sandbox: Any) -> None:
        self.client.delete(sandbox)

    def failure(self, error: BaseException) -> str:
        if isinstance(error, k_daytona.DaytonaError) and error.status_code == 400:
            return "invalid"
        if isinstance(error, k_daytona.DaytonaError) and error.status_code == 410:
            return "gone"
        if isinstance(error, RuntimeError) and "callback" in str(error):
            return "callback"
        return type(error).__name__


class E2BAsync(E2B):
    """E2B's AsyncSandbox, its calls awaited on an event loop of the driver's own (as a program's
    loop would run them), its callbacks `async def` run on that loop."""

    name = "e2b-async"
    _loop: Any = None

    def call(self, coro: Any) -> Any:
        if E2BAsync._loop is None:
            from kshell.sdk.blocking import _Loop

            E2BAsync._loop = _Loop()
        return E2BAsync._loop.run(coro)

    def create(self) -> Any:
        return self.call(k_e2b.AsyncSandbox.create())

    def state(self, sandbox: Any) -> Any:
        return sandbox._sync._sandbox.computer.state  # noqa: SLF001

    def start(self, sandbox: Any, cmd: str, on_stdout: Callable[[str], None] | None = None,
              env: dict[str, str] | None = None) -> Any:
        async def relay(text: str) -> None:
            assert on_stdout is not None
            on_stdout(text)

        return self.call(sandbox.commands.run(cmd, background=True, on_stdout=relay if on_stdout else None,
                                              envs=env))

    def start_failing(self, sandbox: Any) -> None:
        self.call(sandbox.commands.run("true", background=True, envs={"A B": "1"}))

    def wait(self, handle: Any) -> tuple[str, int]:
        try:
            result = self.call(handle.wait())
        except k_e2b.CommandExitException as e:
            return e.stdout, e.exit_code
        return result.stdout, result.exit_code

    def pids(self, sandbox: Any) -> list[int]:
        return [p.pid for p in self.call(sandbox.commands.list())]

    def kill(self, sandbox: Any, pid: int) -> bool:
        return self.call(sandbox.commands.kill(pid))

    def second(self, sandbox: Any) -> Any:
        return self.call(k_e2b.AsyncSandbox.connect(sandbox.sandbox_id))

    def destroy(self, sandbox: Any) -> None:
        self.call(sandbox.kill())


class E2BRemote(E2B):
    """The E2B adapter over a served appliance (`komputer serve` on loopback), configured as
    E2B's client is: `domain=` its ssh:// URL, `api_key=` the agent's key file."""

    name = "e2b-remote"

    def __init__(self, bench: Any) -> None:
        self.bench = bench
        self.options = {"domain": f"ssh://alice@127.0.0.1:{bench.port}", "api_key": str(bench.keys["alice"])}

    def create(self) -> Any:
        return k_e2b.Sandbox.create(**self.options)

    def state(self, sandbox: Any) -> Any:
        return self.bench.state

    def second(self, sandbox: Any) -> Any:
        return k_e2b.Sandbox.connect(sandbox.sandbox_id, **self.options)


FLAVOURS = {"native": Native, "e2b": E2B, "e2b-async": E2BAsync, "daytona": Daytona, "e2b-remote": E2BRemote}
