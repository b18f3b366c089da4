"""diff on VFS files, as GNU diffutils writes it: normal, unified (-u, -U N), context (-c,
-C N), ed script (-e) and side by side (-y, -W, -t, --tabsize, --suppress-common-lines,
--left-column: sdiff's layout) output, -q, -r, -N, --label, also -s -a -i -w -b -x PAT;
-B and -I (a hunk of blank or matching lines only is left out); statuses 0 (same), 1
(different), 2 (trouble); forward ed scripts (-f).

The hunks are GNU's: its algorithm is ported (analyze.c and diffseq.h): confusing lines are
discarded, Myers' O(ND) middle-snake search splits the rest, and shift_boundaries slides each
run of changes as GNU does. GNU's speed heuristic (too_expensive, for edit costs past 4096
on very large inputs) is not ported, so such diffs are minimal where GNU's may not be.
"""

from __future__ import annotations

import re
import shlex
import stat as st
import time
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.textio import Output, message, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext


# --------------------------------------------------------------------------- the algorithm


def _discards(eq0: list[int], eq1: list[int]) -> tuple[list[int], list[int]]:
    """GNU's discard_confusing_lines: 1 where a line is left out of the search."""
    counts = [{}, {}]
    for f, eqs in enumerate((eq0, eq1)):
        c = counts[f]
        for e in eqs:
            c[e] = c.get(e, 0) + 1
    out = []
    for f, eqs in enumerate((eq0, eq1)):
        other = counts[1 - f]
        end = len(eqs)
        many = 5
        tem = end // 64
        tem >>= 2
        while tem > 0:
            many *= 2
            tem >>= 2
        d = [0] * end
        for i, e in enumerate(eqs):
            n = other.get(e, 0)
            if n == 0:
                d[i] = 1
            elif n > many:
                d[i] = 2
        out.append(d)
    for d in out:
        end = len(d)
        i = 0
        while i < end:
            if d[i] == 2:
                d[i] = 0
            elif d[i] != 0:
                provisional = 0
                j = i
                while j < end:
                    if d[j] == 0:
                        break
                    if d[j] == 2:
                        provisional += 1
                    j += 1
                while j > i and d[j - 1] == 2:
                    j -= 1
                    d[j] = 0
                    provisional -= 1
                length = j - i
                if provisional * 4 > length:
                    while j > i:
                        j -= 1
                        if d[j] == 2:
                            d[j] = 0
                else:
                    minimum = 1
                    tem = length >> 2
                    tem >>= 2
                    while tem > 0:
                        minimum <<= 1
                        tem >>= 2
                    minimum += 1
                    j = 0
                    consec = 0
                    while j < length:
                        if d[i + j] != 2:
                            consec = 0
                        else:
                            consec += 1
                            if minimum == consec:
                                j -= consec
                            elif minimum < consec:
                                d[i + j] = 0
                        j += 1
                    j = 0
                    consec = 0
                    while j < length:
                        if j >= 8 and d[i + j] == 1:
                            break
                        if d[i + j] == 2:
                            consec = 0
                            d[i + j] = 0
                        elif d[i + j] == 0:
                            consec = 0
                        else:
                            consec += 1
                        if consec == 3:
                            break
                        j += 1
                    i += length - 1
                    j = 0
                    consec = 0
                    while j < length:
                        if j >= 8 and d[i - j] == 1:
                            break
                        if d[i - j] == 2:
                            consec = 0
                            d[i - j] = 0
                        elif d[i - j] == 0:
                            consec = 0
                        else:
                            consec += 1
                        if consec == 3:
                            break
                        j += 1
            i += 1
    return out[0], out[1]


def _compareseq(xv: list[int], yv: list[int], xch: list[int], ych: list[int], xidx: list[int],
                yidx: list[int]) -> None:
    """Mark changed lines (diffseq.h's compareseq with diag's middle snake, no heuristics)."""
    fd: dict[int, int] = {}
    bd: dict[int, int] = {}
    stack = [(0, len(xv), 0, len(yv))]
    while stack:
        xoff, xlim, yoff, ylim = stack.pop()
        while xoff < xlim and yoff < ylim and xv[xoff] == yv[yoff]:
            xoff += 1
            yoff += 1
        while xoff < xlim and yoff < ylim and xv[xlim - 1] == yv[ylim - 1]:
            xlim -= 1
            ylim -= 1
        if xoff == xlim:
            for y in range(yoff, ylim):
                ych[yidx[y]] = 1
            continue
        if yoff == ylim:
            for x in range(xoff, xlim):
                xch[xidx[x]] = 1
            continue
        xmid, ymid = _diag(xv, yv, xoff, xlim, yoff, ylim, fd, bd)
        # the low half first: push it last
        stack.append((xmid, xlim, ymid, ylim))
        stack.append((xoff, xmid, yoff, ymid))


def _diag(xv, yv, xoff, xlim, yoff, ylim, fd, bd) -> tuple[int, int]:
    dmin = xoff - ylim
    dmax = xlim - yoff
    fmid = xoff - yoff
    bmid = xlim - ylim
    fmin = fmax = fmid
    bmin = bmax = bmid
    odd = (fmid - bmid) & 1
    fd[fmid] = xoff
    bd[bmid] = xlim
    big = 1 << 62
    while True:
        if fmin > dmin:
            fmin -= 1
            fd[fmin - 1] = -1
        else:
            fmin += 1
        if fmax < dmax:
            fmax += 1
            fd[fmax + 1] = -1
        else:
            fmax -= 1
        for d in range(fmax, fmin - 1, -2):
            tlo = fd[d - 1]
            thi = fd[d + 1]
            x = thi if tlo < thi else tlo + 1
            y = x - d
            while x < xlim and y < ylim and xv[x] == yv[y]:
                x += 1
                y += 1
            fd[d] = x
            if odd and bmin <= d <= bmax and bd[d] <= x:
                return x, y
        if bmin > dmin:
            bmin -= 1
            bd[bmin - 1] = big
        else:
            bmin += 1
        if bmax < dmax:
            bmax += 1
            bd[bmax + 1] = big
        else:
            bmax -= 1
        for d in range(bmax, bmin - 1, -2):
            tlo = bd[d - 1]
            thi = bd[d + 1]
            x = tlo if tlo < thi else thi - 1
            y = x - d
            while xoff < x and yoff < y and xv[x - 1] == yv[y - 1]:
                x -= 1
                y -= 1
            bd[d] = x
            if not odd and fmin <= d <= fmax and x <= fd[d]:
                return x, y


def _shift(changed: list[int], other: list[int], eqs: list[int]) -> None:
    """GNU's shift_boundaries on arrays padded with a 0 at each end (index 1 is line 0)."""
    i_end = len(eqs) + 1
    i = 1
    j = 1

    def eq(k: int) -> int:
        return eqs[k - 1]

    while True:
        while i < i_end and not changed[i]:
            while other[j]:
                j += 1
            j += 1
            i += 1
        if i == i_end:
            break
        start = i
        i += 1
        while changed[i]:
            i += 1
        while other[j]:
            j += 1
        while True:
            runlength = i - start
            while start > 1 and eq(start - 1) == eq(i - 1):
                start -= 1
                changed[start] = 1
                i -= 1
                changed[i] = 0
                while changed[start - 1]:
                    start -= 1
                j -= 1
                while other[j]:
                    j -= 1
            corresponding = i if other[j - 1] else i_end
            while i != i_end and eq(start) == eq(i):
                changed[start] = 0
                start += 1
                changed[i] = 1
                i += 1
                while changed[i]:
                    i += 1
                while True:
                    j += 1
                    if not other[j]:
                        break
                    corresponding = i
            if runlength == i - start:
                break
        while corresponding < i:
            start -= 1
            changed[start] = 1
            i -= 1
            changed[i] = 0
            while True:
                j -= 1
                if not other[j]:
                    break



def changes(a: list[bytes], b: list[bytes], horizon: int = 0, key=None) -> list[tuple[int, int, int, int]]:
    """GNU diff's edit script: (first line of a, first line of b, lines deleted, lines
    inserted), 0-based, in order. Lines carry their terminators, so a last line without a
    newline differs from the same text with one. `key` maps a line to what is compared."""
    # the identical prefix and suffix (byte for byte, whatever -i -w -b say) are left out of
    # the analysis, but for `horizon` lines
    pre = 0
    n0, n1 = len(a), len(b)
    while pre < n0 and pre < n1 and a[pre] == b[pre]:
        pre += 1
    suf = 0
    while suf < n0 - pre and suf < n1 - pre and a[n0 - 1 - suf] == b[n1 - 1 - suf]:
        suf += 1
    classes: dict[bytes, int] = {}
    if key is not None:
        a = [key(x) for x in a]
        b = [key(x) for x in b]
    eq0 = [classes.setdefault(x, len(classes)) for x in a]
    eq1 = [classes.setdefault(x, len(classes)) for x in b]
    lo = max(0, pre - horizon)
    sf = max(0, suf - horizon)
    e0 = eq0[lo:n0 - sf]
    e1 = eq1[lo:n1 - sf]
    d0, d1 = _discards(e0, e1)
    ch0 = [0] * (len(e0) + 2)
    ch1 = [0] * (len(e1) + 2)
    xidx = [i + 1 for i in range(len(e0)) if not d0[i]]
    yidx = [i + 1 for i in range(len(e1)) if not d1[i]]
    for i in range(len(e0)):
        if d0[i]:
            ch0[i + 1] = 1
    for i in range(len(e1)):
        if d1[i]:
            ch1[i + 1] = 1
    _compareseq([e0[i - 1] for i in xidx], [e1[i - 1] for i in yidx], ch0, ch1, xidx, yidx)
    _shift(ch0, ch1, e0)
    _shift(ch1, ch0, e1)
    out = []
    i = j = 1
    end0, end1 = len(e0) + 1, len(e1) + 1
    while i < end0 or j < end1:
        if ch0[i] or ch1[j]:
            i0, j0 = i, j
            while ch0[i]:
                i += 1
            while ch1[j]:
                j += 1
            out.append((i0 - 1 + lo, j0 - 1 + lo, i - i0, j - j0))
        else:
            i += 1
            j += 1
    return out


# --------------------------------------------------------------------------- output


def changed_lines(a: list[bytes], b: list[bytes]) -> tuple[list[bool], list[bool]]:
    """Which lines of `a` are deleted and which of `b` inserted, by diffseq's compareseq alone
    (GNU patch's merge compares so: no lines discarded first, no runs shifted after)."""
    classes: dict[bytes, int] = {}
    e0 = [classes.setdefault(x, len(classes)) for x in a]
    e1 = [classes.setdefault(x, len(classes)) for x in b]
    ch0, ch1 = [0] * (len(e0) + 2), [0] * (len(e1) + 2)
    _compareseq(e0, e1, ch0, ch1, list(range(1, len(e0) + 1)), list(range(1, len(e1) + 1)))
    return [bool(c) for c in ch0[1:-1]], [bool(c) for c in ch1[1:-1]]


def split(data: bytes) -> list[bytes]:
    """Lines with their terminators (the last may lack one)."""
    if not data:
        return []
    parts = data.split(b"\n")
    last = parts.pop()
    out = [p + b"\n" for p in parts]
    if last:
        out.append(last)
    return out


def _line(out: Output, mark: bytes, line: bytes) -> None:
    out.write(mark + line)
    if not line.endswith(b"\n"):
        out.write(b"\n\\ No newline at end of file\n")


def _range(first: int, count: int) -> str:
    """A normal-format range of `count` lines from 0-based `first`."""
    return f"{first + 1}" if count == 1 else f"{first + 1},{first + count}"


def normal(out: Output, a: list[bytes], b: list[bytes], script: list[tuple[int, int, int, int]]) -> None:
    for i, j, dl, ins in script:
        if dl and ins:
            out.write(f"{_range(i, dl)}c{_range(j, ins)}\n".encode())
        elif dl:
            out.write(f"{_range(i, dl)}d{j}\n".encode())
        else:
            out.write(f"{i}a{_range(j, ins)}\n".encode())
        for k in range(i, i + dl):
            _line(out, b"< ", a[k])
        if dl and ins:
            out.write(b"---\n")
        for k in range(j, j + ins):
            _line(out, b"> ", b[k])


def _urange(first: int, count: int) -> str:
    if count == 0:
        return f"{first},0"
    return f"{first + 1}" if count == 1 else f"{first + 1},{count}"


def unified(out: Output, a: list[bytes], b: list[bytes], script: list[tuple[int, int, int, int]],
            context: int) -> None:
    for group in hunks(script, context):
        i0, j0 = group[0][0], group[0][1]
        first0 = max(0, i0 - context)
        first1 = j0 - (i0 - first0)
        li, lj, ldl, lins = group[-1]
        end0 = min(len(a), li + ldl + context)
        end1 = lj + lins + (end0 - (li + ldl))
        out.write(f"@@ -{_urange(first0, end0 - first0)} +{_urange(first1, end1 - first1)} @@\n".encode())
        x, y = first0, first1
        for i, j, dl, ins in group:
            while x < i:
                _line(out, b" ", a[x])
                x += 1
                y += 1
            for k in range(i, i + dl):
                _line(out, b"-", a[k])
            for k in range(j, j + ins):
                _line(out, b"+", b[k])
            x, y = i + dl, j + ins
        while x < end0:
            _line(out, b" ", a[x])
            x += 1


def hunks(script: list[tuple[int, int, int, int]], context: int) -> list[list[tuple[int, int, int, int]]]:
    """The changes each hunk of unified or context output holds: those less than twice the
    context apart."""
    out: list[list[tuple[int, int, int, int]]] = []
    for change in script:
        if out and change[0] - (out[-1][-1][0] + out[-1][-1][2]) <= 2 * context:
            out[-1].append(change)
        else:
            out.append([change])
    return out


def _crange(first: int, end: int) -> str:
    """A context-format range of lines `first` to `end` (0-based, end excluded): one number for
    one line or none (the line before), as print_context_number_range."""
    return f"{end}" if end <= first + 1 else f"{first + 1},{end}"


def context(out: Output, a: list[bytes], b: list[bytes], script: list[tuple[int, int, int, int]],
            lines: int) -> None:
    """diff -c's hunks (grouped as unified's): each side's lines, `!` for a change with lines on
    both sides, `-` and `+` for the others; a side with nothing but context is left out."""
    for group in hunks(script, lines):
        i0, j0 = group[0][0], group[0][1]
        first0 = max(0, i0 - lines)
        first1 = j0 - (i0 - first0)
        li, lj, ldl, lins = group[-1]
        end0 = min(len(a), li + ldl + lines)
        end1 = lj + lins + (end0 - (li + ldl))
        out.write(f"***************\n*** {_crange(first0, end0)} ****\n".encode())
        if any(dl for _, _, dl, _ in group):
            marks = {k: b"! " if ins else b"- " for i, _, dl, ins in group for k in range(i, i + dl)}
            for x in range(first0, end0):
                _line(out, marks.get(x, b"  "), a[x])
        out.write(f"--- {_crange(first1, end1)} ----\n".encode())
        if any(ins for _, _, _, ins in group):
            marks = {k: b"! " if dl else b"+ " for _, j, dl, ins in group for k in range(j, j + ins)}
            for y in range(first1, end1):
                _line(out, marks.get(y, b"  "), b[y])


def ed(out: Output, b: list[bytes], script: list[tuple[int, int, int, int]]) -> None:
    """diff -e: the changes last first, as ed commands (`Na`, `N,Mc`, `N,Md`) with the new
    lines; a line that is a lone `.` is written `..` and put right with `s/.//`."""
    for i, j, dl, ins in reversed(script):
        letter = "c" if dl and ins else "d" if dl else "a"
        out.write(f"{_range(i, dl) if dl else i}{letter}\n".encode())
        if not ins:
            continue
        inserting = True
        for line in b[j : j + ins]:
            if not inserting:
                out.write(b"a\n")
                inserting = True
            if line.rstrip(b"\n") == b".":
                out.write(b"..\n.\ns/.//\n")
                inserting = False
            else:
                out.write(line if line.endswith(b"\n") else line + b"\n")
        if inserting:
            out.write(b".\n")


def forward_ed(out: Output, b: list[bytes], script: list[tuple[int, int, int, int]]) -> None:
    """diff -f: the changes first to last, each as its ed letter then the range (`aN`, `cN,M`,
    `dN`), the new lines after it up to a `.`, which GNU writes as they are (a lone `.` too)."""
    for i, j, dl, ins in script:
        letter = "c" if dl and ins else "d" if dl else "a"
        out.write(f"{letter}{_range(i, dl).replace(',', ' ') if dl else i}\n".encode())
        if ins:
            out.write(b"".join(line if line.endswith(b"\n") else line + b"\n" for line in b[j : j + ins]) + b".\n")


# --------------------------------------------------------------------------- the command

_LONG = {
    "unified": ("U", OPTIONAL), "context": ("C", OPTIONAL), "ed": ("e", NONE), "brief": ("q", NONE),
    "forward-ed": ("f", NONE),
    "side-by-side": ("y", NONE), "width": ("W", REQUIRED), "suppress-common-lines": ("suppress-common", NONE),
    "left-column": ("left-column", NONE), "expand-tabs": ("t", NONE), "tabsize": ("tabsize", REQUIRED), "recursive": ("r", NONE), "new-file": ("N", NONE),
    "label": ("label", REQUIRED), "normal": ("normal", NONE), "report-identical-files": ("s", NONE),
    "text": ("a", NONE), "exclude": ("x", REQUIRED), "minimal": ("d", NONE),
    "unidirectional-new-file": ("P", NONE),
    "ignore-case": ("i", NONE), "ignore-all-space": ("w", NONE), "ignore-space-change": ("b", NONE),
    "ignore-blank-lines": ("B", NONE), "ignore-matching-lines": ("I", REQUIRED),
}


def _key(case: bool, white: str):
    """What -i, -w and -b compare of a line (its terminator kept apart)."""
    if not case and not white:
        return None

    def key(line: bytes) -> bytes:
        end = b"\n" if line.endswith(b"\n") else b""
        text = line[:-1] if end else line
        if case:
            text = text.lower()
        if white == "w":
            text = b"".join(text.split())
        elif white == "b":
            text = re.sub(rb"[ \t\v\f\r]+", b" ", text).rstrip(b" ")
        return text + end

    return key


class _Opts:
    def __init__(self) -> None:
        self.context: int | None = None
        self.style = "normal"  # unified, context, ed, side (-y)
        self.width = 130  # -y's columns (-W), tab size, -t, --suppress-common-lines, --left-column
        self.tabsize = 8
        self.expand_tabs = False
        self.common = True
        self.left = False
        self.blank = False  # -B
        self.matching: list = []  # -I REGEX, compiled
        self.brief = False
        self.recursive = False
        self.new = False
        self.new_left = False
        self.labels: list[str] = []
        self.identical = False
        self.text = False
        self.exclude: list[str] = []
        self.case = False
        self.white = ""
        self.switches = ""


def _switches(argv: list[str]) -> str:
    """The options as given (GNU's `diff -r -u a/x b/x` line repeats them)."""
    out = []
    args = argv[1:]
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            break
        if arg.startswith("--") and "=" not in arg:
            out.append(arg)
            name = arg[2:]
            if any(k.startswith(name) and m == REQUIRED for k, (_, m) in _LONG.items()) and name and i < len(args):
                out.append(args[i])
                i += 1
        elif arg.startswith("-") and arg != "-":
            out.append(arg)
            for k, c in enumerate(arg[1:], 1):
                if c in "Ux":
                    if k == len(arg) - 1 and i < len(args):
                        out.append(args[i])
                        i += 1
                    break
    return " ".join(shlex.quote(x) for x in out)


def _stamp(sh: ToolContext, ns: int, ctime: bool = False) -> str:
    """A header's time: unified's ISO form with nanoseconds, or (`ctime`) context's
    traditional `Thu Jan  1 00:00:00 1970`."""
    from datetime import datetime

    from kshell.core.clock import zone

    t = datetime.fromtimestamp(ns // 1_000_000_000, zone(sh))
    if ctime:
        return t.strftime("%a %b ") + f"{t.day:2d}" + t.strftime(" %H:%M:%S %Y")
    return t.strftime("%Y-%m-%d %H:%M:%S") + f".{ns % 1_000_000_000:09d} " + t.strftime("%z")


def _join(d: str, name: str) -> str:
    return d + name if d.endswith("/") else f"{d}/{name}"


class _Diff:
    def __init__(self, sh: ToolContext, opts: _Opts) -> None:
        self.sh = sh
        self.o = opts
        self.out = Output(sh)

    def err(self, name: str, e: OSError) -> int:
        self.out.flush()
        self.sh.write_err(f"diff: {name}: {message(e)}\n")
        return 2

    def stat(self, name: str):
        if name == "-":
            return None
        return devices.stat(self.sh, name)

    def top(self, n0: str, n1: str) -> int:
        try:
            s0 = self.stat(n0)
        except OSError as e:
            if not (self.o.new or self.o.new_left):
                return self.err(n0, e)
            s0 = False
        try:
            s1 = self.stat(n1)
        except OSError as e:
            if not self.o.new or s0 is False:
                if s0 is False:
                    self.err(n0, OSError(2, "No such file or directory"))
                return self.err(n1, e)
            s1 = False
        d0 = bool(s0) and s0.is_dir
        d1 = bool(s1) and s1.is_dir
        if d0 and d1:
            return self.dirs(n0, n1, True)
        if d0 and s1 is not False:
            base = "-" if n1 == "-" else n1.rstrip("/").rsplit("/", 1)[-1]
            if n1 == "-":
                self.sh.write_err("diff: cannot compare '-' to a directory\n")
                return 2
            n0 = _join(n0, base)
            try:
                s0 = self.stat(n0)
            except OSError as e:
                return self.err(n0, e)
        elif d1 and s0 is not False:
            if n0 == "-":
                self.sh.write_err("diff: cannot compare '-' to a directory\n")
                return 2
            n1 = _join(n1, n0.rstrip("/").rsplit("/", 1)[-1])
            try:
                s1 = self.stat(n1)
            except OSError as e:
                return self.err(n1, e)
        return self.files(n0, n1, s0, s1, False)

    def dirs(self, n0: str, n1: str, top: bool, missing: int = -1) -> int:
        from fnmatch import fnmatchcase

        names: list[set[str]] = []
        for k, d in enumerate((n0, n1)):
            if k == missing:
                names.append(set())
                continue
            try:
                names.append(set(self.sh.fs.readdir(d)) - {".", ".."})
            except OSError as e:
                return self.err(d, e)
        status = 0
        for name in sorted(names[0] | names[1], key=lambda s: s.encode("utf-8", "surrogateescape")):
            if any(fnmatchcase(name, p) for p in self.o.exclude):
                continue
            p0, p1 = _join(n0, name), _join(n1, name)
            if name not in names[1] or name not in names[0]:
                side = 0 if name in names[0] else 1
                if self.o.new or (self.o.new_left and side == 1):
                    s = self.sh.fs.stat([p0, p1][side])
                    if s.is_dir:
                        if self.o.recursive:
                            status = max(status, self.dirs(p0, p1, False, 1 - side))
                        else:
                            status = max(status, self.only(n0 if side == 0 else n1, name))
                        continue
                    st0 = s if side == 0 else False
                    st1 = s if side == 1 else False
                    status = max(status, self.files(p0, p1, st0, st1, True))
                    continue
                status = max(status, self.only(n0 if side == 0 else n1, name))
                continue
            try:
                s0 = self.sh.fs.stat(p0)
            except OSError as e:
                status = max(status, self.err(p0, e))
                continue
            try:
                s1 = self.sh.fs.stat(p1)
            except OSError as e:
                status = max(status, self.err(p1, e))
                continue
            if s0.is_dir and s1.is_dir:
                if self.o.recursive:
                    status = max(status, self.dirs(p0, p1, False))
                else:
                    self.out.write(f"Common subdirectories: {p0} and {p1}\n".encode())
                continue
            if s0.is_dir or s1.is_dir:
                k0 = "directory" if s0.is_dir else _kind(s0)
                k1 = "directory" if s1.is_dir else _kind(s1)
                self.out.write(f"File {p0} is a {k0} while file {p1} is a {k1}\n".encode())
                status = max(status, 1)
                continue
            status = max(status, self.files(p0, p1, s0, s1, True))
        return status

    def only(self, d: str, name: str) -> int:
        self.out.write(f"Only in {d}: {name}\n".encode())
        return 1

    def read(self, name: str, s) -> bytes:
        if s is False:
            return b""
        return read_all(self.sh, name)

    def files(self, n0: str, n1: str, s0, s1, nested: bool) -> int:
        try:
            data0 = self.read(n0, s0)
        except OSError as e:
            return self.err(n0, e)
        try:
            data1 = self.read(n1, s1)
        except OSError as e:
            return self.err(n1, e)
        if data0 == data1 and self.o.style != "side":  # -y lists even the same lines
            if self.o.identical:
                self.out.write(f"Files {n0} and {n1} are identical\n".encode())
            return 0
        key = _key(self.o.case, self.o.white)
        if self.o.brief and key is not None and not changes(split(data0), split(data1), 0, key):
            return 0
        if self.o.brief:
            self.out.write(f"Files {n0} and {n1} differ\n".encode())
            return 1
        if not self.o.text and (b"\0" in data0[:4096] or b"\0" in data1[:4096]):
            self.out.write(f"Binary files {n0} and {n1} differ\n".encode())
            return 1
        trouble = False
        if self.o.style in ("ed", "forward"):  # ed cannot write a last line without its newline:
            # GNU says so for each such file when the files differ, adds it, and exits with 2
            cut = [n for n, d in ((n0, data0), (n1, data1)) if d and not d.endswith(b"\n")]
            if cut and changes(split(data0), split(data1), 0, _key(self.o.case, self.o.white)):
                labels = self.o.labels
                for n in cut:
                    shown = labels[0] if n is n0 and labels else labels[1] if n is n1 and len(labels) > 1 else n
                    self.sh.write_err(f"diff: {shown}: No newline at end of file\n\n")
                trouble = True
            data0, data1 = (d + b"\n" if d and not d.endswith(b"\n") else d for d in (data0, data1))
        a, b = split(data0), split(data1)
        ctx = self.o.context
        script = changes(a, b, ctx or 0, _key(self.o.case, self.o.white))
        if self.o.blank or self.o.matching:
            script = self.unignored(a, b, script)
        if not script and self.o.style == "side":
            self.side(a, b, script)
        if not script:
            if self.o.identical:
                self.out.write(f"Files {n0} and {n1} are identical\n".encode())
            return 2 if trouble else 0
        if nested:
            self.out.write(f"diff {self.o.switches} {n0} {n1}\n".replace("diff  ", "diff ").encode())
        if self.o.style == "normal":
            normal(self.out, a, b, script)
        elif self.o.style == "ed":
            ed(self.out, b, script)
        elif self.o.style == "forward":
            forward_ed(self.out, b, script)
        elif self.o.style == "side":
            self.side(a, b, script)
        else:
            labels = self.o.labels
            h0 = labels[0] if labels else f"{n0}\t{self.when(n0, s0)}"
            h1 = labels[1] if len(labels) > 1 else f"{n1}\t{self.when(n1, s1)}"
            tags = ("***", "---") if self.o.style == "context" else ("---", "+++")
            self.out.write(f"{tags[0]} {h0}\n{tags[1]} {h1}\n".encode("utf-8", "surrogateescape"))
            (context if self.o.style == "context" else unified)(self.out, a, b, script, ctx or 0)
        return 2 if trouble else 1

    def unignored(self, a: list[bytes], b: list[bytes], script: list[tuple[int, int, int, int]]
                  ) -> list[tuple[int, int, int, int]]:
        """-B and -I: the changes left once each hunk (each change, or with context each group
        of changes as the output groups them) whose lines are all blank or all match is dropped."""
        o = self.o

        def ignorable(line: bytes) -> bool:
            text = line.rstrip(b"\n")
            if o.blank and not text:
                return True
            latin = text.decode("latin-1")
            return any(rx.search(latin) for rx in o.matching)

        groups = hunks(script, o.context or 0) if o.style in ("unified", "context") else [[c] for c in script]
        return [c for group in groups
                if not all(ignorable(x) for i, j, dl, ins in group for x in (*a[i : i + dl], *b[j : j + ins]))
                for c in group]

    def side(self, a: list[bytes], b: list[bytes], script: list[tuple[int, int, int, int]]) -> None:
        """-y: sdiff's layout (kshell.tools.files.sdiff), every line, the same ones too."""
        from kshell.tools.files.sidebyside import Layout, side_by_side

        o = self.o
        self.out.write(side_by_side(a, b, script, Layout(o.width, o.tabsize, o.expand_tabs), o.common, o.left))

    def when(self, name: str, s) -> str:
        ctime = self.o.style == "context"
        if s is False:
            return _stamp(self.sh, 0, ctime)
        if s is None:
            return _stamp(self.sh, time.time_ns(), ctime)
        return _stamp(self.sh, s.mtime, ctime)


def _kind(s) -> str:
    if st.S_ISREG(s.mode):
        return "regular empty file" if s.size == 0 else "regular file"
    if st.S_ISLNK(s.mode):
        return "symbolic link"
    if st.S_ISFIFO(s.mode):
        return "fifo"
    return "special file"


@tool("diff", 2)
def diff(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, operands = parse(argv, "uU:cC:efyW:tqrNsadx:PiwbBI:", _LONG)
    except Usage as e:
        raise Usage(e.message + "\ndiff: Try 'diff --help' for more information.", hint=False) from None
    o = _Opts()
    o.switches = _switches(argv)
    for k, v in opts:
        style = {"u": "unified", "U": "unified", "c": "context", "C": "context", "e": "ed", "f": "forward", "y": "side",
                 "normal": "normal"}.get(k)
        if style is not None:
            if o.style != "normal" and o.style != style or k == "normal" and o.style != "normal":
                raise Usage("conflicting output style options\ndiff: Try 'diff --help' for more "
                            "information.", hint=False)
            o.style = style
        if k in ("u", "c", "U", "C"):  # the most context asked for, as GNU's
            if v is not None and v != "" and not v.isdigit():
                raise Usage(f"invalid context length '{v}'\ndiff: Try 'diff --help' for more information.",
                            hint=False)
            lines = int(v) if v else 3
            o.context = lines if o.context is None else max(o.context, lines)
        elif k == "q":
            o.brief = True
        elif k == "r":
            o.recursive = True
        elif k == "N":
            o.new = True
        elif k == "P":
            o.new_left = True
        elif k == "label":
            o.labels.append(v)
        elif k == "normal":
            o.context = None
        elif k == "s":
            o.identical = True
        elif k in ("W", "tabsize"):
            if not v.isdigit() or int(v) == 0:
                what = "width" if k == "W" else "tabsize"
                raise Usage(f"invalid {what} '{v}'\ndiff: Try 'diff --help' for more information.", hint=False)
            setattr(o, "width" if k == "W" else "tabsize", int(v))
        elif k == "t":
            o.expand_tabs = True
        elif k == "B":
            o.blank = True
        elif k == "I":
            from kshell.tools.sed.pattern import RegexError, compile_posix

            try:
                o.matching.append(compile_posix(v, False))
            except RegexError as e:
                raise Fail(f"{e}", 2) from None
        elif k == "suppress-common":
            o.common = False
        elif k == "left-column":
            o.left = True
        elif k == "a":
            o.text = True
        elif k == "x":
            o.exclude.append(v)
        elif k == "i":
            o.case = True
        elif k == "w" or (k == "b" and o.white != "w"):
            o.white = k
    hint = "\ndiff: Try 'diff --help' for more information."
    if len(operands) < 2:
        after = operands[-1] if operands else argv[-1]
        raise Usage(f"missing operand after '{after}'" + hint, hint=False)
    if len(operands) > 2:
        raise Usage(f"extra operand '{operands[2]}'" + hint, hint=False)
    d = _Diff(sh, o)
    try:
        status = d.top(operands[0], operands[1])
    finally:
        d.out.flush()
    return status
