"""csplit (N, /RE/[OFFSET], %RE%[OFFSET], {N}, {*}; -f -b -n -z -s -k), as GNU coreutils 9.1.

The input is cut into xx00, xx01, ... before line N or a line matching RE (an offset moves the
cut); each file's size is printed as it is written. When a pattern fails (no match, a line
past the end), what is left goes into one more file, the error is reported, and every file
written is removed unless -k keeps them, as GNU does.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from kshell.exec import regexes
from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.regex import RegexError, translate
from kshell.tools.text.textio import message, read_all, split_lines

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"prefix": ("f", REQUIRED), "suffix-format": ("b", REQUIRED), "digits": ("n", REQUIRED),
         "keep-files": ("k", NONE), "quiet": ("s", NONE), "silent": ("s", NONE), "elide-empty-files": ("z", NONE),
         "suppress-matched": ("suppress-matched", NONE), "help": ("help", NONE), "version": ("version", NONE)}
_REGEX = re.compile(r"([/%])(.*)\1([+-]?\d+)?\Z", re.S)


class _Pattern:
    """One operand: a line number or a regex (skipping with %), its offset and repeat count
    (-1 for {*})."""

    def __init__(self, text: str, line: int | None = None, rx: object = None, skip: bool = False,
                 offset: int = 0) -> None:
        self.text, self.line, self.rx, self.skip, self.offset, self.repeat = text, line, rx, skip, offset, 0


def _patterns(operands: list[str]) -> list[_Pattern]:
    found: list[_Pattern] = []
    last_line = 0
    for text in operands:
        m = re.fullmatch(r"\{(\d+|\*)\}", text)
        if m:
            if not found:
                raise Fail(f"'{text}': invalid pattern")
            found[-1].repeat = -1 if m.group(1) == "*" else int(m.group(1))
            continue
        r = _REGEX.match(text)
        if r:
            try:
                source, _ = translate(r.group(2), False)
                rx = regexes.compile(source.encode("utf-8", "surrogateescape"))
            except (RegexError, *regexes.error) as e:
                shown = text.replace("\\", "\\\\")
                raise Fail(f"'{shown}': invalid regular expression: {getattr(e, 'message', e)}") from None
            found.append(_Pattern(text, rx=rx, skip=r.group(1) == "%", offset=int(r.group(3) or 0)))
            continue
        if not text.isdigit():
            raise Fail(f"'{text}': invalid pattern")
        n = int(text)
        if n == 0:
            raise Fail(f"{text}: line number must be greater than zero")
        if n < last_line:
            raise Fail(f"line number '{text}' is smaller than preceding line number, {last_line}")
        last_line = n
        found.append(_Pattern(text, line=n))
    return found


@tool("csplit")
def csplit(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "f:b:n:ksz", _LONG)
    prefix, suffix, digits = "xx", None, 2
    keep = quiet = elide = False
    for key, value in opts:
        if key == "f":
            prefix = value
        elif key == "b":
            suffix = value
        elif key == "n":
            if not value.isdigit():
                raise Fail(f"invalid number: '{value}'")
            digits = int(value)
        elif key == "k":
            keep = True
        elif key == "s":
            quiet = True
        elif key == "z":
            elide = True
        elif key == "help":
            sh.out(b"Usage: csplit [OPTION]... FILE PATTERN...\n")
            return 0
        elif key == "version":
            sh.out(b"csplit (GNU coreutils) 9.1\n")
            return 0
    if not operands:
        raise Usage("missing operand")
    if len(operands) == 1:
        raise Usage(f"missing operand after '{operands[0]}'")
    patterns = _patterns(operands[1:])
    name = operands[0]
    try:
        data = read_all(sh, name)
    except OSError as e:
        raise Fail(f"cannot open '{name}' for reading: {message(e)}") from None
    lines = [ln + b"\n" for ln in split_lines(data)]
    if data and not data.endswith(b"\n"):
        lines[-1] = lines[-1][:-1]
    total = len(lines)
    written: list[str] = []

    def emit(first: int, stop: int) -> None:
        """Write lines [first, stop) (0-based) as the next file, and print its size."""
        chunk = b"".join(lines[first:stop])
        if elide and not chunk:
            return
        number = len(written)
        path = prefix + (suffix % number if suffix is not None else f"{number:0{digits}d}")
        handle = sh.fs.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            handle.pwrite(chunk, 0)
        finally:
            handle.close()
        written.append(path)
        if not quiet:
            sh.out(b"%d\n" % len(chunk))

    start = 0  # the first line not yet written or skipped
    current = 0  # lines searched so far: a regex search starts after the last match
    try:
        for p in patterns:
            rep = 0
            while p.repeat == -1 or rep <= p.repeat:
                where = f" on repetition {rep}" if rep else ""
                if p.line is not None:
                    target = p.line * (rep + 1)
                    if target > total:
                        emit(start, total)
                        raise Fail(f"'{p.text}': line number out of range{where}")
                    emit(start, target - 1)
                    start = current = target - 1
                else:
                    hit = next((i for i in range(current, total) if p.rx.search(lines[i].rstrip(b"\n"))), None)
                    if hit is None:
                        if p.repeat == -1:
                            break
                        if not p.skip:
                            emit(start, total)
                        raise Fail(f"'{p.text}': match not found{where}")
                    cut = hit + p.offset
                    if cut > total or cut < start:
                        emit(start, total)
                        raise Fail(f"'{p.text}': line number out of range{where}")
                    if not p.skip:
                        emit(start, cut)
                    start, current = cut, hit + 1
                rep += 1
        emit(start, total)
    except Fail:
        if not keep:
            for path in written:
                sh.fs.unlink(path)
        raise
    except OSError as e:
        raise Fail(f"{e.filename or prefix}: {message(e)}") from None
    return 0
