"""Line layout tools: nl, fold, expand and column (-t -s -o -c -x), as GNU coreutils and
util-linux write them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.exec import regexes
from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.regex import RegexError, translate
from kshell.tools.text.textio import Output, lines, message, open_chunks, read_all, split_lines

if TYPE_CHECKING:
    from kshell.core.context import ToolContext


def _each_line(sh: ToolContext, prog: str, files: list[str], out: Output):
    """Lines of every operand in turn (with terminators); errors reported as `prog: f: msg`."""
    state = {"status": 0}

    def gen():
        for name in files or ["-"]:
            try:
                yield from lines(open_chunks(sh, name))
            except OSError as e:
                out.flush()
                sh.write_err(f"{prog}: {name}: {message(e)}\n")
                state["status"] = 1

    return gen(), state


# --------------------------------------------------------------------------- nl

_NL_LONG = {"body-numbering": ("b", REQUIRED), "header-numbering": ("h", REQUIRED),
            "footer-numbering": ("f", REQUIRED), "number-format": ("n", REQUIRED),
            "number-width": ("w", REQUIRED), "number-separator": ("s", REQUIRED),
            "starting-line-number": ("v", REQUIRED), "line-increment": ("i", REQUIRED),
            "section-delimiter": ("d", REQUIRED), "join-blank-lines": ("l", REQUIRED),
            "no-renumber": ("p", NONE), "help": ("help", NONE), "version": ("version", NONE)}
_STYLE_NAME = {"b": "body", "h": "header", "f": "footer"}


def _style(key: str, value: str):
    if value in ("a", "t", "n"):
        return value
    if value.startswith("p"):
        try:
            pattern, _ = translate(value[1:], False)
            return regexes.compile(pattern.encode("utf-8", "surrogateescape"))
        except (RegexError, *regexes.error) as e:
            raise Fail(str(e)) from e
    raise Usage(f"invalid {_STYLE_NAME[key]} numbering style: '{value}'")


def _number(value: str, what: str, low: int = 0) -> int:
    try:
        n = int(value)
    except ValueError:
        raise Usage(f"invalid {what}: '{value}'") from None
    if n < low:
        raise Fail(f"invalid {what}: '{value}': Numerical result out of range")
    return n


@tool("nl")
def nl(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "b:h:f:n:w:s:v:i:d:l:p", _NL_LONG)
    styles = {"h": "n", "b": "t", "f": "n"}
    fmt, width, sep, start, incr, delim, blank_join, renumber = "rn", 6, b"\t", 1, 1, b"\\:", 1, True
    for key, value in opts:
        if key in styles:
            styles[key] = _style(key, value)
        elif key == "n":
            if value not in ("ln", "rn", "rz"):
                raise Usage(f"invalid line numbering format: '{value}'")
            fmt = value
        elif key == "w":
            width = _number(value, "line number field width", 1)
        elif key == "s":
            sep = value.encode("utf-8", "surrogateescape")
        elif key == "v":
            start = _number(value, "starting line number", -(2**63))
        elif key == "i":
            incr = _number(value, "line number increment", -(2**63))
        elif key == "d":
            d = value.encode("utf-8", "surrogateescape")
            delim = d + b":" if len(d) == 1 else d
        elif key == "l":
            blank_join = _number(value, "line number of blank lines", 1)
        elif key == "p":
            renumber = False
        elif key == "help":
            sh.out("Usage: nl [OPTION]... [FILE]...\n")
            return 0
    out = Output(sh)
    number = start
    section = "b"
    blanks = 0
    gen, state = _each_line(sh, "nl", files, out)
    for line in gen:
        body = line[:-1] if line.endswith(b"\n") else line
        kind = {delim * 3: "h", delim * 2: "b", delim: "f"}.get(body) if delim else None
        if kind is not None:
            section = kind
            if kind == "h" and renumber:
                number = start
            out.write(b"\n")
            continue
        style = styles[section]
        if style == "a":
            if body:
                blanks = 0
                yes = True
            else:
                blanks += 1
                yes = blanks >= blank_join
                if yes:
                    blanks = 0
        elif style == "t":
            yes = bool(body)
        elif style == "n":
            yes = False
        else:
            yes = style.search(body) is not None
        if yes:
            if fmt == "ln":
                text = b"%-*d" % (width, number)
            elif fmt == "rz":
                text = (b"-" + b"%0*d" % (width - 1, -number)) if number < 0 else b"%0*d" % (width, number)
            else:
                text = b"%*d" % (width, number)
            out.write(text + sep + body + b"\n")
            number += incr
        else:
            out.write(b" " * (width + len(sep)) + body + b"\n")
    out.flush()
    return state["status"]


# --------------------------------------------------------------------------- fold

_FOLD_LONG = {"bytes": ("b", NONE), "characters": ("c", NONE), "spaces": ("s", NONE),
              "width": ("w", REQUIRED), "help": ("help", NONE), "version": ("version", NONE)}


@tool("fold")
def fold(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "bcsw:", _FOLD_LONG, digits="w")
    width, count_bytes, spaces = 80, False, False
    for key, value in opts:
        if key == "w":
            try:
                width = int(value)
            except ValueError:
                raise Fail(f"invalid number of columns: '{value}'") from None
            if width < 1:
                raise Fail(f"invalid number of columns: '{value}': Numerical result out of range")
        elif key == "b":
            count_bytes = True
        elif key == "s":
            spaces = True
    out = Output(sh)
    gen, state = _each_line(sh, "fold", files, out)
    for line in gen:
        out.write(_fold_line(line, width, count_bytes, spaces))
    out.flush()
    return state["status"]


def _advance(column: int, c: int, count_bytes: bool) -> int:
    if count_bytes:
        return column + 1
    if c == 8:
        return column - 1 if column > 0 else 0
    if c == 13:
        return 0
    if c == 9:
        return column + 8 - column % 8
    return column + 1


def _fold_line(line: bytes, width: int, count_bytes: bool, spaces: bool) -> bytes:
    out = bytearray()
    buf = bytearray()
    column = 0
    for c in line:
        if c == 10:
            out += buf + b"\n"
            buf.clear()
            column = 0
            continue
        while True:
            column = _advance(column, c, count_bytes)
            if column <= width:
                buf.append(c)
                break
            if spaces:
                cut = max(buf.rfind(b" "), buf.rfind(b"\t"))
                if cut >= 0:
                    out += buf[: cut + 1] + b"\n"
                    del buf[: cut + 1]
                    column = 0
                    for b in buf:
                        column = _advance(column, b, count_bytes)
                    continue
            if not buf:
                buf.append(c)
                break
            out += buf + b"\n"
            buf.clear()
            column = 0
    return bytes(out + buf)


# --------------------------------------------------------------------------- expand

_EXPAND_LONG = {"initial": ("i", NONE), "tabs": ("t", REQUIRED), "help": ("help", NONE),
                "version": ("version", NONE)}


def _tabstops(specs: list[str]) -> list[int]:
    stops: list[int] = []
    for spec in specs:
        for item in re.split(r"[ ,]", spec):
            if not item:
                continue
            if not item.isdigit():
                raise Fail(f"tab size contains invalid character(s): '{item}'")
            n = int(item)
            if n == 0:
                raise Fail("tab size cannot be 0")
            if stops and n <= stops[-1]:
                raise Fail("tab sizes must be ascending")
            stops.append(n)
    return stops or [8]


@tool("expand")
def expand(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "it:0::1::2::3::4::5::6::7::8::9::", _EXPAND_LONG)
    initial = False
    specs: list[str] = []
    for key, value in opts:
        if key == "i":
            initial = True
        elif key == "t":
            specs.append(value)
        elif key.isdigit():
            specs.append(key + (value or ""))
    stops = _tabstops(specs)
    out = Output(sh)
    gen, state = _each_line(sh, "expand", files, out)
    for line in gen:
        res = bytearray()
        column = 0
        leading = True
        for c in line:
            if c == 9 and (leading or not initial):
                if len(stops) == 1:
                    nxt = column + stops[0] - column % stops[0]
                else:
                    nxt = next((s for s in stops if s > column), column + 1)
                res += b" " * (nxt - column)
                column = nxt
                continue
            if c == 8:
                column = max(column - 1, 0)
            else:
                column += 1
            if c != 32:
                leading = False
            res.append(c)
        out.write(bytes(res))
    out.flush()
    return state["status"]


# --------------------------------------------------------------------------- column

_COLUMN_LONG = {"table": ("t", NONE), "separator": ("s", REQUIRED), "output-separator": ("o", REQUIRED),
                "columns": ("c", REQUIRED), "fillrows": ("x", NONE), "help": ("help", NONE),
                "version": ("V", NONE)}


@tool("column")
def column(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "ts:o:c:xV", _COLUMN_LONG)
    table = fillrows = False
    seps = " \t"
    outsep = "  "
    width = 80
    cols_env = sh.get_param_or_none("COLUMNS")
    if cols_env and cols_env.isdigit():
        width = int(cols_env)
    for key, value in opts:
        if key == "t":
            table = True
        elif key == "s":
            seps = value
        elif key == "o":
            outsep = value
        elif key == "x":
            fillrows = True
        elif key == "c":
            if not value.isdigit():
                raise Fail(f"invalid columns argument: '{value}'")
            width = int(value)
    out = Output(sh)
    entries: list[str] = []
    status = 0
    for name in files or ["-"]:
        try:
            data = read_all(sh, name)
        except OSError as e:
            sh.write_err(f"column: {name}: {message(e)}\n")
            status = 1
            continue
        entries += [ln.decode("utf-8", "surrogateescape") for ln in split_lines(data) if ln.strip(b" \t")]
    if table:
        if entries:
            status = 0
        rx = re.compile("[" + re.escape(seps) + "]+")
        rows = [[c for c in rx.split(e)] for e in entries]
        rows = [r[1:] if r and r[0] == "" and len(r) > 1 else r for r in rows]
        rows = [r[:-1] if len(r) > 1 and r[-1] == "" else r for r in rows]
        ncols = max((len(r) for r in rows), default=0)
        widths = [max((len(r[i]) for r in rows if i < len(r)), default=0) for i in range(ncols)]
        for r in rows:
            r = r + [""] * (ncols - len(r))
            cells = [c + " " * (widths[i] - len(c)) for i, c in enumerate(r[:-1])]
            out.write((outsep.join(cells + [r[-1]]) + "\n").encode("utf-8", "surrogateescape"))
    elif entries:
        out.write(_fill(entries, width, fillrows).encode("utf-8", "surrogateescape"))
    out.flush()
    return status


def _fill(entries: list[str], width: int, fillrows: bool) -> str:
    maxlen = max(len(e) for e in entries)
    maxlen = (maxlen + 8) & ~7
    if maxlen > width:
        return "".join(e + "\n" for e in entries)
    numcols = max(width // maxlen, 1)
    res: list[str] = []
    if fillrows:
        chcnt = col = 0
        endcol = maxlen
        for e in entries:
            res.append(e)
            chcnt += len(e)
            col += 1
            if col == numcols:
                chcnt = col = 0
                endcol = maxlen
                res.append("\n")
            else:
                while (cnt := (chcnt + 8) & ~7) <= endcol:
                    res.append("\t")
                    chcnt = cnt
                endcol += maxlen
        if chcnt:
            res.append("\n")
        return "".join(res)
    numrows = -(-len(entries) // numcols)
    for row in range(numrows):
        endcol = maxlen
        chcnt = 0
        base = row
        while True:
            e = entries[base]
            res.append(e)
            chcnt += len(e)
            if base + numrows >= len(entries):
                break
            while (cnt := (chcnt + 8) & ~7) <= endcol:
                res.append("\t")
                chcnt = cnt
            endcol += maxlen
            base += numrows
        res.append("\n")
    return "".join(res)
