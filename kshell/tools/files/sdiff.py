"""sdiff (GNU diffutils 3.8) without -o: two files side by side, as `diff -y` lays them out.

The differences are K's diff engine's (GNU diff's algorithm, with -i -b -w -E -Z as diff reads
them); the layout is GNU's side.c: columns from -w (130) and the tab size, tabs kept unless -t,
`|` for changed lines (`/` `\\` when only one side ends in a newline), `<` `>` for lines on one
side, `(` for common lines under -l, none under -s. Interactive merging (-o) is refused: it
needs a person at a terminal answering each hunk. Status: 0 same, 1 different, 2 trouble.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.tools.data.diff import changes, split
from kshell.tools.files.names import strerror
from kshell.tools.options import NONE, REQUIRED, Usage, parse, tool
from kshell.tools.text.textio import read_all

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_LONG = {"output": ("o", REQUIRED), "ignore-case": ("i", NONE), "ignore-tab-expansion": ("E", NONE),
         "ignore-trailing-space": ("Z", NONE), "ignore-space-change": ("b", NONE), "ignore-all-space": ("W", NONE),
         "ignore-blank-lines": ("B", NONE), "ignore-matching-lines": ("I", REQUIRED), "strip-trailing-cr": ("cr", NONE),
         "text": ("a", NONE), "width": ("w", REQUIRED), "left-column": ("l", NONE),
         "suppress-common-lines": ("s", NONE), "expand-tabs": ("t", NONE), "tabsize": ("tabsize", REQUIRED),
         "minimal": ("d", NONE), "speed-large-files": ("H", NONE), "diff-program": ("prog", REQUIRED),
         "help": ("help", NONE), "version": ("v", NONE)}
GUTTER = 3


class Layout:
    """GNU diff's side-by-side columns and its line printer."""

    def __init__(self, width: int, tab: int, expand: bool) -> None:
        self.tab, self.expand = tab, expand
        t = 1 if expand else tab
        t_gutter = t + GUTTER
        unaligned = (width >> 1) + (t_gutter >> 1) + (width & t_gutter & 1)
        off = unaligned - unaligned % t
        self.half = 0 if off <= GUTTER or width <= off else min(off - GUTTER, width - off)
        self.col2 = off if self.half else width
        self.out = bytearray()

    def tab_to(self, start: int, to: int) -> int:
        if not self.expand:
            stop = start + self.tab - start % self.tab
            while stop <= to:
                self.out += b"\t"
                start = stop
                stop += self.tab
        self.out += b" " * max(0, to - start)
        return to

    def half_line(self, line: bytes, indent: int, bound: int) -> int:
        """side.c's print_half_line: the line cut at `bound` columns; where the cursor ends."""
        inpos = outpos = 0
        for c in line:
            ch = bytes([c])
            if ch == b"\t":
                spaces = self.tab - inpos % self.tab
                if inpos == outpos:
                    stop = outpos + spaces
                    if self.expand:
                        stop = min(stop, bound)
                        self.out += b" " * max(0, stop - outpos)
                        outpos = max(outpos, stop)
                    elif stop < bound:
                        outpos = stop
                        self.out += ch
                inpos += spaces
            elif ch == b"\r":
                self.out += ch
                self.tab_to(0, indent)
                inpos = outpos = 0
            elif ch == b"\b":
                if inpos and inpos - 1 < bound:
                    inpos -= 1
                    if outpos <= inpos:
                        self.out += b" " * (inpos - outpos)
                        outpos = inpos
                    else:
                        outpos = inpos
                        self.out += ch
                elif inpos:
                    inpos -= 1
            elif ch == b"\n":
                return outpos
            elif 32 <= c < 127 or c >= 128:
                if inpos < bound:
                    outpos = inpos + 1
                    self.out += ch
                inpos += 1
            elif inpos < bound:  # a control character: printed, no column
                self.out += ch
        return outpos

    def line(self, left: bytes | None, sep: str, right: bytes | None) -> None:
        col = 0
        newline = False
        if left is not None:
            newline = left.endswith(b"\n")
            col = self.half_line(left, 0, self.half)
        if sep != " ":
            col = self.tab_to(col, (self.half + self.col2 - 1) // 2) + 1
            if sep == "|" and right is not None and newline != right.endswith(b"\n"):
                sep = "/" if newline else "\\"
            self.out += sep.encode()
        if right is not None:
            newline = newline or right.endswith(b"\n")
            if right[:1] != b"\n":
                col = self.tab_to(col, self.col2)
                self.half_line(right, col, self.half)
        if newline:
            self.out += b"\n"


def _key(given: dict):
    """What diff compares for -i -b -W -E -Z (None: the lines themselves)."""
    if not any(k in given for k in "ibWEZ"):
        return None

    def key(line: bytes) -> bytes:
        if "i" in given:
            line = line.lower()
        if "W" in given:
            return b"".join(line.split())
        if "b" in given:
            line = b" ".join(line.split()) + (b"\n" if line.endswith(b"\n") else b"")
        elif "Z" in given:
            line = line.rstrip(b" \t\n") + (b"\n" if line.endswith(b"\n") else b"")
        if "E" in given:
            line = line.expandtabs(8)
        return line

    return key


@tool("sdiff", 2)
def sdiff(sh: Interp, argv: list[str]) -> int:
    try:
        opts, files = parse(argv, "o:iEZbWBI:aw:lstdHv", _LONG)
    except Usage as e:
        sh.write_err(f"sdiff: {e.message}\nsdiff: Try 'sdiff --help' for more information.\n")
        return 2
    given = dict(opts)
    if "help" in given:
        sh.out("Usage: sdiff [OPTION]... FILE1 FILE2\n")
        return 0
    if "v" in given:
        sh.out("sdiff (GNU diffutils) 3.8\n")
        return 0
    if "o" in given:
        sh.write_err("sdiff: -o (interactive merging) is not supported in K: it asks a person about each hunk\n")
        return 2
    if any(k in given for k in ("B", "I")):
        sh.write_err(f"sdiff: -{'B' if 'B' in given else 'I'} is not supported in K\n")
        return 2
    if len(files) != 2:
        what = f"missing operand after '{files[-1] if files else argv[0]}'" if len(files) < 2 \
            else f"extra operand '{files[2]}'"
        sh.write_err(f"sdiff: {what}\nsdiff: Try 'sdiff --help' for more information.\n")
        return 2
    try:
        width = int(given.get("w", "130"))
        tab = int(given.get("tabsize", "8"))
        if width <= 0 or tab <= 0:
            raise ValueError
    except ValueError:
        sh.write_err(f"sdiff: invalid width '{given.get('w')}'\n" if "w" in given else
                     f"sdiff: invalid tabsize '{given.get('tabsize')}'\n")
        return 2
    texts = []
    for name in files:
        try:
            data = read_all(sh, name)
        except OSError as e:
            sh.write_err(f"diff: {name}: {strerror(e)}\n")  # GNU sdiff passes on its diff's words
            return 2
        lines = split(data)
        if "cr" in given:
            lines = [x[:-2] + b"\n" if x.endswith(b"\r\n") else x for x in lines]
        texts.append(lines)
    a, b = texts
    script = changes(a, b, key=_key(given))
    sh.out(side_by_side(a, b, script, Layout(width, tab, "t" in given), "s" not in given, "l" in given))
    return 1 if script else 0


def side_by_side(a: list[bytes], b: list[bytes], script: list[tuple[int, int, int, int]], layout: Layout,
                 common: bool, left: bool) -> bytes:
    """GNU's side-by-side listing of an edit script (sdiff, and `diff -y`): common lines on both
    sides (only the left one with `(` under `left`, none unless `common`), `|` `<` `>` for the
    changed ones."""
    i = j = 0
    for a0, b0, dels, ins in [*script, (len(a), len(b), 0, 0)]:
        while i < a0:
            if common and left:
                layout.line(a[i], "(", None)
            elif common:
                layout.line(a[i], " ", b[j])
            i += 1
            j += 1
        for k in range(max(dels, ins)):
            if k < dels and k < ins:
                layout.line(a[a0 + k], "|", b[b0 + k])
            elif k < dels:
                layout.line(a[a0 + k], "<", None)
            else:
                layout.line(None, ">", b[b0 + k])
        i, j = a0 + dels, b0 + ins
    return bytes(layout.out)
