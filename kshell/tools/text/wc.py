"""wc (-l -w -c -m -L), as GNU coreutils: counts in the order lines, words, chars, bytes,
max line length; column width from the total size of regular-file operands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.core.options import NONE, REQUIRED, Fail, parse, tool
from kshell.tools.text.textio import Output, message, open_chunks, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"lines": ("l", NONE), "words": ("w", NONE), "bytes": ("c", NONE), "chars": ("m", NONE),
         "max-line-length": ("L", NONE), "files0-from": ("files0", REQUIRED),
         "help": ("help", NONE), "version": ("version", NONE)}


def _count(chunks, utf8: bool, want_max: bool) -> list[int]:
    lines = words = chars = nbytes = longest = 0
    rest = b""
    inword_carry = False
    for chunk in chunks:
        nbytes += len(chunk)
        lines += chunk.count(b"\n")
        split = chunk.split()
        n = len(split)
        if n and inword_carry and not chunk[:1].isspace():
            n -= 1
        words += n
        inword_carry = bool(chunk) and not chunk[-1:].isspace()
        if utf8:
            chars += len(chunk) - sum(chunk.count(bytes([b])) for b in range(0x80, 0xC0))
        if want_max:
            data = rest + chunk
            parts = data.split(b"\n")
            rest = parts.pop()
            for p in parts:
                longest = max(longest, _width(p))
    if want_max and rest:
        longest = max(longest, _width(rest))
    return [lines, words, chars if utf8 else nbytes, nbytes, longest]


def _width(line: bytes) -> int:
    if b"\t" in line:
        line = line.expandtabs(8)
    line = line.replace(b"\r", b"").replace(b"\f", b"")
    return sum(1 for b in line if 32 <= b < 127) if any(b < 32 or b > 126 for b in line) else len(line)


@tool("wc")
def wc(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "lwcmL", _LONG)
    want = set()
    files0 = None
    for key, value in opts:
        if key == "help":
            sh.out(b"Usage: wc [OPTION]... [FILE]...\n")
            return 0
        if key == "version":
            sh.out(b"wc (GNU coreutils) 9.1\n")
            return 0
        if key == "files0":
            files0 = value
        else:
            want.add(key)
    if files0 is not None:
        if files:
            raise Fail(f"extra operand '{files[0]}'\nfile operands cannot be combined with --files0-from\n"
                       "Try 'wc --help' for more information.")
        try:
            names = read_all(sh, files0).split(b"\0")
        except OSError as e:
            raise Fail(f"cannot open '{files0}' for reading: {message(e)}") from None
        files = [n.decode("utf-8", "surrogateescape") for n in names if n]
    if not want:
        want = {"l", "w", "c"}
    order = [k for k in "lwmcL" if k in want]
    index = {"l": 0, "w": 1, "m": 2, "c": 3, "L": 4}
    utf8 = "m" in want and sh.utf8_locale()
    names = files or ["-"]
    # GNU's width: digits of the total size of regular files (at least 7 if any input is not one)
    width = 1
    if not (len(names) == 1 and len(order) == 1):
        total_size = 0
        minimum = 1
        for name in names:
            if name == "-":
                minimum = 7
                continue
            try:
                inode = devices.stat(sh, name)
            except OSError:
                continue
            if inode.is_reg:
                total_size += inode.size
            else:
                minimum = 7
        width = max(len(str(total_size)), minimum)
    out = Output(sh)
    totals = [0] * 5
    status = 0
    for name in names:
        try:
            counts = _count(open_chunks(sh, name), utf8, "L" in want)
        except OSError as e:
            out.flush()
            sh.write_err(f"wc: {name}: {message(e)}\n")
            status = 1
            if e.errno == 21:
                counts = [0] * 5
            else:
                continue
        for i in range(4):
            totals[i] += counts[i]
        totals[4] = max(totals[4], counts[4])
        fields = [str(counts[index[k]]).rjust(width) for k in order]
        label = "" if name == "-" and not files else f" {name}"
        out.write((" ".join(fields) + label + "\n").encode("utf-8", "surrogateescape"))
    if len(names) > 1:
        fields = [str(totals[index[k]]).rjust(width) for k in order]
        out.write((" ".join(fields) + " total\n").encode())
    out.flush()
    return status
