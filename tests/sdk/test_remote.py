"""`kshell.sdk.remote.connect`: the SDK's session surface against a served state, over SSH alone
(a real KServer on a loopback port, real keys and known_hosts, asyncssh on the client side and
OpenSSH's `ssh` for the parity test)."""

from __future__ import annotations

import asyncio
import errno
import stat
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ssh"))
from kserver import Bench, close_bench, keygen, make_bench  # noqa: E402
from parity_cases import CASES  # noqa: E402

from kfs import forks  # noqa: E402
from kfs.agents import add_agent, add_key  # noqa: E402
from kfs.agents.sessions import close_session  # noqa: E402
from kfs.journal import events_since  # noqa: E402
from kfs.vfs import VFS  # noqa: E402
from kshell.sdk import Komputer  # noqa: E402
from kshell.sdk.remote import RemoteSession, connect  # noqa: E402
from kshell.sdk.types import KomputerClosed, LeaseHeld, SDKError  # noqa: E402
from kshell.server import ServerConfig  # noqa: E402
from kshell.server.config import Penalties  # noqa: E402

# alice's limited sessions write only under ~/proj (a session asks for the mode: K_MODE)
CONFIG = ServerConfig(hostname="k", penalties=Penalties(exempt=("127.0.0.1/32",)),
                      agents={"alice": {"scope": ["~/proj"]}})


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    b = make_bench(tmp_path_factory.mktemp("sdk-remote"), CONFIG)
    public = b.server.host_key.export_public_key().decode().strip()
    (b.root / "known_hosts").write_text(f"[127.0.0.1]:{b.port} {public}\n[localhost]:{b.port} {public}\n")
    yield b
    close_bench(b)


def url(bench: Bench, agent: str = "alice", host: str = "127.0.0.1") -> str:
    return f"ssh://{agent}@{host}:{bench.port}"


async def login(bench: Bench, agent: str = "alice", **kwargs: Any) -> RemoteSession:
    """Through `Komputer.connect`, the SDK's one entry point (kshell.sdk.remote.connect underneath)."""
    return await Komputer.connect(url(bench, agent), key=bench.keys[agent], known_hosts=bench.root / "known_hosts",
                                  **kwargs)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- exec ------------------------------------------------------------------------------------


def test_exec_gives_stdout_stderr_and_status(bench: Bench) -> None:
    async def main() -> None:
        async with await login(bench) as agent:
            result = await agent.exec("echo out; echo err >&2; exit 3")
            assert (result.stdout, result.stderr, result.status) == (b"out\n", b"err\n", 3)
            assert not result.ok
            assert (await agent.exec(r"printf '\xff\x00\n'")).stdout == b"\xff\x00\n"
            assert (await agent.exec('pwd; echo "$USER"')).text == "/home/alice\nalice\n"

    run(main())


def test_exec_reads_stdin_as_bytes_or_text(bench: Bench) -> None:
    async def main() -> None:
        async with await login(bench) as agent:
            assert (await agent.exec("cat", stdin=b"\x00\xffraw")).stdout == b"\x00\xffraw"
            assert (await agent.exec('read a b; echo "$b $a"', stdin="one two\n")).stdout == b"two one\n"
            assert (await agent.exec("wc -c")).stdout.strip() == b"0"  # no stdin: at its end at once

    run(main())


def test_env_and_cwd_apply_to_that_command_only(bench: Bench) -> None:
    async def main() -> None:
        async with await login(bench) as agent:
            result = await agent.exec('pwd; echo "[$GREETING]"', cwd="/tmp", env={"GREETING": "hi 'there'"})
            assert result.stdout == b"/tmp\n[hi 'there']\n"
            assert (await agent.exec("pwd", cwd="~")).stdout == b"/home/alice\n"
            assert (await agent.exec('pwd; echo "[$GREETING]"')).stdout == b"/home/alice\n[]\n"
            missing = await agent.exec("echo never", cwd="/no/such/dir")
            assert missing.status == 1 and missing.stdout == b"" and b"No such file or directory" in missing.stderr
            with pytest.raises(ValueError):
                await agent.exec("true", env={"NOT-A-NAME": "x"})

    run(main())


def test_more_commands_at_once_than_the_server_has_channels_for_wait_their_turn(bench: Bench) -> None:
    """MaxSessions (10) counts every channel of the connection: twenty commands at once all run."""
    async def main() -> None:
        async with await login(bench) as agent:
            await agent.fs.exists("~")  # SFTP's channel open too
            results = await asyncio.gather(*(agent.exec(f"sleep 0.2; echo {i}") for i in range(20)))
            assert [r.stdout for r in results] == [f"{i}\n".encode() for i in range(20)]

    run(main())


async def until(check: Any, what: str, deadline: float = 60.0) -> None:
    """Wait for `await check()` to be true (polled), failing with `what` past the deadline."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while not await check():
        if loop.time() > end:
            pytest.fail(f"still not {what} after {deadline:g} s")
        await asyncio.sleep(0.05)


def test_an_exec_cancelled_or_failed_in_on_output_leaves_nothing_running(bench: Bench) -> None:
    async def main() -> None:
        async with await login(bench) as agent:
            async def idle() -> bool:
                return (await agent.stats())["session_processes"] == 0

            def boom(stream: str, chunk: bytes) -> None:
                raise RuntimeError("the caller's own error")

            with pytest.raises(RuntimeError, match="the caller's own error"):
                await agent.exec("echo started; sleep 600", on_output=boom)
            await until(idle, "ended after on_output raised")
            started = asyncio.Event()
            task = asyncio.ensure_future(agent.exec("echo started; sleep 600", on_output=lambda s, c: started.set()))
            await asyncio.wait_for(started.wait(), 60)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await until(idle, "ended after the exec was cancelled")
            assert (await agent.exec("echo next")).stdout == b"next\n"

    run(main())


def test_processes_and_kill_see_the_agents_process_table(bench: Bench) -> None:
    """Another connection's process is in `processes()` (the table every session shares), and
    `kill` ends it; a pid that is not running is False."""

    async def main() -> None:
        async with await login(bench) as runner, await login(bench) as other:
            started = asyncio.Event()
            task = asyncio.ensure_future(runner.exec("echo started; sleep 600", on_output=lambda s, c: started.set()))
            await asyncio.wait_for(started.wait(), 60)
            rows = [r for r in await other.processes() if r["session"] == runner.id]
            assert len(rows) == 1 and "sleep" in rows[0]["cmd"]
            assert await other.kill(rows[0]["pid"], 9) is True
            assert (await asyncio.wait_for(task, 60)).status != 0
            assert all(r["session"] != runner.id for r in await other.processes())
            assert await other.kill(rows[0]["pid"], 9) is False
            with pytest.raises(ValueError, match="kill: expected an integer pid"):
                await other._request("kill", pid="1")  # noqa: SLF001 - the wire's own check

    run(main())


def test_timeout_interrupts_the_command_and_raises(bench: Bench) -> None:
    async def main() -> None:
        async with await login(bench) as agent:
            with pytest.raises(TimeoutError):
                await agent.exec("sleep 600", timeout=0.5)
            assert (await agent.exec("echo still here")).stdout == b"still here\n"
            assert (await agent.stats())["session_processes"] == 0  # the sleep was ended, not left running

    run(main())


def test_on_output_sees_output_while_the_command_runs(bench: Bench) -> None:
    """The command waits for a file that only the callback makes after seeing its first line:
    it can finish only if that line was delivered before the command ended."""
    async def main() -> None:
        async with await login(bench) as agent:
            await agent.fs.rm("go", force=True)
            seen: list[tuple[str, bytes]] = []

            async def on_output(stream: str, chunk: bytes) -> None:
                seen.append((stream, chunk))
                if b"ready" in chunk:
                    await agent.fs.write_file("go", "")

            result = await agent.exec("echo ready; echo warn >&2; while [ ! -e ~/go ]; do sleep 0.05; done; echo done",
                                      on_output=on_output, timeout=120)
            assert result.stdout == b"ready\ndone\n" and result.stderr == b"warn\n"
            assert b"".join(c for s, c in seen if s == "stdout") == result.stdout
            assert b"".join(c for s, c in seen if s == "stderr") == result.stderr

    run(main())


# -- files -----------------------------------------------------------------------------------


def test_fs_calls_in_the_agents_home(bench: Bench) -> None:
    async def main() -> None:
        async with await login(bench) as agent:
            fs = agent.fs
            await fs.rm("~/tree", recursive=True, force=True)
            await fs.mkdir("~/tree/a/b", parents=True)
            await fs.mkdir("tree/a/b", parents=True)  # as mkdir -p: no error when it exists
            assert await fs.write_file("tree/a/b/f.txt", "hello") == 5
            assert await fs.append_file("~/tree/a/b/f.txt", b" world\n") == 7
            assert await fs.read_text("/home/alice/tree/a/b/f.txt") == "hello world\n"
            assert (await agent.exec("cat tree/a/b/f.txt")).stdout == b"hello world\n"  # the shell's view
            await fs.rename("tree/a/b/f.txt", "tree/g.txt")
            await fs.write_file("tree/h.txt", b"\x00\xff", mode=0o600)
            await fs.symlink("g.txt", "tree/link")
            assert await fs.readlink("tree/link") == "g.txt"
            assert await fs.read_text("tree/link") == "hello world\n"
            assert [tuple(e) for e in await fs.walk("~/tree")] == [  # top as given, as os.walk
                ("~/tree", ["a"], ["g.txt", "h.txt", "link"]),
                ("~/tree/a", ["b"], []),
                ("~/tree/a/b", [], []),
            ]
            h = await fs.stat("tree/h.txt")
            assert h.is_file and stat.S_IMODE(h.mode) == 0o600 and h.size == 2 and h.uid == h.gid != 0
            assert (await fs.stat("tree/link", follow=False)).is_symlink
            assert (await fs.stat("tree/link")).is_file
            assert (await fs.stat("tree")).is_dir
            await fs.chmod("tree/h.txt", 0o640)
            assert stat.S_IMODE((await fs.stat("tree/h.txt")).mode) == 0o640
            assert (await agent.exec("stat -c %a tree/h.txt")).stdout == b"640\n"
            assert await fs.exists("tree/g.txt") and not await fs.exists("tree/nope")
            await fs.rm("tree/link")
            assert await fs.exists("tree/g.txt") and not await fs.exists("tree/link")
            await fs.rm("tree", recursive=True)
            assert not await fs.exists("~/tree")
            await fs.rm("tree", force=True)  # -f: a missing path is no error

    run(main())


def test_fs_errors_are_the_oserrors_a_unix_user_expects(bench: Bench) -> None:
    async def main() -> None:
        async with await login(bench) as agent:
            fs = agent.fs
            await fs.rm("errs", recursive=True, force=True)
            await fs.mkdir("errs")
            await fs.write_file("errs/file", "x")
            await fs.mkdir("errs/full")
            await fs.write_file("errs/full/x", "x")
            await fs.mkdir("errs/empty")
            with pytest.raises(FileNotFoundError):
                await fs.read_file("errs/missing")
            with pytest.raises(FileNotFoundError):
                await fs.rm("errs/missing")
            with pytest.raises(FileNotFoundError):
                await fs.mkdir("errs/no/such/parent")
            with pytest.raises(FileExistsError):
                await fs.mkdir("errs/file")
            with pytest.raises(FileExistsError):
                await fs.mkdir("errs/file", parents=True)
            with pytest.raises(IsADirectoryError):
                await fs.rm("errs/full")
            with pytest.raises(IsADirectoryError):
                await fs.read_file("errs/full")
            with pytest.raises(NotADirectoryError):
                await fs.mkdir("errs/file/sub")
            with pytest.raises(OSError) as e:
                await fs.rename("errs/empty", "errs/full")
            assert e.value.errno == errno.ENOTEMPTY
            with pytest.raises(PermissionError):
                await fs.write_file("/etc/agent-was-here", "x")  # an agent is not root
            with pytest.raises(PermissionError):
                await fs.read_file("/home/bob/.profile") if await fs.exists("/home/bob/.profile") else \
                    await fs.write_file("/home/bob/intruder", "x")
            await fs.rm("errs", recursive=True)

    run(main())


# -- sessions --------------------------------------------------------------------------------


def test_detach_then_connect_with_the_same_id_restores_cwd_and_variables(bench: Bench) -> None:
    async def main() -> None:
        agent = await login(bench)
        name = agent.id
        await agent.exec("mkdir -p ~/proj/keep; cd ~/proj/keep; export KEEP='kept value'; UNEXPORTED=x")
        with pytest.raises(LeaseHeld):  # held while this connection lives
            await login(bench, session=name)
        await agent.detach()
        with pytest.raises(KomputerClosed):
            await agent.exec("true")
        again = await login(bench, session=name)
        assert again.id == name
        assert (await again.exec('pwd; echo "$KEEP"')).stdout == b"/home/alice/proj/keep\nkept value\n"
        # the detach's session.close is in the log: following from the oldest goes on past it
        events = again.events(since=0)
        async for event in events:
            if event.get("command") == 'pwd; echo "$KEEP"':
                break
        await again.exec("echo after-resume")
        async for event in events:
            if event.get("command") == "echo after-resume":
                break
        else:
            pytest.fail("the events stopped at the detach's session.close")
        await events.aclose()
        await again.detach()

    run(main())


def test_close_ends_the_durable_session(bench: Bench) -> None:
    async def main() -> None:
        agent = await login(bench)
        name = agent.id
        await agent.exec("cd /tmp; export GONE=1")
        await agent.close()
        fresh = await login(bench, session=name)
        assert (await fresh.exec('pwd; echo "[$GONE]"')).stdout == b"/home/alice\n[]\n"
        await fresh.detach()
        return name

    name = run(main())
    assert any(e["type"] == "session.closed" and e.get("session") == name for e in events_since(bench.state, 0))


def test_async_with_detaches_and_leaves_no_thread(bench: Bench) -> None:
    """Through a host name (resolved), so every executor the connection needed was used."""
    async def main() -> str:
        async with await connect(url(bench, host="localhost"), key=bench.keys["alice"],
                                 known_hosts=bench.root / "known_hosts") as agent:
            assert (await agent.exec("echo hi")).stdout == b"hi\n"
            await agent.fs.read_text("/etc/passwd")
            name = agent.id
        with pytest.raises(KomputerClosed):
            await agent.exec("true")
        assert getattr(asyncio.get_running_loop(), "_default_executor", None) is None
        return name

    name = run(main())
    assert not [t.name for t in threading.enumerate() if t.name.startswith("kshell-sdk")]
    run(_resume(bench, name))  # detached, not held: it resumes


async def _resume(bench: Bench, name: str) -> None:
    agent = await login(bench, session=name)
    await agent.detach()


def test_connects_at_once_share_one_executor_and_give_the_loop_its_own_back(bench: Bench) -> None:
    async def main() -> None:
        agents = await asyncio.gather(*(connect(url(bench, host="localhost"), key=bench.keys["alice"],
                                                known_hosts=bench.root / "known_hosts") for _ in range(5)))
        assert len({a.id for a in agents}) == 5
        for agent in agents:
            await agent.detach()
        assert getattr(asyncio.get_running_loop(), "_default_executor", None) is None
        assert await asyncio.to_thread(lambda: "the loop's own executor works") == "the loop's own executor works"

    run(main())
    assert not [t.name for t in threading.enumerate() if t.name.startswith("kshell-sdk")]


def test_wrong_key_and_unknown_host_key_are_refused(bench: Bench, tmp_path: Path) -> None:
    async def main() -> None:
        with pytest.raises(PermissionError):
            await connect(url(bench), key=bench.keys["bob"], known_hosts=bench.root / "known_hosts")
        (tmp_path / "empty").write_text("")
        with pytest.raises(ConnectionError):
            await connect(url(bench), key=bench.keys["alice"], known_hosts=tmp_path / "empty")
        with pytest.raises(ValueError):
            await connect("http://alice@127.0.0.1:22")

    run(main())


def test_decide_is_refused_over_ssh(bench: Bench) -> None:
    async def main() -> None:
        async with await login(bench) as agent:
            with pytest.raises(PermissionError, match="komputer decide"):
                await agent.decide(1, "allow", "looks fine")
            assert (await agent.exec("echo usable")).stdout == b"usable\n"  # the session goes on

    run(main())


def test_limited_mode_refuses_a_write_via_exec_and_fs(bench: Bench) -> None:
    async def main() -> None:
        async with await login(bench, mode="limited") as agent:
            assert agent.mode == "limited"
            refused = await agent.exec("echo x > ~/outside.txt")
            assert refused.status == 1 and b"Read-only file system" in refused.stderr
            assert b"limited mode" in refused.stderr
            with pytest.raises(PermissionError, match="limited mode") as e:
                await agent.fs.write_file("~/outside.txt", "x")
            assert e.value.errno == errno.EROFS  # as the VFS's Refusal: a read-only file system to this session
            with pytest.raises(PermissionError):
                await agent.fs.mkdir("~/outside-dir")
            assert not await agent.fs.exists("~/outside.txt")
            await agent.fs.mkdir("~/proj", parents=True)
            assert await agent.fs.write_file("~/proj/inside.txt", "ok") == 2  # inside the scope
            assert (await agent.exec("cat ~/proj/inside.txt")).stdout == b"ok"

    run(main())


# -- events ----------------------------------------------------------------------------------


def test_events_follow_the_agents_own_log_until_the_session_closes(bench: Bench) -> None:
    async def main() -> tuple[list[dict], str]:
        agent = await login(bench)
        got: list[dict] = []
        marks: dict[str, asyncio.Event] = {"echo mark-one": asyncio.Event(), "echo mark-two": asyncio.Event()}

        async def follow() -> None:
            async for event in agent.events():
                got.append(event)
                if event["type"] == "ssh.exec" and event.get("command") in marks:
                    marks[event["command"]].set()

        follower = asyncio.ensure_future(follow())
        await agent.exec("echo mark-one")
        await asyncio.wait_for(marks["echo mark-one"].wait(), 60)
        bob = await asyncio.to_thread(bench.ssh, "echo bob-was-here", user="bob")
        assert bob.returncode == 0
        await agent.exec("echo mark-two")
        await asyncio.wait_for(marks["echo mark-two"].wait(), 60)
        # the operator ends the session: the follower drains what was written, then stops
        await asyncio.to_thread(close_session, bench.state, "alice", agent.id, "test")
        await asyncio.wait_for(follower, 60)
        await agent.detach()
        return got, agent.id

    got, name = run(main())
    seqs = [e["seq"] for e in got]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert {e.get("agent") for e in got} == {"alice"}
    assert got[-1]["type"] == "session.close" and got[-1]["session"] == name
    assert any(e.get("command") == "echo bob-was-here" for e in events_since(bench.state, 0))  # in the log, not shown


def test_events_since_starts_after_that_sequence_number(bench: Bench) -> None:
    async def main() -> None:
        async with await login(bench) as agent:
            await agent.exec("echo since-one")
            first = [e for e in events_since(bench.state, 0) if e.get("command") == "echo since-one"][-1]["seq"]
            await agent.exec("echo since-two")
            async for event in agent.events(since=first):
                assert event["seq"] > first
                if event.get("command") == "echo since-two":
                    break

    run(main())


# -- forks -----------------------------------------------------------------------------------


def test_fork_gives_a_session_in_a_new_fork_of_the_agents_tree(bench: Bench) -> None:
    async def main() -> None:
        async with await login(bench) as agent:
            await agent.fs.mkdir("~/proj", parents=True)
            await agent.fs.write_file("~/proj/base.txt", "base")
            async with await agent.fork() as forked:
                assert forked.fork_number is not None and forked.id == f"fork-{forked.fork_number}"
                record = forks.get(bench.state, forked.fork_number)
                assert record["agent"] == "alice" and record["mode"] == "full" and record["disk"] == "overlay"
                assert await forked.fs.read_text("~/proj/base.txt") == "base"  # the parent's tree as it was
                await forked.fs.write_file("~/proj/forked.txt", "in the fork")
                assert (await forked.exec("cat ~/proj/forked.txt")).stdout == b"in the fork"
                assert not await agent.fs.exists("~/proj/forked.txt")  # never in the parent
                # a fork made from a limited session is limited, however asked; within its scope
                limited = await forked.fork(mode="limited", scope=["~/proj/sub"])
                assert limited.mode == "limited"
                record = forks.get(bench.state, limited.fork_number)
                assert record["parent"] == forked.fork_number and record["scope"] == ["~/proj/sub"]
                assert (await limited.exec("echo x > ~/proj/other.txt")).status == 1
                assert await limited.fs.read_text("~/proj/forked.txt") == "in the fork"  # its parent's tree
                with pytest.raises(PermissionError, match="outside the scope"):
                    await limited.fork(mode="limited", scope=["~"])
                again = await limited.fork(mode="full")
                assert again.mode == "limited" and forks.get(bench.state, again.fork_number)["scope"] == ["~/proj/sub"]
                await again.detach()
                await limited.detach()
            with pytest.raises(ValueError):
                await agent.fork(disk="nowhere")

    run(main())


def test_a_limited_session_without_a_scope_makes_no_fork_that_may_write(bench: Bench) -> None:
    """bob has no scope: limited, he may write nowhere, and a fork he makes cannot give him a
    scope (it would be his scope in the fork: kfs.runtime.rules.governance)."""
    async def main() -> None:
        async with await login(bench, "bob", mode="limited") as bob:
            assert (await bob.exec("echo x > ~/f")).status == 1
            with pytest.raises(PermissionError, match="outside this session's scope"):
                await bob.fork(mode="limited", scope=["~"])
            async with await bob.fork(mode="full") as forked:
                assert forked.mode == "limited" and forks.get(bench.state, forked.fork_number)["scope"] == []
                refused = await forked.exec("echo x > ~/f")
                assert refused.status == 1 and b"Read-only file system" in refused.stderr
                with pytest.raises(PermissionError):
                    await forked.fs.write_file("~/f", "x")

    run(main())


def test_stats_are_the_agents_own(bench: Bench) -> None:
    async def main() -> None:
        async with await login(bench, mode="plan") as agent:
            stats = await agent.stats()
            assert (stats["agent"], stats["session"], stats["mode"], stats["fork"]) == ("alice", agent.id, "plan", None)
            assert stats["attached"] >= 1 and stats["events"] > 0 and stats["session_processes"] == 0

    run(main())


# -- parity with OpenSSH ---------------------------------------------------------------------


def test_parity_with_openssh(bench: Bench) -> None:
    """Every case of parity_cases.CASES gives the same stdout, stderr and status through
    `ssh -o SetEnv=K_MODE=limited alice@host CMD` and through `connect(mode="limited").exec`."""
    assert len(CASES) >= 40
    bench.ssh("mkdir -p ~/proj")
    by_ssh = []
    for command, stdin in CASES:
        done = bench.ssh(command, input=stdin, extra=["-o", "SetEnv=K_MODE=limited"])
        by_ssh.append((done.stdout, done.stderr, done.returncode))

    async def main() -> list[tuple[bytes, bytes, int]]:
        async with await login(bench, mode="limited") as agent:
            out = []
            for command, stdin in CASES:
                result = await agent.exec(command, stdin=stdin or None)
                out.append((result.stdout, result.stderr, result.status))
            return out

    by_sdk = run(main())
    differ = [(command, s, k) for (command, _), s, k in zip(CASES, by_ssh, by_sdk) if s != k]
    assert not differ, "\n".join(f"{c!r}:\n  ssh {s!r}\n  sdk {k!r}" for c, s, k in differ)
    statuses = {status for _, _, status in by_ssh}
    assert {0, 1, 3, 7, 127} <= statuses  # the cases do reach several exit statuses
    assert by_ssh[[c for c, _ in CASES].index("echo x > ~/outside.txt")][2] == 1  # the denied write


def test_an_agents_forks_keep_the_images_hooks_and_are_bounded_in_number(tmp_path: Path) -> None:
    """A fork without the image's hooks is the operator's. An agent cannot make forks without
    end (`forks_max_per_agent`), counting every fork it may log into (the operator's for it too)."""
    from kfs.runtime import image

    b = make_bench(tmp_path / "bench", ServerConfig(penalties=CONFIG.penalties, forks_max_per_agent=2))
    try:
        (b.root / "known_hosts").write_text(
            f"[127.0.0.1]:{b.port} {b.server.host_key.export_public_key().decode().strip()}\n")
        folder = tmp_path / "img"
        folder.mkdir()
        (folder / "komputer.toml").write_text('[[hooks]]\non = "session_start"\nhandler = "gate:start"\n'
                                              'agents = ["bob"]\n')
        (folder / "gate.py").write_text("def start(ctx):\n    return 'deny', 'not today'\n")
        image.apply(b.state, image.load(folder), by="test")
        forks.create(b.state, agent="alice", by="cli:0")  # the operator's, for alice: counted

        async def main() -> None:
            async with await login(b) as agent:
                with pytest.raises(PermissionError, match="hooks"):
                    await agent.fork(hooks=False)
                await (await agent.fork()).detach()
                with pytest.raises(PermissionError, match="alice already has 2 forks .forks_max_per_agent."):
                    await agent.fork()

        run(main())
    finally:
        close_bench(b)


def test_the_server_refuses_unknown_subsystems(bench: Bench) -> None:
    import asyncssh

    async def main() -> None:
        async with asyncssh.connect("127.0.0.1", bench.port, username="alice", client_keys=[str(bench.keys["alice"])],
                                    known_hosts=str(bench.root / "known_hosts"), agent_path=None) as conn:
            with pytest.raises(asyncssh.ChannelOpenError):
                await conn.create_process(subsystem="no-such-subsystem")
            api = await conn.create_process(subsystem="komputer-api", encoding=None)
            hello = await api.stdout.readline()
            assert b'"agent":"alice"' in hello
            api.close()

    run(main())


def test_a_key_with_a_forced_command_gets_no_api(bench: Bench) -> None:
    """`command=` confines a key to one command: the SDK's session is refused, saying why."""
    add_agent(VFS(bench.state, by="test"), "carol")
    key = bench.keys["carol"] = keygen(bench.root / "carol_key", "carol@test")
    add_key(bench.state, "carol", 'command="echo forced" ' + (bench.root / "carol_key.pub").read_text())

    async def main() -> None:
        with pytest.raises(SDKError, match="forced command"):
            await connect(url(bench, "carol"), key=key, known_hosts=bench.root / "known_hosts")

    run(main())
    assert bench.ssh("anything", user="carol").stdout == b"forced\n"  # what the key may do, it still does
