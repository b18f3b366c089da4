"""`ssh host CMD` runs CMD in the K shell: exit status, bytes-exact streams, env allow-list."""

from __future__ import annotations

import asyncio
import hashlib
import os

import asyncssh
import paramiko
from kserver import Bench, poll
from test_auth import events

from kfs.agents import add_agent, add_key
from kfs.runtime import procs


def test_exit_statuses_come_back(bench: Bench) -> None:
    assert bench.ssh("true").returncode == 0
    assert bench.ssh("false").returncode == 1
    assert bench.ssh("exit 42").returncode == 42


def test_stdout_and_stderr_stay_apart(bench: Bench) -> None:
    result = bench.ssh("echo out; echo err >&2")
    assert (result.stdout, result.stderr) == (b"out\n", b"err\n")


def test_command_runs_in_the_home_directory(bench: Bench) -> None:
    assert bench.ssh('pwd; echo "$HOME $USER"').stdout == b"/home/alice\n/home/alice alice\n"


def test_binary_output_is_bytes_exact(bench: Bench) -> None:
    assert bench.ssh(r"printf '\xff\x00\x80\xfe\n'").stdout == b"\xff\x00\x80\xfe\n"


def test_stdin_reaches_the_command(bench: Bench) -> None:
    assert bench.ssh('read a; read b; echo "$b $a"', input=b"one\ntwo\n").stdout == b"two one\n"


def test_ten_mib_of_binary_stdin_round_trips(bench: Bench) -> None:
    data = os.urandom(10 << 20)
    result = bench.ssh("cat", input=data, timeout=120)
    assert result.returncode == 0, result.stderr[-500:]
    assert hashlib.sha256(result.stdout).hexdigest() == hashlib.sha256(data).hexdigest()


def test_only_allowed_environment_passes(bench: Bench) -> None:
    result = bench.ssh('echo "[$LANG] [$LC_TIME] [$K_MODE] [$SECRET]"',
                       extra=["-o", "SetEnv=LANG=C.UTF-8 LC_TIME=C K_MODE=fast SECRET=leak"])
    assert result.stdout == b"[C.UTF-8] [C] [fast] []\n"


def test_every_exec_is_an_event(bench: Bench) -> None:
    bench.ssh("echo audited-command")
    assert any(e["command"] == "echo audited-command" and e["agent"] == "alice" for e in events(bench, "ssh.exec"))


def test_forced_command_replaces_the_request(bench: Bench, tmp_path) -> None:
    from kserver import keygen

    add_agent(bench.server.vfs, "dave")
    key = keygen(tmp_path / "dave_key")
    add_key(bench.state, "dave", 'command="echo forced" ' + (tmp_path / "dave_key.pub").read_text())
    bench.keys["dave"] = key
    assert bench.ssh("echo asked", user="dave").stdout == b"forced\n"


def test_k_session_resumes_cwd_exports_and_functions(bench: Bench) -> None:
    env = ["-o", "SetEnv=K_SESSION=work"]
    define = 'cd /home; export PROJECT=k; greet() { local who=${1:-you}; echo "hi $who"; }'
    assert bench.ssh(define, extra=env).returncode == 0
    assert bench.ssh('pwd; echo "$PROJECT"; greet K', extra=env).stdout == b"/home\nk\nhi K\n"
    unnamed = bench.ssh('pwd; echo "[$PROJECT]"; greet')
    assert unnamed.stdout == b"/home/alice\n[]\n"  # no session named: nothing carried over
    assert b"greet: command not found" in unnamed.stderr


def test_a_live_session_cannot_be_taken_twice(bench: Bench) -> None:
    """The lease is the connection's: a second connection is refused until the first one ends,
    while a second channel of the same connection shares the session."""
    async def main() -> None:
        def connect() -> asyncssh.SSHClientConnection:
            return asyncssh.connect("127.0.0.1", bench.port, username="alice", known_hosts=None,
                                    client_keys=[str(bench.keys["alice"])])

        async with connect() as conn:
            first = await conn.create_process("echo up; read x", env={"K_SESSION": "busy"})
            assert await first.stdout.readline() == "up\n"  # it runs: the session is this connection's
            same = await conn.run("true", env={"K_SESSION": "busy"})
            assert same.exit_status == 0, same.stderr
            async with connect() as other:
                second = await other.run("true", env={"K_SESSION": "busy"})
                assert second.exit_status == 1
                assert "in use by another connection" in second.stderr
                first.stdin.write("done\n")
                first.stdin.write_eof()
                assert (await first.wait()).exit_status == 0
                still = await other.run("true", env={"K_SESSION": "busy"})
                assert still.exit_status == 1  # no channel open, but the connection lives
        async with connect() as conn:
            third = await conn.run("true", env={"K_SESSION": "busy"})
            assert third.exit_status == 0, third.stderr

    asyncio.run(main())


def test_dropped_connection_cancels_the_command(bench: Bench) -> None:
    async def main() -> None:
        conn = await asyncssh.connect("127.0.0.1", bench.port, username="alice", known_hosts=None,
                                      client_keys=[str(bench.keys["alice"])])
        process = await conn.create_process("echo up; while :; do :; done")
        assert await process.stdout.readline() == "up\n"  # the loop runs
        conn.abort()

    asyncio.run(main())
    poll(lambda: not any(c.agent and c.agent.name == "alice" and c.sessions for c in bench.server.connections.values()),
         "the dropped connection's session is still open")

    def loop() -> list[str]:
        return [r["state"] for r in procs.rows(bench.state, agent="alice") if r["cmd"] == "echo up; while :; do :; done"]

    poll(lambda: loop()[-1:] not in ([], ["running"]), "the dropped connection's loop still runs")


def test_asyncssh_client_exec(bench: Bench) -> None:
    async def main() -> asyncssh.SSHCompletedProcess:
        async with asyncssh.connect("127.0.0.1", bench.port, username="alice", known_hosts=None,
                                    client_keys=[str(bench.keys["alice"])]) as conn:
            return await conn.run("echo via asyncssh; exit 3", encoding=None)

    result = asyncio.run(main())
    assert (result.stdout, result.exit_status) == (b"via asyncssh\n", 3)


def test_paramiko_exec(bench: Bench) -> None:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", bench.port, "alice", key_filename=str(bench.keys["alice"]),
                   look_for_keys=False, allow_agent=False)
    try:
        stdin, stdout, stderr = client.exec_command("read x; echo \"paramiko $x\"; exit 5")
        stdin.write(b"hi\n")
        stdin.channel.shutdown_write()
        assert stdout.read() == b"paramiko hi\n"
        assert stdout.channel.recv_exit_status() == 5
    finally:
        client.close()


def test_a_channel_closed_by_its_client_hangs_up_its_command(bench: Bench) -> None:
    """A client that closes the channel of a running command on a connection it keeps (no
    signal sent) ends the command, as sshd's hangup would: nothing is left running."""
    from kfs.runtime import procs

    def running() -> bool:
        return any(r["cmd"].endswith("# hangup-probe") for r in procs.rows(bench.state, agent="bob", live=True))

    async def main() -> None:
        async with asyncssh.connect("127.0.0.1", bench.port, username="bob", client_keys=[str(bench.keys["bob"])],
                                    known_hosts=None, agent_path=None) as conn:
            process = await conn.create_process("echo started; sleep 600 # hangup-probe", encoding=None)
            assert await process.stdout.readline() == b"started\n"
            assert running()
            process.close()
            await asyncio.to_thread(poll, lambda: not running(), "the command still runs after its channel closed")

    asyncio.run(main())
