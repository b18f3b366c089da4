"""bash's `help [-dms] [pattern ...]`: its options, prefix or glob matching and no-match error.
A bash topic (a builtin or a compound command) is described in bash's words (its synopsis and
one-line description, kshell.builtins.help_topics); a K tool by what K makes of it."""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING

from kshell.builtins import builtin
from kshell.builtins.help_topics import TOPICS

if TYPE_CHECKING:
    from kshell.core.context import ToolContext


def _about(sh: ToolContext, name: str) -> tuple[str, str]:
    """A topic's synopsis and one-line description."""
    if name in TOPICS:
        return TOPICS[name]
    if name in sh.builtins:
        return name, "A builtin of the K shell."
    return (f"{name} [OPTION]... [ARG]...",
            f"A K tool that runs in-process on the VFS, as GNU {name}; `{name} --help'.")


@builtin("help")
def help_(sh: ToolContext, argv: list[str]) -> int:
    args = argv[1:]
    style = ""
    while args and args[0].startswith("-") and args[0] != "-":
        arg = args.pop(0)
        if arg == "--":
            break
        for c in arg[1:]:
            if c not in "dms":
                sh.error(f"help: -{c}: invalid option")
                sh.write_err("help: usage: help [-dms] [pattern ...]\n")
                return 2
            style = c
    builtins = sorted(sh.builtins)
    tools = sorted(sh.session.tools)
    if not args:
        out = ["K shell: a bash-compatible shell whose commands run in-process on the VFS.",
               "", "Shell builtins:", _columns(builtins), "", "Tools:", _columns(tools), "",
               "Each tool follows its GNU counterpart; `CMD --help` where the tool offers it.", ""]
        sh.out("\n".join(out))
        return 0
    names = list(TOPICS) + sorted((set(builtins) | set(tools)) - set(TOPICS))
    found = False
    for pattern in args:
        hits = [n for n in names if n.startswith(pattern) or fnmatch.fnmatchcase(n, pattern)]
        if not hits:
            continue
        found = True
        if any(c in pattern for c in "*?["):
            sh.out(f"Shell commands matching keyword `{pattern}'\n\n")
        for name in hits:
            synopsis, what = _about(sh, name)
            if style == "d":
                sh.out(f"{name} - {what}\n")
            elif style == "s":
                sh.out(f"{name}: {synopsis}\n")
            elif style == "m":
                sh.out(f"NAME\n    {name} - {what}\n\nSYNOPSIS\n    {synopsis}\n\n")
            else:
                sh.out(f"{name}: {synopsis}\n    {what}\n")
    if not found:
        last = args[-1]
        sh.error(f"help: no help topics match `{last}'.  Try `help help' or `man -k {last}' "
                 f"or `info {last}'.")
        return 1
    return 0


def _columns(names: list[str], width: int = 78) -> str:
    lines: list[str] = []
    line = " "
    for n in names:
        if len(line) + len(n) + 1 > width:
            lines.append(line)
            line = " "
        line += " " + n
    lines.append(line)
    return "\n".join(lines)
