"""Idle timeout and keepalives: a connection with no traffic is closed after `idle_timeout`; one
whose client stops answering keepalives is closed after interval x count_max."""

from __future__ import annotations

import signal
import subprocess
import time

import paramiko
from kserver import HANG, Bench, need

from kfs.journal import events_since
from kshell.server import ServerConfig
from kshell.server.config import Penalties

LOOPBACK_EXEMPT = Penalties(exempt=("127.0.0.1/32",))


def connect(bench: Bench) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", bench.port, "alice", key_filename=str(bench.keys["alice"]),
                   look_for_keys=False, allow_agent=False)
    return client


def exec_status(client: paramiko.SSHClient, command: str) -> int:
    _, stdout, _ = client.exec_command(command)
    return stdout.channel.recv_exit_status()


def wait_until(predicate, timeout: float) -> float:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise TimeoutError("condition not met")
        time.sleep(0.05)
    return time.monotonic() - start


def test_an_idle_connection_is_closed_and_a_busy_one_is_not(make_server) -> None:  # type: ignore[no-untyped-def]
    bench: Bench = make_server(ServerConfig(hostname="k", idle_timeout=1.0, penalties=LOOPBACK_EXEMPT))
    idle, busy = connect(bench), connect(bench)
    try:
        start = time.monotonic()
        while idle.get_transport().is_active():  # type: ignore[union-attr]  # until past its timeout
            assert exec_status(busy, "true") == 0  # busy runs a command now and then
            assert time.monotonic() - start < HANG, "the idle connection was never closed"
            time.sleep(0.3)
        assert busy.get_transport().is_active()  # type: ignore[union-attr]
        assert exec_status(busy, "exit 3") == 3
        bench.audited()  # audit events are written off the event loop
        assert any(e["type"] == "ssh.idle_timeout" for e in events_since(bench.state, 0))
    finally:
        idle.close()
        busy.close()


def test_a_command_that_prints_is_not_idle(make_server) -> None:  # type: ignore[no-untyped-def]
    bench: Bench = make_server(ServerConfig(hostname="k", idle_timeout=1.0, penalties=LOOPBACK_EXEMPT))
    done = bench.ssh("i=0; while [ $i -lt 25 ]; do echo $i; sleep 0.1; i=$((i+1)); done; echo end")
    assert done.returncode == 0 and done.stdout.endswith(b"24\nend\n")


def test_a_client_that_stops_answering_keepalives_is_dropped(make_server) -> None:  # type: ignore[no-untyped-def]
    bench: Bench = make_server(ServerConfig(hostname="k", keepalive_interval=0.5, keepalive_count_max=2,
                                            penalties=LOOPBACK_EXEMPT))
    proc = subprocess.Popen([need("ssh"), *bench.ssh_options(), "alice@127.0.0.1", "sleep 30"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        running = lambda: [c.sessions for c in bench.server.connections.values()] == [1]  # noqa: E731
        wait_until(lambda: bench.thread.call(running), 10)  # logged in and running `sleep`
        proc.send_signal(signal.SIGSTOP)  # a frozen client: the server's keepalives go unanswered
        # dropped while the client's `sleep 30` still runs: only unanswered keepalives end it
        wait_until(lambda: bench.thread.call(lambda: len(bench.server.connections)) == 0, 20)
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.communicate()
