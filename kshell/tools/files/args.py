"""What every file tool shares with GNU's: getopt_long option parsing (permuted operands, `--`,
clustered short flags, unambiguous long prefixes) with its exact messages, file-name quoting in
messages, and `tool: 'path': strerror` reporting."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

NO, REQUIRED, OPTIONAL = 0, 1, 2


class Usage(Exception):
    """A command-line error: the message is printed with the tool's prefix, then GNU's hint."""

    def __init__(self, message: str, hint: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class Options:
    """Parsed options in command-line order (`items`) and the operands."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str | None]] = []
        self.operands: list[str] = []

    def has(self, name: str) -> bool:
        return any(n == name for n, _ in self.items)

    def last(self, name: str, default: str | None = None) -> str | None:
        for n, v in reversed(self.items):
            if n == name:
                return v
        return default


def parse(
    argv: list[str], short: str, long: Mapping[str, tuple[str, int]] | None = None, *, permute: bool = True
) -> Options:
    """Parse argv[1:] as getopt_long does. `short` is getopt's spec ("ad:m::"); `long` maps a
    long name to (the option's key, NO/REQUIRED/OPTIONAL). A short option's key is its letter."""
    long = long or {}
    spec: dict[str, int] = {}
    i = 0
    while i < len(short):
        c = short[i]
        kind = NO
        if short[i + 1 : i + 3] == "::":
            kind, i = OPTIONAL, i + 2
        elif short[i + 1 : i + 2] == ":":
            kind, i = REQUIRED, i + 1
        spec[c] = kind
        i += 1
    out = Options()
    args = argv[1:]
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            out.operands.extend(args[i:])
            break
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name in long:
                matches = [name]
            else:
                matches = [n for n in long if n.startswith(name)]
                if len({long[n] for n in matches}) == 1:
                    matches = matches[:1]
            if not matches:
                raise Usage(f"unrecognized option '{arg}'")
            if len(matches) > 1:
                shown = " ".join(f"'--{n}'" for n in matches)
                raise Usage(f"option '--{name}' is ambiguous; possibilities: {shown}")
            full = matches[0]
            key, kind = long[full]
            if kind == NO and eq:
                raise Usage(f"option '--{full}' doesn't allow an argument")
            if kind == REQUIRED and not eq:
                if i >= len(args):
                    raise Usage(f"option '--{full}' requires an argument")
                value = args[i]
                i += 1
            out.items.append((key, value if (eq or kind == REQUIRED) else None))
            continue
        if arg.startswith("-") and arg != "-":
            j = 1
            while j < len(arg):
                c = arg[j]
                j += 1
                if c not in spec:
                    raise Usage(f"invalid option -- '{c}'")
                kind = spec[c]
                if kind == NO:
                    out.items.append((c, None))
                    continue
                rest = arg[j:]
                if rest:
                    out.items.append((c, rest))
                elif kind == REQUIRED:
                    if i >= len(args):
                        raise Usage(f"option requires an argument -- '{c}'")
                    out.items.append((c, args[i]))
                    i += 1
                else:
                    out.items.append((c, None))
                break
            continue
        out.operands.append(arg)
        if not permute:
            out.operands.extend(args[i:])
            break
    return out


def usage_error(sh: Interp, prog: str, e: Usage, status: int = 1) -> int:
    sh.write_err(f"{prog}: {e.message}\n")
    if e.hint:
        sh.write_err(f"Try '{prog} --help' for more information.\n")
    return status


def missing_operand(sh: Interp, prog: str, after: str | None = None, status: int = 1) -> int:
    text = f"missing destination file operand after {quote(after)}" if after is not None else "missing operand"
    return usage_error(sh, prog, Usage(text), status)


_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:%@^")


def quote(name: str) -> str:
    """A file name as GNU messages show it (shell-escape-always quoting): 'x', "it's"."""
    if "'" not in name:
        return f"'{name}'"
    if not any(c in name for c in '"$`\\!'):
        return f'"{name}"'
    return "'" + name.replace("'", "'\\''") + "'"


def strerror(e: OSError) -> str:
    return os.strerror(e.errno) if e.errno else (e.strerror or str(e))


def fail(sh: Interp, prog: str, what: str, e: OSError | int) -> None:
    """`prog: what: strerror` on standard error (what is already quoted by the caller)."""
    text = os.strerror(e) if isinstance(e, int) else strerror(e)
    sh.write_err(f"{prog}: {what}: {text}\n")


def env(sh: Interp, name: str) -> str | None:
    return sh.get_param_or_none(name)


def zone(sh: Interp) -> ZoneInfo:
    """The shell's time zone ($TZ; UTC when unset or unknown, as the appliance runs in UTC)."""
    name = env(sh, "TZ") or "UTC"
    try:
        return ZoneInfo(name.lstrip(":"))
    except (ValueError, OSError, KeyError):
        return ZoneInfo("UTC")


def now_ns() -> int:
    return time.time_ns()


def join(base: str, name: str) -> str:
    """`base/name` as the tools build child paths (no doubled slash after "/" or "d/")."""
    return base + name if base.endswith("/") else f"{base}/{name}"
