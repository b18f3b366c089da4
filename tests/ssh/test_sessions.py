"""One connection, one agent session: channels of a connection share it, other connections wait.

The first session channel of a connection takes the lease (on its `K_SESSION`, or an ephemeral
session without one); later channels, one after another or at once (paramiko's channels on one
Transport, OpenSSH ControlMaster), run in the same session, and the lease goes when the
connection does. Also SSH_ORIGINAL_COMMAND under a forced command.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import asyncssh
import paramiko
import pytest
from kserver import HANG, Bench, keygen, need, poll

from kfs.agents import add_agent, add_key
from kfs.agents.sessions import acquire_session, list_sessions
from kshell.server import ServerConfig
from kshell.server.config import Penalties


def transport(bench: Bench, user: str = "alice") -> paramiko.Transport:
    t = paramiko.Transport(("127.0.0.1", bench.port))
    t.connect(username=user, pkey=paramiko.Ed25519Key.from_private_key_file(str(bench.keys[user])))
    return t


def run(t: paramiko.Transport, command: str, env: dict[str, str] | None = None,
        stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
    """One exec channel on the transport: (status, stdout, stderr)."""
    ch = t.open_session(timeout=30)
    ch.settimeout(60)
    if env:
        ch.update_environment(env)
    ch.exec_command(command)
    if stdin is not None:
        ch.sendall(stdin)
    ch.shutdown_write()
    out, err = ch.makefile("rb").read(), ch.makefile_stderr("rb").read()
    status = ch.recv_exit_status()
    ch.close()
    return status, out, err


def lease_of(bench: Bench, agent: str, name: str) -> dict | None:
    for record, lease in list_sessions(bench.state):
        if (record.agent, record.name) == (agent, name):
            return lease
    return None


def wait_for(predicate: Callable[[], bool]) -> bool:
    """Whether `predicate` came to hold (False only past the hang bound)."""
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.fixture
def alice(bench: Bench) -> Iterator[paramiko.Transport]:
    t = transport(bench)
    yield t
    t.close()


# -- several channels on one paramiko Transport --------------------------------------------------


def test_channels_one_after_another_share_a_named_session(bench: Bench, alice: paramiko.Transport) -> None:
    env = {"K_SESSION": "seq"}
    status, _, err = run(alice, 'cd /home; export STEP=one; hi() { echo "hi $1"; }', env)
    assert status == 0, err
    assert run(alice, 'pwd; echo "$STEP"; hi there', env)[1] == b"/home\none\nhi there\n"
    # a channel that names no session runs in the connection's session too
    assert run(alice, 'pwd; echo "$STEP"')[1] == b"/home\none\n"


def test_channels_at_once_all_run_in_the_session(bench: Bench, alice: paramiko.Transport) -> None:
    run(alice, "cd /home; export WHO=first", {"K_SESSION": "together"})
    results: list[tuple[int, bytes, bytes]] = []

    def one(i: int) -> None:
        results.append(run(alice, f'read x; echo "$x {i} $PWD $WHO"', {"K_SESSION": "together"}, stdin=b"go\n"))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(5)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert sorted(r[1] for r in results) == [f"go {i} /home first\n".encode() for i in range(5)]
    assert all(r[0] == 0 for r in results), results


def test_channels_opened_together_on_a_fresh_connection(bench: Bench) -> None:
    """No channel has taken the lease yet: the first one does, the others wait for it and join."""
    t = transport(bench)
    try:
        chans = []
        for _ in range(4):
            ch = t.open_session(timeout=30)
            ch.update_environment({"K_SESSION": "fresh-together"})
            chans.append(ch)
        for i, ch in enumerate(chans):
            ch.exec_command(f"echo {i}")
        outs = [ch.makefile("rb").read() for ch in chans]
        statuses = [ch.recv_exit_status() for ch in chans]
        assert outs == [f"{i}\n".encode() for i in range(4)]
        assert statuses == [0, 0, 0, 0]
    finally:
        t.close()


def test_unnamed_channels_start_afresh_like_sshd(bench: Bench, alice: paramiko.Transport) -> None:
    """Without K_SESSION the connection's session is ephemeral: each command starts in the home
    directory with nothing carried over, as each multiplexed command gets a new shell from sshd."""
    assert run(alice, "cd /home; export GONE=1")[0] == 0
    assert run(alice, 'pwd; echo "[$GONE]"')[1] == b"/home/alice\n[]\n"


def test_a_channel_naming_another_session_is_refused(bench: Bench, alice: paramiko.Transport) -> None:
    assert run(alice, "true", {"K_SESSION": "mine"})[0] == 0
    status, out, err = run(alice, "echo never", {"K_SESSION": "other"})
    assert (status, out) == (1, b"")
    assert b"this connection already runs session 'mine'" in err
    assert run(alice, "echo still", {"K_SESSION": "mine"})[1] == b"still\n"


def test_a_second_connection_is_refused_while_the_first_lives(bench: Bench) -> None:
    env = {"K_SESSION": "exclusive"}
    first = transport(bench)
    try:
        assert run(first, "cd /home", env)[0] == 0  # the channel ended; the connection still holds the lease
        assert lease_of(bench, "alice", "exclusive") is not None
        second = transport(bench)
        try:
            status, _, err = run(second, "true", env)
            assert status == 1
            assert b"in use by another connection" in err
            assert run(second, "echo unnamed")[1] == b"unnamed\n"  # the connection itself is fine
        finally:
            second.close()
    finally:
        first.close()
    assert wait_for(lambda: lease_of(bench, "alice", "exclusive") is None)
    third = transport(bench)
    try:
        assert run(third, "pwd", env)[1] == b"/home\n"
    finally:
        third.close()


def test_ephemeral_session_record_lives_as_long_as_the_connection(bench: Bench) -> None:
    def ephemeral() -> set[str]:
        return {r.name for r, lease in list_sessions(bench.state) if r.ephemeral and r.agent == "alice"}

    assert wait_for(lambda: not ephemeral())  # earlier tests' connections are gone
    t = transport(bench)
    try:
        run(t, "true")
        run(t, "true")
        assert len(ephemeral()) == 1  # two channels, one session, with its lease
        assert all(lease_of(bench, "alice", name) is not None for name in ephemeral())
    finally:
        t.close()
    assert wait_for(lambda: not ephemeral())


def test_the_lease_is_renewed_while_the_connection_is_idle(make_server) -> None:
    bench = make_server(ServerConfig(hostname="k", lease_ttl=1.0, penalties=Penalties(exempt=("127.0.0.1/32",))))
    first = transport(bench)
    try:
        assert run(first, "true", {"K_SESSION": "renewed"})[0] == 0
        taken = lease_of(bench, "alice", "renewed")
        assert taken is not None
        # renewed while no channel is open, until it would have lapsed three times over
        poll(lambda: lease_of(bench, "alice", "renewed")["expires"] > taken["expires"] + 2_000_000_000,  # type: ignore[index]
             "the idle connection's lease was never renewed")
        second = transport(bench)
        try:
            assert run(second, "true", {"K_SESSION": "renewed"})[0] == 1
        finally:
            second.close()
    finally:
        first.close()


def test_a_dropped_connection_saves_then_releases(bench: Bench) -> None:
    """The client vanishes mid-command: the command is interrupted, what it had done to the
    session is saved, and only then is the lease released for the next connection."""
    async def main() -> None:
        conn = await asyncssh.connect("127.0.0.1", bench.port, username="alice", known_hosts=None,
                                      client_keys=[str(bench.keys["alice"])])
        process = await conn.create_process("cd /home; export LEFT=behind; echo waiting; read x",
                                            env={"K_SESSION": "dropped"})
        assert await asyncio.wait_for(process.stdout.readline(), HANG) == "waiting\n"  # it waits in `read`
        conn.abort()

    asyncio.run(main())
    assert wait_for(lambda: lease_of(bench, "alice", "dropped") is None)
    after = bench.ssh('pwd; echo "$LEFT"', extra=["-o", "SetEnv=K_SESSION=dropped"])
    assert after.stdout == b"/home\nbehind\n", after.stderr


def test_a_crashed_servers_lease_is_free(bench: Bench) -> None:
    """A holder whose process is gone (pid and start time no longer match) holds nothing."""
    dead = {"pid": 2**22 + 17, "start": 1, "serial": 1}
    acquire_session(bench.state, "alice", "crashed", "/home/alice", dead, 3600)
    assert bench.ssh("echo free", extra=["-o", "SetEnv=K_SESSION=crashed"]).stdout == b"free\n"


# -- OpenSSH ControlMaster -------------------------------------------------------------------------


@pytest.fixture
def control_path() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="kcm", dir="/tmp") as d:  # short: a socket path has a limit
        yield f"{d}/m"


def test_controlmaster_channels_share_the_session(bench: Bench, control_path: str, tmp_path: Path) -> None:
    """The master's first channel names the session; multiplexed commands run in it. (A master's
    SetEnv goes with every multiplexed channel, so the clients here name sessions by SendEnv.)"""
    need("ssh")
    mux = ["-o", f"ControlPath={control_path}", "-o", "SendEnv=K_SESSION"]

    def named(session: str) -> dict[str, str]:
        return dict(os.environ, K_SESSION=session)

    log = (tmp_path / "master.log").open("wb")
    try:
        master = bench.ssh("cd /home; export MUX=yes; mux() { echo muxed; }",
                           extra=[*mux, "-o", "ControlMaster=yes", "-o", "ControlPersist=60"], env=named("cm"),
                           capture_output=False, stdout=subprocess.PIPE, stderr=log)
        assert master.returncode == 0
        assert Path(control_path).exists()
        again = bench.ssh('pwd; echo "$MUX"; mux', extra=[*mux, "-o", "ControlMaster=no"], env=named("cm"))
        assert (again.returncode, again.stdout) == (0, b"/home\nyes\nmuxed\n"), again.stderr
        plain = bench.ssh('pwd; echo "$MUX"', extra=["-o", f"ControlPath={control_path}", "-o", "ControlMaster=no"])
        assert plain.stdout == b"/home\nyes\n"  # no K_SESSION: the connection's session
        other = bench.ssh("echo never", extra=[*mux, "-o", "ControlMaster=no"], env=named("elsewhere"))
        assert (other.returncode, other.stdout) == (1, b"")
        assert b"already runs session 'cm'" in other.stderr
        # a connection of its own is refused while the master's connection lives
        separate = bench.ssh("echo never", extra=["-o", "ControlPath=none", "-o", "SetEnv=K_SESSION=cm"])
        assert separate.returncode == 1
        assert b"in use by another connection" in separate.stderr
    finally:
        subprocess.run([need("ssh"), *bench.ssh_options(), *mux, "-O", "exit", "alice@127.0.0.1"],
                       capture_output=True, timeout=30)
        log.close()
    assert wait_for(lambda: lease_of(bench, "alice", "cm") is None)
    after = bench.ssh('pwd; echo "$MUX"', extra=["-o", "SetEnv=K_SESSION=cm"])
    assert after.stdout == b"/home\nyes\n"


# -- SSH_ORIGINAL_COMMAND -------------------------------------------------------------------------


@pytest.fixture
def forced(bench: Bench, tmp_path: Path) -> str:
    """An agent whose key runs `echo "[$SSH_ORIGINAL_COMMAND]"` whatever the client asks."""
    name = f"forced{abs(hash(tmp_path)) % 10**6}"
    add_agent(bench.server.vfs, name)
    key = keygen(tmp_path / "forced_key")
    add_key(bench.state, name, 'command="echo \\"[${SSH_ORIGINAL_COMMAND-unset}]\\"" '
            + (tmp_path / "forced_key.pub").read_text())
    bench.keys[name] = key
    return name


def test_forced_command_sees_the_original_command(bench: Bench, forced: str) -> None:
    result = bench.ssh("ls -l '/tmp dir' | wc", user=forced)
    assert (result.returncode, result.stdout) == (0, b"[ls -l '/tmp dir' | wc]\n"), result.stderr


def test_no_original_command_without_a_command(bench: Bench, forced: str) -> None:
    """A shell request under a forced command: the variable is not set, as with sshd."""
    result = bench.ssh(None, user=forced, extra=["-T"])
    assert result.stdout == b"[unset]\n"


def test_no_original_command_without_a_forced_command(bench: Bench) -> None:
    result = bench.ssh('echo "[${SSH_ORIGINAL_COMMAND-unset}]"', extra=["-o", "SetEnv=SSH_ORIGINAL_COMMAND=spoof"])
    assert result.stdout == b"[unset]\n"


def test_original_command_is_not_carried_by_a_named_session(bench: Bench, forced: str, tmp_path: Path) -> None:
    """SSH_ORIGINAL_COMMAND belongs to its channel: a named session saves exported variables,
    but not this one (nor the terminal's), so a later login with a plain key does not see it."""
    plain = keygen(tmp_path / "plain_key")
    add_key(bench.state, forced, (tmp_path / "plain_key.pub").read_text())
    env = ["-o", "SetEnv=K_SESSION=fc"]
    assert bench.ssh("asked", user=forced, extra=env).stdout == b"[asked]\n"
    bench.keys["plain"] = plain
    result = bench.ssh('echo "[${SSH_ORIGINAL_COMMAND-unset}] $K_SESSION"', user=forced, key="plain", extra=env)
    assert result.stdout == b"[unset] fc\n", result.stderr
