"""unexpand (-a, -t N or a list, --first-only), as GNU coreutils 9.1: runs of blanks that reach
a tab stop become tabs; a single blank before a stop stays a blank, as GNU leaves it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.core.options import NONE, REQUIRED, parse, tool
from kshell.tools.text.layout import _each_line, _tabstops
from kshell.tools.text.textio import Output

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"all": ("a", NONE), "first-only": ("first-only", NONE), "tabs": ("t", REQUIRED),
         "help": ("help", NONE), "version": ("version", NONE)}


def _next_stop(column: int, stops: list[int]) -> int | None:
    """The tab stop after `column`; None past the last stop of a list."""
    if len(stops) == 1:
        return column + stops[0] - column % stops[0]
    return next((s for s in stops if s > column), None)


def unexpand_line(line: bytes, stops: list[int], every: bool) -> bytes:
    """One line with its blanks converted. Blanks are held until it is known whether they reach
    a stop; a lone blank that reaches one is kept as a blank unless more blanks follow it."""
    out = bytearray()
    pending = bytearray()
    column = 0
    convert = True
    prev_blank = one_before = False
    for c in line:
        blank = c in (32, 9)
        if blank and convert:
            stop = _next_stop(column, stops)
            if stop is None:
                convert = False
            else:
                if c == 9:
                    column = stop
                    if pending:
                        pending[0] = 9
                else:
                    column += 1
                    if not (prev_blank and column == stop):
                        if column == stop:
                            one_before = True
                        pending.append(c)
                        prev_blank = True
                        continue
                    if not pending:
                        pending.append(9)
                    pending[0] = c = 9
                del pending[1 if one_before else 0 :]
        elif c == 8:
            column -= 1 if column else 0
            convert = convert and every
        elif c != 10:
            column += 1
        if pending:
            if len(pending) > 1 and one_before:
                pending[0] = 9
            out += pending
            pending.clear()
            one_before = False
        prev_blank = blank
        convert = convert and (every or blank)
        out.append(c)
    if pending:
        if len(pending) > 1 and one_before:
            pending[0] = 9
        out += pending
    return bytes(out)


@tool("unexpand")
def unexpand(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "at:0::1::2::3::4::5::6::7::8::9::", _LONG)
    every = first_only = False
    specs: list[str] = []
    for key, value in opts:
        if key == "a":
            every = True
        elif key == "first-only":
            first_only = True
        elif key == "t":
            specs.append(value)
            every = True
        elif key.isdigit():  # the obsolete -N sets the stops, not -a
            specs.append(key + (value or ""))
        elif key == "help":
            sh.out(b"Usage: unexpand [OPTION]... [FILE]...\n")
            return 0
        elif key == "version":
            sh.out(b"unexpand (GNU coreutils) 9.1\n")
            return 0
    if first_only:
        every = False
    stops = _tabstops(specs)
    out = Output(sh)
    gen, state = _each_line(sh, "unexpand", files, out)
    for line in gen:
        out.write(unexpand_line(line, stops, every))
    out.flush()
    return state["status"]
