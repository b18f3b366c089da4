"""The field builder: expansion results accumulate here as pieces that remember whether they
were quoted, so that IFS splitting touches only unquoted expansion results and globbing only
unquoted pattern characters."""

from __future__ import annotations

import re
from functools import lru_cache

from kshell.expand import pattern as pat

LIT = 0  # unquoted literal text: globbed, never split
QUO = 1  # quoted text: neither split nor globbed
EXP = 2  # unquoted expansion result: split (already) and globbed

DEFAULT_IFS = " \t\n"


@lru_cache(maxsize=64)
def _ifs_tools(ifs: str) -> tuple[str, str, re.Pattern[str] | None]:
    ws = "".join(c for c in ifs if c in " \t\n")
    nws = "".join(c for c in ifs if c not in " \t\n")
    if ifs and not nws:
        return ws, nws, re.compile(f"[{re.escape(ws)}]+")
    return ws, nws, None


def ifs_split(text: str, ifs: str) -> tuple[list[str], bool, bool]:
    """Split an unquoted expansion result: (fields, started with a separator, ended with one)."""
    ws, nws, ws_re = _ifs_tools(ifs)
    if ws_re is not None:
        parts = ws_re.split(text)
        lead = parts[0] == ""
        trail = parts[-1] == ""
        if lead:
            parts = parts[1:]
        if trail and parts:
            parts = parts[:-1]
        return parts, lead, trail
    n = len(text)
    i = 0
    lead = False
    while i < n and text[i] in ws:
        i += 1
    if i:
        lead = True
    fields: list[str] = []
    trail = False
    while i < n:
        start = i
        while i < n and text[i] not in ifs:
            i += 1
        fields.append(text[start:i])
        if i >= n:
            break
        while i < n and text[i] in ws:
            i += 1
        if i < n and text[i] in nws:
            i += 1
            while i < n and text[i] in ws:
                i += 1
        if i >= n:
            trail = True
    return fields, lead, trail


class Fields:
    """Accumulates fields. `forced` marks the current field as present even if empty (it has
    quoted content, e.g. `""`)."""

    __slots__ = ("done", "cur", "forced", "magic", "ifs", "magics")

    def __init__(self, ifs: str) -> None:
        self.done: list[list[tuple[str, int]]] = []
        self.magics: list[bool] = []
        self.cur: list[tuple[str, int]] = []
        self.forced = False
        self.magic = False
        self.ifs = ifs

    def add(self, text: str, kind: int) -> None:
        self.cur.append((text, kind))
        if kind == QUO:
            self.forced = True
        elif not self.magic and ("*" in text or "?" in text or "[" in text or "(" in text):
            self.magic = True

    def finish(self) -> None:
        if self.cur or self.forced:
            self.done.append(self.cur)
            self.magics.append(self.magic)
        self.cur = []
        self.forced = False
        self.magic = False

    def add_split(self, text: str) -> None:
        if not text:
            return
        ifs = self.ifs
        if not ifs:
            self.add(text, EXP)
            return
        parts, lead, trail = ifs_split(text, ifs)
        if lead:
            self.finish()
        for i, part in enumerate(parts):
            if i:
                self.finish()
            self.add(part, EXP)
            if not part:
                self.forced = True
        if trail and parts:
            self.finish()

    def add_list(self, values: list[str], quoted: bool) -> None:
        """The elements of `$@` / `${a[@]}`: one field each (joined to the text around)."""
        if quoted:
            for i, value in enumerate(values):
                if i:
                    self.finish()
                self.add(value, QUO)
        else:
            for i, value in enumerate(values):
                if i:
                    self.finish()
                self.add_split(value)

    def result(self) -> list[tuple[list[tuple[str, int]], bool]]:
        self.finish()
        return list(zip(self.done, self.magics, strict=True))


def field_text(pieces: list[tuple[str, int]]) -> str:
    if len(pieces) == 1:
        return pieces[0][0]
    return "".join(text for text, _ in pieces)


def field_pattern(pieces: list[tuple[str, int]]) -> str:
    return "".join(pat.escape(text) if kind == QUO else text for text, kind in pieces)
