"""seq (-s -w -f, negative and fractional steps), as GNU coreutils."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from kshell.core.options import NONE, REQUIRED, Usage, parse, tool
from kshell.tools.text.textio import Output

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"separator": ("s", REQUIRED), "format": ("f", REQUIRED), "equal-width": ("w", NONE),
         "help": ("help", NONE), "version": ("version", NONE)}
_NUM = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")


def _number(text: str) -> Decimal:
    if not _NUM.match(text):
        if text.lower().lstrip("+-") in ("inf", "infinity", "nan"):
            pass
        raise Usage(f"invalid floating point argument: '{text}'")
    return Decimal(text.strip())


def _places(text: str) -> int:
    text = text.strip()
    if "e" in text.lower():
        mant, _, exp = text.lower().partition("e")
        places = len(mant.partition(".")[2]) - int(exp)
        return max(places, 0)
    return len(text.partition(".")[2])


@tool("seq")
def seq(sh: ToolContext, argv: list[str]) -> int:
    args = list(argv)
    # negative numbers are operands, not options
    marked = [("\0" + a) if re.match(r"-\.?\d", a) else a for a in args]
    opts, operands = parse(marked, "s:f:w", _LONG)
    operands = [o[1:] if o.startswith("\0") else o for o in operands]
    sep = "\n"
    fmt = None
    width = False
    for key, value in opts:
        if key == "s":
            sep = value
        elif key == "f":
            fmt = value
        elif key == "w":
            width = True
        elif key == "help":
            sh.out(b"Usage: seq [OPTION]... LAST\n")
            return 0
        elif key == "version":
            sh.out(b"seq (GNU coreutils) 9.1\n")
            return 0
    if not operands:
        raise Usage("missing operand")
    if len(operands) > 3:
        raise Usage(f"extra operand '{operands[3]}'")
    texts = ["1", operands[0], "1"] if len(operands) == 1 else (
        [operands[0], operands[1], "1"] if len(operands) == 2 else [operands[0], operands[2], operands[1]])
    first, last, step = (_number(t) for t in texts)
    if step == 0:
        raise Usage(f"invalid Zero increment value: '{texts[2]}'")
    if fmt is not None and width:
        raise Usage("format string may not be specified when printing equal width strings")
    out = Output(sh)
    places = max(_places(texts[0]), _places(texts[2]))
    integer = places == 0 and all("e" not in t.lower() for t in texts)
    bsep = sep.encode("utf-8", "surrogateescape")
    if fmt is None and integer and not width:
        a, b, c = int(first), int(last), int(step)
        stop = b + (1 if c > 0 else -1)
        started = False
        block = 65536
        for lo in range(a, stop, c * block):
            hi = lo + c * block
            hi = min(hi, stop) if c > 0 else max(hi, stop)
            text = bsep.join(b"%d" % v for v in range(lo, hi, c))
            if not text:
                break
            out.write((bsep if started else b"") + text)
            started = True
        if started:
            out.write(b"\n")
        out.flush()
        return 0
    values: list[str] = []
    i = 0
    cancel = sh.session.cancel
    while True:
        v = first + step * i
        if (step > 0 and v > last) or (step < 0 and v < last):
            break
        values.append(_format(v, places, fmt))
        i += 1
        if i % 65536 == 0:
            cancel.check()
    if width and values:
        w = max(len(_format(x, places, None)) for x in (first, last)) if fmt is None else 0
        w = max(w, max(len(v) for v in values))
        values = [("-" + v[1:].rjust(w - 1, "0")) if v.startswith("-") else v.rjust(w, "0") for v in values]
    if values:
        out.write((sep.join(values) + "\n").encode("utf-8", "surrogateescape"))
    out.flush()
    return 0


def _format(v: Decimal, places: int, fmt: str | None) -> str:
    if fmt is not None:
        try:
            return fmt % float(v)
        except (TypeError, ValueError):
            return fmt
    if places == 0:
        return str(int(v)) if v == v.to_integral_value() else f"{v:g}"
    try:
        return f"{v:.{places}f}"
    except InvalidOperation:
        return str(v)
