"""The worker pool and a session's WorkerShell, driven directly (a real zygote forking real
workers over a real LMDB state), below the SSH server: what a channel relies on."""

from __future__ import annotations

import asyncio
import os
import resource
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kfs.agents import ensure_agent, find_agent
from kfs.kstate import KState
from kfs.vfs import VFS
from kshell.server.workers import WorkerPool, WorkerShell
from kshell.worker.limits import WorkerLimits
from tests.hang import HANG, apoll


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    with KState(tmp_path / "state", create=True) as state:
        for name in ("alice", "bob"):
            ensure_agent(VFS(state, by="test"), name)
    return tmp_path / "state"


def spec(state_dir: Path, agent: str, **extra: Any) -> dict[str, Any]:
    with KState(state_dir) as state:
        a = find_agent(state, agent)
    assert a is not None
    return {"agent": a.name, "uid": a.uid, "gid": a.gid, "home": a.home, "cwd": a.home, "env": {},
            "functions": "", "tty": False, "job_control": False, "limits": {"wall_time": 30}, **extra}


def with_pool(state_dir: Path, body: Callable[[WorkerPool], Awaitable[Any]], **limits: Any) -> Any:
    async def main() -> Any:
        pool = WorkerPool(state_dir, WorkerLimits(spare_workers=1, interrupt_grace=0.5, **limits))
        await pool.start()
        try:
            return await body(pool)
        finally:
            await pool.close()

    return asyncio.run(main())


class Collect:
    def __init__(self) -> None:
        self.data = b""

    async def __call__(self, data: bytes) -> None:
        self.data += data


async def run(shell: WorkerShell, source: str, out: Collect | None = None, err: Collect | None = None
              ) -> tuple[int, bytes, bytes]:
    out, err = out or Collect(), err or Collect()
    status = await shell.run(source, out, err, stdin=False)
    return status, out.data, err.data


async def session(pool: WorkerPool, s: dict[str, Any], source: str) -> tuple[int, bytes, bytes, int]:
    """One exec channel: a command, then the hang-up; (status, out, err, worker pid)."""
    shell = WorkerShell(pool, s)
    result = await run(shell, source)
    assert shell._worker is not None  # noqa: SLF001
    pid = shell._worker.pid  # noqa: SLF001
    await shell.hangup()
    return (*result, pid)


def test_a_command_runs_in_a_worker_process_of_its_own(state_dir: Path) -> None:
    async def body(pool: WorkerPool) -> None:
        status, out, err, pid = await session(pool, spec(state_dir, "alice"), 'echo "$$ $(whoami)"; pwd; exit 3')
        assert (status, err) == (3, b"")
        assert out.split(b"\n")[1:] == [b"/home/alice", b""]
        assert pid != os.getpid() and pid in pool.alive

    with_pool(state_dir, body)


def test_an_exec_worker_is_reset_and_serves_only_its_agents_next_session(state_dir: Path) -> None:
    async def body(pool: WorkerPool) -> None:
        alice = spec(state_dir, "alice")
        _, _, _, first = await session(pool, alice, "X=leaked; f() { :; }; cd /")
        status, out, _, second = await session(pool, alice, 'echo "${X-unset} $(type -t f || echo none)"; pwd')
        assert second == first  # no fork, no LMDB open for a stream of short execs
        assert (status, out) == (0, b"unset none\n/home/alice\n")
        _, _, _, bobs = await session(pool, spec(state_dir, "bob"), "true")
        assert bobs != first

    with_pool(state_dir, body)


def test_an_interrupted_session_does_not_hand_its_worker_on(state_dir: Path) -> None:
    async def body(pool: WorkerPool) -> None:
        alice = spec(state_dir, "alice")
        shell = WorkerShell(pool, alice)
        out = Collect()
        task = asyncio.create_task(run(shell, "echo looping; while :; do :; done", out))
        await apoll(lambda: b"looping\n" in out.data, "the loop never began")  # it runs
        shell.interrupt()
        status, _, _ = await asyncio.wait_for(task, HANG)
        assert status == 130  # interrupted (the loop never ends)
        assert shell._worker is not None  # noqa: SLF001
        first = shell._worker.pid  # noqa: SLF001
        await shell.hangup()
        _, _, _, second = await session(pool, alice, "true")
        assert second != first

    with_pool(state_dir, body)


def test_a_command_that_ignores_the_interrupt_ends_with_its_worker(state_dir: Path) -> None:
    async def body(pool: WorkerPool) -> None:
        shell = WorkerShell(pool, spec(state_dir, "alice"))
        # a single regex match: no checkpoint until it returns (its engine checks only a deadline);
        # the left side says so on stderr once the line is in the pipe, where grep reads it at once
        err = Collect()
        task = asyncio.create_task(run(shell, "{ echo " + "a" * 30 + "; echo matching >&2; } | "
                                              "grep -E '(.*){1,32000}[bc]'; echo after", err=err))
        await apoll(lambda: b"matching\n" in err.data, "the line never went to grep")
        shell.interrupt()
        status, out, _ = await asyncio.wait_for(task, HANG)
        assert status == 130  # interrupted, not the match's own end (it would take minutes)
        assert b"after" not in out

    with_pool(state_dir, body)


def test_a_worker_that_cannot_bind_says_why(state_dir: Path) -> None:
    async def body(pool: WorkerPool) -> None:
        bad = spec(state_dir, "alice")
        del bad["home"]
        status, out, err = await run(WorkerShell(pool, bad), "echo never")
        assert (status, out) == (1, b"")
        assert err.startswith(b"K: the session's shell could not start: KeyError: 'home'"), err
        status, out, _, _ = await session(pool, spec(state_dir, "alice"), "echo fine")
        assert (status, out) == (0, b"fine\n")

    with_pool(state_dir, body)


def test_ulimit_sets_the_workers_own_limits_and_the_worker_serves_no_one_after(state_dir: Path) -> None:
    """A worker is the session's process: `ulimit -Sn` lowers its real RLIMIT_NOFILE (what its
    delegated programs inherit), and the worker is not handed to the agent's next session."""
    async def body(pool: WorkerPool) -> None:
        alice = spec(state_dir, "alice")
        shell = WorkerShell(pool, alice)
        status, out, err = await run(shell, "ulimit -Sn 100; ulimit -n")
        assert (status, out, err) == (0, b"100\n", b"")
        assert shell._worker is not None  # noqa: SLF001
        pid = shell._worker.pid  # noqa: SLF001
        limits = Path(f"/proc/{pid}/limits").read_text()
        assert [line.split()[3] for line in limits.splitlines() if line.startswith("Max open files")] == ["100"]
        await shell.hangup()
        status, out, _, second = await session(pool, alice, "ulimit -n")
        assert second != pid
        assert (status, out.strip()) == (0, str(resource.getrlimit(resource.RLIMIT_NOFILE)[0]).encode())

    with_pool(state_dir, body)


def test_a_parked_shell_comes_back_with_its_options_and_shellopts_reads_them(state_dir: Path) -> None:
    """A kept shell's state is a pickled snapshot of its variables, SHELLOPTS and BASHOPTS
    among them (computed from the shell they belong to): parked, then run again on a new
    worker (or the same one, reset), they read the restored options (a snapshot that held the shell failed to pickle)."""
    async def body(pool: WorkerPool) -> None:
        shell = WorkerShell(pool, spec(state_dir, "alice"))
        assert await shell.run("set -o noglob; shopt -s extglob; X=kept", Collect(), Collect(),
                               stdin=False, keep=True) == 0
        assert shell.snapshot is not None
        await shell.park()
        assert shell._worker is None  # noqa: SLF001
        status, out, err = await run(shell, 'echo "$X"; [[ :$SHELLOPTS: == *:noglob:* ]] && echo o; '
                                            '[[ :$BASHOPTS: == *:extglob:* ]] && echo b; UID=1; echo not reached')
        assert (status, out, err) == (1, b"kept\no\nb\n", b"k: line 1: UID: readonly variable\n")
        await shell.hangup()

    with_pool(state_dir, body)
