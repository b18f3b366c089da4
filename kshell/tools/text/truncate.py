"""truncate (-s SIZE with + - < > / % prefixes, -c, -r RFILE, -o), as GNU coreutils 9.1.

Agents size files for tests and preallocate outputs; the VFS stores a file's hole for free
(truncate-up writes no chunk), so growing a file here costs what it does on a real disk.
"""

from __future__ import annotations

import errno
import os
import re
from typing import TYPE_CHECKING

from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.textio import message

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"no-create": ("c", NONE), "io-blocks": ("o", NONE), "reference": ("r", REQUIRED),
         "size": ("s", REQUIRED), "help": ("help", NONE), "version": ("version", NONE)}
OFF_MAX = 2**63 - 1
_POWERS = "KMGTPEZY"
_NUMBER = re.compile(r"\s*([+-]?[0-9]+)(?:([kKmMgGtTPEZY])(B|iB)?)?\Z")


def parse_imax(text: str) -> int:
    """A signed size as GNU's xstrtoimax reads it with truncate's suffixes (k K m M g G t T P E Z
    Y, powers of 1024, or of 1000 followed by B; iB is 1024 again). Raises Fail as GNU words it."""
    m = _NUMBER.match(text)
    if not m:
        raise Fail(f"Invalid number: '{text}'")
    value = int(m.group(1))
    if m.group(2):
        base = 1000 if m.group(3) == "B" else 1024
        value *= base ** (_POWERS.index(m.group(2).upper()) + 1)
    if not -OFF_MAX - 1 <= value <= OFF_MAX:
        raise Fail(f"Invalid number: '{text}': Value too large for defined data type")
    return value


def _size_spec(text: str) -> tuple[str, int]:
    """(mode, size) from -s: mode is '' (absolute), '+' (relative, either sign), '<' (at most),
    '>' (at least), '/' (round down to a multiple) or '%' (round up to one)."""
    rest = text.lstrip()
    mode = ""
    if rest[:1] in ("<", ">", "/", "%"):
        mode, rest = rest[0], rest[1:].lstrip()
    if rest[:1] in ("+", "-"):
        if mode:
            raise Usage("multiple relative modifiers specified")
        mode = "+"
    size = parse_imax(rest)
    if mode in ("/", "%") and size == 0:
        raise Fail("division by zero")
    return mode, size


def _new_size(mode: str, size: int, current: int) -> int:
    if mode == "<":
        return min(current, size)
    if mode == ">":
        return max(current, size)
    if mode == "/":
        return current - current % size
    if mode == "%":
        r = current % size
        return current + (size - r if r else 0)
    if mode == "+":
        return current + size
    return size


@tool("truncate")
def truncate(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "cor:s:", _LONG)
    no_create = blocks = False
    reference: str | None = None
    spec: tuple[str, int] | None = None
    for key, value in opts:
        if key == "c":
            no_create = True
        elif key == "o":
            blocks = True
        elif key == "r":
            reference = value
        elif key == "s":
            spec = _size_spec(value)
        elif key == "help":
            sh.out(b"Usage: truncate OPTION... FILE...\n")
            return 0
        elif key == "version":
            sh.out(b"truncate (GNU coreutils) 9.1\n")
            return 0
    if reference is not None and spec is not None and spec[0] == "":
        raise Usage("you must specify a relative '--size' with '--reference'")
    if reference is None and spec is None:
        raise Usage("you must specify either '--size' or '--reference'")
    if blocks and spec is None:
        raise Usage("'--io-blocks' was specified but '--size' was not")
    if not files:
        raise Usage("missing file operand")
    ref_size: int | None = None
    if reference is not None:
        try:
            ref_size = sh.fs.stat(reference).size
        except OSError as e:
            raise Fail(f"cannot stat '{reference}': {message(e)}") from None
    status = 0
    for name in files:
        flags = os.O_WRONLY | (0 if no_create else os.O_CREAT)
        try:
            handle = sh.fs.open(name, flags)
        except OSError as e:
            if no_create and e.errno == errno.ENOENT:
                continue
            sh.write_err(f"truncate: cannot open '{name}' for writing: {message(e)}\n")
            status = 1
            continue
        try:
            current = handle.getattr().size if ref_size is None else ref_size
            if spec is None:
                size = current
            else:
                mode, amount = spec
                if blocks:
                    amount *= 4096  # the VFS's st_blksize
                size = _new_size(mode, amount, current)
            if size > OFF_MAX:
                sh.write_err(f"truncate: overflow extending size of file '{name}'\n")
                status = 1
                continue
            handle.truncate(max(size, 0))
        except OSError as e:
            sh.write_err(f"truncate: failed to truncate '{name}' at {max(size, 0)} bytes: {message(e)}\n")
            status = 1
        finally:
            handle.close()
    return status
