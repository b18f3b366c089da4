"""What a tool or a builtin is handed: `ToolContext`, the narrow face of the interpreter.

A command is `fn(ctx, argv) -> status`. Most need only this: the descriptors and the helpers
that write to them, the session's view of the filesystem (`fs`, the working directory in
`fs.cwd`), the environment, bash's error reporting, and a way to run another command by name.
`kshell.exec.interp.Interp` is the one implementation; a command that needs the interpreter
itself (a subshell, the variables, the traps) names `Interp` instead, and says why by doing so.
The image's command handlers get the same things through their `ctx` (kshell.image.commands).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kshell.exec.interp import Session
    from kshell.exec.streams import Stream

Command = Callable[["ToolContext", list[str]], int]  # a builtin or a tool: fn(ctx, argv) -> status


class ToolContext(Protocol):
    fs: Any  # the session's view (kshell.exec.system.SystemFS, a kfs PathFS): cwd, home, cred, policy
    fds: dict[int, Stream]  # the command's descriptors: 0 in, 1 out, 2 err, and any others opened
    session: Session  # what the session shares: limits, tools, jobs, rules, hosts
    builtins: dict[str, Callable[..., int]]  # the language's builtins (xargs and env tell them apart)

    def out(self, data: bytes | str, fd: int = 1) -> None:
        """Write to a descriptor (1 unless said); a closed one raises EBADF."""

    def write_err(self, text: str) -> None:
        """Write text to standard error as it is."""

    def error(self, message: str) -> None:
        """`name: line N: message` on standard error, bash's way."""

    def exported_env(self) -> dict[str, str]:
        """The exported variables: what a program would get as its environment."""

    def get_param(self, name: str) -> str:
        """A shell parameter's value ("" when unset)."""

    def get_param_or_none(self, name: str) -> str | None:
        """A shell parameter's value, None when unset."""

    def utf8_locale(self) -> bool:
        """Whether the locale (LC_ALL, LC_CTYPE, LANG) is a UTF-8 one."""

    def tool(self, name: str) -> Command | None:
        """The K tool a command name runs here (None: none, or a K file shadows it on $PATH)."""

    def run_command(self, argv: list[str], node: Any) -> int:
        """Run a command by name as the shell would (function, builtin, tool, program)."""

    def run_script(self, script: str, name: str, fds: dict[int, Stream]) -> int:
        """Shell text run in a subshell with these descriptors; this shell's state unchanged."""
