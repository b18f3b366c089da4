"""Control flow of the interpreter as exceptions: loop and function exits, `exit`, and the two
kinds of expansion failure bash distinguishes in a non-interactive shell."""

from __future__ import annotations

from typing import Protocol


class _Mode(Protocol):
    """What `expansion_failure` asks of the shell: how it runs."""

    opts: set[str]
    dash_c: bool

    @property
    def errexit(self) -> bool: ...


class BreakLoop(Exception):
    """`break N`; `status` is what the loop it ends returns (1 after a count out of range)."""

    def __init__(self, levels: int, status: int = 0) -> None:
        self.levels = levels
        self.status = status


class ContinueLoop(Exception):
    def __init__(self, levels: int) -> None:
        self.levels = levels


class ReturnSignal(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


class ExitSignal(Exception):
    """`exit`, or a fatal error: the (sub)shell ends with `status`."""

    def __init__(self, status: int) -> None:
        self.status = status


class AbortCommand(Exception):
    """An error that abandons the rest of the current top-level command (bash's jump to the
    top level): arithmetic errors, bad substitutions, assignment to a readonly variable.
    The message has already been printed."""

    def __init__(self, status: int = 1) -> None:
        self.status = status


class DiscardCommand(AbortCommand):
    """bash's jump to the top level with DISCARD: an arithmetic error in an array subscript or
    an integer variable's value, a builtin given too many arguments (break, continue, exit,
    return, shift, history). The top-level command is thrown away and, in a `-c` script, the
    rest of the script (status 1); a script read from a file or stdin goes on."""


class FatalError(Exception):
    """`${x:?}` and `set -u` failures: a non-interactive shell exits (with the status
    `expansion_failure` picks; 1 in a subshell). The message has already been printed."""

    def __init__(self, status: int = 127) -> None:
        self.status = status


def expansion_failure(sh: _Mode) -> AbortCommand | FatalError:
    """What a failed `${x?}` or `set -u` expansion raises, its message printed. An interactive
    shell (`bash -i`) only abandons the command line, with status 1. Any other shell exits: a
    `-c` string with 127 (bash's FORCE_EOF) unless errexit is on, which makes it 1; a script
    file or standard input (bash's reader loop) with 1."""
    if "i" in sh.opts:
        return AbortCommand(1)
    return FatalError(127 if sh.dash_c and not sh.errexit else 1)


class SigPipe(BaseException):  # noqa: N818 - named for the signal it stands for
    """A write to a pipe (or FIFO) whose reader has gone: what SIGPIPE does to a process. Not
    an OSError, so no tool's `except OSError` turns it into a "Broken pipe" message; it ends
    the writing command quietly, with status 141, where that command runs (a pipeline stage,
    a job, a substitution, the top level)."""


class CommandError(Exception):
    """A failure of the current simple command only (e.g. a redirection it could not open):
    the message is printed by whoever catches it, and the command's status is `status`."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
