"""The builtins the shell language needs (echo, printf, test, read, cd, set, declare, ...).

A builtin is `fn(sh, argv) -> status`; it writes through `sh.out` and reports errors with
`sh.error("name: ...")`, which adds bash's `NAME: line N: ` prefix. External tools (ls, grep,
...) are registered separately, in `Session.tools`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kshell.core.errors import DiscardCommand
from kshell.exec.interp import Builtin, Interp

BUILTINS: dict[str, Builtin] = {}
SPECIAL = frozenset({":", ".", "break", "continue", "eval", "exec", "exit", "export", "readonly",
                     "return", "set", "shift", "trap", "unset", "source"})


_LEGAL_NUMBER = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)[ \t]*\Z")


def legal_number(text: str) -> int | None:
    """A numeric argument as bash's legal_number reads it (strtoimax's leading white space
    and sign, decimal digits, trailing blanks only), else None."""
    m = _LEGAL_NUMBER.match(text)
    return int(m.group(1)) if m is not None else None


def numeric_arg(sh: Interp, name: str, args: list[str]) -> int | None:
    """bash's get_numeric_arg: `args[0]` as a number, or None once said that it is none; a
    further argument discards the command (bash's `too many arguments`)."""
    value = legal_number(args[0])
    if value is None:
        sh.error(f"{name}: {args[0]}: numeric argument required")
        return None
    if len(args) > 1:
        sh.error(f"{name}: too many arguments")
        raise DiscardCommand(1)
    return value


def builtin(*names: str) -> Callable[[Builtin], Builtin]:
    def register(fn: Builtin) -> Builtin:
        for name in names:
            BUILTINS[name] = fn
        return fn
    return register


from kshell.builtins import (  # noqa: E402,F401  (registration)
    aliases,
    dirstack,
    flow,
    help,
    history,
    io,
    jobs,
    mapfile,
    test,
    vars,
)
