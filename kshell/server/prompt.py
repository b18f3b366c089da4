"""The K prompt: print the prompt, read an edited line, run it, repeat, as an interactive login
does. One loop for both of its front ends, so they prompt, interrupt and end alike: an SSH PTY
session (asyncssh's line editor on its channel, kshell.server.session) and a persistent
terminal (the same editor, kept by the server with the screen, kshell.server.terminals).
"""

from __future__ import annotations

import asyncio
import codecs
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from asyncssh.editor import SSHLineEditor

if TYPE_CHECKING:
    from kshell.server.workers import WorkerShell

INTERRUPTED = 130
CTRL_Z = "\x1a"
HISTORY = 1000  # lines of history, as the server's channels keep (line_history)
MAX_LINE = 1024  # asyncssh's default longest line


class Interrupted(Exception):  # noqa: N818 - it is what happened, not an error
    """Ctrl-C at the prompt: the half-typed line was dropped."""


class PromptFront(Protocol):
    """What the loop needs of its front end."""

    def write(self, text: str) -> None: ...

    async def readline(self) -> str:
        """The next edited line ("" at the end of input); Interrupted on Ctrl-C."""
        ...

    async def run_line(self, line: str) -> int:
        """Run one command line (the front end audits it and relays its keys); its status."""
        ...

    def prompt(self) -> str: ...

    def idle(self) -> None:
        """The prompt is shown and nothing runs (an SSH session parks its worker later)."""
        ...


def prompt_text(agent: str, home: str, hostname: str, cwd: str) -> str:
    """`alice@komputer:~/work$ `: the working directory under the home written with `~`."""
    if cwd == home or cwd.startswith(home + "/"):
        cwd = "~" + cwd[len(home):]
    return f"{agent}@{hostname}:{cwd}$ "


async def prompt_loop(front: PromptFront, runner: WorkerShell) -> int:
    """Prompt, edited line, run, repeat until `exit` or Ctrl-D on an empty line (the first with
    stopped jobs only warns, as bash does); the last status."""
    status = 0
    front.write(front.prompt())
    front.idle()
    while True:
        try:
            line = await front.readline()
        except Interrupted:  # Ctrl-C at the prompt: the half-typed line is gone
            front.write("^C\n" + (await runner.call("notices") or "") + front.prompt())
            status = INTERRUPTED
            await runner.call("set_status", INTERRUPTED)
            continue
        if not line:
            warning = await runner.call("refuse_exit")
            if warning:
                front.write("\n" + warning + front.prompt())
                continue
            front.write("logout\n")
            return status
        if line.strip():
            status = await front.run_line(line)
            if runner.interrupted:
                front.write("\n")
            if runner.exited:
                return status
        front.write((await runner.call("notices") or "") + front.prompt())
        front.idle()


def share_line_editor_tables() -> None:
    """Build asyncssh's line-editor table of printable keys once per keymap, not per terminal.

    `SSHLineEditor._build_printable` walks all 65,536 BMP code points in Python to make one
    regex (about 25 ms), on every new PTY session and again on every `register_key` (K binds
    Ctrl-Z): most of the CPU a new interactive session cost. The regex depends only on the
    keymap's first characters, which are the same for every session, so the compiled pattern is
    kept per key set and shared (patterns are immutable). If asyncssh renames the method this
    does nothing.
    """
    cls: Any = SSHLineEditor
    build = getattr(cls, "_build_printable", None)
    if build is None or hasattr(build, "k_original"):
        return
    cache: dict[frozenset[str], Any] = {}

    def build_printable(self: Any) -> None:
        keys = frozenset(self._keymap)
        pattern = cache.get(keys)
        if pattern is None:
            build(self)
            if len(cache) < 64:  # a handful of keymaps in practice; never grow without bound
                cache[keys] = self._printable
        else:
            self._printable = pattern

    build_printable.k_original = build  # type: ignore[attr-defined]  # marks it shared; tests compare
    cls._build_printable = build_printable


async def suspend_line(runner: WorkerShell, sent: Callable[[], bool]) -> bool:
    """Ctrl-Z while a line runs: stop it (the shell makes it a job; its `[1]+  Stopped` notice
    comes before the next prompt). True when it stopped; the front end echoes `^Z` then."""
    for _ in range(3000):  # a line just sent may still be waiting for its worker (a loaded host)
        if runner.running or not sent():
            break
        await asyncio.sleep(0.01)
    return bool(runner.running and await runner.call("suspend"))


class LineEditor:
    """asyncssh's line editor (what an SSH PTY login types into: history, arrows, Ctrl-A/E/U/K,
    wide characters) driven by a persistent terminal instead of a channel: keys in; its echo,
    and output passed through it so a half-typed line is redrawn below, out through `write`;
    a finished line, the end of input (Ctrl-D on an empty line) and Ctrl-C to the callbacks."""

    def __init__(self, write: Callable[[bytes], None], line: Callable[[bytes], None], eof: Callable[[], None],
                 interrupt: Callable[[], None], suspend: Callable[[], None], term_type: str, width: int) -> None:
        self._write, self._line, self._eof, self._interrupt = write, line, eof, interrupt
        self._keys = codecs.getincrementaldecoder("utf-8")("replace")
        self._text = codecs.getincrementaldecoder("utf-8")("replace")
        share_line_editor_tables()
        self._editor = SSHLineEditor(self, self, True, HISTORY, MAX_LINE, term_type, width)  # type: ignore[arg-type]

        def ctrl_z(line: str, pos: int) -> tuple[str, int]:
            suspend()
            return line, pos

        self._editor.register_key(CTRL_Z, ctrl_z)

    # -- what the editor calls: its channel's write and its session's callbacks -------------------------

    def write(self, data: str, datatype: Any = None) -> None:
        if data:
            self._write(data.encode())

    def data_received(self, data: str, datatype: Any = None) -> None:
        self._line(data.encode("utf-8", "surrogateescape"))

    def soft_eof_received(self) -> None:
        self._eof()

    def break_received(self, msec: int) -> bool:
        self._interrupt()
        return True

    def signal_received(self, signal: str) -> None:
        """Only keys bound to a signal send one; none are."""

    # -- what the terminal calls ---------------------------------------------------------------------

    def keys(self, data: bytes) -> None:
        text = self._keys.decode(data)
        if text:
            self._editor.process_input(text, None)

    def output(self, data: bytes) -> None:
        """A command's output (a newline starts the next line, as ONLCR makes it), the line
        being typed erased before and drawn again after."""
        text = self._text.decode(data)
        if text:
            self._editor.process_output(text)

    def clear(self) -> None:
        """Drop the half-typed line (Ctrl-C at the prompt)."""
        self._editor.set_input("", 0)

    def set_width(self, columns: int) -> None:
        self._editor.set_width(columns)
        self._editor.process_output("")  # writes what the redraw left in the editor's buffer

    def set_raw(self, raw: bool) -> None:
        """A delegated program has the terminal (its pty echoes and edits): editing off, a
        half-typed line handed on; when it ends, editing comes back."""
        self._editor.set_line_mode(not raw)
        self._editor.set_echo(not raw)
        self._editor.process_output("")


__all__ = ["CTRL_Z", "INTERRUPTED", "Interrupted", "LineEditor", "PromptFront", "prompt_loop", "prompt_text",
           "share_line_editor_tables", "suspend_line"]
