"""The builtins the shell language needs (echo, printf, test, read, cd, set, declare, ...).

The modules here register their builtins in `BUILTINS` when imported; kshell.session, the
wiring, imports them all and hands the table to the interpreter. A builtin is
`fn(sh, argv) -> status`; it writes through `sh.out` and reports errors with
`sh.error("name: ...")`, which adds bash's `NAME: line N: ` prefix. External tools (ls, grep,
...) are registered separately, in `Session.tools`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kshell.core.context import Command as Builtin
from kshell.core.context import ToolContext
from kshell.core.errors import DiscardCommand

BUILTINS: dict[str, Builtin] = {}
# bash's special builtins (`enable -s`)
SPECIAL = frozenset({":", ".", "break", "continue", "eval", "exec", "exit", "export", "readonly",
                     "return", "set", "shift", "trap", "unset", "source", "times"})
# K builtins that stand for programs bash runs from a file (/bin/sh, /bin/bash): not listed as
# builtins by `enable` and `compgen -b`
PROGRAMS = frozenset({"sh", "bash"})


_LEGAL_NUMBER = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)[ \t]*\Z")


def legal_number(text: str) -> int | None:
    """A numeric argument as bash's legal_number reads it (strtoimax's leading white space
    and sign, decimal digits, trailing blanks only), else None."""
    m = _LEGAL_NUMBER.match(text)
    return int(m.group(1)) if m is not None else None


def numeric_arg(sh: ToolContext, name: str, args: list[str]) -> int | None:
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


class Usage(Exception):
    """A builtin's option error, already reported with its usage line: status 2 (EX_USAGE)."""


def getopt(sh: ToolContext, name: str, args: list[str], spec: str,
           usage: str) -> tuple[list[tuple[str, str]], list[str]]:
    """bash's internal_getopt for a builtin, through the commands' one parser
    (kshell.core.options.parse in bash style): options grouped (`-ns`), an argument of a letter
    followed by `:` in `spec` taken from the rest of the word or the next one, `--` or a word
    not starting with `-` (or a lone `-`) ending them; `;` after a letter (bash's optional
    argument) takes only the rest of the word, `-n100`. An invalid option or a missing argument
    is reported as bash does (`NAME: -x: invalid option` and the usage line) and raises Usage."""
    from kshell.core.options import Usage as OptionError  # on first use, not at start-up
    from kshell.core.options import parse

    try:
        return parse([name, *args], spec, bash=True)
    except OptionError as e:
        sh.error(f"{name}: {e.message}")
        sh.write_err(f"{name}: usage: {usage}\n")
        raise Usage from None


def builtin(*names: str) -> Callable[[Builtin], Builtin]:
    def register(fn: Builtin) -> Builtin:
        for name in names:
            BUILTINS[name] = fn
        return fn
    return register
