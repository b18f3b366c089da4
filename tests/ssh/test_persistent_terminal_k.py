"""A persistent terminal running a K command (no pty of its own), or the K prompt itself: the
terminal edits its lines with the line editor an SSH login has, it goes on after the client
goes (the prompt with the half-typed line too), and its end ends the channel with its status; a
session another connection holds gets no terminal."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kserver import Bench, keygen, need
from ptyclient import PtySession, screen_of

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



def test_the_k_prompt_outlives_the_client_with_its_screen_and_half_typed_line_and_exit_ends_it(
        bench: Bench) -> None:
    first = ssh(bench, "K_SESSION=kprompt K_PERSIST=1")  # no command: the K prompt is what is kept
    try:
        first.expect(b"alice@k:~$ ")
        first.send(b"x=6; mkdir -p w; cd w; echo one $((x * 7))\r")
        first.expect(b"one 42")
        first.expect(b"alice@k:~/w$ ")
        first.send(b"echo $x and hal")  # half typed when the client goes
        first.expect(b"and hal")
        shown = screen_of(first.seen)
    finally:
        first.close()
    listed = bench.thread.call(lambda: bench.server.terminals.get("alice", "kprompt").doing)
    assert listed == "K prompt"
    second = ssh(bench, "K_SESSION=kprompt K_PERSIST=1")  # a K_PERSIST login finds it running: attaches
    try:
        second.expect(b"and hal")  # painted at once: the prompt and what was typed
        assert screen_of(second.seen) == shown
        second.send(b"f\r")  # typing goes on where it was; the shell's variables and cwd are kept
        second.expect(b"6 and half")
        second.expect(b"alice@k:~/w$ ")
        second.send(b"read line; echo got [$line]\r")  # a K command reading the terminal gets an edited line
        second.send(b"abx\x7fc\r")
        second.expect(b"got [abc]")
        second.expect(b"alice@k:~/w$ ")
        second.send(b"while :; do echo t$((1+1)); sleep 0.1; done\r")  # job control, as at an SSH login
        second.expect(b"t2\r\n")
        second.send(b"\x1a")  # Ctrl-Z once it runs: stopped into job 1, the prompt back
        seen = second.expect(b"alice@k:~/w$ ")
        assert b"^Z" in seen and b"[1]+  Stopped" in seen
        second.send(b"fg\r")
        second.expect(b"t2\r\n")
        second.send(b"\x03")  # Ctrl-C interrupts the K command, not the terminal
        second.expect(b"alice@k:~/w$ ")
        second.send(b"echo dropped\x03")  # Ctrl-C at the prompt drops the line
        second.expect(b"^C")
        second.expect(b"alice@k:~/w$ ")
        second.send(b"exit 4\r")
        assert second.wait() == 4  # `exit` ends the terminal, and the channel with its status
    finally:
        second.close()
    rows, _ = screen_of(second.seen)
    assert "dropped" not in [row.strip() for row in rows]
    terminal = bench.thread.call(lambda: bench.server.terminals.get("alice", "kprompt"))
    assert terminal is not None and not terminal.alive and terminal.status == 4
    bench.thread.call(lambda: asyncio.ensure_future(bench.server.terminals.destroy("alice", "kprompt")))
