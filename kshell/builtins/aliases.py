"""alias and unalias. The table lives on the shell; the parser expands it (for the lines read
after a definition) only when `shopt -s expand_aliases` is on, as in a non-interactive bash."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.builtins import Usage, builtin, getopt

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_NOT_IN_NAME = frozenset(" \t\n|&;()<>'\"\\`$/=")


def _shown(name: str, value: str) -> str:
    quoted = "'" + value.replace("'", "'\\''") + "'"
    return f"alias {'-- ' if name.startswith('-') else ''}{name}={quoted}\n"


@builtin("alias")
def alias(sh: Interp, argv: list[str]) -> int:
    try:
        found, args = getopt(sh, "alias", argv[1:], "p", "alias [-p] [name[=value] ... ]")
    except Usage:
        return 2
    show_all = bool(found)
    if not args or show_all:
        sh.out("".join(_shown(name, sh.aliases[name]) for name in sorted(sh.aliases)))
    status = 0
    for arg in args:
        name, eq, value = arg.partition("=")
        if eq and name:
            if any(c in _NOT_IN_NAME for c in name):
                sh.error(f"alias: `{name}': invalid alias name")
                status = 1
                continue
            sh.aliases[name] = value
        elif arg in sh.aliases:
            sh.out(_shown(arg, sh.aliases[arg]))
        else:
            sh.error(f"alias: {arg}: not found")
            status = 1
    return status


@builtin("unalias")
def unalias(sh: Interp, argv: list[str]) -> int:
    try:
        found, args = getopt(sh, "unalias", argv[1:], "a", "unalias [-a] name [name ...]")
    except Usage:
        return 2
    if found:
        sh.aliases.clear()
        return 0
    if not args:
        sh.write_err("unalias: usage: unalias [-a] name [name ...]\n")
        return 2
    status = 0
    for name in args:
        if sh.aliases.pop(name, None) is None:
            sh.error(f"unalias: {name}: not found")
            status = 1
    return status
