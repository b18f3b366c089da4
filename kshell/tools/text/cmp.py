"""cmp (-b -l -s -n -i, SKIP operands), as GNU diffutils: exit 0 same, 1 different, 2 trouble."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.core.options import NONE, REQUIRED, Usage, parse
from kshell.tools.text.textio import message, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"print-bytes": ("b", NONE), "ignore-initial": ("i", REQUIRED), "verbose": ("l", NONE),
         "bytes": ("n", REQUIRED), "quiet": ("s", NONE), "silent": ("s", NONE),
         "help": ("help", NONE), "version": ("v", NONE)}
_NUM = re.compile(r"(\d+)([kKMGTPEZY]?)(i?B?)\Z")


def _number(text: str) -> int | None:
    m = _NUM.match(text)
    if not m:
        return None
    power = " KMGTPEZY".index(m.group(2).upper()) if m.group(2) else 0
    base = 1000 if m.group(3) == "B" else 1024
    return int(m.group(1)) * base**power


def _show(b: int) -> str:
    prefix = ""
    if b >= 128:
        prefix, b = "M-", b - 128
    if b < 32:
        return f"{prefix}^{chr(b + 64)}"
    if b == 127:
        return f"{prefix}^?"
    return prefix + chr(b)


def cmp(sh: ToolContext, argv: list[str]) -> int:
    try:
        return _cmp(sh, argv)
    except Usage as e:
        sh.write_err(f"cmp: {e.message}\ncmp: Try 'cmp --help' for more information.\n")
        return 2


def _cmp(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "bi:ln:sv", _LONG)
    show_bytes = verbose = quiet = False
    limit: int | None = None
    skips = [0, 0]
    for key, value in opts:
        if key == "b":
            show_bytes = True
        elif key == "l":
            verbose = True
        elif key == "s":
            quiet = True
        elif key == "n":
            n = _number(value)
            if n is None:
                raise Usage(f"invalid --bytes value '{value}'")
            limit = n
        elif key == "i":
            first, colon, second = value.partition(":")
            a, b = _number(first), _number(second) if colon else _number(first)
            if a is None or b is None:
                raise Usage(f"invalid --ignore-initial value '{value}'")
            skips = [a, b]
        elif key == "v":
            sh.out("cmp (GNU diffutils) 3.8\n")
            return 0
        elif key == "help":
            sh.out("Usage: cmp [OPTION]... FILE1 [FILE2 [SKIP1 [SKIP2]]]\n")
            return 0
    if verbose and quiet:
        raise Usage("options -l and -s are incompatible")
    if not files:
        raise Usage("missing operand after 'cmp'")
    if len(files) > 4:
        raise Usage(f"extra operand '{files[4]}'")
    for i, text in enumerate(files[2:4]):
        n = _number(text)
        if n is None:
            raise Usage(f"invalid --ignore-initial value '{text}'")
        skips[i] = n
    names = [files[0], files[1] if len(files) > 1 else "-"]
    data: list[bytes] = []
    for name in names:
        try:
            data.append(read_all(sh, name))
        except OSError as e:
            if not quiet:
                sh.write_err(f"cmp: {name}: {message(e)}\n")
            return 2
    if names[0] == names[1] and names[0] != "-" and skips[0] == skips[1]:
        return 0
    a, b = data[0][skips[0]:], data[1][skips[1]:]
    if limit is not None:
        a, b = a[:limit], b[:limit]
    common = min(len(a), len(b))
    status = 0
    if verbose:
        width = len(str(common if limit is None else min(limit, common))) if common else 1
        lines_out: list[str] = []
        for i in range(common):
            if a[i] != b[i]:
                if show_bytes:
                    lines_out.append(f"{i + 1:>{width}} {a[i]:3o} {_show(a[i]):<4} {b[i]:3o} {_show(b[i])}\n")
                else:
                    lines_out.append(f"{i + 1:>{width}} {a[i]:3o} {b[i]:3o}\n")
                status = 1
        sh.out("".join(lines_out))
    else:
        for i in range(common):
            if a[i] != b[i]:
                if not quiet:
                    line = a[:i].count(b"\n") + 1
                    unit = "byte" if show_bytes or sh.utf8_locale() else "char"
                    text = f"{names[0]} {names[1]} differ: {unit} {i + 1}, line {line}"
                    if show_bytes:
                        text += f" is {a[i]:3o} {_show(a[i])} {b[i]:3o} {_show(b[i])}"
                    sh.out(text + "\n")
                return 1
    if len(a) != len(b):
        short = 0 if len(a) < len(b) else 1
        if not quiet:
            piece = (a, b)[short]
            if not piece:
                sh.write_err(f"cmp: EOF on {names[short]} which is empty\n")
            elif verbose:
                sh.write_err(f"cmp: EOF on {names[short]} after byte {len(piece)}\n")
            else:
                newlines = piece.count(b"\n")
                where = f"line {newlines}" if piece.endswith(b"\n") else f"in line {newlines + 1}"
                sh.write_err(f"cmp: EOF on {names[short]} after byte {len(piece)}, {where}\n")
        return 1
    return status
