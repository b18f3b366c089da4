"""bash's `bind` in a shell without line editing (every K shell: commands never come from
readline), as bash 5.2 behaves in a script: each call first warns `line editing not enabled`,
the listings show readline's defaults (kshell.builtins.readline_defaults), -q answers from
them, a bad keymap or an unreadable -f file is refused as bash refuses it. Bindings and
variables that bind sets are accepted and not kept: nothing would use them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.builtins import Usage, builtin, getopt
from kshell.builtins.readline_defaults import C_LOCALE, UTF8_LOCALE
from kshell.exec import redirects as redir

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_USAGE = ("bind [-lpsvPSVX] [-m keymap] [-f filename] [-q name] [-u name] [-r keyseq] "
          "[-x keyseq:shell-command] [keyseq:readline-function or readline-command]")
KEYMAPS = frozenset({"emacs", "emacs-standard", "emacs-meta", "emacs-ctlx", "vi", "vi-move",
                     "vi-command", "vi-insert"})
_INVOKED = re.compile(r"^(\S+) can be found on (.*)\.$")


def _listings(sh: Interp) -> dict[str, str]:
    """Readline's defaults for the shell's locale (its meta keys and eight-bit variables)."""
    return UTF8_LOCALE if sh.utf8_locale() else C_LOCALE


_SET = re.compile(r"^\s*set\s+(\S+)\s*(.*?)\s*$")
_LINE_V = re.compile(r"^set (\S+) (.*)$")


def _defaults(listings: dict[str, str]) -> dict[str, str]:
    """Readline's variables and their default values, in `bind -v` order."""
    return {m.group(1): m.group(2) for m in map(_LINE_V.match, listings["v"].splitlines()) if m}


def _set_variable(sh: Interp, line: str) -> None:
    """A `set NAME VALUE` line (rl_variable_bind): a boolean is on for `on` or `1`, any other
    value turns it off; an unknown name is reported in readline's words."""
    m = _SET.match(line)
    if m is None:
        return
    name, value = m.group(1), m.group(2)
    defaults = _defaults(_listings(sh))
    if name not in defaults:
        sh.write_err(f"readline: {name}: unknown variable name\n")
        return
    if defaults[name] in ("on", "off"):
        value = "on" if value.lower() in ("on", "1") else "off"
    sh.readline_vars[name] = value


def _variables(sh: Interp, listings: dict[str, str], style: str) -> str:
    values = {**_defaults(listings), **sh.readline_vars}
    if style == "v":
        return "".join(f"set {n} {v}\n" for n, v in values.items())
    return "".join(f"{n} is set to `{v}'\n" for n, v in values.items())


def _query(sh: Interp, name: str) -> int:
    listings = _listings(sh)
    if name not in listings["l"].split():
        sh.error(f"bind: `{name}': unknown function name")
        return 1
    for line in listings["P"].splitlines():
        m = _INVOKED.match(line)
        if m and m.group(1) == name:
            sh.out(f"{name} can be invoked via {m.group(2)}.\n")
            return 0
    sh.out(f"{name} is not bound to any keys.\n")
    return 1


@builtin("bind")
def bind(sh: Interp, argv: list[str]) -> int:
    sh.error("bind: warning: line editing not enabled")
    try:
        opts, args = getopt(sh, "bind", argv[1:], "lvpVPsSXf:q:u:m:r:x:", _USAGE)
    except Usage:
        return 2
    status = 0
    for c, value in opts:
        if c == "m" and value not in KEYMAPS:
            sh.error(f"bind: `{value}': invalid keymap name")
            return 1
    listings = _listings(sh)
    for c, value in opts:
        if c in "vV":
            sh.out(_variables(sh, listings, c))
        elif c in listings:
            sh.out(listings[c])
        elif c == "f":
            try:
                text = sh.fs.read_file(value).decode("utf-8", "surrogateescape")
            except OSError as e:
                sh.error(f"bind: {value}: cannot read: {redir.os_message(e)}")
                status = 1
                continue
            for line in text.splitlines():
                _set_variable(sh, line)
        elif c == "q":
            status = _query(sh, value) or status
        elif c == "x" and not value.lstrip().startswith('"'):
            sh.error(f"bind: {value}: first non-whitespace character is not `\"'")
            status = 1
    for arg in args:
        _set_variable(sh, arg)
    return status
