"""Who gets in: public keys only, authorized_keys options, MaxAuthTries, PerSourcePenalties."""

from __future__ import annotations

import subprocess
from pathlib import Path

import paramiko
import pytest
from kserver import Bench, keygen, need, poll

from kfs.agents import add_agent, add_key
from kfs.journal import events_since
from kshell.server import ServerConfig
from kshell.server.config import Penalties


def login(bench: Bench, user: str, key: Path, *, source: str | None = None,
          extra: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Log in with sftp (no shell needed) and print the working directory."""
    argv = [need("sftp"), "-P", str(bench.port), "-i", str(key), "-F", "/dev/null",
            "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
            "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", *(extra or [])]
    if source:
        argv += ["-o", f"BindAddress={source}"]
    argv += ["-b", "-", f"{user}@127.0.0.1"]
    return subprocess.run(argv, input="pwd\n", capture_output=True, text=True, timeout=60)


def events(bench: Bench, type_: str) -> list[dict]:
    bench.audited()  # audit events are written off the event loop
    return [e for e in events_since(bench.state, 0) if e["type"] == type_]


def test_the_right_key_gets_in(bench: Bench) -> None:
    result = login(bench, "alice", bench.keys["alice"])
    assert result.returncode == 0, result.stderr
    assert "/home/alice" in result.stdout
    assert any(e["agent"] == "alice" and e["key"].startswith("SHA256:") for e in events(bench, "ssh.login"))


def test_another_agents_key_is_refused(bench: Bench) -> None:
    result = login(bench, "alice", bench.keys["bob"])
    assert result.returncode != 0
    assert "Permission denied (publickey)" in result.stderr


def test_unknown_user_is_refused(bench: Bench) -> None:
    result = login(bench, "mallory", bench.keys["alice"])
    assert result.returncode != 0
    assert "Permission denied (publickey)" in result.stderr
    assert any(e["user"] == "mallory" for e in events(bench, "ssh.auth_failure"))


def test_only_publickey_is_offered(bench: Bench) -> None:
    transport = paramiko.Transport(("127.0.0.1", bench.port))
    try:
        transport.start_client(timeout=10)
        with pytest.raises(paramiko.BadAuthenticationType) as caught:
            transport.auth_none("alice")
        assert caught.value.allowed_types == ["publickey"]
    finally:
        transport.close()
    asked = login(bench, "alice", bench.keys["alice"],
                  extra=["-o", "PreferredAuthentications=password,keyboard-interactive"])
    assert asked.returncode != 0
    assert "Permission denied (publickey)" in asked.stderr


def test_events_never_carry_a_secret(bench: Bench) -> None:
    login(bench, "alice", bench.keys["alice"])
    text = repr(events_since(bench.state, 0))
    assert "PRIVATE KEY" not in text and "BEGIN OPENSSH" not in text
    assert "hostkey.create" in text


def test_host_key_is_stable_across_restarts(make_server, tmp_path: Path) -> None:
    from kserver import ServerThread

    first = make_server(ServerConfig())
    fingerprint = first.server.fingerprint
    first.thread.stop()
    again = ServerThread(first.root / "state", ServerConfig()).start(first.state)
    try:
        assert again.server is not None and again.server.fingerprint == fingerprint
    finally:
        again.stop()


def test_from_option_restricts_where_a_key_works(bench: Bench, tmp_path: Path) -> None:
    add_agent(bench.server.vfs, "carol")
    key = keygen(tmp_path / "carol_key")
    add_key(bench.state, "carol", 'from="127.0.0.9" ' + (tmp_path / "carol_key.pub").read_text())
    assert login(bench, "carol", key).returncode != 0
    allowed = login(bench, "carol", key, source="127.0.0.9")
    assert allowed.returncode == 0, allowed.stderr


def test_a_certificate_logs_in_only_as_its_principal(bench: Bench, tmp_path: Path) -> None:
    need("ssh-keygen")
    ca = keygen(tmp_path / "ca")
    for agent in ("alice", "bob"):
        add_key(bench.state, agent, f'cert-authority,principals="{agent}" ' + (tmp_path / "ca.pub").read_text())
    user = keygen(tmp_path / "user")
    subprocess.run(["ssh-keygen", "-q", "-s", str(ca), "-I", "alice-cert", "-n", "alice", str(tmp_path / "user.pub")],
                   check=True)
    cert = ["-o", f"CertificateFile={tmp_path / 'user-cert.pub'}"]
    ok = login(bench, "alice", user, extra=cert)
    assert ok.returncode == 0, ok.stderr
    refused = login(bench, "bob", user, extra=cert)
    assert refused.returncode != 0
    assert "Permission denied" in refused.stderr


def test_max_auth_tries_disconnects(make_server, tmp_path: Path) -> None:
    b = make_server(ServerConfig(max_auth_tries=2, penalties=Penalties(enabled=False)))
    wrong = [keygen(tmp_path / f"w{i}") for i in range(3)]
    argv = [need("ssh"), "-p", str(b.port), "-F", "/dev/null", "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes"]
    for key in wrong:
        argv += ["-i", str(key)]
    result = subprocess.run([*argv, "alice@127.0.0.1", "true"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 255
    assert "Too many authentication failures" in result.stderr


def test_repeated_failures_penalise_the_source(make_server, tmp_path: Path) -> None:
    b = make_server(ServerConfig(penalties=Penalties(authfail=5, min=15, max=600, exempt=())))
    for _ in range(4):  # 4 x 5 s pending > 15 s: the source is refused from now on
        assert login(b, "alice", b.keys["bob"], source="127.0.0.7").returncode != 0
    poll(lambda: any(e["peer"] == "127.0.0.7" for e in events(b, "ssh.penalty")), "no penalty for 127.0.0.7")
    blocked = login(b, "alice", b.keys["alice"], source="127.0.0.7")
    assert blocked.returncode != 0
    assert "Permission denied" not in blocked.stderr  # dropped before authentication
    other = login(b, "alice", b.keys["alice"], source="127.0.0.8")
    assert other.returncode == 0, other.stderr
    assert any(e["peer"] == "127.0.0.7" for e in events(b, "ssh.penalty"))


def test_an_attacker_hammering_alice_from_her_own_source_never_locks_her_out(make_server, tmp_path: Path) -> None:
    """Every local agent shares loopback: failed logins for alice from there, however many,
    must not stop alice's own key (the old per-user penalty refused her after four)."""
    import threading

    b = make_server(ServerConfig(penalties=Penalties(authfail=5, min=15, max=600)))  # loopback exempt
    wrong = keygen(tmp_path / "wrong")
    source = "127.0.0.5"
    for _ in range(4):  # past min: enough for a penalty on alice from here under the old rules
        assert login(b, "alice", wrong, source=source).returncode != 0
    stop = threading.Event()
    failed = []

    def hammer() -> None:
        for _ in range(200):  # bounded; stopped once alice is done
            if stop.is_set():
                return
            failed.append(login(b, "alice", wrong, source=source).returncode != 0)

    attacker = threading.Thread(target=hammer)
    attacker.start()
    try:
        results = [login(b, "alice", b.keys["alice"], source=source) for _ in range(8)]
    finally:
        stop.set()
        attacker.join(120)
    assert all(failed) and len(failed) >= 1
    assert [r.returncode for r in results] == [0] * 8, [r.stderr for r in results if r.returncode]
    assert all("/home/alice" in r.stdout for r in results)
    assert events(b, "ssh.penalty") == []
    assert len([e for e in events(b, "ssh.auth_failure") if e["user"] == "alice"]) >= 4 + len(failed)


def test_max_startups_drops_unauthenticated_connections(make_server) -> None:
    import socket

    b = make_server(ServerConfig(max_startups="2:100:2", penalties=Penalties(enabled=False)))
    held = [socket.create_connection(("127.0.0.1", b.port)) for _ in range(2)]
    try:
        for s in held:
            assert s.recv(64).startswith(b"SSH-2.0-")
        extra = socket.create_connection(("127.0.0.1", b.port))
        extra.settimeout(5)
        assert extra.recv(64) == b""  # closed without a banner
        extra.close()
    finally:
        for s in held:
            s.close()
    poll(lambda: b.thread.call(lambda: b.server.gate.pending) == 0, "the closed connections still count as starting")
    assert login(b, "alice", b.keys["alice"]).returncode == 0


def test_max_sessions_per_connection(make_server) -> None:
    import asyncio

    import asyncssh

    b = make_server(ServerConfig(max_sessions=2))

    async def main() -> None:
        async with asyncssh.connect("127.0.0.1", b.port, username="alice", known_hosts=None,
                                    client_keys=[str(b.keys["alice"])]) as conn:
            first = await conn.start_sftp_client()
            second = await conn.start_sftp_client()
            with pytest.raises(asyncssh.ChannelOpenError):
                await conn.start_sftp_client()
            first.exit()
            await first.wait_closed()
            slots = lambda: [c.sessions for c in b.server.connections.values()]  # noqa: E731
            poll(lambda: b.thread.call(slots) == [1], "the closed session still holds its slot")
            third = await conn.start_sftp_client()  # a closed session frees its slot
            third.exit()
            second.exit()

    asyncio.run(main())
