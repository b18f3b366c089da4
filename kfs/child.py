"""Run a function in a forked child so that a crash in native code ends the child, not us.

LMDB trusts its file: on some damage it fails an assertion (abort, SIGABRT) or reads outside
the map (SIGSEGV, SIGBUS). Python cannot catch either; a child process can die of them and
the parent can say so. The function's value, or the exception it raised, comes back pickled
over a pipe.

Fork, not spawn: the child starts in a microsecond with everything already imported. The
caller must be single-threaded and must not have an LMDB environment open (a forked copy of
one is unusable, and the child's exit would drop the parent's POSIX locks on the lock file).
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

CRASH_SIGNALS = frozenset({signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE})


class ChildDied(Exception):
    """The child ended without an answer: killed by `signal`, or exited with `status`."""

    def __init__(self, signal_number: int | None, status: int | None) -> None:
        self.signal = signal_number
        self.status = status
        super().__init__(self.describe())

    @property
    def crashed(self) -> bool:
        """Whether it died of a signal that native code raises on itself (abort, bad access)."""
        return self.signal in CRASH_SIGNALS

    def describe(self) -> str:
        if self.signal is not None:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = "unknown"
            return f"signal {self.signal}, {name}"
        return f"exit status {self.status} without an answer"


class ChildError(Exception):
    """The child raised an exception that cannot cross the pipe; carries its traceback text."""


def run_in_child(fn: Callable[[], T]) -> T:
    """`fn()` computed in a forked child: its value, or its exception raised here.

    Raises `ChildDied` when the child ends without answering (a signal, `os._exit`).
    """
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns, never runs the parent's cleanup
        os.close(read_end)
        faulthandler.disable()  # a crash here is expected and reported by the parent, not dumped
        status = 0
        try:
            payload = _answer(fn)
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
        except BaseException:
            status = 70
        finally:
            os._exit(status)
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as answer:
            data = answer.read()
    finally:
        _, wait_status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(wait_status):
        raise ChildDied(os.WTERMSIG(wait_status), None)
    if not data:
        raise ChildDied(None, os.waitstatus_to_exitcode(wait_status))
    ok, value = pickle.loads(data)
    if ok:
        return value
    raise value


def _answer(fn: Callable[[], object]) -> bytes:
    try:
        return pickle.dumps((True, fn()))
    except Exception as e:  # every exception goes back to the parent
        try:
            return pickle.dumps((False, e))
        except Exception:  # not picklable (a C extension's type, a lambda inside)
            text = "".join(traceback.format_exception(e)).rstrip()
            return pickle.dumps((False, ChildError(f"in the checking process:\n{text}")))
