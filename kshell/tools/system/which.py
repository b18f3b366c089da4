"""which (Debian's: the first executable on $PATH, exit 1 when any is missing) and help (what
the K shell offers: its builtins and its in-process tools)."""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING

from kshell.tools.options import tool

if TYPE_CHECKING:
    from kshell.exec.interp import Interp


def _path_dirs(sh: Interp) -> list[str]:
    path = sh.get_param_or_none("PATH")
    return (path if path is not None else "/usr/local/bin:/usr/bin:/bin").split(":")


def tool_dir(sh: Interp) -> str:
    """Where a K tool is reported to live: the first $PATH directory a GNU tool would be in."""
    dirs = _path_dirs(sh)
    return "/usr/bin" if "/usr/bin" in dirs else (dirs[0] or ".")


def which(sh: Interp, argv: list[str]) -> int:
    show_all = False
    args = argv[1:]
    while args and args[0].startswith("-") and args[0] != "-":  # the script's getopts
        arg = args.pop(0)
        if arg == "--":
            break
        for c in arg[1:]:
            if c != "a":  # dash's getopts complains, the script prints its usage
                sh.write_err(f"Illegal option -{c}\n")
                sh.out("Usage: /usr/bin/which [-a] args\n")
                return 2
            show_all = True
    names = args
    if not names:
        return 1
    status = 0
    tools = sh.session.tools
    for name in names:
        found: list[str] = []
        if "/" in name:
            if sh.fs.access(name, 1) and not sh.fs.stat(name).is_dir if sh.fs.exists(name) else False:
                found.append(name)
        else:
            for d in _path_dirs(sh):
                candidate = f"{d or '.'}/{name}"
                ok = False
                try:
                    ok = not sh.fs.stat(candidate).is_dir and sh.fs.access(candidate, 1)
                except OSError:
                    ok = False
                if not ok and name in tools and d == tool_dir(sh):
                    ok = True
                if ok:
                    found.append(candidate)
                    if not show_all:
                        break
        if found:
            sh.out("".join(f + "\n" for f in found))
        else:
            status = 1
    return status


@tool("help")
def help_(sh: Interp, argv: list[str]) -> int:
    """bash's `help [-dms] [pattern ...]`: its option errors, prefix or glob matching and the
    no-match error; what it prints about a command is the K shell's own (builtins and tools)."""
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
    names = sorted(set(builtins) | set(tools))
    found = False
    for pattern in args:
        hits = [n for n in names if n.startswith(pattern) or fnmatch.fnmatchcase(n, pattern)]
        if not hits:
            continue
        found = True
        if any(c in pattern for c in "*?["):
            sh.out(f"Shell commands matching keyword `{pattern}'\n\n")
        for name in hits:
            what = ("a builtin of the K shell, as in bash" if name in sh.builtins else
                    f"a K tool that runs in-process on the VFS, as GNU {name}; `{name} --help`")
            if style == "d":
                sh.out(f"{name} - {what}.\n")
            elif style == "s":
                sh.out(f"{name}: {what}.\n")
            elif style == "m":
                sh.out(f"NAME\n    {name} - {what}.\n\n")
            else:
                sh.out(f"{name}: {what}.\n")
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
