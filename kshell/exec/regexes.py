"""Regular expressions whose matching the running command's `Cancel` bounds.

Python's `re` cannot be interrupted from another thread, and commands run in threads: one
catastrophic pattern (`(a|aa)*b` against fifty a's) would hold its worker past `timeout` and
the wall time. Backtracking blows up only where a repeated group or a back-reference lets one
text be matched in many ways; such patterns go to the `regex` engine, which avoids most of
those blow-ups outright and takes a timeout on every call: each call gets the time left before
the command's deadline, and a match that runs out raises the command's LimitExceeded, as any
other checkpoint does. Every other pattern stays with `re`, which is two to four times faster
per call (a timed call costs about 1 us more). Ctrl-C on a match still in flight is the front
end's to end, by killing the worker.

Callers pass patterns in `re` syntax with `re` flags; the tools' POSIX translation produces
exactly that.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from kshell.exec.streams import Cancel
from kshell.limits import LimitExceeded

_QUANTIFIER = frozenset("*+{")
_current = threading.local()
_FLAG_NAMES = ("ASCII", "IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "UNICODE")


def __getattr__(name: str) -> Any:
    """`error`: both engines' (the `regex` module is imported with the first risky pattern,
    not when the shell starts)."""
    if name == "error":
        import regex

        return (re.error, regex.error)
    raise AttributeError(name)


def running(session: Any, fn: Callable[..., int], *args: Any) -> int:
    """Run a tool whose patterns answer to `session`'s Cancel, whichever it is when they match
    (`timeout` puts its own in place): a tool has no other way to say which command it belongs
    to, as its patterns are compiled deep inside its parsers."""
    previous = getattr(_current, "session", None)
    _current.session = session
    try:
        return fn(*args)
    finally:
        _current.session = previous


def compile(source: str | bytes, flags: int = 0, cancel: Cancel | None = None,  # noqa: A001
            posix: bool = False) -> Compiled:
    """`re.compile`; a pattern that can backtrack without bound is matched within `cancel`'s
    deadline (by default the running tool's command's). With `posix`, `source` is in the
    `regex` module's syntax and matches leftmost-longest, as POSIX's regexec does."""
    if not posix and not risky(source if isinstance(source, str) else source.decode("latin-1")):
        return re.compile(source, flags)
    import regex

    engine_flags = regex.POSIX if posix else 0
    for name in _FLAG_NAMES:
        if flags & getattr(re, name):
            engine_flags |= getattr(regex, name)
    return Pattern(regex.compile(source, engine_flags), cancel)


def risky(source: str) -> bool:
    """A group followed by a repetition (`(a|aa)*`, `(x+)+`, `(.*a){20}`) or a back-reference:
    what exponential backtracking needs. Bracket expressions and escapes are skipped."""
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            if i + 1 < n and source[i + 1] in "123456789":
                return True
            i += 2
            continue
        if c == "[":
            i += 1
            if i < n and source[i] == "^":
                i += 1
            if i < n and source[i] == "]":
                i += 1
            while i < n and source[i] != "]":
                i += 2 if source[i] == "\\" else 1
        elif c == ")" and i + 1 < n and source[i + 1] in _QUANTIFIER:
            return True
        i += 1
    return False


def _left(cancel: Cancel | None) -> float | None:
    """Seconds until the command's deadline (None: no bound); raises if it has passed or the
    command was cancelled, and parks here while the command is stopped."""
    if cancel is None:
        session = getattr(_current, "session", None)
        if session is None:
            return None
        cancel = session.cancel
    cancel.check()
    deadline = cancel.deadline
    parent = cancel.parent
    while parent is not None:
        deadline = min(deadline, parent.deadline)
        parent = parent.parent
    if deadline == float("inf"):
        return None
    return max(deadline - time.monotonic(), 0.001)


class Pattern:
    """The part of `re.Pattern` the shell and its tools use."""

    __slots__ = ("_rx", "_cancel", "pattern", "flags", "groups", "groupindex")

    def __init__(self, rx: Any, cancel: Cancel | None) -> None:
        self._rx = rx
        self._cancel = cancel
        self.pattern = rx.pattern
        self.flags = rx.flags
        self.groups = rx.groups
        self.groupindex = rx.groupindex

    def _call(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        while True:
            try:
                return method(*args, timeout=_left(self._cancel), **kwargs)
            except TimeoutError:
                continue  # the deadline has passed: _left raises (unless the command was stopped)

    def search(self, string: Any, pos: int = 0, endpos: int | None = None) -> Any:
        return self._call(self._rx.search, string, pos, endpos)

    def match(self, string: Any, pos: int = 0, endpos: int | None = None) -> Any:
        return self._call(self._rx.match, string, pos, endpos)

    def fullmatch(self, string: Any, pos: int = 0, endpos: int | None = None) -> Any:
        return self._call(self._rx.fullmatch, string, pos, endpos)

    def finditer(self, string: Any, pos: int = 0, endpos: int | None = None) -> Iterator[Any]:
        """Lazy, as re's: the deadline can pass between two matches, while the caller works."""
        matches = self._call(self._rx.finditer, string, pos, endpos)
        try:
            yield from matches
        except TimeoutError:
            _left(self._cancel)
            raise LimitExceeded("command exceeded the wall-time limit") from None

    def findall(self, string: Any, pos: int = 0, endpos: int | None = None) -> list[Any]:
        return self._call(self._rx.findall, string, pos, endpos)

    def sub(self, repl: Any, string: Any, count: int = 0) -> Any:
        return self._call(self._rx.sub, repl, string, count)

    def subn(self, repl: Any, string: Any, count: int = 0) -> tuple[Any, int]:
        return self._call(self._rx.subn, repl, string, count)

    def split(self, string: Any, maxsplit: int = 0) -> list[Any]:
        return self._call(self._rx.split, string, maxsplit)


Compiled = Pattern | re.Pattern[Any]  # what compile() gives: both answer the same calls
