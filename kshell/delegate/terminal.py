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
    def __init__(self, send_raw: Callable[[bool], None], columns: int, lines: int) -> None:
        self._send_raw = send_raw
        self.size = (columns, lines)
        self.master: int | None = None
        self._lock = threading.Lock()

    def open(self) -> tuple[int, int]:
        """A new pty (master, slave) at the window's size; the front end goes raw."""
        master, slave = os.openpty()
        with self._lock:
            self.master = master
            _set_size(master, *self.size)
        self._send_raw(True)
        return master, slave

    def close(self, master: int) -> None:
        with self._lock:
            if self.master == master:
                self.master = None
        self._send_raw(False)

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


def _set_size(fd: int, columns: int, lines: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
