"""The session's terminal as a delegated program gets it: a pty of its own for each program
whose stdin and stdout are the terminal, sized as the window and resized with it, while the
front end passes keys through untouched (no line editing or echo: the pty does both, and its
line discipline turns Ctrl-C into SIGINT for the program's foreground process group)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import termios
import threading
from collections.abc import Callable


class Terminal:
    def __init__(self, send_raw: Callable[[bool], None], columns: int, lines: int,
                 suspend: Callable[[], object] = lambda: None) -> None:
        self._send_raw = send_raw
        self._suspend = suspend  # the shell's Ctrl-Z: the foreground command becomes a stopped job
        self.size = (columns, lines)
        self.master: int | None = None
        self._raw = False
        self._lock = threading.Lock()

    def open(self) -> tuple[int, int]:
        """A new pty (master, slave) at the window's size."""
        master, slave = os.openpty()
        with self._lock:
            self.master = master
            _set_size(master, *self.size)
        return master, slave

    def close(self, master: int) -> None:
        """The program is done with its pty: the master goes, the line editor comes back."""
        with self._lock:
            if self.master == master:
                self.master = None
            os.close(master)
        self.give(False)

    def give(self, raw: bool) -> None:
        """Keys straight to the program's pty (True), or back to the line editor (False)."""
        if raw != self._raw:
            self._raw = raw
            self._send_raw(raw)

    def suspend(self) -> None:
        """The program stopped itself or was stopped from its pty: the line editor comes back
        before the shell reports the stopped job and prompts."""
        self.give(False)
        self._suspend()

    def resize(self, columns: int, lines: int) -> None:
        """The window changed: the program's pty follows (the kernel sends it SIGWINCH)."""
        with self._lock:
            self.size = (columns, lines)
            if self.master is not None:
                with contextlib.suppress(OSError):
                    _set_size(self.master, columns, lines)

    def foreground(self) -> int:
        """The pty's foreground process group (0 when unknown): where K's signals go."""
        with self._lock:
            if self.master is None:
                return 0
            try:
                return os.tcgetpgrp(self.master)
            except OSError:
                return 0


# Run inside the sandbox (by the host's python3) in front of a program that has the terminal:
# it leads a session on the pty and keeps the program in a process group of its own, in the
# foreground, as a job-control shell does. A group whose parent is in another session is
# orphaned, and the kernel drops the terminal's stop signals to it (no Ctrl-Z); a parent in
# the same session that waits without WUNTRACED leaves stopping and continuing to K.
JOB_LEADER = """\
import fcntl, os, signal, sys, termios
os.setsid()
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
def foreground():
    os.setpgid(0, 0)
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    os.tcsetpgrp(0, os.getpgrp())
    signal.signal(signal.SIGTTOU, old)
pid = os.fork()
if pid == 0:
    foreground()
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    except OSError as e:
        print(f"{sys.argv[1]}: {e.strerror}", file=sys.stderr)
        os._exit(126 if e.errno != 2 else 127)
for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP, signal.SIGTTOU, signal.SIGTTIN, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
_, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
sys.exit(128 - code if code < 0 else code)
"""


def _set_size(fd: int, columns: int, lines: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
