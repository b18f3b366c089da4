"""Terminal behaviour beyond the prompt: window changes reach COLUMNS/LINES; Ctrl-Z at the
prompt keeps the line (stopping a running command: test_pty_job_control.py)."""

from __future__ import annotations

import time

import paramiko
from kserver import HANG, Bench, need
from ptyclient import PtySession

PROMPT = b"alice@k:~$ "


def paramiko_shell(bench: Bench, width: int, height: int) -> tuple[paramiko.SSHClient, paramiko.Channel]:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", bench.port, "alice", key_filename=str(bench.keys["alice"]),
                   look_for_keys=False, allow_agent=False)
    return client, client.invoke_shell(width=width, height=height)


class Reader:
    """A channel read up to one needle after another: what one recv brings past a needle (the
    prompt that follows a command's output often comes in the same chunk) is kept for the next."""

    def __init__(self, chan: paramiko.Channel) -> None:
        self.chan = chan
        self.buffer = b""

    def until(self, needle: bytes, timeout: float = HANG) -> bytes:
        deadline = time.monotonic() + timeout
        self.chan.settimeout(0.2)
        while needle not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{needle!r} not seen; got {self.buffer!r}")
            try:
                chunk = self.chan.recv(4096)
            except TimeoutError:
                continue
            if not chunk:
                raise EOFError(f"{needle!r} not seen before end; got {self.buffer!r}")
            self.buffer += chunk
        i = self.buffer.index(needle) + len(needle)
        seen, self.buffer = self.buffer[:i], self.buffer[i:]
        return seen


def test_window_change_updates_columns_and_lines(bench: Bench) -> None:
    client, chan = paramiko_shell(bench, 100, 30)
    out = Reader(chan)
    try:
        out.until(PROMPT)
        chan.send(b'echo "size=$COLUMNS,$LINES"\r')
        out.until(b"size=100,30")
        out.until(PROMPT)
        chan.resize_pty(width=132, height=43)  # ordered before the next line on the channel
        chan.send(b'echo "size=$COLUMNS,$LINES"\r')
        out.until(b"size=132,43")
    finally:
        client.close()


def test_sigwinch_through_a_real_terminal_reaches_the_shell(bench: Bench) -> None:
    s = PtySession([need("ssh"), "-tt", *bench.ssh_options(), "alice@127.0.0.1"])
    try:
        s.expect(PROMPT)
        s.resize(50, 120)
        # OpenSSH sends the window change when its loop sees the signal, which a line typed at
        # once can overtake: a command waits for the new size (the server's view), not a sleep
        s.send(b'until [ "$COLUMNS,$LINES" = 120,50 ]; do read -t 0.05 x; done; echo "size=$COLUMNS,$LINES"\r')
        s.expect(b"size=120,50", timeout=HANG)
    finally:
        s.close()


def test_ctrl_z_at_the_prompt_keeps_the_line(bench: Bench) -> None:
    s = PtySession([need("ssh"), "-tt", *bench.ssh_options(), "alice@127.0.0.1"])
    try:
        s.expect(PROMPT)
        s.send(b"echo kept")
        s.expect(b"echo kept")  # the line editor has the half-typed line
        s.send(b"\x1a")
        s.send(b"\r")
        seen = s.expect(PROMPT)
        assert b"kept\r\n" in seen and b"Stopped" not in seen
    finally:
        s.close()
