"""The variables a new shell starts with, as bash sets them: the top-level shell (kshell.session)
and every child shell (`bash -c`, a script: kshell.exec.scripts) start from them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.core.variables import ARRAY, EXPORT, INTEGER, READONLY, Computed, Var
from kshell.exec.options import SET_O_NAMES, SHOPTS, option_is_set

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
BASH_VERSION = "5.2.15(1)-release"


def init_defaults(sh: Interp, pwd: str | None = None) -> None:
    """The variables a new shell starts with (environment entries already set win)."""
    table = sh.vars.table
    cwd = sh.fs.cwd.decode("utf-8", "surrogateescape")
    home = sh.fs.home.decode("utf-8", "surrogateescape")
    uid = sh.fs.cred.uid

    def default(name: str, value: str, flags: int = 0) -> None:
        if name not in table:
            table[name] = Var(value, flags)

    default("HOME", home, EXPORT)
    default("PATH", DEFAULT_PATH, EXPORT)
    table["PWD"] = Var(pwd or cwd, EXPORT)
    default("IFS", " \t\n")
    default("PS4", "+ ")
    default("PS1", "\\s-\\v\\$ ")
    default("PS2", "> ")
    default("OPTIND", "1")
    default("SHELL", "/bin/bash", EXPORT)
    default("USER", "root" if uid == 0 else "agent", EXPORT)
    default("LOGNAME", table["USER"].value if isinstance(table["USER"].value, str) else "agent", EXPORT)
    default("HOSTNAME", "k")
    default("SHLVL", "1", EXPORT)
    # what the shell is, read-only as in bash (an environment entry of the same name is ignored)
    for name, value in (("UID", str(uid)), ("EUID", str(uid)), ("PPID", "1")):
        table[name] = Var(value, INTEGER | READONLY)
    table["SHELLOPTS"] = Computed(shellopts, sh)
    table["BASHOPTS"] = Computed(bashopts, sh)
    default("BASH_VERSION", BASH_VERSION)
    default("MACHTYPE", "x86_64-pc-linux-gnu")
    default("OSTYPE", "linux-gnu")
    default("HOSTTYPE", "x86_64")
    default("TERM", "dumb", EXPORT)
    table["BASH_VERSINFO"] = Var({0: "5", 1: "2", 2: "15", 3: "1", 4: "release",
                                   5: "x86_64-pc-linux-gnu"}, ARRAY | READONLY)


def shellopts(sh: Interp) -> str:
    """$SHELLOPTS: the `set -o` options on, in the order `set -o` lists them."""
    return ":".join(name for name in SET_O_NAMES if option_is_set(sh, name))


def bashopts(sh: Interp) -> str:
    """$BASHOPTS: the shopt options on, in the order `shopt` lists them."""
    return ":".join(name for name in SHOPTS if name in sh.shopts)
