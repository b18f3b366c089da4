"""`[[ ... ]]`: bash's small recursive-descent parser for conditional expressions, with its
messages. Inside `[[`, `<` and `>` are comparison operators, newlines may separate terms, the
right side of `==`/`=`/`!=` is read with extended patterns on, and the right side of `=~` is
read as a regex word in which `(`, `)` and `|` (and blanks inside parentheses) are literal.
"""

from __future__ import annotations

from kfs.values import replace
from kshell.syntax.ast import CondAnd, CondBinary, CondNode, CondNot, CondOr, CondUnary, Literal, Word
from kshell.syntax.errors import ShellSyntaxError
from kshell.syntax.lexer import EOF, NEWLINE, WORD, Lexer, Token, WordToken
from kshell.syntax.parts import tilde_word
from kshell.syntax.words import CTX_REGEX

_UNARY = frozenset(f"-{c}" for c in "abcdefghkprstuwxGLNOSznovR")
_BINARY = frozenset(["=", "==", "!=", "=~", "-nt", "-ot", "-ef", "-eq", "-ne", "-lt", "-le",
                     "-gt", "-ge"])
_PATTERN_OPS = frozenset(("=", "==", "!="))


class _Silent(Exception):
    """bash's COND_RETURN_ERROR: a failed term that prints nothing itself."""


def _is_end(tok: Token) -> bool:
    return tok.kind == WORD and tok.text == "]]"


def _error_text(tok: Token) -> str | None:
    """bash's error_token_from_token inside [[: words have no text, `]]` and operators do."""
    kind = tok.kind
    if kind == WORD:
        return "]]" if tok.text == "]]" else None
    if kind == NEWLINE:
        return "newline"
    if kind == EOF:
        return "EOF"
    return tok.text


class CondParser(Lexer):
    """Mixin for the Parser: `parse_cond_expr` is called just after the `[[` token."""

    cond_tok: Token

    def tok_line(self, tok: Token) -> int:
        if tok.kind == EOF:
            return self.eof_line()
        if tok.kind == NEWLINE:
            return self.line_of(tok.start) if tok.start < self.n else self.eof_line() - 1
        return self.line_of(tok.end - 1)

    def _cond_error(self, tok: Token, message: str) -> ShellSyntaxError:
        return ShellSyntaxError(self.tok_line(tok), message, at_eof=tok.kind == EOF)

    def parse_cond_expr(self, line: int) -> CondNode:
        """Parse up to and including `]]`; `line` is the line of `[[`."""
        self.cond_mode = True
        try:
            node = self._cond_or()
        except _Silent:
            tok = self.cond_tok
            raise ShellSyntaxError(line, "syntax error in conditional expression",
                                   at_eof=tok.kind == EOF) from None
        finally:
            self.cond_mode = False
        tok = self.cond_tok
        if not _is_end(tok):
            if tok.kind == EOF:
                raise ShellSyntaxError(line, "unexpected EOF while looking for `]]'", at_eof=True)
            text = _error_text(tok)
            if text:
                raise ShellSyntaxError(
                    line, f"syntax error in conditional expression: unexpected token `{text}'")
            raise ShellSyntaxError(line, "syntax error in conditional expression")
        return node

    def _cond_read(self) -> Token:
        tok = self.cond_tok = self.next_token()
        return tok

    def _cond_skip_newlines(self) -> Token:
        tok = self.cond_tok = self.next_token()
        while tok.kind == NEWLINE:
            tok = self.cond_tok = self.next_token()
        return tok

    def _cond_or(self) -> CondNode:
        node = self._cond_and()
        while self.cond_tok.kind == "||":
            node = CondOr(node, self._cond_and())
        return node

    def _cond_and(self) -> CondNode:
        node = self._cond_term()
        while self.cond_tok.kind == "&&":
            node = CondAnd(node, self._cond_term())
        return node

    def _cond_term(self) -> CondNode:
        tok = self._cond_skip_newlines()
        kind = tok.kind
        if kind == WORD:
            text = tok.text
            if text == "]]":
                raise _Silent
            if text == "!":
                self.enter(tok.start)
                node: CondNode = CondNot(self._cond_term())
                self.depth -= 1
                return node
            if text in _UNARY:
                arg = self._cond_read()
                if arg.kind != WORD or _is_end(arg):
                    shown = _error_text(arg)
                    raise self._cond_error(arg, (
                        f"unexpected argument `{shown}' to conditional unary operator" if shown
                        else "unexpected argument to conditional unary operator"))
                node = CondUnary(text, arg.word)  # type: ignore[arg-type]
                self._cond_skip_newlines()
                return node
            return self._cond_binary(tok)
        if kind == "(":
            line = self.tok_line(tok)
            self.enter(tok.start)
            try:
                node = self._cond_or()
            except _Silent:
                node = None  # type: ignore[assignment]
            self.depth -= 1
            close = self.cond_tok
            if node is None or close.kind != ")":
                shown = _error_text(close) if node is not None else None
                raise ShellSyntaxError(
                    line, f"unexpected token `{shown}', expected `)'" if shown
                    else "expected `)'", at_eof=close.kind == EOF)
            self._cond_skip_newlines()
            return replace(node, grouped=True)
        shown = _error_text(tok)
        raise self._cond_error(tok, f"unexpected token `{shown}' in conditional command")

    def _cond_binary(self, left_tok: Token) -> CondNode:
        left = left_tok.word
        tok = self._cond_read()
        kind = tok.kind
        if kind == WORD and tok.text in _BINARY:
            op = tok.text
        elif kind == "<" or kind == ">":
            op = kind
        elif _is_end(tok) or kind in ("&&", "||", ")"):
            return CondUnary("-n", left)  # type: ignore[arg-type]
        else:
            shown = _error_text(tok)
            raise self._cond_error(tok, (
                f"unexpected token `{shown}', conditional binary operator expected" if shown
                else "conditional binary operator expected"))
        if op == "=~":
            right = self._cond_read_regex()
        elif op in _PATTERN_OPS:
            saved, self.extglob = self.extglob, True
            try:
                right = self._cond_read()
            finally:
                self.extglob = saved
        else:
            right = self._cond_read()
        if right.kind != WORD or _is_end(right):
            shown = _error_text(right)
            raise self._cond_error(right, (
                f"unexpected argument `{shown}' to conditional binary operator" if shown
                else "unexpected argument to conditional binary operator"))
        node = CondBinary(op, left, right.word)  # type: ignore[arg-type]
        self._cond_skip_newlines()
        return node

    def _cond_read_regex(self) -> Token:
        """The word after =~: parentheses and `|` are part of it."""
        src, n = self.src, self.n
        pos = self.pos
        while pos < n and src[pos] in " \t":
            pos += 1
        if pos < n and src[pos] not in "\n)":
            parts, end = self.read_unquoted(pos, CTX_REGEX)
            src = self.src
            if parts and type(parts[0]) is Literal and parts[0].text.startswith("~"):
                parts = tilde_word(parts)  # bash expands a tilde prefix in the regex too
            if end > pos:
                tok = WordToken(pos, end, src[pos:end], Word(tuple(parts)))
                self.pos = end
                self.last_kind = WORD
                self.cond_tok = tok
                return tok
        return self._cond_read()
