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
def _ifs_tools(ifs: str) -> tuple[str, str, re.Pattern[str]]:
    """(IFS whitespace, IFS non-whitespace, a regex whose capturing split alternates field
    text and delimiters). A delimiter is a run of IFS whitespace, or one non-whitespace IFS
    character with the IFS whitespace around it (POSIX 2.6.5)."""
    ws = "".join(c for c in ifs if c in " \t\n")
    nws = "".join(c for c in ifs if c not in " \t\n")
    w = f"[{re.escape(ws)}]" if ws else ""
    n = f"[{re.escape(nws)}]" if nws else ""
    if not nws:
        return ws, nws, re.compile(f"({w}+)")
    if not ws:
        return ws, nws, re.compile(f"({n})")
    return ws, nws, re.compile(f"({w}*{n}{w}*|{w}+)")


def ifs_split(text: str, ifs: str) -> tuple[list[str], bool, bool]:
    """Split a string on its own (read's fields): (fields, started with IFS whitespace, ended
    with a delimiter)."""
    b = Fields(ifs)
    b.add_split(text)
    fields = [field_text(pieces) for pieces, _ in b.result()]
    ws = _ifs_tools(ifs)[0] if ifs else ""
    lead = bool(text) and text[0] in ws
    trail = bool(text) and bool(ifs) and text[-1] in ifs
    return fields, lead, trail


class Fields:
    """Accumulates fields. `forced` marks the current field as present even if empty (it has
    quoted content, e.g. `""`).

    Splitting works on the whole word, as bash splits the expanded word: a delimiter only
    ends the current field when the next content comes (or the word ends), because the
    delimiter may go on in the next expansion (`a='q ' b='xa'` with IFS=' x': `$a$b` is `q a`,
    the space and the x are one delimiter). `sep` is the delimiter in progress after the
    current field: 0 none, 1 IFS whitespace only, 2 one that holds a non-whitespace IFS
    character (so the field before it is a field even if empty: IFS=x, `x` splits to one
    empty field), 3 the same at the start of the word after IFS whitespace (IFS=' x', `' xa'`
    splits to '' and a).

    bash splits a word that holds a list expansion (`$@`, `${a[@]}`, unquoted `$*`) without
    first skipping its leading IFS whitespace (list_string called with quoted=1), so there
    the empty field that such a start makes is not a field: `lead_null` says the first field
    came so, `listed` that the word holds a list.

    `joiner` not None makes one string of the word, as a pattern (case, [[ ==, =~) is: no
    splitting, a `@` list joined with a space, a `*` list with `joiner` (IFS's first
    character, or a space if IFS is unset)."""

    __slots__ = ("done", "cur", "forced", "magic", "ifs", "magics", "sep", "lead_null", "listed",
                 "joiner")

    def __init__(self, ifs: str, joiner: str | None = None) -> None:
        self.done: list[list[tuple[str, int]]] = []
        self.magics: list[bool] = []
        self.cur: list[tuple[str, int]] = []
        self.forced = False
        self.magic = False
        self.ifs = ifs
        self.sep = 0
        self.lead_null = False
        self.listed = False
        self.joiner = joiner

    def add(self, text: str, kind: int) -> None:
        if self.sep:
            self.finish()
        self.cur.append((text, kind))
        if kind == QUO:
            self.forced = True
        elif not self.magic and ("*" in text or "?" in text or "[" in text or "(" in text):
            self.magic = True

    def force(self) -> None:
        """Quoted text starts here, even if empty (`""`): the current field exists."""
        if self.sep:
            self.finish()
        self.forced = True

    def finish(self) -> None:
        sep = self.sep
        if self.cur or self.forced or sep >= 2:
            if sep == 3 and not self.cur and not self.forced:
                self.lead_null = True
            self.done.append(self.cur)
            self.magics.append(self.magic)
        self.cur = []
        self.forced = False
        self.magic = False
        self.sep = 0

    def add_split(self, text: str) -> None:
        """An unquoted expansion result, split on IFS into the fields around it."""
        if not text:
            return
        ifs = self.ifs
        if not ifs:
            self.add(text, EXP)
            return
        if ifs == DEFAULT_IFS:
            if " " not in text and "\t" not in text and "\n" not in text:
                self.add(text, EXP)
                return
        elif not any(c in text for c in ifs):
            self.add(text, EXP)
            return
        ws, nws, delim = _ifs_tools(ifs)
        tokens = delim.split(text)
        if not nws:  # whitespace only: every delimiter is of kind 1
            for i in range(0, len(tokens), 2):
                if i and not self.sep:
                    self.sep = 1
                if tokens[i]:
                    self.add(tokens[i], EXP)
            return
        for i, tok in enumerate(tokens):
            if not i & 1:
                if tok:
                    self.add(tok, EXP)
            elif tok.strip(ws):
                sep = self.sep
                if sep >= 2:  # a second non-whitespace delimiter: an empty field between
                    self.finish()
                    self.sep = 2
                elif (sep or tok[0] in ws) and not self.done and not self.cur and not self.forced:
                    self.sep = 3
                else:
                    self.sep = 2
            elif not self.sep:
                self.sep = 1

    def add_list(self, values: list[str], quoted: bool, star: bool = False) -> None:
        """The elements of `$@` / `${a[@]}`: quoted, one field each (joined to the text
        around). Unquoted, bash joins them with IFS's first character and splits the result,
        so that with a non-whitespace IFS an empty element still makes a field (`IFS=x; set --
        a '' b; echo $@` gives three); with IFS null nothing splits and each non-empty element
        is a field of its own."""
        self.listed = True
        if self.joiner is not None:
            self.add((self.joiner if star else " ").join(values), QUO if quoted else EXP)
        elif quoted:
            for i, value in enumerate(values):
                if i:
                    self.finish()
                self.add(value, QUO)
        elif self.ifs:
            self.add_split(values[0] if len(values) == 1 else self.ifs[0].join(values))
        else:
            for i, value in enumerate(values):
                if i:
                    self.finish()
                if value:
                    self.add(value, EXP)

    def result(self) -> list[tuple[list[tuple[str, int]], bool]]:
        self.finish()
        if self.lead_null and self.listed:
            del self.done[0], self.magics[0]
        return list(zip(self.done, self.magics, strict=True))


def field_text(pieces: list[tuple[str, int]]) -> str:
    if len(pieces) == 1:
        return pieces[0][0]
    return "".join(text for text, _ in pieces)


def field_pattern(pieces: list[tuple[str, int]]) -> str:
    return "".join(pat.escape(text) if kind == QUO else text for text, kind in pieces)
