"""shuf (-e, -i LO-HI, -n, -r, -o, -z, --random-source), as GNU coreutils 9.1.

With --random-source=FILE the permutation is GNU's own for the same bytes: the integers are
drawn as gnulib's randint draws them (whole bytes, the unused part of a draw kept for the next
one) and the permutation is its randperm (a Fisher-Yates pass over the first COUNT places), so
a test that pins its shuffle with a file gets the lines a real shuf would print.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.textio import Output, message, open_chunks, read_all

if TYPE_CHECKING:
    from collections.abc import Iterator

    from kshell.core.context import ToolContext

_LONG = {"echo": ("e", NONE), "input-range": ("i", REQUIRED), "head-count": ("n", REQUIRED),
         "output": ("o", REQUIRED), "random-source": ("random-source", REQUIRED), "repeat": ("r", NONE),
         "zero-terminated": ("z", NONE), "help": ("help", NONE), "version": ("version", NONE)}


class _Randint:
    """gnulib's randint over a byte stream: uniform integers in [0, n) with rejection, keeping
    the part of each draw a choice did not use."""

    def __init__(self, source: Iterator[bytes], name: str) -> None:
        self.source = source
        self.name = name
        self.pending = b""
        self.num = 0
        self.max = 0

    def _bytes(self, n: int) -> bytes:
        while len(self.pending) < n:
            chunk = next(self.source, b"")
            if not chunk:
                raise Fail(f"'{self.name}': end of file")
            self.pending += chunk
        out, self.pending = self.pending[:n], self.pending[n:]
        return out

    def choose(self, choices: int) -> int:
        genmax = choices - 1
        num, top = self.num, self.max
        while True:
            if top < genmax:
                count = 0
                while top < genmax:
                    top = (top << 8) + 255
                    count += 1
                for b in self._bytes(count):
                    num = (num << 8) + b
            if top == genmax:
                self.num = self.max = 0
                return num
            excess = top - genmax
            unusable = excess % choices
            if num <= top - unusable:
                self.num, self.max = num // choices, excess // choices
                return num % choices
            num, top = num % choices, unusable - 1


def _urandom() -> Iterator[bytes]:
    while True:
        yield os.urandom(4096)


@tool("shuf")
def shuf(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "ei:n:o:rz", _LONG)
    echo = repeat = False
    span: tuple[int, int] | None = None
    count: int | None = None
    output: str | None = None
    source: str | None = None
    end = b"\n"
    for key, value in opts:
        if key == "e":
            echo = True
        elif key == "i":
            if span is not None:
                raise Usage("multiple -i options specified")
            m = re.match(r"([0-9]+)-([0-9]+)\Z", value)
            if not m or int(m.group(2)) + 1 < int(m.group(1)):
                raise Fail(f"invalid input range: '{value}'")
            span = (int(m.group(1)), int(m.group(2)))
        elif key == "n":
            if not value.strip().isdigit():
                raise Fail(f"invalid line count: '{value}'")
            count = int(value) if count is None else min(count, int(value))
        elif key == "o":
            output = value
        elif key == "random-source":
            if source is not None and source != value:
                raise Fail("multiple random sources specified")
            source = value
        elif key == "r":
            repeat = True
        elif key == "z":
            end = b"\0"
        elif key == "help":
            sh.out(b"Usage: shuf [OPTION]... [FILE]\n  or:  shuf -e [OPTION]... [ARG]...\n"
                   b"  or:  shuf -i LO-HI [OPTION]...\n")
            return 0
        elif key == "version":
            sh.out(b"shuf (GNU coreutils) 9.1\n")
            return 0
    if echo and span is not None:
        raise Usage("cannot combine -e and -i options")
    if span is not None and operands:
        raise Usage(f"extra operand '{operands[0]}'")
    if not echo and len(operands) > 1:
        raise Usage(f"extra operand '{operands[1]}'")
    if echo:
        lines = [a.encode("utf-8", "surrogateescape") for a in operands]
    elif span is not None:
        lines = []
    else:
        name = operands[0] if operands else "-"
        try:
            data = read_all(sh, name)
        except OSError as e:
            raise Fail(f"{name}: {message(e)}") from None
        lines = data.split(end)
        if lines[-1] == b"":
            lines.pop()
    total = span[1] - span[0] + 1 if span is not None else len(lines)

    def item(i: int) -> bytes:
        return b"%d" % (span[0] + i) if span is not None else lines[i]

    if source is not None:
        try:
            chunks = open_chunks(sh, source, 4096)
        except OSError as e:
            raise Fail(f"{source}: {message(e)}") from None
    else:
        chunks = _urandom()
    rand = _Randint(chunks, source or "getrandom")
    out = Output(sh)
    written: list[bytes] = []
    emit = out.write if output is None else written.append
    if repeat:
        if total == 0:
            if count:
                raise Fail("no lines to repeat")
        else:
            n = 0
            cancel = sh.session.cancel
            while count is None or n < count:
                emit(item(rand.choose(total)) + end)
                n += 1
                if n % 4096 == 0:
                    cancel.check()
    else:
        head = total if count is None else min(count, total)
        perm = list(range(total)) if span is None or head * 4 > total else None
        swapped: dict[int, int] = {}
        for i in range(head):
            j = i + rand.choose(total - i)
            if perm is not None:
                perm[i], perm[j] = perm[j], perm[i]
                emit(item(perm[i]) + end)
            else:  # a sparse Fisher-Yates for a few picks of a huge range
                vi, vj = swapped.get(i, i), swapped.get(j, j)
                swapped[i], swapped[j] = vj, vi
                emit(item(vj) + end)
    if output is not None:  # written once the input is read: -o may name the input file
        try:
            handle = sh.fs.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            handle.pwrite(b"".join(written), 0)
            handle.close()
        except OSError as e:
            raise Fail(f"{output}: {message(e)}") from None
    out.flush()
    return 0
