"""Persistent terminals through real clients: OpenSSH `ssh -tt` driven through a real pty, and
`komputer attach`. The session's program keeps running after the client goes; a second client
sees the same screen (both replayed through a VT emulator); a window change reaches the program
as SIGWINCH; Ctrl-C reaches the foreground program only."""

from __future__ import annotations

import fcntl
import signal
import struct
import sys
import termios
import time

from delegation import ROOT, komputer
from kserver import Bench, need
from ptyclient import PtySession, screen_of

SIZE = (80, 24)


def ssh(b: Bench, session: str, command: str | None = None, size: tuple[int, int] = SIZE, *,
        persist: bool = False) -> PtySession:
    env = f"SetEnv=K_SESSION={session}" + (" K_PERSIST=1" if command is not None or persist else "")
    argv = [need("ssh"), "-tt", *b.ssh_options(), "-o", env, "alice@127.0.0.1"]
    return PtySession(argv + ([command] if command is not None else []), size=size)


def attach(b: Bench, session: str, size: tuple[int, int] = SIZE) -> PtySession:
    return PtySession([sys.executable, "-m", "kshell.cli", "attach", "--state", str(b.root / "state"),
                       f"alice/{session}"], size=size)


def destroy(b: Bench, session: str) -> None:
    b.thread.call(lambda: __import__("asyncio").ensure_future(b.server.terminals.destroy("alice", session)))


def test_the_session_runs_on_after_disconnect_and_a_second_ssh_and_komputer_attach_see_the_same_screen(
        mounted: Bench) -> None:
    first = ssh(mounted, "keep-1", "python3 -q")
    try:
        first.expect(b">>> ")
        first.send(b"x = 6\r")
        first.expect(b">>> ")
        first.send(b"print('\\x1b[1;31mred\\x1b[0m', x * 7)\r")
        first.expect(b"red\x1b[0m 42")
        first.expect(b">>> ")
        shown = screen_of(first.seen)
    finally:
        first.close()  # the client is killed: the connection drops
    second = ssh(mounted, "keep-1")
    try:
        second.expect(b">>> ")  # painted at once, the program still running
        assert screen_of(second.seen) == shown
        assert any("red 42" in row for row in shown[0])
        second.send(b"print(x + 1)\r")  # its state is the one the first client left
        second.expect(b"\n7\r")
        second.expect(b">>> ")
        after = screen_of(second.seen)
        third = attach(mounted, "keep-1")
        try:
            third.expect(b">>> ")
            assert screen_of(third.seen) == after
            third.send(b"print('from attach')\r")
            third.expect(b"from attach")
            second.expect(b"from attach")  # several viewers: the first one still watches
            third.send(b"\x1d")  # Ctrl-] detaches
            assert third.wait() == 0
        finally:
            third.close()
    finally:
        second.close()
    destroy(mounted, "keep-1")


def test_a_window_change_reaches_the_program_as_sigwinch(mounted: Bench) -> None:
    program = ("import os, signal; "
               "signal.signal(signal.SIGWINCH, lambda *a: os.write(1, b'winch %d %d\\n' % tuple(os.get_terminal_size()))); "
               "print('ready', *os.get_terminal_size(), flush=True); "
               "[signal.pause() for _ in range(100)]")
    s = ssh(mounted, "winch-1", f'python3 -c "{program}"')
    try:
        s.expect(b"ready 80 24")
        fcntl.ioctl(s.master, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        s.proc.send_signal(signal.SIGWINCH)  # as the kernel does for the client's own terminal
        s.expect(b"winch 100 30")
    finally:
        s.close()
    again = attach(mounted, "winch-1", size=(90, 20))  # the new viewer's size reaches it too
    try:
        again.expect(b"winch 90 20")
        again.send(b"\x1d")
        again.wait()
    finally:
        again.close()
    destroy(mounted, "winch-1")


def test_ctrl_c_reaches_the_foreground_program_only(mounted: Bench) -> None:
    background = ("import signal; "
                  "signal.signal(signal.SIGINT, lambda *a: print('background got SIGINT', flush=True)); "
                  "print('background ready', flush=True); [signal.pause() for _ in range(100)]")
    s = ssh(mounted, "intr-1", f'python3 -c "{background}" & python3 -q')
    try:
        # the two programs start together: either may write first
        if b">>> " not in s.expect(b"background ready"):
            s.expect(b">>> ")
        s.send(b"import time; time.sleep(60)\r")
        s.expect(b"time.sleep(60)\r")
        s.send(b"\x03")
        s.expect(b"KeyboardInterrupt")
        s.expect(b">>> ")  # the REPL goes on: SIGINT reached it, not the terminal or the shell
        s.send(b"print('still', 'here')\r")
        s.expect(b"still here")
        s.expect(b">>> ")
        assert b"background got SIGINT" not in s.seen
        alive = mounted.thread.call(lambda: mounted.server.terminals.get("alice", "intr-1").alive)
        assert alive
        s.send(b"raise SystemExit(4)\r")
        assert s.wait() == 4  # the command's end ends the channel, with its status
    finally:
        s.close()
    destroy(mounted, "intr-1")


def test_komputer_attach_to_no_terminal_says_so(mounted: Bench) -> None:
    s = attach(mounted, "nothing-here")
    try:
        s.expect(b"alice/nothing-here: no such terminal")
        assert s.wait() == 1
    finally:
        s.close()
    assert ROOT.exists()


def test_komputer_sessions_shows_which_terminals_are_detached_and_what_runs_in_them(mounted: Bench) -> None:
    s = ssh(mounted, "list-1", "python3 -q")
    try:
        s.expect(b">>> ")
        listed = komputer("sessions", "--state", str(mounted.root / "state"))
        assert listed.returncode == 0, listed.stderr
        row = next(line for line in listed.stdout.splitlines() if " list-1 " in line)
        assert row.split()[0] == "alice" and row.endswith("attached (1): python3 -q")
    finally:
        s.close()
    rows: list[str] = []
    for _ in range(600):  # the server notices the dropped connection (a hang bound, not a timing)
        listed = komputer("sessions", "--state", str(mounted.root / "state"))
        rows = [line for line in listed.stdout.splitlines() if " list-1 " in line]
        if rows and rows[0].endswith("detached: python3 -q"):
            break
    assert rows and rows[0].endswith("detached: python3 -q"), listed.stdout
    assert "TERMINAL" in listed.stdout.splitlines()[0]
    destroy(mounted, "list-1")


TICKER = "python3 -c 'import itertools, time; [print(\"tick\", i, flush=True) or time.sleep(0.1) for i in itertools.count()]'"


def ticks(text: str) -> list[int]:
    return [int(word) for line in text.splitlines() if line.startswith("tick ") for word in line.split()[1:2]]


def test_a_delegated_program_run_from_the_kept_prompt_runs_on_while_detached_onto_the_kept_screen(
        mounted: Bench) -> None:
    first = ssh(mounted, "prompt-2", persist=True)  # the K prompt itself, kept
    try:
        first.expect(b"alice@k:~$ ")
        first.send(TICKER.encode() + b"\r")  # delegated, on a pty of its own, in the foreground
        first.expect(b"tick 2\r\n")
        last_seen = max(ticks(first.seen.decode(errors="replace").replace("\r", "")))
    finally:
        first.close()
    terminal = mounted.thread.call(lambda: mounted.server.terminals.get("alice", "prompt-2"))
    deadline = time.monotonic() + 60  # a hang bound: the output itself is what is waited for
    while True:
        detached, screen = mounted.thread.call(lambda: (terminal.detached, terminal.screen.lines(24)))
        if detached and max(ticks("\n".join(screen)), default=-1) > last_seen + 2:
            break  # printed while no one was attached, onto the kept screen
        assert time.monotonic() < deadline, screen
        time.sleep(0.05)
    listed = komputer("sessions", "--state", str(mounted.root / "state"))
    row = next(line for line in listed.stdout.splitlines() if " prompt-2 " in line)
    assert "detached: K prompt: python3 -c" in row
    again = attach(mounted, "prompt-2")
    try:
        again.expect(b"tick ")  # the kept screen, painted, and the program still printing
        again.send(b"\x03")  # Ctrl-C to the program: it ends, the K prompt comes back
        again.expect(b"KeyboardInterrupt")
        again.expect(b"alice@k:~$ ")
        again.send(b"echo back at $((40 + 2))\r")
        again.expect(b"back at 42")
        again.send(b"exit 3\r")  # `exit` at the prompt ends the terminal
        assert again.wait() == 0
    finally:
        again.close()
    assert b"[ended: alice/prompt-2]" in again.seen
    assert mounted.thread.call(lambda: (terminal.alive, terminal.status)) == (False, 3)
    destroy(mounted, "prompt-2")
