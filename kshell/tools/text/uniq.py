"""uniq (-c -d -D -u -i -f N -s N -w N -z, INPUT [OUTPUT]), as GNU coreutils."""

from __future__ import annotations

import re
from itertools import compress, islice
from operator import ne, sub
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.tools.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.quoting import locale_quote
from kshell.tools.text.textio import Output, blocks, message, open_chunks

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from kshell.exec.interp import Interp

_LONG = {"count": ("c", NONE), "repeated": ("d", NONE), "all-repeated": ("D", OPTIONAL),
         "unique": ("u", NONE), "ignore-case": ("i", NONE), "skip-fields": ("f", REQUIRED),
         "skip-chars": ("s", REQUIRED), "check-chars": ("w", REQUIRED),
         "zero-terminated": ("z", NONE), "group": ("group", OPTIONAL),
         "help": ("help", NONE), "version": ("version", NONE)}
_FIELD = re.compile(rb"[ \t]*[^ \t]*")


def _int(value: str, what: str) -> int:
    if not value.isdigit():
        raise Fail(f"{value}: invalid number of {what}")
    return int(value)


@tool("uniq")
def uniq(sh: Interp, argv: list[str]) -> int:
    opts, operands = parse(argv, "cdDuif:s:w:z", _LONG, digits="f")
    count = repeated = unique = icase = zero = False
    all_rep = None
    skip_f = skip_c = 0
    check = -1
    for key, value in opts:
        if key == "c":
            count = True
        elif key == "d":
            repeated = True
        elif key == "D":
            all_rep = value or "none"
            if all_rep not in ("none", "prepend", "separate"):
                raise Usage(f"invalid argument {locale_quote(all_rep)} for '--all-repeated'")
        elif key == "u":
            unique = True
        elif key == "i":
            icase = True
        elif key == "f":
            skip_f = _int(value, "fields to skip")
        elif key == "s":
            skip_c = _int(value, "bytes to skip")
        elif key == "w":
            check = _int(value, "bytes to compare")
        elif key == "z":
            zero = True
        elif key == "help":
            sh.out(b"Usage: uniq [OPTION]... [INPUT [OUTPUT]]\n")
            return 0
        elif key == "version":
            sh.out(b"uniq (GNU coreutils) 9.1\n")
            return 0
    if len(operands) > 2:
        raise Usage(f"extra operand {locale_quote(operands[2])}")
    if all_rep is not None and count:
        raise Usage("printing all duplicated lines and repeat counts is meaningless")
    src = operands[0] if operands else "-"
    sep = b"\0" if zero else b"\n"
    try:
        chunks = open_chunks(sh, src)
    except OSError as e:
        raise Fail(f"{src}: {message(e)}") from None
    plain = not (skip_f or skip_c or icase or check >= 0)

    def keyof(line: bytes) -> bytes:
        if skip_f:
            pos = 0
            for _ in range(skip_f):
                m = _FIELD.match(line, pos)
                pos = m.end()
            line = line[pos:]
        if skip_c:
            line = line[skip_c:]
        if check >= 0:
            line = line[:check]
        return line.lower() if icase else line

    out_lines: list[bytes] = []
    out = Output(sh) if len(operands) < 2 else None
    prev: bytes | None = None
    prev_key = None
    n = 0
    group: list[bytes] = []
    first_group = True

    def emit(data: bytes) -> None:
        if out is not None:
            out.write(data)
        else:
            out_lines.append(data)

    def flush_group() -> None:
        nonlocal first_group
        if prev is None:
            return
        if all_rep is not None:
            if n > 1:
                if all_rep == "prepend" or (all_rep == "separate" and not first_group):
                    emit(sep)
                first_group = False
                for g in group:
                    emit(g + sep)
            return
        if (repeated and n < 2) or (unique and n > 1):
            return
        if count:
            emit(b"%7d " % n + prev + sep)
        else:
            emit(prev + sep)

    if all_rep is None:
        return _runs(sh, chunks, sep, None if plain else keyof, count, repeated, unique, src,
                     out, operands[1] if out is None else "")
    try:
        for block in blocks(chunks, sep):
            parts = block.split(sep)
            if parts[-1] == b"":
                parts.pop()
            for line in parts:
                k = line if plain else keyof(line)
                if prev is not None and k == prev_key:
                    n += 1
                    if all_rep is not None:
                        group.append(line)
                    continue
                flush_group()
                prev, prev_key, n = line, k, 1
                if all_rep is not None:
                    group = [line]
        flush_group()
    except OSError as e:
        raise Fail(f"{src}: {message(e)}") from None
    if out is not None:
        out.flush()
        return 0
    try:
        devices.write_file(sh, operands[1], b"".join(out_lines))
    except OSError as e:
        raise Fail(f"{operands[1]}: {message(e)}") from None
    return 0


def _runs(sh: Interp, chunks: Iterator[bytes], sep: bytes, keyof: Callable[[bytes], bytes] | None,
          count: bool, repeated: bool, unique: bool, src: str, out: Output | None,
          target: str) -> int:
    """uniq without -D/--group: one line per run of equal (keyed) lines. The run boundaries of
    a block are found in C (`map(ne, ...)` over adjacent keys, `compress` to their indices) and
    the output of a block is built by one comprehension, so the Python cost is a little per
    run and nothing per line: `sort | uniq -c` is cheap, and input without repeats no worse
    than a per-line loop. A run may span blocks: the last run of a block is held back (`prev`,
    `n`) until the next block shows whether it goes on."""
    pieces: list[bytes] = []
    prev: bytes | None = None
    prev_key: bytes | None = None
    n = 0
    try:
        for block in blocks(chunks, sep):
            parts = block.split(sep)
            if parts[-1] == b"":
                parts.pop()
            if not parts:
                continue
            keys = parts if keyof is None else list(map(keyof, parts))
            bounds = [0, *compress(range(1, len(parts)), map(ne, islice(keys, 1, None), keys)),
                      len(parts)]
            firsts = [parts[i] for i in bounds[:-1]]
            sizes = list(map(sub, islice(bounds, 1, None), bounds))
            if prev is not None:
                if keys[0] == prev_key:  # the held-back run goes on
                    firsts[0] = prev
                    sizes[0] += n
                else:
                    firsts.insert(0, prev)
                    sizes.insert(0, n)
            prev, n, prev_key = firsts.pop(), sizes.pop(), keys[-1]
            if firsts:
                pieces.append(_format(firsts, sizes, sep, count, repeated, unique))
            if out is not None and pieces:
                out.write(b"".join(pieces))
                pieces.clear()
        if prev is not None:
            pieces.append(_format([prev], [n], sep, count, repeated, unique))
    except OSError as e:
        raise Fail(f"{src}: {message(e)}") from None
    if out is not None:
        if pieces:
            out.write(b"".join(pieces))
        out.flush()
        return 0
    try:
        devices.write_file(sh, target, b"".join(pieces))
    except OSError as e:
        raise Fail(f"{target}: {message(e)}") from None
    return 0


def _format(firsts: list[bytes], sizes: list[int], sep: bytes, count: bool, repeated: bool,
            unique: bool) -> bytes:
    """The output for whole runs (first line, length): -d keeps runs of two or more, -u runs
    of one, -c prefixes the length as GNU's "%7d " (wider numbers just widen the field)."""
    if repeated or unique:
        kept = [(line, k) for line, k in zip(firsts, sizes) if (k > 1 if repeated else k == 1)]
        if repeated and unique:
            kept = []  # GNU: -d -u together print nothing
        if not kept:
            return b""
        firsts = [line for line, _ in kept]
        sizes = [k for _, k in kept]
    if count:
        return b"".join([b"%7d %b%b" % (k, line, sep) for line, k in zip(firsts, sizes)])
    return sep.join(firsts) + sep
