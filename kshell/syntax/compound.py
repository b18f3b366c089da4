"""Compound commands: if, while/until, for (both forms), case, { }, ( ), [[ ]], (( )) and
function definitions, each with its trailing redirections.

A mixin of the Parser; `COMPOUND` maps the reserved word that opens each one to its method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kshell.syntax.ast import (
    ArithCommand,
    ArithExpr,
    ArithFor,
    BraceGroup,
    Case,
    CaseItem,
    Command,
    Cond,
    For,
    FunctionDef,
    If,
    IfClause,
    Select,
    Subshell,
    While,
    Word,
)
from kshell.syntax.cond import CondParser
from kshell.syntax.errors import ShellSyntaxError
from kshell.syntax.lexer import NEWLINE, WORD, Token

if TYPE_CHECKING:
    from kshell.syntax.ast import Redirect

_CASE_ENDS = frozenset({";;", ";&", ";;&"})


class CompoundParser(CondParser):
    """Mixin: the compound commands (see Parser for lists and simple commands)."""

    if TYPE_CHECKING:
        def parse_compound_list(self, allow_empty: bool = False) -> list[Command]: ...
        def skip_newlines(self) -> Token: ...
        def expect(self, word: str) -> None: ...
        def keyword(self) -> None: ...
        def redirects(self) -> tuple[Redirect, ...]: ...
        def plain_word(self, tok: Token) -> Word: ...

    def parse_if(self, tok: Token) -> If:
        self.keyword()
        self.enter(tok.start)
        line = self.line_of(tok.start)
        clauses: list[IfClause] = []
        else_body: tuple[Command, ...] | None = None
        while True:
            condition = self.parse_compound_list()
            self.expect("then")
            body = self.parse_compound_list()
            clauses.append(IfClause(tuple(condition), tuple(body)))
            nxt = self.peek()
            text = nxt.text if nxt.kind == WORD else ""
            self.keyword()
            if text == "elif":
                continue
            if text == "else":
                else_body = tuple(self.parse_compound_list())
                self.expect("fi")
                break
            if text == "fi":
                break
            raise self.unexpected(nxt)
        self.depth -= 1
        return If(tuple(clauses), else_body, self.redirects(), line)

    def parse_while(self, tok: Token) -> While:
        self.keyword()
        self.enter(tok.start)
        condition = self.parse_compound_list()
        self.expect("do")
        body = self.parse_compound_list()
        self.expect("done")
        self.depth -= 1
        return While(tuple(condition), tuple(body), tok.text == "until", self.redirects(),
                     self.line_of(tok.start))

    def loop_body(self) -> tuple[Command, ...]:
        tok = self.peek()
        if tok.kind == WORD and (tok.text == "do" or tok.text == "{"):
            self.keyword()
            body = self.parse_compound_list()
            self.expect("done" if tok.text == "do" else "}")
            return tuple(body)
        raise self.unexpected(tok)

    def parse_for(self, tok: Token) -> For | Select | ArithFor:
        self.advance()
        self.enter(tok.start)
        line = self.line_of(tok.start)
        var = self.peek()
        if var.kind == "(" and self.src[var.end:var.end + 1] == "(" and tok.text == "for":
            return self.parse_arith_for(var, line)
        if var.kind != WORD:
            raise self.unexpected(var)
        self.advance()
        nxt = self.skip_newlines()
        words: list[Word] | None = None
        if nxt.kind == WORD and nxt.text == "in":
            self.advance()
            words = []
            while True:
                nxt = self.peek()
                if nxt.kind == WORD:
                    self.advance()
                    words.append(self.plain_word(nxt))
                elif nxt.kind == ";" or nxt.kind == NEWLINE:
                    self.advance()
                    break
                else:
                    raise self.unexpected(nxt)
            self.skip_newlines()
        elif nxt.kind == ";":
            self.advance()
            self.skip_newlines()
        body = self.loop_body()
        self.depth -= 1
        return (For if tok.text == "for" else Select)(var.text, tuple(words) if words is not None else None,
                                                      body, self.redirects(), line)

    def parse_arith_for(self, paren: Token, line: int) -> ArithFor:
        start = paren.end + 1
        close = self.scan_arith(start, paren.start)
        if close < 0:
            raise self.unexpected(paren)
        self.peeked = None
        self.pos = close + 2
        self.last_kind = WORD
        pieces = self.split_semicolons(start, close)
        if self.peek().kind == ";":
            self.advance()
        self.skip_newlines()
        body = self.loop_body()
        self.depth -= 1
        if len(pieces) != 3:  # bash checks this when the whole loop has been read
            text = self.src[start:close]
            raise ShellSyntaxError(line, "syntax error: arithmetic expression required"
                                   if len(pieces) < 3 else "syntax error: `;' unexpected",
                                   extra=(f"syntax error: `(({text}))'",))
        exprs: list[ArithExpr | None] = []
        for s, e in pieces:
            exprs.append(self.make_arith(s, e) if self.src[s:e].strip() else None)
        return ArithFor(exprs[0], exprs[1], exprs[2], body, self.redirects(), line)

    def split_semicolons(self, start: int, end: int) -> list[tuple[int, int]]:
        src = self.src
        pieces: list[tuple[int, int]] = []
        depth = 0
        i = piece = start
        while i < end:
            c = src[i]
            if c == ";" and not depth:
                pieces.append((piece, i))
                piece = i + 1
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif c in "\\'\"`":
                i = self.skip_quoted(i, start, ")")
                continue
            i += 1
        pieces.append((piece, end))
        return pieces

    def parse_case(self, tok: Token) -> Case:
        self.advance()
        self.enter(tok.start)
        subject = self.peek()
        if subject.kind != WORD:
            raise self.unexpected(subject)
        self.advance()
        self.skip_newlines()
        self.expect("in")
        items: list[CaseItem] = []
        while True:
            self.case_pattern = True
            nxt = self.skip_newlines()
            if nxt.kind == WORD and nxt.text == "esac":
                self.case_pattern = False
                self.advance()
                break
            item_line = self.line_of(nxt.start)
            if nxt.kind == "(":
                self.advance()
                nxt = self.peek()
            patterns: list[Word] = []
            while True:
                if nxt.kind != WORD:
                    raise self.unexpected(nxt)
                self.advance()
                patterns.append(self.plain_word(nxt))
                nxt = self.peek()
                if nxt.kind == "|":
                    self.advance()
                    nxt = self.peek()
                elif nxt.kind == ")":
                    self.case_pattern = False
                    self.advance()
                    break
                else:
                    raise self.unexpected(nxt)
            body = tuple(self.parse_compound_list(allow_empty=True))
            nxt = self.peek()
            if nxt.kind in _CASE_ENDS:
                self.advance()
                items.append(CaseItem(tuple(patterns), body, nxt.kind, item_line))
                continue
            if nxt.kind == WORD and nxt.text == "esac":
                self.advance()
                items.append(CaseItem(tuple(patterns), body, ";;", item_line))
                break
            raise self.unexpected(nxt)
        self.depth -= 1
        return Case(self.plain_word(subject), tuple(items), self.redirects(),
                    self.line_of(tok.start))

    def parse_brace(self, tok: Token) -> BraceGroup:
        self.keyword()
        self.enter(tok.start)
        body = self.parse_compound_list()
        self.expect("}")
        self.depth -= 1
        return BraceGroup(tuple(body), self.redirects(), self.line_of(tok.start))

    def parse_paren(self, tok: Token) -> Subshell | ArithCommand:
        line = self.line_of(tok.start)
        if self.src[tok.end:tok.end + 1] == "(":
            close = self.scan_arith(tok.end + 1, tok.start)
            if close >= 0:
                self.peeked = None
                self.pos = close + 2
                self.last_kind = WORD
                arith = self.make_arith(tok.end + 1, close)
                return ArithCommand(arith, self.redirects(), line)
        self.advance()
        self.enter(tok.start)
        body = self.parse_compound_list()
        close_tok = self.peek()
        if close_tok.kind != ")":
            raise self.unexpected(close_tok)
        self.advance()
        self.depth -= 1
        return Subshell(tuple(body), self.redirects(), line)

    def parse_dbracket(self, tok: Token) -> Cond:
        self.advance()
        self.enter(tok.start)
        line = self.line_of(tok.start)
        expr = self.parse_cond_expr(line)
        self.depth -= 1
        return Cond(expr, self.redirects(), line)

    def parse_function(self, tok: Token) -> FunctionDef:
        self.advance()
        line = self.line_of(tok.start)
        name = self.peek()
        if name.kind != WORD:
            raise self.unexpected(name)
        self.advance()
        if self.peek().kind == "(":
            self.advance()
            close = self.peek()
            if close.kind != ")":
                raise self.unexpected(close)
            self.advance()
        return self.function_body(name.text, line)

    def parse_function_after_name(self, name: Token, line: int) -> FunctionDef:
        self.advance()  # (
        close = self.peek()
        if close.kind != ")":
            raise self.unexpected(close)
        self.advance()
        return self.function_body(name.text, line)

    def function_body(self, name: str, line: int) -> FunctionDef:
        tok = self.skip_newlines()
        if tok.kind == WORD and tok.text in COMPOUND and tok.text != "function":
            body = COMPOUND[tok.text](self, tok)
        elif tok.kind == "(":
            body = self.parse_paren(tok)
        else:
            raise self.unexpected(tok)
        return FunctionDef(name, body, line)


COMPOUND: dict[str, Callable[[CompoundParser, Token], Command]] = {
    "if": CompoundParser.parse_if,
    "while": CompoundParser.parse_while,
    "until": CompoundParser.parse_while,
    "for": CompoundParser.parse_for,
    "select": CompoundParser.parse_for,
    "case": CompoundParser.parse_case,
    "{": CompoundParser.parse_brace,
    "[[": CompoundParser.parse_dbracket,
    "function": CompoundParser.parse_function,
}
