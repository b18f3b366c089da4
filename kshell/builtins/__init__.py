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

from kshell.core.errors import DiscardCommand
from kshell.exec.interp import Builtin, Interp

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


class Usage(Exception):
    """A builtin's option error, already reported with its usage line: status 2 (EX_USAGE)."""


def getopt(sh: Interp, name: str, args: list[str], spec: str,
           usage: str) -> tuple[list[tuple[str, str]], list[str]]:
    """bash's internal_getopt for a builtin: options grouped (`-ns`), an argument of a letter
    followed by `:` in `spec` taken from the rest of the word or the next one, `--` or a word
    not starting with `-` (or a lone `-`) ending them; `;` after a letter (bash's optional
    argument) takes only the rest of the word, `-n100`. An invalid option or a missing argument
    is reported as bash does (`NAME: -x: invalid option` and the usage line) and raises Usage."""
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        j = 1
        while j < len(word):
            c = word[j]
            at = spec.find(c)
            if at < 0 or c in ":;":
                sh.error(f"{name}: -{c}: invalid option")
                sh.write_err(f"{name}: usage: {usage}\n")
                raise Usage
            if spec[at + 1:at + 2] == ";":  # an optional argument: the rest of the word only
                found.append((c, word[j + 1:]))
                break
            if spec[at + 1:at + 2] == ":":
                value = word[j + 1:]
                if not value:
                    i += 1
                    if i >= len(args):
                        sh.error(f"{name}: -{c}: option requires an argument")
                        sh.write_err(f"{name}: usage: {usage}\n")
                        raise Usage
                    value = args[i]
                found.append((c, value))
                break
            found.append((c, ""))
            j += 1
        i += 1
    return found, args[i:]


def builtin(*names: str) -> Callable[[Builtin], Builtin]:
    def register(fn: Builtin) -> Builtin:
        for name in names:
            BUILTINS[name] = fn
        return fn
    return register
