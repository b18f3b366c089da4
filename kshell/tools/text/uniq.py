"""uniq (-c -d -D -u -i -f N -s N -w N -z, INPUT [OUTPUT]), as GNU coreutils."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.tools.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.quoting import locale_quote
from kshell.tools.text.textio import Output, blocks, message, open_chunks

if TYPE_CHECKING:
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
