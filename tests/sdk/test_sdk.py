"""The SDK against real states in temp dirs: boot, login and its lease, exec (as an SSH exec),
events, forks, approvals, detach and close, recovery after a SIGKILL, the blocking facade."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kfs.journal import events_since, receipts_since
from kfs.runtime import procs
from kshell.sdk import AgentNotFound, CommandTimeout, Komputer, KomputerClosed, LeaseHeld, memory_state
from tests.hang import apoll

ROOT = Path(__file__).resolve().parents[2]
HANG = 120.0  # only a hang fails: never a speed claim
T = TypeVar("T")


def run(make: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(asyncio.wait_for(make(), HANG))


async def computer_with(tmp_path: Path, *agents: str, **options: Any) -> Komputer:
    computer = await Komputer.boot(state=tmp_path / "state", **options)
    for name in agents:
        await computer.add_agent(name)
    return computer


def test_exec_gives_what_an_ssh_exec_gives(tmp_path: Path) -> None:
    async def main() -> None:
        async with await computer_with(tmp_path, "alice") as computer:
            agent = await computer.login("alice")
            result = await agent.exec("echo out; echo err >&2; exit 3")
            assert (result.stdout, result.stderr, result.status) == (b"out\n", b"err\n", 3)
            assert result.pid >= procs.PID_BASE
            row = procs.get(computer.state, result.pid)
            assert row is not None and row["agent"] == "alice" and row["front"] == "sdk" and row["status"] == 3
            assert result.receipt == row["receipt"]
            assert (await agent.exec("id -un; echo $HOME; pwd")).stdout == b"alice\n/home/alice\n/home/alice\n"
            assert (await agent.exec("tr a-z A-Z", stdin=b"abc\n")).stdout == b"ABC\n"
            big = os.urandom(300_000)  # more than the worker's credits ahead: fed as it reads
            assert (await agent.exec("cat", stdin=big)).stdout == big
            assert (await agent.exec("cat")).stdout == b""  # no stdin: an empty input, never a wait

    run(main)


def test_session_state_lives_between_execs_and_env_cwd_are_per_command(tmp_path: Path) -> None:
    async def main() -> None:
        async with await computer_with(tmp_path, "alice") as computer:
            agent = await computer.login("alice")
            await agent.exec("x=5; export Y=7; f() { echo f$1; }; mkdir -p d; cd d")
            assert (await agent.exec("echo $x $Y; f 1; pwd")).stdout == b"5 7\nf1\n/home/alice/d\n"
            scoped = await agent.exec("pwd; echo $Z; cd /; Z=2", cwd="/tmp", env={"Z": "zz"})
            assert scoped.stdout == b"/tmp\nzz\n"
            assert (await agent.exec("pwd; echo ${Z-unset}")).stdout == b"/home/alice/d\nunset\n"
            assert (await agent.exec("true", cwd="/nonexistent")).status == 1
            with pytest.raises(ValueError):
                await agent.exec("true", env={"A B": "1"})

    run(main)


def test_stdin_from_an_async_iterable_is_fed_as_it_yields(tmp_path: Path) -> None:
    async def main() -> None:
        async with await computer_with(tmp_path, "alice") as computer:
            agent = await computer.login("alice")
            echoed = asyncio.Event()

            async def pipe() -> Any:
                yield b"first\n"
                await echoed.wait()  # the command has read and echoed the first line
                yield "second\n"

            def seen(stream: str, chunk: bytes) -> None:
                if b"first" in chunk:
                    echoed.set()

            result = await agent.exec("while read -r line; do echo got $line; done", stdin=pipe(), on_output=seen)
            assert (result.stdout, result.status) == (b"got first\ngot second\n", 0)

    run(main)


def test_an_output_callback_that_raises_ends_the_command_and_exec_raises_it(tmp_path: Path) -> None:
    async def main() -> None:
        async with await computer_with(tmp_path, "alice") as computer:
            agent = await computer.login("alice")

            def refuse(stream: str, chunk: bytes) -> None:
                raise ValueError(f"no thanks: {chunk!r}")

            with pytest.raises(ValueError, match="no thanks"):
                await agent.exec("echo first; sleep 600; echo never", on_output=refuse)
            rows = procs.rows(computer.state, agent="alice")
            assert rows[-1]["state"] != "running" and rows[-1]["status"] == 130  # ended as by Ctrl-C
            assert (await agent.exec("echo after")).stdout == b"after\n"  # the session goes on

    run(main)


def test_closing_the_computer_ends_a_command_in_flight_with_komputer_closed(tmp_path: Path) -> None:
    async def main() -> None:
        computer = await computer_with(tmp_path, "alice")
        agent = await computer.login("alice")
        started = asyncio.Event()
        command = asyncio.create_task(agent.exec("echo up; sleep 600", on_output=lambda s, c: started.set()))
        await started.wait()
        await computer.close()
        with pytest.raises(KomputerClosed, match="closed while session alice/"):
            await command

    run(main)


def test_timeout_interrupts_and_output_streams(tmp_path: Path) -> None:
    async def main() -> None:
        async with await computer_with(tmp_path, "alice") as computer:
            agent = await computer.login("alice")
            seen: list[tuple[str, bytes]] = []
            first = asyncio.Event()

            def on_output(stream: str, data: bytes) -> None:
                seen.append((stream, data))
                first.set()

            task = asyncio.create_task(agent.exec("echo a; echo b >&2; sleep 600", on_output=on_output,
                                                  timeout=HANG / 2))
            await first.wait()  # output reaches the caller while the command still runs
            assert not task.done()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert ("stdout", b"a\n") in seen
            with pytest.raises(CommandTimeout) as caught:
                await agent.exec("echo before; sleep 600", timeout=0.5)
            assert caught.value.result.status == 130 and caught.value.result.stdout == b"before\n"
            assert (await agent.exec("echo still")).stdout == b"still\n"  # the session goes on

    run(main)


def test_output_is_published_as_process_events(tmp_path: Path) -> None:
    async def main() -> None:
        async with await computer_with(tmp_path, "alice") as computer:
            agent = await computer.login("alice")
            result = await agent.exec("echo one; echo two >&2")
            chunks = [e for e in events_since(computer.state, 0) if e["type"] == "process" and e["pid"] == result.pid]
            assert all(e["status"] == "output" for e in chunks)
            assert "".join(e["data"] for e in chunks if e["stream"] == "stdout") == "one\n"
            assert "".join(e["data"] for e in chunks if e["stream"] == "stderr") == "two\n"
            kinds = [e["type"] for e in events_since(computer.state, 0) if e.get("pid") == result.pid]
            assert kinds.index("proc.start") < kinds.index("process") < kinds.index("proc.exit")
            # a command printing much publishes a bounded part, and says how much was left out
            big = await agent.exec("head -c 300000 /dev/zero | tr '\\0' x")
            published = [e for e in events_since(computer.state, 0) if e["type"] == "process" and e["pid"] == big.pid]
            assert sum(len(e["data"]) for e in published if e["stream"] == "stdout") == 64 * 1024
            assert published[-1]["data"] == f"[{300000 - 64 * 1024} more bytes of output not published]"

    run(main)


def test_login_errors_and_lease_held_within_one_program(tmp_path: Path) -> None:
    async def main() -> None:
        async with await computer_with(tmp_path, "alice") as computer:
            with pytest.raises(AgentNotFound, match="no agent 'mallory'"):
                await computer.login("mallory")
            with pytest.raises(ValueError, match="mode 'root'"):
                await computer.login("alice", mode="root")
            first = await computer.login("alice", id="work")
            with pytest.raises(LeaseHeld):
                await computer.login("alice", id="work")
            await first.detach()
            with pytest.raises(KomputerClosed, match="detached"):
                await first.exec("true")
            again = await computer.login("alice", id="work")
            assert (await again.exec("echo ok")).stdout == b"ok\n"

    run(main)


HOLDER = """
import asyncio, sys
from kshell.sdk import Komputer
async def main():
    computer = await Komputer.boot(state=sys.argv[1])
    agent = await computer.login("alice", id="shared")
    await agent.exec(sys.argv[2])
    print("ready", flush=True)
    if sys.stdin.readline().strip() == "detach":
        await agent.detach()
        await computer.close()
        print("detached", flush=True)
    else:
        await asyncio.sleep(3600)
asyncio.run(main())
"""


def holder(state: Path, command: str = "true") -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(state), command], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def test_lease_conflict_between_two_processes(tmp_path: Path) -> None:
    run(lambda: _booted_and_closed(tmp_path))
    proc = None

    async def contend() -> None:
        async with await Komputer.boot(state=tmp_path / "state") as computer:
            with pytest.raises(LeaseHeld, match="in use"):
                await computer.login("alice", id="shared")

    async def take_over() -> None:
        async with await Komputer.boot(state=tmp_path / "state") as computer:
            agent = await computer.login("alice", id="shared")
            assert (await agent.exec("pwd; echo $V")).stdout == b"/tmp\nkept\n"

    try:
        proc = holder(tmp_path / "state", "cd /tmp; export V=kept")
        run(contend)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("detach\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == "detached\n"
        assert proc.wait(HANG) == 0
        run(take_over)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()


def test_detach_then_login_restores_cwd_variables_and_jobs(tmp_path: Path) -> None:
    async def main() -> None:
        computer = await computer_with(tmp_path, "alice")
        agent = await computer.login("alice", id="keep")
        await agent.exec("mkdir -p w; cd w; export A=1; g() { echo g; }; sleep 600 &")
        assert agent.has_jobs
        await agent.detach()
        back = await computer.login("alice", id="keep")
        out = (await back.exec("pwd; echo $A; g; jobs")).stdout.decode()
        assert out.startswith("/home/alice/w\n1\ng\n[1]+  Running")
        await back.exec("kill %1; wait")
        await back.detach()
        await computer.close()
        # another computer on the same state: what the session saved
        computer = await Komputer.boot(state=tmp_path / "state")
        again = await computer.login("alice", id="keep")
        assert (await again.exec("pwd; echo $A; jobs")).stdout == b"/home/alice/w\n1\n"
        await computer.close()

    run(main)


def test_close_ends_the_session_and_event_tails_drain(tmp_path: Path) -> None:
    async def main() -> None:
        async with await computer_with(tmp_path, "alice", "bob") as computer:
            agent = await computer.login("alice", id="done")
            other = await computer.login("bob")
            seen: list[dict[str, Any]] = []

            async def tail() -> None:
                async for event in agent.events():
                    seen.append(event)

            follower = asyncio.create_task(tail())
            await agent.exec("echo hi > f")
            await other.exec("echo bob")
            await agent.exec("sleep 600 &")
            await agent.close()
            await follower  # the tail ends once the close is drained
            types = [e["type"] for e in seen]
            assert "proc.exit" in types and types[-1] == "session.closed"
            assert all(e["agent"] == "alice" for e in seen)  # the agent's own events only
            assert not procs.rows(computer.state, agent="alice", live=True)  # its jobs ended
            fresh = await computer.login("alice", id="done")  # a closed session starts afresh
            assert (await fresh.exec("pwd")).stdout == b"/home/alice\n"

    run(main)


def test_fork_keeps_writes_in_its_tree_and_carries_its_mode(tmp_path: Path) -> None:
    async def main() -> None:
        async with await computer_with(tmp_path, "alice") as computer:
            agent = await computer.login("alice")
            await agent.exec("echo base > f")
            child = await agent.fork()
            await child.exec("echo changed > f; echo new > g")
            assert (await child.exec("cat f g")).stdout == b"changed\nnew\n"
            assert (await agent.exec("cat f; ls g")).stdout == b"base\n"
            reviewer = await agent.fork(mode="readonly")
            denied = await reviewer.exec("echo x > f")
            assert denied.status != 0 and b"f" in denied.stderr
            assert (await agent.exec("cat f")).stdout == b"base\n"
            assert computer.stats()["forks"] == 2

    run(main)


def test_a_fork_session_is_logged_into_again_in_its_fork(tmp_path: Path) -> None:
    """`fork-N`, the session `agent.fork()` made, works in fork N when logged into again (after
    the computer closed, as another program does), as over SSH; a `fork-N` name of no fork of
    the agent's is a plain session."""

    async def main() -> None:
        async with await computer_with(tmp_path, "alice") as computer:
            agent = await computer.login("alice")
            await agent.exec("echo base > f")
            child = await agent.fork()
            assert (await child.exec("echo changed > f")).status == 0
            name, number = child.id, child.fork_number
            await child.detach()
        async with Komputer.boot(None, state=tmp_path / "state") as computer:
            again = await computer.login("alice", name)
            assert again.fork_number == number
            assert (await again.exec("cat f")).stdout == b"changed\n"
            plain = await computer.login("alice", f"fork-{number + 1}")
            assert plain.fork_number is None and (await plain.exec("cat f")).stdout == b"base\n"

    run(main)


def test_an_agents_forks_are_bounded_in_number(tmp_path: Path) -> None:
    """The local SDK's `agent.fork` holds `forks_max_per_agent` as komputer-api does: the
    agent's forks however made (the operator's for it too), one more refused with the reason."""
    from kfs import forks
    from kshell.server.config import ServerConfig

    async def main() -> None:
        async with await computer_with(tmp_path, "alice", "bob", config=ServerConfig(forks_max_per_agent=2)) \
                as computer:
            forks.create(computer.state, agent="alice", by="test")  # the operator's, for alice
            agent = await computer.login("alice")
            await agent.fork()
            with pytest.raises(PermissionError, match="alice already has 2 forks .forks_max_per_agent."):
                await agent.fork()
            await (await computer.login("bob")).fork()  # another agent's count is its own
            assert sum(f["agent"] == "alice" for f in forks.forks(computer.state)) == 2

    run(main)


def test_decide_resumes_a_command_waiting_for_approval(tmp_path: Path) -> None:
    from kshell.server.config import ServerConfig

    config = ServerConfig(policy=({"on": "command", "pattern": "rm *", "action": "ask", "agent": "alice"},))

    async def main() -> None:
        async with await computer_with(tmp_path, "alice", "bob", config=config) as computer:
            agent = await computer.login("alice")
            await agent.exec("touch doomed")
            waiting = asyncio.create_task(agent.exec("rm doomed && echo removed"))
            pending = await apoll(agent.approvals, "no approval was asked")
            bob = await computer.login("bob")
            with pytest.raises(LookupError):
                await bob.decide(pending[0]["id"], "allow")  # another agent's approval is not bob's
            await agent.decide(pending[0]["id"], "allow", reason="ok")
            result = await waiting
            assert result.stdout == b"removed\n" and result.status == 0

    run(main)


RECOVER = """
import asyncio, sys
from kshell.sdk import Komputer
async def main():
    computer = await Komputer.boot(state=sys.argv[1])
    agent = await computer.login("alice", id="crash")
    await agent.exec("cd /tmp; sleep 3 & while :; do sleep 1; done &")
    print("ready", flush=True)
    await asyncio.sleep(3600)
asyncio.run(main())
"""


def test_sigkill_then_recover_sessions_resumes_sleep_and_seals_the_rest(tmp_path: Path) -> None:
    run(lambda: _booted_and_closed(tmp_path))
    proc = subprocess.Popen([sys.executable, "-c", RECOVER, str(tmp_path / "state")], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGKILL)
        proc.wait(HANG)
    finally:
        if proc.poll() is None:
            proc.kill()

    async def main() -> None:
        async with await Komputer.boot(state=tmp_path / "state") as computer:
            sleep = next(r for r in procs.rows(computer.state, agent="alice") if r["cmd"] == "sleep 3")
            # the killed program's workers end once their front end is gone; then their rows are orphans
            await apoll(lambda: not any(procs.owner_alive(r["owner"])
                                        for r in procs.rows(computer.state, agent="alice", live=True)
                                        if r["pid"] != sleep["pid"]), "the killed program's workers never ended")
            taken = await computer.recover_sessions()
            assert [(s.agent, s.id) for s in taken] == [("alice", "crash")]
            assert (await taken[0].exec("pwd")).stdout == b"/tmp\n"
            state = computer.state
            loop_row = next(r for r in procs.rows(state, agent="alice") if r["cmd"].startswith("while"))
            assert loop_row["state"] == "lost"
            receipts = {r["id"]: r for r in receipts_since(state, 0)}
            assert receipts[loop_row["receipt"]]["status"] == "uncertain"
            deadline = sleep["until"] / 1e9
            while procs.get(state, sleep["pid"])["state"] not in ("exited", "killed"):
                assert time.time() < deadline + HANG
                await asyncio.sleep(0.05)
            ended = procs.get(state, sleep["pid"])
            assert ended["state"] == "exited" and ended["ended"] >= sleep["until"]

    run(main)


async def _booted_and_closed(tmp_path: Path) -> None:
    computer = await computer_with(tmp_path, "alice")
    await computer.close()


def ours() -> list[str]:
    """The threads a computer starts that are still alive: its audit writer, the blocking
    facade's loop, resumed sleeps' timers (other tests of this worker process may leave threads
    of their own: only K's are counted)."""
    names = ("k-audit", "komputer-sdk", "finish_resumed")
    return [t.name for t in threading.enumerate() if any(n in t.name for n in names)]


def test_memory_state_hosts_and_nothing_left_after_close(tmp_path: Path) -> None:

    async def main() -> str:
        computer = await Komputer.boot(state=memory_state(64 << 20),
                                       hosts={"api": {"/hello": "hello\n", "/data.json": {"ok": True},
                                                      "/raw": b"\x00\x01"}})
        await computer.add_agent("alice")
        agent = await computer.login("alice")
        out = await agent.exec("curl -s http://api/hello; curl -s http://api/data.json | jq -r .ok; "
                               "curl -s http://api/raw | od -An -tx1; cat /sys/hosts.md | grep -c api")
        assert out.stdout.split(b"\n")[:3] == [b"hello", b"true", b" 00 01"]
        where = str(computer.state.path)
        await computer.close()
        with pytest.raises(KomputerClosed):
            await computer.login("alice")
        return where

    where = run(main)
    assert not os.path.exists(where)  # a memory state is gone with its computer
    assert not ours()
    with pytest.raises(TypeError, match="handler belongs in the image"):
        run(lambda: Komputer.boot(hosts={"api": {"/x": lambda request: "no"}}).__aenter__())


def test_blocking_facade(tmp_path: Path) -> None:
    from kshell.sdk import blocking

    with blocking.Komputer.boot(state=tmp_path / "state") as computer:
        computer.add_agent("alice")
        agent = computer.login("alice", id="nb")
        assert agent.exec("echo hi").stdout == b"hi\n"
        agent.exec("echo note > ~/n")
        events = agent.events()
        first = next(events)
        assert first["agent"] == "alice"
        events.close()
        agent.detach()
    assert not ours()


def test_stats_are_local_counters(tmp_path: Path) -> None:
    async def main() -> None:
        async with await computer_with(tmp_path, "alice") as computer:
            agent = await computer.login("alice")
            await agent.exec("true")
            await agent.exec("false")
            stats = agent.stats()
            assert (stats["execs"], stats["failed"], stats["attached"]) == (2, 1, True)
            assert computer.stats()["sessions"] == 1 and computer.stats()["logins"] == 1
            json.dumps(computer.stats())

    run(main)


def test_an_image_hooks_ctx_ask_is_decided_through_the_sdk(tmp_path: Path) -> None:
    folder = tmp_path / "image"
    folder.mkdir()
    (folder / "komputer.toml").write_text('[[hooks]]\non = "command"\nhandler = "gate:check"\n')
    (folder / "gate.py").write_text("def check(ctx):\n"
                                    "    if ctx.argv[0] == 'touch':\n"
                                    "        return ctx.ask('touching needs a look')\n")

    async def main() -> None:
        async with Komputer.boot(folder, state=tmp_path / "state") as computer:
            await computer.add_agent("alice")
            agent = await computer.login("alice")
            waiting = asyncio.create_task(agent.exec("touch f && echo touched"))
            pending = await apoll(agent.approvals, "no approval was asked")
            assert "touching needs a look" in json.dumps(pending[0])
            await agent.decide(pending[0]["id"], "reject", reason="not now")
            refused = await waiting
            assert refused.status == 126 and b"not now" in refused.stderr
            assert not await agent.fs.exists("~/f")

    run(main)
