"""A terminal's screen kept while no one looks at it: a VT emulator (pyte) fed with everything
the program writes, plus a bounded scrollback of plain text lines.

A persistent terminal (kshell.server.terminals) and the `process` runtime keep one each: an
orchestrator reads the last lines of it (`lines`), and a person who attaches gets it painted at
once (`redraw`), as tmux repaints a window. The scrollback keeps text only (no colours), one
`str` a line: pyte's own history keeps a styled tuple per cell, some 10 MiB for 1,000 lines of
80 columns, where these take some 100 KiB.
"""

from __future__ import annotations

from collections import defaultdict, deque

import pyte
from pyte import charsets as cs
from pyte import modes as mo
from pyte.graphics import BG_AIXTERM, BG_ANSI, FG_AIXTERM, FG_ANSI
from pyte.screens import Char, Margins, StaticDefaultDict

SCROLLBACK = 1000  # lines kept above the screen (the default of [limits] terminal_scrollback)

_FG = {name: code for code, name in {**FG_ANSI, **FG_AIXTERM}.items()}
_BG = {name: code for code, name in {**BG_ANSI, **BG_AIXTERM}.items()}
CHARS = 4096  # distinct styled characters shared by a screen's cells before the table starts again
_FLAGS = (("bold", 1), ("italics", 3), ("underscore", 4), ("blink", 5), ("reverse", 7), ("strikethrough", 9))


class _Row(StaticDefaultDict[int, Char]):
    """A screen row whose cells share one tuple per distinct styled character: pyte makes a new
    one for every character drawn (120 bytes a cell, 110 KiB for a full 80x24 screen)."""

    __slots__ = ("chars",)

    def __init__(self, default: Char, chars: dict[Char, Char]) -> None:
        super().__init__(default)
        self.chars = chars

    def __setitem__(self, x: int, char: Char) -> None:
        shared = self.chars.get(char)
        if shared is None:
            if len(self.chars) >= CHARS:
                self.chars.clear()
            shared = self.chars[char] = char
        super().__setitem__(x, shared)


class _Screen(pyte.Screen):
    """pyte's screen, handing each line that scrolls off the top to the scrollback."""

    def __init__(self, columns: int, lines: int, scrollback: deque[str]) -> None:
        super().__init__(columns, lines)
        self.scrollback = scrollback
        chars: dict[Char, Char] = {}
        self.buffer = defaultdict(lambda: _Row(self.default_char, chars))
        self._styled: dict[Char, dict[str, Char]] = {}  # by the cursor's attributes: each character's cell

    def draw(self, data: str) -> None:
        """pyte's draw, with a fast way for the usual run: ASCII text that fits on the line, in
        replace mode and the Latin-1 charset. pyte makes a tuple per character drawn; this
        takes each (attributes, character) cell from a table, some 5 times faster."""
        x, cursor = self.cursor.x, self.cursor
        if (x + len(data) > self.columns or not data.isascii() or not data.isprintable() or mo.IRM in self.mode
                or (self.g1_charset if self.charset else self.g0_charset) is not cs.LAT1_MAP):
            super().draw(data)
            return
        styled = self._styled.get(cursor.attrs)
        if styled is None:
            if len(self._styled) >= 64:
                self._styled.clear()
            styled = self._styled[cursor.attrs] = {}
        row = self.buffer[cursor.y]
        for i, char in enumerate(data):
            cell = styled.get(char)
            if cell is None:
                cell = styled[char] = cursor.attrs._replace(data=char)
            dict.__setitem__(row, x + i, cell)
        cursor.x = x + len(data)

    def index(self) -> None:
        top, bottom = self.margins or Margins(0, self.lines - 1)
        if self.cursor.y == bottom and top == 0 and self.scrollback.maxlen:
            self.scrollback.append(self.row_text(0))
        super().index()

    def row_text(self, y: int) -> str:
        row = self.buffer.get(y)  # not self.buffer[y]: that would make the row
        if not row:
            return ""
        keys = list(row)
        if keys == list(range(len(keys))):  # drawn left to right from the first column: the usual line
            return "".join([char.data for char in row.values()]).rstrip()
        return "".join([row[x].data for x in range(min(max(keys) + 1, self.columns))]).rstrip()


class VTScreen:
    """What a terminal shows, kept up to date from the program's output bytes."""

    def __init__(self, columns: int = 80, lines: int = 24, scrollback: int = SCROLLBACK) -> None:
        self.scrollback: deque[str] = deque(maxlen=max(scrollback, 0))
        self._screen = _Screen(max(columns, 1), max(lines, 1), self.scrollback)
        self._stream = pyte.ByteStream(self._screen)

    @property
    def size(self) -> tuple[int, int]:
        """(columns, lines)."""
        return self._screen.columns, self._screen.lines

    def feed(self, data: bytes) -> None:
        self._stream.feed(data)
        self._screen.dirty.clear()  # nothing draws from it: only the buffer matters

    def resize(self, columns: int, lines: int) -> None:
        self._screen.resize(max(lines, 1), max(columns, 1))

    def display(self) -> list[str]:
        """The screen's rows as text, trailing blanks removed."""
        return [self._screen.row_text(y) for y in range(self._screen.lines)]

    def lines(self, n: int | None = None) -> list[str]:
        """The last `n` lines of scrollback and screen together (all with None), the screen's
        empty rows below the last written one left out, as `tmux capture-pane -S -N` gives."""
        rows = self.display()
        while rows and not rows[-1]:
            rows.pop()
        every = [*self.scrollback, *rows]
        return every if n is None else every[-n:] if n > 0 else []

    @property
    def cursor(self) -> tuple[int, int]:
        """(x, y) of the cursor, from 0."""
        return self._screen.cursor.x, self._screen.cursor.y

    def redraw(self) -> bytes:
        """The bytes that paint this screen on an empty terminal of the same size: every row with
        its colours and attributes, then the cursor where the program left it."""
        screen = self._screen
        out = ["\x1b[0m\x1b[H\x1b[2J"]
        last: tuple[object, ...] | None = None
        for y in range(screen.lines):
            row = screen.buffer.get(y)
            if not row:
                continue
            end = max(row.keys(), default=-1)
            if end < 0:
                continue
            out.append(f"\x1b[{y + 1};1H")
            for x in range(min(end + 1, screen.columns)):
                char = row[x]
                if not char.data:  # the right half of a wide character
                    continue
                style = (char.fg, char.bg, *(getattr(char, flag) for flag, _ in _FLAGS))
                if style != last:
                    out.append(_sgr(char))
                    last = style
                out.append(char.data)
        cx, cy = screen.cursor.x, screen.cursor.y
        out.append(f"\x1b[0m\x1b[{cy + 1};{min(cx, screen.columns - 1) + 1}H")
        if screen.cursor.hidden:
            out.append("\x1b[?25l")
        return "".join(out).encode("utf-8", "surrogateescape")


def _colour(value: str, names: dict[str, int], base: int) -> str:
    if value == "default":
        return ""
    if value in names:
        return f";{names[value]}"
    if len(value) == 6:
        try:
            r, g, b = int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)
        except ValueError:
            return ""
        return f";{base};2;{r};{g};{b}"
    return ""


def _sgr(char: pyte.screens.Char) -> str:
    codes = "0" + "".join(f";{code}" for flag, code in _FLAGS if getattr(char, flag))
    codes += _colour(char.fg, _FG, 38) + _colour(char.bg, _BG, 48)
    return f"\x1b[{codes}m"


__all__ = ["SCROLLBACK", "VTScreen"]
