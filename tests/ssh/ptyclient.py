"""Drive `ssh -tt` through a real pseudo-terminal, as a person at a keyboard would."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import time

import pyte

from tests.hang import HANG

STARTED = b"go2"  # what `echo go$((1+1))` prints and its echoed command line does not hold


class PtySession:
    def __init__(self, argv: list[str], size: tuple[int, int] | None = None) -> None:
        """`size` (columns, lines) is the terminal's before the client starts: it sends it with
        its pty request, so no window change has to race the first line."""
        self.master, slave = pty.openpty()
        self.seen = b""  # every byte read, for a VT emulator to replay
        if size is not None:  # (columns, lines) before the client starts: it reads them once
            fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                                     start_new_session=True)
        os.close(slave)
        self.buffer = b""

    def expect(self, needle: bytes, timeout: float = HANG) -> bytes:
        """Read until `needle` appears; returns everything read up to and including it."""
        deadline = time.monotonic() + timeout
        while needle not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{needle!r} not seen; got {self.buffer!r}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    raise EOFError(f"{needle!r} not seen before end; got {self.buffer!r}")
                self.buffer += chunk
                self.seen += chunk
        i = self.buffer.index(needle) + len(needle)
        seen, self.buffer = self.buffer[:i], self.buffer[i:]
        return seen

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def start(self, command: bytes, timeout: float = 60.0) -> None:
        """Types `command` at the prompt and returns once the line is running (it first prints
        STARTED), so a key sent next reaches the command, not the prompt: no sleep guesses."""
        self.send(b"echo go$((1+1)); " + command + b"\r")
        self.expect(STARTED + b"\r\n", timeout)

    def resize(self, rows: int, columns: int) -> None:
        """The window changes, as a terminal emulator's does: new size, then SIGWINCH to the client."""
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.proc.send_signal(signal.SIGWINCH)

    def wait(self, timeout: float = HANG) -> int:
        """The client's exit status, with everything it wrote before exiting read (what it
        wrote last is often still in the terminal when it exits)."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read_ready(0.1)
        status = self.proc.wait(max(deadline - time.monotonic(), 0.1))
        while self._read_ready(0):
            pass
        return status

    def _read_ready(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: the terminal's other side is closed and empty
            return False
        self.buffer += chunk
        self.seen += chunk
        return bool(chunk)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


def screen_of(seen: bytes, size: tuple[int, int] = (80, 24)) -> tuple[list[str], tuple[int, int]]:
    """What a terminal of `size` (columns, lines) shows after these bytes, through a VT
    emulator: its rows and the cursor, so two clients' screens compare as a person sees them."""
    screen = pyte.Screen(*size)
    pyte.ByteStream(screen).feed(seen)
    return [row.rstrip() for row in screen.display], (screen.cursor.x, screen.cursor.y)
