"""fmt (-w, -g, -s, -u, -p, -c, -t), as GNU coreutils 9.1: paragraphs refilled with GNU's least-cost
line breaking (lines near 93% of the width, ragged edges, breaks after sentences preferred and
one-word last lines avoided), so reflowed text is the text a real fmt writes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.core.options import NONE, REQUIRED, Fail, parse, tool
from kshell.tools.text.textio import Output, message, read_all, split_lines

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"crown-margin": ("c", NONE), "prefix": ("p", REQUIRED), "split-only": ("s", NONE),
         "tagged-paragraph": ("t", NONE), "uniform-spacing": ("u", NONE), "width": ("w", REQUIRED),
         "goal": ("g", REQUIRED), "help": ("help", NONE), "version": ("version", NONE)}


def _sq(n: int) -> int:
    return n * n


LINE_COST = _sq(70)
SENTENCE_BONUS = _sq(50)
NOBREAK_COST = _sq(600)
PAREN_BONUS = _sq(40)
PUNCT_BONUS = _sq(40)


class _Word:
    __slots__ = ("text", "length", "space", "period", "punct", "paren", "final", "best", "next", "line_length")

    def __init__(self, text: bytes, space: int, period: bool, punct: bool, paren: bool, final: bool) -> None:
        self.text, self.length, self.space = text, len(text), space
        self.period, self.punct, self.paren, self.final = period, punct, paren, final
        self.best = 0
        self.next = 0
        self.line_length = 0


def _words(lines: list[bytes], uniform: bool) -> list[_Word]:
    """The words of a paragraph with the space after each: one (two after a sentence's end) at
    a line's end or with -u, else what the input had."""
    words: list[_Word] = []
    for i, line in enumerate(lines):
        parts = re.findall(rb"(\S+)([ \t]*)", line)
        for j, (text, gap) in enumerate(parts):
            at_end = j == len(parts) - 1
            stripped = text.rstrip(b")]'\"")
            period = stripped[-1:] in (b".", b"?", b"!") if stripped else False
            space = len(gap.expandtabs(8)) if gap else 0
            final = (at_end and i == len(lines) - 1) or (period and (at_end or space > 1))
            if at_end or uniform:
                space = 2 if final else 1
            punct = bool(re.match(rb"[!-/:-@\[-`{-~]", text[-1:]))
            paren = text[:1] in (b"(", b"[", b"`", b"'", b'"')
            words.append(_Word(text, space, period, punct, paren, final))
    return words


def _fill(words: list[_Word], first: int, other: int, width: int, goal: int) -> list[tuple[int, int]]:
    """GNU's fmt_paragraph: the least-cost breaks, as (start, stop) word ranges."""
    n = len(words)
    best = [0] * (n + 1)
    nxt = [n] * (n + 1)
    line_len = [0] * (n + 1)

    def line_cost(k: int, length: int) -> int:
        if k == n:
            return 0
        cost = _sq((goal - length) * 10)
        if nxt[k] != n:
            cost += _sq((length - line_len[k]) * 10) // 2
        return cost

    def base_cost(k: int) -> int:
        cost = LINE_COST
        if k > 0:
            prev = words[k - 1]
            if prev.period:
                cost += -SENTENCE_BONUS if prev.final else NOBREAK_COST
            elif prev.punct:
                cost -= PUNCT_BONUS
            elif k > 1 and words[k - 2].final:
                cost += _sq(200) // (prev.length + 2)
        w = words[k]
        if w.paren:
            cost -= PAREN_BONUS
        elif w.final:
            cost += _sq(150) // (w.length + 2)
        return cost

    for start in range(n - 1, -1, -1):
        top = 1 << 62
        length = (first if start == 0 else other) + words[start].length
        k = start
        while True:
            k += 1
            cost = line_cost(k, length) + best[k]
            if cost < top:
                top, nxt[start], line_len[start] = cost, k, length
            if k == n:
                break
            length += words[k - 1].space + words[k].length
            if length >= width:
                break
        best[start] = top + base_cost(start)
    breaks = []
    k = 0
    while k < n:
        breaks.append((k, nxt[k]))
        k = nxt[k]
    return breaks


@tool("fmt")
def fmt(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "cp:stuw:g:", _LONG, digits="w")
    width, goal_given, split_only, uniform, prefix = 75, None, False, False, b""
    margin = ""
    for key, value in opts:
        if key in ("w", "g"):
            if not value.isdigit():
                raise Fail(f"invalid width: '{value}'")
            if key == "w":
                width = int(value)
            else:
                goal_given = int(value)
        elif key == "s":
            split_only = True
        elif key in ("c", "t"):
            margin = key
        elif key == "u":
            uniform = True
        elif key == "p":
            prefix = value.encode("utf-8", "surrogateescape")
        elif key == "help":
            sh.out(b"Usage: fmt [-WIDTH] [OPTION]... [FILE]...\n")
            return 0
        elif key == "version":
            sh.out(b"fmt (GNU coreutils) 9.1\n")
            return 0
    goal = goal_given if goal_given is not None else width * (2 * (100 - 7) + 1) // 200
    out = Output(sh)
    status = 0
    for name in files or ["-"]:
        try:
            data = read_all(sh, name)
        except OSError as e:
            out.flush()
            sh.write_err(f"fmt: cannot open '{name}' for reading: {message(e)}\n")
            status = 1
            continue
        out.write(_format(split_lines(data), width, goal, split_only, uniform, prefix, margin))
    out.flush()
    return status


def _indent(line: bytes) -> int:
    """The column where the line's text starts (tabs to multiples of 8)."""
    wide = line.expandtabs(8)
    return len(wide) - len(wide.lstrip(b" "))


def _format(lines: list[bytes], width: int, goal: int, split_only: bool, uniform: bool, prefix: bytes,
            margin: str = "") -> bytes:
    """Paragraphs refilled: lines of one indentation (-c: the first line's own, the rest the
    second's; -t: the same, when the second differs from the first) and the same prefix."""
    out = bytearray()
    i = 0
    n = len(lines)

    def body(line: bytes) -> bytes | None:
        """The line after its prefix (None when it lacks the prefix or is blank after it)."""
        stripped = line.lstrip(b" \t")
        if not stripped.startswith(prefix):
            return None
        rest = stripped[len(prefix):]
        return rest if rest.strip(b" \t") else None

    while i < n:
        line = lines[i]
        if body(line) is None:
            out += line + b"\n"
            i += 1
            continue
        lead = line[: len(line) - len(line.lstrip(b" \t"))]
        para = [line]
        i += 1
        if not split_only:
            follows = i < n and body(lines[i]) is not None
            if margin and follows and (margin == "c" or _indent(lines[i]) != _indent(line)):
                para.append(lines[i])
                i += 1
            alone = margin == "t" and len(para) == 1  # a tag line whose next line is not indented apart
            model = para[-1]
            model_lead = model[: len(model) - len(model.lstrip(b" \t"))]
            while not alone and i < n and body(lines[i]) is not None and _indent(lines[i]) == _indent(model) \
                    and lines[i][: len(model_lead)] == model_lead:
                para.append(lines[i])
                i += 1
        texts = [body(p) or b"" for p in para]
        after = [t[: len(t) - len(t.lstrip(b" \t"))] for t in texts]
        head = lead + prefix + after[0]
        col = len(head.expandtabs(8))
        second = 1 if len(para) > 1 else 0
        rest = para[second]
        other_head = rest[: len(rest) - len(rest.lstrip(b" \t"))] + prefix + after[second]
        if margin == "t" and len(para) == 1:  # a tag line alone: its continuation indented
            other_head = b"   "
        other = len(other_head.expandtabs(8))
        words = _words([t.strip(b" \t") for t in texts], uniform)
        for start, stop in _fill(words, col, other, width, goal):
            out += head if start == 0 else other_head
            for k in range(start, stop):
                out += words[k].text
                if k < stop - 1:
                    out += b" " * words[k].space
            out += b"\n"
    return bytes(out)
