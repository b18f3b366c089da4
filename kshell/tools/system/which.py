"""which (Debian's: the first executable on $PATH, exit 1 when any is missing) and help (what
the K shell offers: its builtins and its in-process tools)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.tools.text.options import NONE, parse, tool

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
    names: list[str] = []
    for a in argv[1:]:
        if a == "-a" and not names:
            show_all = True
        elif a.startswith("-") and not names:
            sh.write_err("Usage: /usr/bin/which [-a] args\n")
            return 2
        else:
            names.append(a)
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
    parse(argv, "", {"help": ("help", NONE)})
    builtins = sorted(sh.builtins)
    tools = sorted(sh.session.tools)
    out = ["K shell: a bash-compatible shell whose commands run in-process on the VFS.",
           "", "Shell builtins:", _columns(builtins), "", "Tools:", _columns(tools), "",
           "Each tool follows its GNU counterpart; `CMD --help` where the tool offers it.", ""]
    sh.out("\n".join(out))
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
