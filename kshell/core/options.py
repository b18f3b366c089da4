"""The one option parser of the shell's commands, declared by a spec string: GNU getopt_long
for the tools (clustered short options, `-nVALUE`, long options with unique-prefix
abbreviation and `=VALUE`, permutation of operands, `--`; glibc's messages), and bash's
internal_getopt for the builtins (`bash=True`: no long options and no permutation, `;` after a
letter an argument from the rest of the word only, bash's messages; kshell.builtins.getopt).

`parse` returns ([(key, value)], operands) in command-line order: a flag's value is "", an
optional argument left out is None (bash style: ""), so `dict(opts)` maps each key to its last value.
A usage error raises `Usage`; `tool()` turns it into `CMD: message` + `Try 'CMD --help' ...`
and the tool's usage status, as the real tools do.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

NONE, REQUIRED, OPTIONAL = 0, 1, 2


class Usage(Exception):
    """A command-line error: printed with the `Try ... --help` hint and the usage status."""

    def __init__(self, message: str, hint: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class Fail(Exception):
    """A fatal error with a message and status, without the `--help` hint."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def _short_table(short: str) -> dict[str, int]:
    table: dict[str, int] = {}
    i = 0
    while i < len(short):
        c = short[i]
        mode = NONE
        if short[i + 1 : i + 3] == "::":
            mode, i = OPTIONAL, i + 2
        elif short[i + 1 : i + 2] == ":":
            mode, i = REQUIRED, i + 1
        table[c] = mode
        i += 1
    return table


def parse(argv: list[str], short: str, long: dict[str, tuple[str, int]] | None = None, *,
          permute: bool = True, digits: str | None = None,
          bash: bool = False) -> tuple[list[tuple[str, str]], list[str]]:
    """Split argv[1:] into ([(key, value)], operands). Short keys are the option letter; long
    options map to the key given in `long` (name -> (key, NONE|REQUIRED|OPTIONAL)). `digits`
    names the key that `-5` (an obsolete numeric option) sets. `bash`: a builtin's options, as
    bash's internal_getopt reads them (`;` in `short` for an argument from the rest of the
    word only, `--x` a cluster of `-` and `x`, operands from the first one on, bash's words)."""
    if bash:
        short, permute = short.replace(";", "::"), False
    shorts = _short_table(short)
    longs = long or {}
    opts: list[tuple[str, str]] = []
    operands: list[str] = []
    args = argv[1:]
    i = 0
    n = len(args)
    while i < n:
        arg = args[i]
        i += 1
        if arg == "--":
            operands.extend(args[i:])
            break
        if arg.startswith("--") and not bash:
            name, eq, value = arg[2:].partition("=")
            if name in longs:
                full = name
            else:
                matches = [k for k in longs if k.startswith(name)]
                keys = {longs[k] for k in matches}
                if not matches:
                    raise Usage(f"unrecognized option '{arg}'")
                if len(keys) > 1:
                    shown = " ".join(f"'--{k}'" for k in matches)
                    raise Usage(f"option '--{name}' is ambiguous; possibilities: {shown}")
                full = matches[0]
            key, mode = longs[full]
            if mode == NONE and eq:
                raise Usage(f"option '--{full}' doesn't allow an argument")
            if mode == REQUIRED and not eq:
                if i >= n:
                    raise Usage(f"option '--{full}' requires an argument")
                value = args[i]
                i += 1
            opts.append((key, value if eq or mode == REQUIRED else ("" if mode == NONE else None)))  # type: ignore[arg-type]
            continue
        if arg.startswith("-") and arg != "-":
            if digits is not None and arg[1].isdigit():
                opts.append((digits, arg[1:]))
                continue
            j = 1
            while j < len(arg):
                c = arg[j]
                j += 1
                mode = shorts.get(c)
                if mode is None:
                    raise Usage(f"-{c}: invalid option" if bash else f"invalid option -- '{c}'")
                if mode == NONE:
                    opts.append((c, ""))
                    continue
                if j < len(arg):
                    opts.append((c, arg[j:]))
                elif mode == REQUIRED:
                    if i >= n:
                        raise Usage(f"-{c}: option requires an argument" if bash
                                    else f"option requires an argument -- '{c}'")
                    opts.append((c, args[i]))
                    i += 1
                else:
                    opts.append((c, "" if bash else None))  # type: ignore[arg-type]
                break
            continue
        operands.append(arg)
        if not permute:
            operands.extend(args[i:])
            break
    return opts, operands


def tool(name: str, usage_status: int = 1, usage: str = "") -> Callable:
    """Wrap a tool body: `Usage` and `Fail` become GNU's messages and statuses."""

    def wrap(fn: Callable[[ToolContext, list[str]], int]) -> Callable[[ToolContext, list[str]], int]:
        @functools.wraps(fn)
        def run(sh: ToolContext, argv: list[str]) -> int:
            try:
                return fn(sh, argv)
            except Usage as e:
                hint = f"Try '{name} --help' for more information.\n" if e.hint else ""
                if usage and e.hint:
                    hint = usage + "\n" + hint
                sh.write_err(f"{name}: {e.message}\n{hint}")
                return usage_status
            except Fail as e:
                sh.write_err(f"{name}: {e.message}\n")
                return e.status
        return run
    return wrap


_SUFFIX = {"": 1, "b": 512, "c": 1, "w": 2, "K": 1024, "k": 1024, "KiB": 1024, "kB": 1000,
           "KB": 1000, "M": 1024**2, "MiB": 1024**2, "MB": 1000**2, "G": 1024**3, "GiB": 1024**3,
           "GB": 1000**3, "T": 1024**4, "TB": 1000**4, "P": 1024**5, "PB": 1000**5,
           "E": 1024**6, "EB": 1000**6}
_SIZE = re.compile(r"([+-]?)(\d+)([A-Za-z]*)\Z")


def parse_size(text: str) -> tuple[str, int] | None:
    """`[+-]N[suffix]` as head/tail/split read it: (sign, value), or None when invalid."""
    m = _SIZE.match(text.strip(" ") if text.startswith(" ") else text)
    if not m or m.group(3) not in _SUFFIX:
        return None
    return m.group(1), int(m.group(2)) * _SUFFIX[m.group(3)]
