"""Reading one shell word into parts, in the lexer modes bash uses for the contexts of a word:
unquoted (command words, `[[ =~ ]]` regexes, array elements), `${...}` operands, array
subscripts, double quotes, here-document bodies and arithmetic text.

A mixin of the Lexer: it reads `self.src` from a given position and returns the parts and the
position after them. `$(...)`, `<(...)` and `>(...)` call back into the parser on the same
source, so nested programs (with their own quotes, case patterns and here-documents) are parsed
exactly once.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.syntax.ast import (
    AnsiCQuoted,
    ArithSub,
    ArrayLiteral,
    CommandSub,
    DoubleQuoted,
    Escaped,
    KeyedElement,
    Literal,
    Part,
    ProcessSub,
    SingleQuoted,
    Word,
)
from kshell.syntax.errors import ShellSyntaxError
from kshell.syntax.parts import (
    decode_ansi_c,
    merge_literals,
    param,
    split_assignment,
    tilde_assignment,
    tilde_word,
)

if TYPE_CHECKING:
    from kshell.syntax.ast import ArithExpr, Program

# Contexts of an unquoted read.
CTX_WORD = 0  # a command word: ends at blanks and metacharacters
CTX_REGEX = 1  # the right side of =~: ( ) | and, inside parentheses, blanks are part of it
CTX_BRACE = 2  # an operand inside ${...}: ends at the first unquoted } (braces do not nest)
CTX_SUBSCRIPT = 3  # inside [...]: ends at the matching ]

_PLAIN = {
    CTX_WORD: re.compile(r"[^ \t\n|&;<>()$`\\\"']+"),
    CTX_REGEX: re.compile(r"[^ \t\n|&;<>()$`\\\"']+"),
    (CTX_BRACE, ""): re.compile(r"[^}$`\\\"']+"),
    (CTX_BRACE, "/"): re.compile(r"[^}/$`\\\"']+"),
    (CTX_BRACE, ":"): re.compile(r"[^}:$`\\\"']+"),
    (CTX_SUBSCRIPT, ""): re.compile(r"[^\[\]$`\\\"']+"),
    (CTX_SUBSCRIPT, "}"): re.compile(r"[^\[\]}$`\\\"']+"),
}
_DQ_PLAIN = re.compile(r"[^\"$`\\]+")
_HEREDOC_PLAIN = re.compile(r"[^$`\\]+")
_ARITH_PLAIN = re.compile(r"[^\"$`\\]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ANSI_BODY = re.compile(r"(?:[^'\\]|\\.)*", re.DOTALL)
_BACKTICK_SCAN = re.compile(r"[`\\]")
_SPECIAL_PARAMS = "@*#?$!-"


class WordReader:
    """Mixin: word-part reading over self.src (see Lexer for the state it relies on)."""

    src: str
    n: int
    pos: int
    extglob: bool
    utf8: bool
    depth: int

    if TYPE_CHECKING:
        def line_of(self, pos: int) -> int: ...
        def eof_error(self, start: int, char: str) -> ShellSyntaxError: ...
        def enter(self, pos: int) -> None: ...
        def parse_substitution(self, pos: int) -> tuple[Program, int]: ...
        def sub_parse(self, text: str, line0: int) -> Program: ...
        def sub_lexer(self, text: str, line0: int) -> WordReader: ...
        def read_array(self, pos: int) -> tuple[ArrayLiteral, int]: ...
        def read_braced(self, pos: int, in_dq: bool) -> tuple[Part, int]: ...
        def scan_arith(self, pos: int, start: int) -> int: ...
        def scan_brackets(self, pos: int, start: int) -> int: ...
        def make_arith(self, start: int, end: int) -> ArithExpr: ...

    # ----------------------------------------------------------------- unquoted

    def read_unquoted(self, pos: int, ctx: int, stop: str = "", in_dq: bool = False,
                      sq_literal: bool = False) -> tuple[list[Part], int]:
        """Read parts from pos until the context's terminator; returns (parts, end)."""
        src, n = self.src, self.n
        plain = _PLAIN[(ctx, stop)] if ctx >= CTX_BRACE else _PLAIN[ctx]
        parts: list[Part] = []
        lit = ""
        depth = 0
        while pos < n:
            m = plain.match(src, pos)
            if m is not None:
                lit += m.group()
                pos = m.end()
                if pos >= n:
                    break
            c = src[pos]
            if c == "\\":
                if pos + 1 >= n:
                    lit += "\\"
                    pos += 1
                    continue
                d = src[pos + 1]
                if d == "\n":
                    pos += 2
                    continue
                if in_dq and d not in '$`"\\}' and d != stop:
                    lit += "\\"
                    pos += 1
                    continue
                if lit:
                    parts.append(Literal(lit))
                    lit = ""
                parts.append(Escaped(d))
                pos += 2
            elif c == "'":
                if sq_literal:
                    lit += c
                    pos += 1
                    continue
                end = src.find("'", pos + 1)
                if end < 0:
                    raise self.eof_error(pos, "'")
                if lit:
                    parts.append(Literal(lit))
                    lit = ""
                parts.append(SingleQuoted(src[pos + 1:end]))
                pos = end + 1
            elif c == '"':
                if lit:
                    parts.append(Literal(lit))
                    lit = ""
                dq, pos = self.read_dq(pos + 1, pos)
                parts.append(dq)
                src, n = self.src, self.n  # an alias in a $( ) may have changed the source
            elif c == "$":
                # extquote: $'...' and $"..." are quoting even in a "${x:-...}" operand
                part, end = self.read_dollar(pos, in_dq, ctx == CTX_BRACE)
                src, n = self.src, self.n
                if part is None:
                    lit += "$"
                    pos += 1
                else:
                    if lit:
                        parts.append(Literal(lit))
                        lit = ""
                    parts.append(part)
                    pos = end
            elif c == "`":
                if lit:
                    parts.append(Literal(lit))
                    lit = ""
                part, pos = self.read_backtick(pos, in_dq)
                parts.append(part)
            elif ctx <= CTX_REGEX:
                if depth:  # inside a regex or extglob group: everything is text
                    if c == "(":
                        depth += 1
                    elif c == ")":
                        depth -= 1
                    lit += c
                    pos += 1
                elif c == "(" and (ctx == CTX_REGEX or (
                        self.extglob and lit and lit[-1] in "@*+?!")):
                    depth = 1
                    lit += c
                    pos += 1
                elif c == "|" and ctx == CTX_REGEX:
                    lit += c
                    pos += 1
                elif (c == "<" or c == ">") and pos + 1 < n and src[pos + 1] == "(":
                    if lit:
                        parts.append(Literal(lit))
                        lit = ""
                    self.enter(pos)
                    program, pos = self.parse_substitution(pos + 2)
                    src, n = self.src, self.n
                    self.depth -= 1
                    parts.append(ProcessSub(c, program))
                else:
                    break
            elif ctx == CTX_BRACE:
                break  # } or the stop character
            else:  # subscript: brackets nest; a stop (the } of `${`) ends it anyway
                if c == "[":
                    depth += 1
                elif c == "]":
                    if not depth:
                        break
                    depth -= 1
                else:
                    break
                lit += c
                pos += 1
        if depth and pos >= n and ctx <= CTX_REGEX:
            raise self.eof_error(pos, ")")
        if lit:
            parts.append(Literal(lit))
        return parts, pos

    # ----------------------------------------------------------------- quotes

    def read_dq(self, pos: int, start: int) -> tuple[DoubleQuoted, int]:
        """Read a double-quoted string whose opening quote is at `start`."""
        src, n = self.src, self.n
        parts: list[Part] = []
        lit = ""
        while True:
            m = _DQ_PLAIN.match(src, pos)
            if m is not None:
                lit += m.group()
                pos = m.end()
            if pos >= n:
                raise self.eof_error(start, '"')
            c = src[pos]
            if c == '"':
                pos += 1
                break
            if c == "\\":
                d = src[pos + 1] if pos + 1 < n else ""
                if d == "\n":
                    pos += 2
                elif d and d in '$`"\\':
                    lit += d
                    pos += 2
                else:
                    lit += "\\"
                    pos += 1
            elif c == "$":
                part, end = self.read_dollar(pos, True)
                src, n = self.src, self.n
                if part is None:
                    lit += "$"
                    pos += 1
                else:
                    if lit:
                        parts.append(Literal(lit))
                        lit = ""
                    parts.append(part)
                    pos = end
            else:  # backtick
                if lit:
                    parts.append(Literal(lit))
                    lit = ""
                part, pos = self.read_backtick(pos, True)
                parts.append(part)
        if lit:
            parts.append(Literal(lit))
        return DoubleQuoted(tuple(parts)), pos

    def read_dq_like(self, pos: int, limit: int, arith: bool) -> list[Part]:
        """Here-document bodies (arith=False) and arithmetic text (arith=True: `"` removed):
        only `$`, backquotes and backslash are special, up to `limit`."""
        src = self.src
        plain = _ARITH_PLAIN if arith else _HEREDOC_PLAIN
        parts: list[Part] = []
        lit = ""
        while pos < limit:
            m = plain.match(src, pos, limit)
            if m is not None:
                lit += m.group()
                pos = m.end()
                if pos >= limit:
                    break
            c = src[pos]
            if c == '"':
                pos += 1
            elif c == "\\":
                d = src[pos + 1] if pos + 1 < limit else ""
                if d == "\n":
                    pos += 2
                elif d and (d in "$`\\" or (arith and d == '"')):
                    lit += d
                    pos += 2
                else:
                    lit += "\\"
                    pos += 1
            elif c == "$":
                part, end = self.read_dollar(pos, True)
                if part is None:
                    lit += "$"
                    pos += 1
                else:
                    if lit:
                        parts.append(Literal(lit))
                        lit = ""
                    parts.append(part)
                    pos = end
            else:
                if lit:
                    parts.append(Literal(lit))
                    lit = ""
                part, pos = self.read_backtick(pos, True)
                parts.append(part)
        if pos > limit:
            raise ShellSyntaxError(self.line_of(limit), "syntax error: unexpected end of file")
        if lit:
            parts.append(Literal(lit))
        return parts

    def read_backtick(self, pos: int, in_dq: bool) -> tuple[CommandSub, int]:
        """`...`: bash's backslash rules, then the body is parsed as its own program."""
        src, n = self.src, self.n
        i = pos + 1
        buf: list[str] = []
        while True:
            m = _BACKTICK_SCAN.search(src, i)
            if m is None:
                raise self.eof_error(pos, "`")
            j = m.start()
            buf.append(src[i:j])
            if src[j] == "`":
                end = j + 1
                break
            d = src[j + 1] if j + 1 < n else ""
            if not d:
                raise self.eof_error(pos, "`")
            if d in "$`\\" or (in_dq and d == '"'):
                buf.append(d)
            else:
                buf.append("\\" + d)
            i = j + 2
        try:
            program = self.sub_parse("".join(buf), 0)
        except ShellSyntaxError as e:
            return CommandSub(None, True, e), end
        return CommandSub(program, True, None), end

    # ----------------------------------------------------------------- $

    def read_dollar(self, pos: int, in_dq: bool, ext_quote: bool = False) -> tuple[Part | None, int]:
        """The expansion starting with the `$` at pos, or (None, pos) for a literal `$`.
        `ext_quote` reads `$'...'` and `$"..."` even inside double quotes."""
        src, n = self.src, self.n
        p = pos + 1
        if p >= n:
            return None, pos
        c = src[p]
        if c == "\\" and src.startswith("\\\n", p):
            return self._read_dollar_continued(pos, in_dq, ext_quote)
        if c == "{":
            self.enter(pos)
            result = self.read_braced(pos, in_dq)
            self.depth -= 1
            return result
        if c == "(":
            self.enter(pos)
            if p + 1 < n and src[p + 1] == "(":
                close = self.scan_arith(p + 2, pos)
                if close >= 0:
                    self.depth -= 1
                    return ArithSub(self.make_arith(p + 2, close)), close + 2
            program, end = self.parse_substitution(p + 1)
            self.depth -= 1
            return CommandSub(program), end
        m = _NAME.match(src, p)
        if m is not None:
            return param(m.group(), True), m.end()
        if c in _SPECIAL_PARAMS or "0" <= c <= "9":
            return param(c), p + 1
        if c == "[":
            close = self.scan_brackets(p + 1, pos)
            return ArithSub(self.make_arith(p + 1, close)), close + 1
        if not in_dq or ext_quote:
            if c == "'":
                m = _ANSI_BODY.match(src, p + 1)
                end = m.end()  # type: ignore[union-attr]
                if end >= n:
                    raise self.eof_error(p, "'")
                return AnsiCQuoted(decode_ansi_c(m.group(), self.utf8)), end + 1  # type: ignore[union-attr]
            if c == '"':
                return self.read_dq(p + 1, p)
        return None, pos

    def _read_dollar_continued(self, pos: int, in_dq: bool, ext_quote: bool) -> tuple[Part | None, int]:
        """`$` then line continuations (`$\\<newline>?`): bash removes them as it reads its
        input, so what follows them makes the expansion. Read as if the `$` stood just before
        it; a `$` that starts nothing stays a literal `$` at pos."""
        p = pos + 1
        while self.src.startswith("\\\n", p):
            p += 2
        if p >= self.n:
            return None, pos
        part, end = self.read_dollar(p - 1, in_dq, ext_quote)
        return (part, end) if part is not None else (None, pos)

    # ----------------------------------------------------------------- words

    def read_subscripted(self, pos: int, bracket: int) -> tuple[list[Part], int]:
        """A word with `[...]` at `bracket` read as one subscript (blanks and metacharacters
        included), as bash reads `name[...]=` in assignment position and `[k]=` in arrays."""
        head = self.src[pos:bracket + 1]
        sub, q = self.read_unquoted(bracket + 1, CTX_SUBSCRIPT)
        if q >= self.n:
            raise self.eof_error(bracket, "]")
        rest, end = self.read_unquoted(q + 1, CTX_WORD)
        return merge_literals([Literal(head), *sub, Literal("]"), *rest]), end

    def read_element(self, pos: int) -> tuple[Word | KeyedElement, int]:
        """One element of an array literal: a word or `[key]=value`."""
        if self.src[pos] == "[":
            parts, end = self.read_subscripted(pos, pos)
        else:
            parts, end = self.read_unquoted(pos, CTX_WORD)
        if parts and type(parts[0]) is Literal:
            text = parts[0].text  # type: ignore[union-attr]
            if text.startswith("["):
                split = split_assignment(parts, keyed=True)
                if split is not None:
                    _, key, append, value = split
                    return KeyedElement(Word(tuple(key or ())), Word(tuple(
                        tilde_assignment(value))), append), end
            elif text.startswith("~"):
                parts = tilde_word(parts)
        return Word(tuple(parts)), end
