"""pr (-h, -l, -w, -t, -n, -m, -COLUMN), as GNU coreutils 9.1: pages of 66 lines with a
5-line header (the file's modification time, its name or -h, the page number) and a 5-line
trailer; columns filled down and balanced on the last page, padded with tabs as GNU pads them."""

from __future__ import annotations

import re
import time
from datetime import datetime
from typing import TYPE_CHECKING

from kshell.core.clock import zone
from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, parse, tool
from kshell.tools.text.textio import Output, message, read_all, split_lines

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"header": ("h", REQUIRED), "length": ("l", REQUIRED), "width": ("w", REQUIRED),
         "omit-header": ("t", NONE), "number-lines": ("n", OPTIONAL), "merge": ("m", NONE),
         "columns": ("columns", REQUIRED), "help": ("help", NONE), "version": ("version", NONE)}


def _render(cells: list[tuple[int, str]], flush_to: int = 0) -> str:
    """A line of columns (start, text) as GNU writes it: blanks (padding and the text's own
    spaces alike) are held until text follows, then written as tabs while more than one column
    remains and a tab stop fits, the rest as spaces; trailing blanks are dropped, except the
    padding up to `flush_to` (-m pads to its last column even when the files there ended)."""
    out: list[str] = []
    pos = goal = 0
    for start, text in cells:
        goal = max(goal, start)
        for ch in text:
            if ch == " ":
                goal += 1
                continue
            while goal - pos > 1 and (pos // 8 + 1) * 8 <= goal:
                out.append("\t")
                pos = (pos // 8 + 1) * 8
            out.append(" " * (goal - pos) + ch)
            pos = goal = goal + 1
    if pos < flush_to:
        goal = flush_to
        while goal - pos > 1 and (pos // 8 + 1) * 8 <= goal:
            out.append("\t")
            pos = (pos // 8 + 1) * 8
        out.append(" " * (goal - pos))
    return "".join(out)


def _number(value: str, option: str, what: str) -> int:
    if not value.isdigit():
        raise Fail(f"'{option}' invalid number of {what}: '{value}'")
    if int(value) == 0:
        raise Fail(f"'{option}' invalid number of {what}: '{value}': Numerical result out of range")
    return int(value)


@tool("pr")
def pr(sh: ToolContext, argv: list[str]) -> int:
    args = [("--columns=" + a[1:]) if re.fullmatch(r"-\d+", a) else a for a in argv]
    opts, files = parse(args, "h:l:w:tn::m", _LONG)
    header: str | None = None
    length, width, plain, numbered, merge, columns = 66, 72, False, False, False, 1
    for key, value in opts:
        if key == "h":
            header = value
        elif key == "l":
            length = _number(value, "-l PAGE_LENGTH", "lines")
        elif key == "w":
            width = _number(value, "-w PAGE_WIDTH", "characters")
        elif key == "t":
            plain = True
        elif key == "n":
            numbered = True
        elif key == "m":
            merge = True
        elif key == "columns":
            columns = _number(value, "-COLUMN", "columns")
        elif key == "help":
            sh.out(b"Usage: pr [OPTION]... [FILE]...\n")
            return 0
        elif key == "version":
            sh.out(b"pr (GNU coreutils) 9.1\n")
            return 0
    if merge and columns > 1:
        raise Fail("cannot specify number of columns when printing in parallel")
    if length <= 10:
        plain = True
    body = length if plain else length - 10
    out = Output(sh)
    status = 0
    sources: list[tuple[str, list[str], float]] = []
    for name in files or ["-"]:
        try:
            data = read_all(sh, name)
            mtime = time.time() if name == "-" else sh.fs.stat(name).mtime / 1e9
        except OSError as e:
            out.flush()
            sh.write_err(f"pr: {name}: {message(e)}\n")
            status = 1
            continue
        sources.append((name, [ln.decode("utf-8", "surrogateescape") for ln in split_lines(data)], mtime))
    groups = [sources] if merge else [[s] for s in sources]
    for group in groups:
        if not group:
            continue
        ncols = len(group) if merge else columns
        colwidth = width // ncols if ncols > 1 else width
        text_width = colwidth - 1 if ncols > 1 else 10**9
        title = header if header is not None else ("" if merge else group[0][0] if group[0][0] != "-" else "")
        when = time.time() if merge else group[0][2]  # -m dates its pages now, as GNU
        stamp = datetime.fromtimestamp(when, zone(sh)).strftime("%Y-%m-%d %H:%M")
        pages: list[list[list[str]]] = []  # page -> column -> lines
        if merge:
            count = max(len(s[1]) for s in group)
            for top in range(0, max(count, 1), body):
                pages.append([s[1][top : top + body] for s in group])
        else:
            lines = group[0][1]
            numbered_lines = [f"{i:5d}\t{ln}" if numbered else ln for i, ln in enumerate(lines, 1)]
            per_page = body * ncols
            for top in range(0, max(len(lines), 1), per_page):
                chunk = numbered_lines[top : top + per_page]
                if len(chunk) < per_page and ncols > 1:  # the last page: balanced columns
                    rows = -(-len(chunk) // ncols)
                    cut, cols = 0, []
                    for c in range(ncols):
                        size = rows if c < len(chunk) % ncols or len(chunk) % ncols == 0 else rows - 1
                        cols.append(chunk[cut : cut + size])
                        cut += size
                    pages.append(cols)
                else:
                    pages.append([chunk[c * body : (c + 1) * body] for c in range(ncols)])
        for number, cols in enumerate(pages, 1):
            rows = max((len(c) for c in cols), default=0)
            if not plain:
                left, right = stamp, f"Page {number}"
                gap = width - len(left) - len(title) - len(right)
                lhs = max(gap // 2, 1)
                out.write(f"\n\n{left}{' ' * lhs}{title}{' ' * max(gap - lhs, 1)}{right}\n\n\n".encode(
                    "utf-8", "surrogateescape"))
            for r in range(rows):
                if ncols == 1:
                    line = cols[0][r]
                else:
                    line = _render([(c * colwidth, col[r][:text_width]) for c, col in enumerate(cols) if r < len(col)],
                                   (ncols - 1) * colwidth if merge else 0)
                out.write((line + "\n").encode("utf-8", "surrogateescape"))
            if not plain:
                out.write(b"\n" * (body - rows + 5))
    out.flush()
    return status
