"""A persistent terminal running a K command (no pty of its own): the terminal edits its lines
as a pty in canonical mode does, it goes on after the client goes, and its end ends the channel
with its status; a session another connection holds gets no terminal."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kserver import Bench, keygen, need
from ptyclient import PtySession

from kfs.agents import add_key

LOOP = 'while read l; do echo "got [$l]"; done; echo "input ended"; exit 3'


def ssh(b: Bench, env: str, command: str | None = None) -> PtySession:
    argv = [need("ssh"), "-tt", *b.ssh_options(), "-o", f"SetEnv={env}", "alice@127.0.0.1"]
    return PtySession(argv + ([command] if command is not None else []), size=(80, 24))


def test_a_k_command_gets_edited_lines_and_survives_the_client(bench: Bench) -> None:
    first = ssh(bench, "K_SESSION=kloop K_PERSIST=1", LOOP)
    try:
        first.expect(b"\x1b[2J")  # attached: the (empty) screen painted
        first.send(b"hexy\x7f\x7fllo\r")  # typed, two erased, retyped: the line the command reads
        first.expect(b"got [hello]")
    finally:
        first.close()
    second = ssh(bench, "K_SESSION=kloop")
    try:
        second.expect(b"got [hello]")  # the screen kept while no one was attached
        second.send(b"again\r")
        second.expect(b"again")  # echoed by the terminal, as a pty's line discipline does
        second.expect(b"got [again]")
        second.send(b"\x04")  # Ctrl-D on an empty line: the end of input
        second.expect(b"input ended")
        assert second.wait() == 3  # the command's end ends the channel with its status
    finally:
        second.close()
    terminal = bench.thread.call(lambda: bench.server.terminals.get("alice", "kloop"))
    assert terminal is not None and not terminal.alive and terminal.status == 3
    bench.thread.call(lambda: asyncio.ensure_future(bench.server.terminals.destroy("alice", "kloop")))


def test_ctrl_c_interrupts_a_k_command_in_the_terminal(bench: Bench) -> None:
    s = ssh(bench, "K_SESSION=kintr K_PERSIST=1", "read x")
    try:
        s.expect(b"\x1b[2J")
        s.send(b"\x03")
        s.expect(b"^C")
        assert s.wait() == 130
    finally:
        s.close()
    bench.thread.call(lambda: asyncio.ensure_future(bench.server.terminals.destroy("alice", "kintr")))


def test_a_session_held_by_another_connection_gets_no_terminal(bench: Bench) -> None:
    holder = ssh(bench, "K_SESSION=kheld")
    try:
        holder.expect(b"$ ")
        done = bench.ssh("echo hi", extra=["-tt", "-o", "SetEnv=K_SESSION=kheld K_PERSIST=1"])
        assert done.returncode == 1
        assert b"komputer: " in done.stdout + done.stderr and b"kheld" in done.stdout + done.stderr
        assert bench.thread.call(lambda: bench.server.terminals.get("alice", "kheld")) is None
    finally:
        holder.close()


def test_a_login_in_a_stricter_mode_only_watches_and_a_forced_command_key_never_attaches(
        bench: Bench, tmp_path: Path) -> None:
    keygen(tmp_path / "forced_key")
    add_key(bench.state, "alice", 'command="echo forced" ' + (tmp_path / "forced_key.pub").read_text())
    bench.keys["forced"] = tmp_path / "forced_key"
    writer = ssh(bench, "K_SESSION=kro K_PERSIST=1", LOOP)
    try:
        writer.expect(b"\x1b[2J")
        watcher = ssh(bench, "K_SESSION=kro K_MODE=readonly")
        try:
            watcher.expect(b"\x1b[2J")
            watcher.send(b"ignored\r")
        finally:
            watcher.close()
        for _ in range(2000):  # its keys were read before its channel closed (a hang bound)
            if bench.thread.call(lambda: len(bench.server.terminals.get("alice", "kro").viewers)) == 1:
                break
        writer.send(b"shown\r")
        writer.expect(b"got [shown]")
        assert b"ignored" not in writer.seen
        # a key whose forced command is `echo forced` never attaches: its command wants the
        # session, which the terminal holds
        forced = bench.ssh(None, key="forced", extra=["-tt", "-o", "SetEnv=K_SESSION=kro"])
        assert forced.returncode == 1 and b"got [" not in forced.stdout
        assert b"session 'kro' is in use" in forced.stdout
    finally:
        writer.close()
    bench.thread.call(lambda: asyncio.ensure_future(bench.server.terminals.destroy("alice", "kro")))


def test_an_ended_terminal_shows_its_last_screen_and_k_persist_starts_a_new_one(bench: Bench) -> None:
    first = ssh(bench, "K_SESSION=kend K_PERSIST=1", "echo first run; exit 5")
    try:
        assert first.wait() == 5
    finally:
        first.close()
    seen = ssh(bench, "K_SESSION=kend")  # attaching to the ended one: its screen, then its status
    try:
        seen.expect(b"first run")
        assert seen.wait() == 5
    finally:
        seen.close()
    again = ssh(bench, "K_SESSION=kend K_PERSIST=1", "echo second run; exit 6")
    try:
        again.expect(b"second run")
        assert again.wait() == 6
        assert b"first run" not in again.seen  # a new terminal, not the old screen
    finally:
        again.close()
    bench.thread.call(lambda: asyncio.ensure_future(bench.server.terminals.destroy("alice", "kend")))

