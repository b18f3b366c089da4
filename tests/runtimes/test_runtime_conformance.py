"""One conformance suite run against the three runtimes (komputer, tmux, process): a python3
REPL driven through send_message and read through get_output, is_alive before and after the
program exits, destroy leaving no process (checked in /proc), metrics (for komputer: what the
session's cgroup files say), and attach info that works when run."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from kserver import keygen, need
from ptyclient import PtySession

from kfs.agents import add_key
from kshell.runtimes import RuntimeCreateConfig, RuntimeError_, RuntimeHandle, check_id
from kshell.sdk import Komputer, local_remote, memory_state

BOUND = 60.0  # seconds before a wait is a hang (never a timing assertion)
SSH = ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
       "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-F", "/dev/null"]


async def until(check: Callable[[], Awaitable[Any]], what: str) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BOUND
    while True:
        value = await check()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"{what}: not within {BOUND:g} s")
        await asyncio.sleep(0.05)


@asynccontextmanager
async def runtime_named(name: str, tmp: Path) -> AsyncIterator[Any]:
    if name == "tmux":
        need("tmux")
        from kshell.runtimes.tmux import TmuxRuntime

        rt = TmuxRuntime(socket=f"k-test-{os.getpid()}")
        try:
            yield rt
        finally:
            await rt._tmux("kill-server", check=False)  # noqa: SLF001
        return
    if name == "process":
        from kshell.runtimes.process import ProcessRuntime

        yield ProcessRuntime()
        return
    need("bwrap")
    need("ssh")
    key = keygen(tmp / "alice_key", "alice@test")
    async with Komputer.boot(state=memory_state(64 << 20), remotes={"local": local_remote()}) as computer:
        await computer.add_agent("alice")
        add_key(computer.state, "alice", (tmp / "alice_key.pub").read_text())
        await computer.serve()
        yield computer.runtime("komputer", agent="alice", ssh_options=["-i", str(key), *SSH])


def pids_of(rt: Any, handle: RuntimeHandle) -> set[int]:
    """Every process of the session as the host sees it."""
    if rt.name == "komputer":
        terminal = rt.computer.server.terminals.get("alice", handle.id)
        leaf = terminal.cgroup_dirs()["pids"]
        return {int(p) for p in (leaf / "cgroup.procs").read_text().split()} | {terminal.worker_pid}
    if rt.name == "process":
        return descendants(handle.data["pid"])
    return set()  # tmux: asked of tmux itself (pane_pid), below


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found, todo = {pid}, [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def running(pids: set[int]) -> set[int]:
    """Those still in /proc and not zombies."""
    left = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            left.add(pid)
    return left


RUNTIMES = ["komputer", "tmux", "process"]


async def repl(rt: Any, sid: str, tmp: Path) -> RuntimeHandle:
    workspace = "" if rt.name == "komputer" else str(tmp)
    handle = await rt.create(RuntimeCreateConfig(sid, workspace, ["python3", "-q"], {"K_TEST_VALUE": "forty-two"}))
    assert handle.id == sid and handle.runtime_name == rt.name
    await until(lambda: _has(rt, handle, ">>>"), "the REPL's prompt")
    return handle


async def _has(rt: Any, handle: RuntimeHandle, text: str) -> bool:
    return text in await rt.get_output(handle, 20)


@pytest.mark.parametrize("name", RUNTIMES)
def test_a_repl_answers_through_get_output_and_is_alive_until_it_exits(name: str) -> None:
    async def main() -> None:
        tmp = Path(tempfile.mkdtemp(prefix="k-rt-", dir="/tmp"))
        async with runtime_named(name, tmp) as rt:
            handle = await repl(rt, "conf-1", tmp)
            assert await rt.is_alive(handle)
            await rt.send_message(handle, "print(6 * 7, __import__('os').environ['K_TEST_VALUE'])")
            await until(lambda: _has(rt, handle, "42 forty-two"), "the REPL's answer")
            lines = (await rt.get_output(handle, 2)).split("\n")
            assert lines == ["42 forty-two", ">>>"]
            await rt.send_message(handle, "raise SystemExit(3)")
            await until(lambda: _not(rt.is_alive(handle)), "is_alive false after the program exits")
            assert await rt.is_alive(handle) is False  # never an exception
            await rt.destroy(handle)
            assert await rt.is_alive(handle) is False
        shutil.rmtree(tmp, ignore_errors=True)

    asyncio.run(main())


async def _not(coro: Awaitable[bool]) -> bool:
    return not await coro


@pytest.mark.parametrize("name", RUNTIMES)
def test_destroy_leaves_no_process(name: str) -> None:
    async def main() -> None:
        tmp = Path(tempfile.mkdtemp(prefix="k-rt-", dir="/tmp"))
        async with runtime_named(name, tmp) as rt:
            handle = await repl(rt, "conf-2", tmp)
            await rt.send_message(handle, "import subprocess; p = subprocess.Popen(['sleep', '1000'])")
            await rt.send_message(handle, "print('child', p.pid)")
            await until(lambda: _has(rt, handle, "child "), "the child's start")
            pids = pids_of(rt, handle)
            if rt.name == "tmux":
                pids = descendants(int(await rt._pane(handle, "#{pane_pid}")))  # noqa: SLF001
            assert len(running(pids)) >= 2  # the REPL and its sleep at least
            await rt.destroy(handle)
            await until(lambda: _none(pids), "every process of the session gone from /proc")
            assert await rt.is_alive(handle) is False
        shutil.rmtree(tmp, ignore_errors=True)

    asyncio.run(main())


async def _none(pids: set[int]) -> bool:
    return not running(pids)


def test_komputer_metrics_are_the_session_cgroup_files() -> None:
    async def main() -> None:
        tmp = Path(tempfile.mkdtemp(prefix="k-rt-", dir="/tmp"))
        async with runtime_named("komputer", tmp) as rt:
            handle = await repl(rt, "conf-3", tmp)
            terminal = rt.computer.server.terminals.get("alice", "conf-3")
            metrics = await rt.get_metrics(handle)
            leaf = f"/a-alice/w{terminal.worker_pid}/"
            assert set(metrics.files) == {"memory_bytes", "tasks", "cpu_seconds"}
            assert all(leaf in path for path in metrics.files.values())
            tasks = int(Path(metrics.files["tasks"]).read_text())
            memory = int(Path(metrics.files["memory_bytes"]).read_text())
            assert metrics.tasks == tasks >= 2
            assert abs(metrics.memory_bytes - memory) <= memory // 10
            assert metrics.cpu_seconds > 0 and metrics.uptime > 0
            # the program is in that leaf: every process of the session is counted there
            procs = {int(p) for p in (terminal.cgroup_dirs()["memory"] / "cgroup.procs").read_text().split()}
            assert any(b"python3" in Path(f"/proc/{p}/cmdline").read_bytes() for p in procs)
            await rt.destroy(handle)
        shutil.rmtree(tmp, ignore_errors=True)

    asyncio.run(main())


@pytest.mark.parametrize("name", RUNTIMES)
def test_attach_info_works_when_run(name: str) -> None:
    async def main() -> None:
        tmp = Path(tempfile.mkdtemp(prefix="k-rt-", dir="/tmp"))
        async with runtime_named(name, tmp) as rt:
            handle = await repl(rt, "conf-4", tmp)
            await rt.send_message(handle, "print('seen', 6 * 7)")
            await until(lambda: _has(rt, handle, "seen 42"), "the REPL's answer")
            info = await rt.get_attach_info(handle)
            if name == "process":
                assert info.type == "process" and info.command == []
                argv = Path(f"/proc/{info.target}/cmdline").read_bytes().split(b"\0")
                assert argv[0].endswith(b"python3") and argv[-2:] == [b"-q", b""]  # the REPL itself, running
            else:
                assert info.type == ("ssh" if name == "komputer" else "tmux")
                session = PtySession(info.command)
                try:
                    await asyncio.to_thread(session.expect, b"seen 42")  # the screen painted at once
                    session.send(b"print('typed', 7 * 6)\r")
                    await asyncio.to_thread(session.expect, b"typed 42")
                finally:
                    session.close()
                await until(lambda: _has(rt, handle, "typed 42"), "what the person typed in the session")
                assert await rt.is_alive(handle)  # the person's going away leaves it running
            await rt.destroy(handle)
        shutil.rmtree(tmp, ignore_errors=True)

    asyncio.run(main())


def test_ids_and_commands_are_checked() -> None:
    for bad in ("", "-rf", "a/b", "a b", "x" * 65, "$(id)", ".hidden"):
        with pytest.raises(ValueError):
            check_id(bad)
    with pytest.raises(TypeError, match="argument vector"):
        RuntimeCreateConfig("ok", "", "python3 -q")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="variable name"):
        RuntimeCreateConfig("ok", "", ["true"], {"A=B": "x"})


def test_komputer_destroy_ends_the_session_background_jobs_too() -> None:
    async def main() -> None:
        tmp = Path(tempfile.mkdtemp(prefix="k-rt-", dir="/tmp"))
        async with runtime_named("komputer", tmp) as rt:
            computer = rt.computer
            terminal = await computer.server.terminals.create(
                computer.agent("alice"), "conf-5", "nohup python3 -c 'import time; time.sleep(1000)' & python3 -q")
            handle = RuntimeHandle("conf-5", "komputer")
            await until(lambda: _has(rt, handle, ">>>"), "the REPL's prompt")
            # the REPL ends; the hang-up that follows spares its `nohup` job, which runs on until destroy
            await rt.send_message(handle, "raise SystemExit(0)")
            await until(lambda: _not(rt.is_alive(handle)), "the REPL's end")
            worker = terminal._worker.pid  # noqa: SLF001
            procs = terminal.cgroup_dirs_of(worker)["pids"] / "cgroup.procs"

            async def members() -> set[int]:
                """The worker and what runs in its cgroup once the background job is there (on a
                loaded host its sandbox may start after the REPL has already ended)."""
                found = {worker} | {int(p) for p in procs.read_text().split()}
                return found if len(running(found)) >= 2 else set()

            pids = await until(members, "the sleeping job in the session's cgroup")
            await rt.destroy(handle)
            await until(lambda: _none(pids), "the background job and the worker gone from /proc")
        shutil.rmtree(tmp, ignore_errors=True)

    asyncio.run(main())


def test_closing_the_computer_ends_its_terminals() -> None:
    async def main() -> None:
        tmp = Path(tempfile.mkdtemp(prefix="k-rt-", dir="/tmp"))
        async with runtime_named("komputer", tmp) as rt:
            handle = await repl(rt, "conf-6", tmp)
            pids = pids_of(rt, handle)
            assert len(running(pids)) >= 2
        # closed: a terminal does not outlive the server process
        await until(lambda: _none(pids), "the terminal's processes gone after close")
        shutil.rmtree(tmp, ignore_errors=True)

    asyncio.run(main())


def test_komputer_types_the_launch_command_at_a_k_prompt_that_outlives_the_program() -> None:
    async def main() -> None:
        tmp = Path(tempfile.mkdtemp(prefix="k-rt-", dir="/tmp"))
        async with runtime_named("komputer", tmp) as rt:
            handle = await repl(rt, "conf-7", tmp)
            rows = (await rt.get_output(handle, 24)).split("\n")
            assert rows[0].startswith("alice@") and rows[0].endswith(":~$ python3 -q")  # typed at the prompt
            await rt.send_message(handle, "raise SystemExit(3)")
            await until(lambda: _not(rt.is_alive(handle)), "is_alive false once the program has ended")
            # the K prompt is back, in the same terminal, for a person who attaches
            await until(lambda: _last_row_is_prompt(rt, handle), "the K prompt after the program")
            terminal = rt.computer.server.terminals.get("alice", "conf-7")
            assert terminal.alive and terminal.doing == "K prompt"
            with pytest.raises(RuntimeError_, match="its program has ended"):
                await rt.send_message(handle, "print('too late')")
            pids = {terminal.worker_pid} | pids_of(rt, handle)
            assert running(pids)
            await rt.destroy(handle)
            await until(lambda: _none(pids), "the prompt's worker gone from /proc")
            assert not terminal.alive and rt.computer.server.terminals.get("alice", "conf-7") is None
        shutil.rmtree(tmp, ignore_errors=True)

    asyncio.run(main())


async def _last_row_is_prompt(rt: Any, handle: RuntimeHandle) -> bool:
    rows = (await rt.get_output(handle, 24)).split("\n")
    return rows[-1].startswith("alice@") and rows[-1].endswith(":~$")


def test_komputer_types_a_launch_command_holding_newlines_as_one_line() -> None:
    async def main() -> None:
        tmp = Path(tempfile.mkdtemp(prefix="k-rt-", dir="/tmp"))
        async with runtime_named("komputer", tmp) as rt:
            script = "print('first')\nprint('second', 6 * 7)\nimport sys; sys.stdin.readline()"
            handle = await rt.create(RuntimeCreateConfig("conf-8", "", ["python3", "-c", script]))
            await until(lambda: _has(rt, handle, "second 42"), "the script's whole output")
            assert "first" in await rt.get_output(handle, 20) and await rt.is_alive(handle)
            await rt.destroy(handle)
        shutil.rmtree(tmp, ignore_errors=True)

    asyncio.run(main())
