"""which (Debian's: the first executable on $PATH, exit 1 when any is missing)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kshell.core.context import ToolContext


def _path_dirs(sh: ToolContext) -> list[str]:
    path = sh.get_param_or_none("PATH")
    return (path if path is not None else "/usr/local/bin:/usr/bin:/bin").split(":")


def tool_dir(sh: ToolContext) -> str:
    """Where a K tool is reported to live: the first $PATH directory a GNU tool would be in."""
    dirs = _path_dirs(sh)
    return "/usr/bin" if "/usr/bin" in dirs else (dirs[0] or ".")


def which(sh: ToolContext, argv: list[str]) -> int:
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
