"""uniq (-c -d -D -u -i -f N -s N -w N -z, INPUT [OUTPUT]), as GNU coreutils."""

from __future__ import annotations

import re
from itertools import compress, islice
from operator import ne, sub
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.quoting import locale_quote
from kshell.tools.text.textio import Output, blocks, message, open_chunks

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from kshell.core.context import ToolContext

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
def uniq(sh: ToolContext, argv: list[str]) -> int:
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


def _runs(sh: ToolContext, chunks: Iterator[bytes], sep: bytes, keyof: Callable[[bytes], bytes] | None,
          count: bool, repeated: bool, unique: bool, src: str, out: Output | None,
          target: str) -> int:
    """uniq without -D/--group: one line per run of equal (keyed) lines, found a block at a
    time by `_leap` (whole lines compared, long runs: sorted input) or `_split_runs` (anything
    else), so that the Python cost is per run, not per line. A run may span blocks: the last run
    of a block is held back (`prev`, `n`) until the next block shows whether it goes on."""
    pieces: list[bytes] = []
    prev: bytes | None = None
    prev_key: bytes | None = None
    n = 0
    leaping = keyof is None
    try:
        for block in blocks(chunks, sep):
            if leaping:
                if not block.endswith(sep):
                    block += sep  # the last line without its terminator is still a line
                firsts, sizes, stop = _leap(block, sep)
                if stop < len(block):  # short runs: splitting is cheaper from here on
                    leaping = False
                    more = _split_runs(block[stop:], sep, None)
                    firsts += more[0]
                    sizes += more[1]
                first_key, last_key = firsts[0], firsts[-1]
            else:
                firsts, sizes, first_key, last_key = _split_runs(block, sep, keyof)
            if not firsts:
                continue
            if prev is not None:
                if first_key == prev_key:  # the held-back run goes on
                    firsts[0] = prev
                    sizes[0] += n
                else:
                    firsts.insert(0, prev)
                    sizes.insert(0, n)
            prev, n, prev_key = firsts.pop(), sizes.pop(), last_key
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


def _split_runs(block: bytes, sep: bytes, keyof: Callable[[bytes], bytes] | None
                ) -> tuple[list[bytes], list[int], bytes | None, bytes | None]:
    """The runs of a block (first line, length) and the keys of its first and last lines, for
    any input: the block is split, adjacent keys are compared in C (`map(ne, ...)`) and
    `compress` turns the differences into run boundaries, so only runs cost Python steps."""
    parts = block.split(sep)
    if parts[-1] == b"":
        parts.pop()
    if not parts:
        return [], [], None, None
    keys = parts if keyof is None else list(map(keyof, parts))
    bounds = [0, *compress(range(1, len(parts)), map(ne, islice(keys, 1, None), keys)), len(parts)]
    return [parts[i] for i in bounds[:-1]], list(map(sub, islice(bounds, 1, None), bounds)), keys[0], keys[-1]


_LEAP_CHECK = 255  # every 256 runs, _leap asks whether runs are long enough to be worth it
_LEAP_MIN = 4  # lines per run, on average, below which splitting is cheaper


def _leap(block: bytes, sep: bytes) -> tuple[list[bytes], list[int], int]:
    """The runs of equal whole lines at the start of a block (which ends in `sep`), without
    splitting it into lines: a run's length is found by comparing the block against the line
    repeated 1, 2, 4, ... times, then back down (exponential then binary search, each step one
    memcmp), so a run of c lines costs O(log c) Python steps. That wins when runs are long, as
    after sort; when they are short it stops early and returns where it stopped."""
    firsts: list[bytes] = []
    sizes: list[int] = []
    find = block.find
    starts = block.startswith
    end = len(block)
    p = lines = 0
    while p < end:
        e = find(sep, p) + 1
        unit = block[p:e]
        if starts(unit, e):
            u = e - p
            q = e + u
            c = 2
            reps = [unit, unit + unit]  # reps[k] is the line 2**k times
            k = 1
            while starts(reps[k], q):
                q += u << k
                c += 1 << k
                reps.append(reps[k] + reps[k])
                k += 1
            while k > 0:  # fewer than 2**k lines are left in the run
                k -= 1
                if starts(reps[k], q):
                    q += u << k
                    c += 1 << k
        else:
            q = e
            c = 1
        firsts.append(block[p : e - 1])
        sizes.append(c)
        p = q
        lines += c
        if not len(firsts) & _LEAP_CHECK and lines < _LEAP_MIN * len(firsts):
            break
    return firsts, sizes, p


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
