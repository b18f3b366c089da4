"""GNU diff's side-by-side layout (side.c): the columns and line printer that sdiff and
`diff -y` share, in a module of its own so that neither tool imports the other."""

from __future__ import annotations

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
