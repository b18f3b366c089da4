"""The bodies of `${...}` (every bash operator form, or a BadSubst for bash to reject at
expansion time) and of `$((...))` / `((...))` / `$[...]` (found by counting parentheses, as
bash does, then kept as text plus a parsed tree or an expandable word).

A mixin of the Lexer, next to WordReader whose `read_unquoted` reads the operand words.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.syntax.arith import parse_arith
from kshell.syntax.ast import ArithExpr, BadSubst, Literal, ParamExp, Part, PrefixNames, Word
from kshell.syntax.errors import ArithSyntaxError, ShellSyntaxError
from kshell.syntax.parts import EMPTY_WORD, param, tilde_word
from kshell.syntax.words import CTX_BRACE, CTX_SUBSCRIPT

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DIGITS = re.compile(r"[0-9]+")
_ARITH_SCAN = re.compile(r"[()'\"`\\]")
_BRACKET_SCAN = re.compile(r"[\[\]'\"`\\]")
_DQ_SKIP = re.compile(r"\"(?:[^\"\\]|\\.)*\"", re.DOTALL)
_BACKTICK_SKIP = re.compile(r"`(?:[^`\\]|\\.)*`", re.DOTALL)
_ARITH_DYNAMIC = re.compile(r"[$`\"'\\]")
_SPECIAL_PARAMS = "@*#?$!-"
_SQ_LITERAL_OPS = frozenset({"-", ":-", "=", ":=", "?", ":?", "+", ":+"})
_TRANSFORMS = "QEPAKaUuLk"


def _tilde(parts: list[Part]) -> list[Part]:
    """The word of `${x:-~/d}`, `${x#~/}`, `${x/~/h}` with its leading `~` a tilde prefix, as
    bash expands it there."""
    if parts and type(parts[0]) is Literal and parts[0].text.startswith("~"):  # type: ignore[union-attr]
        return tilde_word(list(parts))
    return parts


class ExpansionReader:
    """Mixin: `${...}` and arithmetic bodies over self.src."""

    src: str
    n: int

    if TYPE_CHECKING:
        def line_of(self, pos: int) -> int: ...
        def eof_error(self, start: int, char: str) -> ShellSyntaxError: ...
        def sub_lexer(self, text: str, line0: int) -> ExpansionReader: ...
        def read_unquoted(self, pos: int, ctx: int, stop: str = "", in_dq: bool = False,
                          sq_literal: bool = False) -> tuple[list[Part], int]: ...
        def read_dq_like(self, pos: int, limit: int, arith: bool) -> list[Part]: ...

    def read_braced(self, pos: int, in_dq: bool) -> tuple[Part, int]:
        """${...} with the `$` at pos."""
        src, n = self.src, self.n
        p = pos + 2
        if p >= n:
            raise self.eof_error(pos, "}")
        c = src[p]
        length = indirect = False
        if c == "#" or c == "!":
            nxt = src[p + 1] if p + 1 < n else ""
            if nxt == "}":
                return param(c), p + 2
            if nxt and (nxt == "_" or nxt.isascii() and nxt.isalnum() or (
                    nxt in _SPECIAL_PARAMS and src[p + 2:p + 3] == "}")):
                length, indirect = c == "#", c == "!"
                p += 1
                c = nxt
        m = _NAME.match(src, p)
        ident = m is not None
        if m is not None:
            name = m.group()
            p = m.end()
        elif "0" <= c <= "9":
            m = _DIGITS.match(src, p)
            name = m.group()  # type: ignore[union-attr]
            p = m.end()  # type: ignore[union-attr]
        elif c in _SPECIAL_PARAMS:
            name = c
            p += 1
        else:
            return self.bad_subst(pos, p, in_dq)
        if p >= n:
            raise self.eof_error(pos, "}")
        c = src[p]
        if indirect and ident and (c == "*" or c == "@") and src[p + 1:p + 2] == "}":
            return PrefixNames(name, c == "@"), p + 2
        subscript: Word | str | None = None
        if c == "[" and ident:
            if src[p + 1:p + 3] in ("@]", "*]"):
                subscript = src[p + 1]
                p += 3
            else:
                sub_parts, q = self.read_unquoted(p + 1, CTX_SUBSCRIPT, "}")
                src, n = self.src, self.n
                if q >= n:
                    raise self.eof_error(pos, "}")
                if src[q] == "}":
                    return BadSubst(src[pos:q + 1]), q + 1
                subscript = Word(tuple(sub_parts))
                p = q + 1
                if not sub_parts:  # `${a[]}`: bash rejects it when expanding
                    return self.bad_subst(pos, p, in_dq)
            if p >= n:
                raise self.eof_error(pos, "}")
            c = src[p]
        if c == "}":
            if not length and not indirect and subscript is None:
                return param(name), p + 1
            return ParamExp(name, subscript, length, indirect), p + 1
        if length:
            return self.bad_subst(pos, p, in_dq)
        two = src[p:p + 2]
        arg2: Word | None = None
        if c == ":" and two[1:] and two[1] in "-=?+":
            op = two
        elif c in "-=?+":
            op = c
        elif c == "#" or c == "%":
            op = two if two in ("##", "%%") else c
        elif c == "/":
            op = two if two in ("//", "/#", "/%") else c
        elif c == "^" or c == "," or c == "~":
            op = two if two in ("^^", ",,", "~~") else c
        elif c == ":":
            off, q = self.read_unquoted(p + 1, CTX_BRACE, ":", in_dq)
            src, n = self.src, self.n
            if q < n and src[q] == ":":
                more, q = self.read_unquoted(q + 1, CTX_BRACE, "", in_dq)
                src, n = self.src, self.n
                arg2 = Word(tuple(more))
            if q >= n:
                raise self.eof_error(pos, "}")
            if arg2 is None and not off:
                return BadSubst(src[pos:q + 1]), q + 1
            return ParamExp(name, subscript, False, indirect, ":", Word(tuple(off)), arg2), q + 1
        elif c == "@":
            if two[1:] and two[1] in _TRANSFORMS and src[p + 2:p + 3] == "}":
                return ParamExp(name, subscript, False, indirect, two), p + 3
            return self.bad_subst(pos, p, in_dq)
        else:
            return self.bad_subst(pos, p, in_dq)
        p += len(op)
        if op[0] == "/":
            # after `//`, a pattern that starts with `/` keeps it (bash looks for the `/` before
            # the replacement from the pattern's second character): ${x////c}, ${x///}
            lead = op == "//" and src[p:p + 1] == "/"
            pat, q = self.read_unquoted(p + lead, CTX_BRACE, "/", in_dq)
            if lead:
                pat = [Literal("/"), *pat]
            src, n = self.src, self.n
            if q < n and src[q] == "/":
                rep, q = self.read_unquoted(q + 1, CTX_BRACE, "", in_dq)
                src, n = self.src, self.n
                arg2 = Word(tuple(_tilde(rep)))
            if op in ("/", "//"):  # `/#~`: the anchor comes first, the `~` is no prefix
                pat = _tilde(pat)
        else:
            sq_literal = in_dq and op in _SQ_LITERAL_OPS
            pat, q = self.read_unquoted(p, CTX_BRACE, "", in_dq, sq_literal)
            src, n = self.src, self.n
            if not (in_dq and sq_literal):  # a pattern's `~` even in "...", a default's only outside
                pat = _tilde(pat)
        if q >= n:
            raise self.eof_error(pos, "}")
        arg = Word(tuple(pat)) if pat or op[0] not in "^," else None
        return ParamExp(name, subscript, False, indirect, op, arg, arg2), q + 1

    def bad_subst(self, pos: int, p: int, in_dq: bool) -> tuple[BadSubst, int]:
        """Skip to the `}` matching the `${` at pos (nested `${`, quotes and substitutions
        count, as bash counts them): bash rejects it only when expanding."""
        _, q = self.read_unquoted(pos + 2, CTX_BRACE, "", in_dq)
        if q >= self.n:
            raise self.eof_error(pos, "}")
        return BadSubst(self.src[pos:q + 1]), q + 1

    # ----------------------------------------------------------------- arithmetic

    def scan_arith(self, pos: int, start: int) -> int:
        """From just inside `((`, find the `))` that closes it: the index of its first `)`,
        or -1 when the parentheses close separately (then it is `$( (...) )` / a subshell)."""
        src = self.src
        depth = 0
        while True:
            m = _ARITH_SCAN.search(src, pos)
            if m is None:
                raise self.eof_error(start, ")")
            i = m.start()
            c = src[i]
            if c == "(":
                depth += 1
                pos = i + 1
            elif c == ")":
                if depth == 0:
                    if i + 1 >= self.n:
                        raise self.eof_error(start, ")")
                    return i if src[i + 1] == ")" else -1
                depth -= 1
                pos = i + 1
            else:
                pos = self.skip_quoted(i, start, ")")

    def scan_brackets(self, pos: int, start: int) -> int:
        """From just inside `$[`, the index of the matching `]`."""
        src = self.src
        depth = 0
        while True:
            m = _BRACKET_SCAN.search(src, pos)
            if m is None:
                raise self.eof_error(start, "]")
            i = m.start()
            c = src[i]
            if c == "[":
                depth += 1
                pos = i + 1
            elif c == "]":
                if depth == 0:
                    return i
                depth -= 1
                pos = i + 1
            else:
                pos = self.skip_quoted(i, start, "]")

    def skip_quoted(self, i: int, start: int, closer: str) -> int:
        """Skip the quote or escape at i while scanning for a closer; returns the next index."""
        src = self.src
        c = src[i]
        if c == "\\":
            return i + 2
        if c == "'":
            j = src.find("'", i + 1)
            if j < 0:
                raise self.eof_error(start, closer)
            return j + 1
        m = (_DQ_SKIP if c == '"' else _BACKTICK_SKIP).match(src, i)
        if m is None:
            raise self.eof_error(start, closer)
        return m.end()

    def make_arith(self, start: int, end: int) -> ArithExpr:
        """The ArithExpr for src[start:end]: pre-parsed when it needs no expansion."""
        text = self.src[start:end]
        if _ARITH_DYNAMIC.search(text) is None:
            try:
                expr = parse_arith(text)
            except ArithSyntaxError:
                expr = None
            return ArithExpr(text, Word((Literal(text),)) if text else EMPTY_WORD, expr)
        # bash finds the end by counting parentheses only, and expands the text when it
        # evaluates it: an unfinished expansion inside is a "bad substitution" then
        try:
            parts = self.sub_lexer(text, self.line_of(start) - 1).read_dq_like(0, len(text), True)
        except ShellSyntaxError:
            return ArithExpr(text, Word((BadSubst(text),)), None)
        return ArithExpr(text, Word(tuple(parts)), None)
