"""cat: concatenate files (-A -b -e -E -n -s -t -T -u -v), as GNU coreutils."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.core.options import NONE, parse, tool
from kshell.tools.text.textio import Output, lines, message, open_chunks

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"show-all": ("A", NONE), "number-nonblank": ("b", NONE), "show-ends": ("E", NONE),
         "number": ("n", NONE), "squeeze-blank": ("s", NONE), "show-tabs": ("T", NONE),
         "show-nonprinting": ("v", NONE), "help": ("help", NONE), "version": ("version", NONE)}


def _visible(b: int) -> bytes:
    prefix = b""
    if b >= 128:
        prefix, b = b"M-", b - 128
    if b < 32:
        return prefix + b"^" + bytes([b + 64])
    if b == 127:
        return prefix + b"^?"
    return prefix + bytes([b])


_VIS = [_visible(b) for b in range(256)]
_NONPRINT = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f-\xff]")
_NONPRINT_TAB = re.compile(rb"[\x00-\x1f\x7f-\xff]")


@tool("cat")
def cat(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "AbeEnstTuv", _LONG)
    flags = set()
    for key, _ in opts:
        if key == "help":
            sh.out(b"Usage: cat [OPTION]... [FILE]...\n")
            return 0
        if key == "version":
            sh.out(b"cat (GNU coreutils) 9.1\n")
            return 0
        flags.update({"A": "vET", "e": "vE", "t": "vT"}.get(key, key))
    out = Output(sh)
    status = 0
    plain = not (flags - {"u"})
    state = {"n": 0, "blank": False, "mid": False}
    for name in files or ["-"]:
        try:
            chunks = open_chunks(sh, name)
            if plain:
                for chunk in chunks:
                    out.write(chunk)
            else:
                _decorated(chunks, flags, out, state)
        except OSError as e:
            out.flush()
            sh.write_err(f"cat: {name}: {message(e)}\n")
            status = 1
    out.flush()
    return status


def _decorated(chunks, flags: set[str], out: Output, state: dict) -> None:
    number = "n" in flags or "b" in flags
    nonblank = "b" in flags
    squeeze = "s" in flags
    ends = "E" in flags
    tabs = "T" in flags
    vis = "v" in flags
    rx = _NONPRINT_TAB if tabs else _NONPRINT
    for line in lines(chunks):
        has_nl = line.endswith(b"\n")
        body = line[:-1] if has_nl else line
        if not body and has_nl:
            if squeeze and state["blank"]:
                continue
            state["blank"] = True
        else:
            state["blank"] = False
        if vis:
            body = rx.sub(lambda m: _VIS[m.group()[0]], body)
        elif tabs:
            body = body.replace(b"\t", b"^I")
        if number and not state["mid"] and (body or not nonblank):
            state["n"] += 1
            out.write(b"%6d\t" % state["n"])
        state["mid"] = not has_nl
        out.write(body)
        if has_nl:
            out.write(b"$\n" if ends else b"\n")
