"""cut (-b -c -f -d -s -z -n --complement --output-delimiter), as GNU coreutils (-c counts
bytes, as GNU's cut does)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.core.options import NONE, REQUIRED, Usage, parse, tool
from kshell.tools.text.textio import Output, blocks, message, open_chunks

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"bytes": ("b", REQUIRED), "characters": ("c", REQUIRED), "fields": ("f", REQUIRED),
         "delimiter": ("d", REQUIRED), "only-delimited": ("s", NONE),
         "complement": ("complement", NONE), "output-delimiter": ("od", REQUIRED),
         "zero-terminated": ("z", NONE), "help": ("help", NONE), "version": ("version", NONE)}
BIG = 1 << 62


def _ranges(spec: str, what: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for part in re.split(r"[, ]", spec):
        if part == "" :
            raise Usage(f"{what} are numbered from 1" if False else "invalid range with no endpoint: -"
                        if part == "-" else f"invalid {'field' if what == 'fields' else 'byte/character'} position")
        m = re.match(r"(\d*)(-?)(\d*)\Z", part)
        if not m or (not m.group(1) and not m.group(3)):
            if part == "-":
                raise Usage("invalid range with no endpoint: -")
            raise Usage(f"invalid {'field' if what == 'fields' else 'byte/character'} value {part!r}".replace('"', "'")
                        if not re.match(r"[\d-]+\Z", part)
                        else f"invalid {'field' if what == 'fields' else 'byte/character'} range")
        lo_s, dash, hi_s = m.groups()
        lo = int(lo_s) if lo_s else 1
        hi = (int(hi_s) if hi_s else BIG) if dash else lo
        if (lo_s and int(lo_s) == 0) or (hi_s and int(hi_s) == 0 and dash and not lo_s):
            raise Usage(f"{what} are numbered from 1")
        if hi < lo:
            raise Usage("invalid decreasing range")
        out.append((lo, hi))
    out.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in out:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def _complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    pos = 1
    for lo, hi in ranges:
        if lo > pos:
            out.append((pos, lo - 1))
        pos = hi + 1
    if pos < BIG:
        out.append((pos, BIG))
    return out


@tool("cut")
def cut(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "b:c:f:d:snz", _LONG)
    mode = None
    spec = ""
    delim = None
    only = complement = zero = False
    outdelim = None
    for key, value in opts:
        if key in ("b", "c", "f"):
            if mode is not None:
                raise Usage("only one type of list may be specified")
            mode, spec = key, value
        elif key == "d":
            raw = value.encode("utf-8", "surrogateescape")
            if len(raw) > 1:
                raise Usage("the delimiter must be a single character")
            delim = raw or b"\0"
        elif key == "s":
            only = True
        elif key == "complement":
            complement = True
        elif key == "od":
            outdelim = value.encode("utf-8", "surrogateescape")
        elif key == "z":
            zero = True
        elif key == "help":
            sh.out(b"Usage: cut OPTION... [FILE]...\n")
            return 0
        elif key == "version":
            sh.out(b"cut (GNU coreutils) 9.1\n")
            return 0
    if mode is None:
        raise Usage("you must specify a list of bytes, characters, or fields")
    if delim is not None and mode != "f":
        raise Usage("an input delimiter may be specified only when operating on fields")
    if only and mode != "f":
        raise Usage("suppressing non-delimited lines makes sense\n\tonly when operating on fields")
    ranges = _ranges(spec, "fields" if mode == "f" else "byte positions")
    if complement:
        ranges = _complement(ranges)
    sep = b"\0" if zero else b"\n"
    delim = delim if delim is not None else b"\t"
    out = Output(sh)
    status = 0
    for name in files or ["-"]:
        try:
            for block in blocks(open_chunks(sh, name), sep):
                parts = block.split(sep)
                if parts[-1] == b"":
                    parts.pop()
                res = []
                for line in parts:
                    if mode == "f":
                        if delim not in line:
                            if not only:
                                res.append(line)
                            continue
                        fields = line.split(delim)
                        n = len(fields)
                        picked = []
                        for lo, hi in ranges:
                            if lo > n:
                                break
                            picked.extend(fields[lo - 1 : min(hi, n)])
                        res.append((outdelim if outdelim is not None else delim).join(picked))
                    else:
                        n = len(line)
                        pieces = [line[lo - 1 : min(hi, n)] for lo, hi in ranges if lo <= n]
                        res.append((outdelim if outdelim is not None else b"").join(pieces))
                if res:
                    out.write(sep.join(res) + sep)
        except OSError as e:
            out.flush()
            sh.write_err(f"cut: {name}: {message(e)}\n")
            status = 1
    out.flush()
    return status
