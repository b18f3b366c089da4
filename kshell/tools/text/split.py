"""split (-l -b -n N -d -x -a --additional-suffix --verbose, FILE PREFIX), as GNU coreutils,
including the widening of default-length suffixes (xyz after xzaaa...)."""

from __future__ import annotations

import errno
import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING

from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, parse_size, tool
from kshell.tools.text.textio import message, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"lines": ("l", REQUIRED), "bytes": ("b", REQUIRED), "number": ("n", REQUIRED),
         "numeric-suffixes": ("d", OPTIONAL), "hex-suffixes": ("x", OPTIONAL),
         "suffix-length": ("a", REQUIRED), "additional-suffix": ("add", REQUIRED),
         "verbose": ("verbose", NONE), "elide-empty-files": ("e", NONE),
         "help": ("help", NONE), "version": ("version", NONE)}


def _suffixes(alphabet: str, length: int, auto: bool) -> Iterator[str]:
    prefix = ""
    while True:
        for combo in itertools.product(alphabet, repeat=length):
            if auto and combo[0] == alphabet[-1]:
                break
            yield prefix + "".join(combo)
        if not auto:
            return
        prefix += alphabet[-1]
        length += 1


def _count(text: str, what: str) -> int:
    parsed = parse_size(text)
    if parsed is None or parsed[0]:
        raise Fail(f"invalid number of {what}: '{text}'")
    if parsed[1] == 0:
        raise Fail(f"invalid number of {what}: '{text}': Numerical result out of range")
    return parsed[1]


@tool("split")
def split(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "l:b:n:d::x::a:e", _LONG)
    mode, amount = "l", 1000
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    length: int | None = None
    extra = ""
    verbose = elide = False
    for key, value in opts:
        if key == "l":
            mode, amount = "l", _count(value, "lines")
        elif key == "b":
            mode, amount = "b", _count(value, "bytes")
        elif key == "n":
            if not value.isdigit():
                raise Fail(f"invalid number of chunks: '{value}'")
            mode, amount = "n", _count(value, "chunks")
        elif key == "d":
            alphabet = "0123456789"
        elif key == "x":
            alphabet = "0123456789abcdef"
        elif key == "a":
            if not value.isdigit():
                raise Fail(f"invalid suffix length: '{value}'")
            length = int(value)
        elif key == "add":
            if "/" in value:
                raise Fail(f"invalid suffix '{value}', contains directory separator")
            extra = value
        elif key == "verbose":
            verbose = True
        elif key == "e":
            elide = True
        elif key == "help":
            sh.out("Usage: split [OPTION]... [FILE [PREFIX]]\n")
            return 0
    if len(operands) > 2:
        raise Usage(f"extra operand '{operands[2]}'")
    name = operands[0] if operands else "-"
    prefix = operands[1] if len(operands) > 1 else "x"
    try:
        data = read_all(sh, name)
    except OSError as e:
        if e.errno == errno.EISDIR:
            raise Fail(f"{name}: {message(e)}") from None
        raise Fail(f"cannot open '{name}' for reading: {message(e)}") from None
    pieces: list[bytes] = []
    if mode == "l":
        lines = data.splitlines(keepends=True)
        pieces = [b"".join(lines[i : i + amount]) for i in range(0, len(lines), amount)]
    elif mode == "b":
        pieces = [data[i : i + amount] for i in range(0, len(data), amount)]
    else:
        size = len(data)
        step = max(1, size // amount)
        bounds = [min(i * step, size) for i in range(amount)] + [size]
        pieces = [data[bounds[i] : bounds[i + 1]] for i in range(amount)]
        if elide:
            pieces = [p for p in pieces if p]
    auto = length is None and mode != "n"
    width = length if length is not None else 2
    if mode == "n" and length is None:
        while len(alphabet) ** width < amount:
            width += 1
    names = _suffixes(alphabet, width, auto)
    fs = sh.fs
    for piece in pieces:
        suffix = next(names, None)
        if suffix is None:
            raise Fail("output file suffixes exhausted")
        target = prefix + suffix + extra
        if verbose:
            sh.out(f"creating file '{target}'\n")
        try:
            fs.write_file(target, piece)
        except OSError as e:
            raise Fail(f"{target}: {message(e)}") from None
    return 0
