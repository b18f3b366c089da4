"""bc's syntax: tokens (names, numbers in any ibase, strings, comments, backslash-newlines) and a
recursive-descent parser with GNU bc's precedence (assignment binds tighter than the relations,
unary minus tighter than ^), producing tuples the machine runs. `quit` raises Quit when read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f]+|\\\n|/\*.*?\*/|\#[^\n]*)
  | (?P<nl>\n)
  | (?P<num>[0-9A-F]+(?:\.[0-9A-F]*)?|\.[0-9A-F]+)
  | (?P<str>"[^"]*")
  | (?P<name>[a-z_][a-z0-9_]*)
  | (?P<op>\+\+|--|\|\||&&|[-+*/%^=!<>]=|[-+*/%^=<>!(){}\[\],;.])
""", re.S | re.X)
KEYWORDS = {"define", "auto", "return", "if", "else", "while", "for", "break", "continue", "quit", "halt",
            "print", "length", "scale", "sqrt", "ibase", "obase", "last", "read", "limits"}
LVALUES = ("var", "elem", "special")


class SyntaxErr(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


class Quit(Exception):
    """`quit` read (or `halt` run): bc ends."""


@dataclass(frozen=True)
class Tok:
    kind: str
    text: str
    line: int


def tokenize(source: str) -> list[Tok]:
    out: list[Tok] = []
    line = 1
    pos = 0
    while pos < len(source):
        m = _TOKEN.match(source, pos)
        if m is None:
            out.append(Tok("bad", source[pos], line))
            pos += 1
            continue
        kind = m.lastgroup or ""
        text = m.group()
        if kind == "nl":
            out.append(Tok("nl", "\n", line))
        elif kind != "ws":
            out.append(Tok("kw" if kind == "name" and text in KEYWORDS else kind, text, line))
        line += text.count("\n")
        pos = m.end()
    out.append(Tok("eof", "", line))
    return out


@dataclass
class Func:
    params: list[tuple[str, bool]]  # (name, is_array)
    autos: list[tuple[str, bool]]
    body: list


@dataclass
class Parser:
    toks: list[Tok]
    i: int = 0
    funcs: dict[str, Func] = field(default_factory=dict)
    depth: int = 0  # blocks and function bodies open

    def peek(self, k: int = 0) -> Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def take(self) -> Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def at(self, *texts: str) -> bool:
        t = self.peek()
        return t.kind in ("op", "kw") and t.text in texts

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            raise SyntaxErr(self.peek().line)

    def newlines(self) -> None:
        while self.peek().kind == "nl":
            self.i += 1

    def separators(self) -> None:
        while self.peek().kind == "nl" or self.at(";"):
            self.i += 1

    def skip_line(self) -> None:
        """After a syntax error: drop the rest of the line."""
        while self.peek().kind not in ("nl", "eof"):
            self.i += 1

    # ---------------------------------------------------------------- statements
    def chunk(self) -> list | None:
        """The statements up to the end of a top-level line; None at the end of input."""
        self.separators()
        if self.peek().kind == "eof":
            return None
        stmts = []
        while True:
            t = self.peek()
            if t.kind in ("nl", "eof"):
                if t.kind == "nl":
                    self.i += 1
                return stmts
            if self.accept(";"):
                continue
            if self.at("define") and stmts:  # a definition starts its own line, as in GNU bc's grammar
                raise SyntaxErr(t.line)
            stmts.append(self.statement())
            if self.peek().kind not in ("nl", "eof") and not self.at(";", "}"):
                raise SyntaxErr(self.peek().line)

    def block(self) -> list:
        """Statements up to the closing brace (the opening one already taken)."""
        body = []
        self.depth += 1
        try:
            while True:
                self.separators()
                if self.accept("}"):
                    return body
                if self.peek().kind == "eof":
                    raise SyntaxErr(self.peek().line)
                body.append(self.statement())
        finally:
            self.depth -= 1

    def condition(self):
        self.expect("(")
        cond = self.expr()
        self.expect(")")
        self.newlines()
        return cond

    def statement(self):
        t = self.peek()
        if t.kind == "str":
            self.i += 1
            return ("str", t.text[1:-1])
        if t.kind == "kw":
            word = t.text
            if word == "quit":
                raise Quit
            if word in ("halt", "break", "continue", "limits"):
                self.i += 1
                return (word,)
            if word == "define":
                if self.depth:
                    raise SyntaxErr(t.line)  # not inside a block or a function
                return self.define()
            if word == "return":
                self.i += 1
                if self.peek().kind in ("nl", "eof") or self.at(";", "}"):
                    return ("return", None)
                return ("return", self.expr())
            if word == "if":
                self.i += 1
                cond = self.condition()
                then = self.statement_or_empty()
                save = self.i
                self.newlines()
                if self.accept("else"):
                    self.newlines()
                    return ("if", cond, then, self.statement_or_empty())
                self.i = save
                return ("if", cond, then, None)
            if word == "while":
                self.i += 1
                cond = self.condition()
                return ("while", cond, self.statement_or_empty())
            if word == "for":
                self.i += 1
                self.expect("(")
                init = None if self.at(";") else self.expr()
                self.expect(";")
                cond = None if self.at(";") else self.expr()
                self.expect(";")
                step = None if self.at(")") else self.expr()
                self.expect(")")
                self.newlines()
                return ("for", init, cond, step, self.statement_or_empty())
            if word == "print":
                self.i += 1
                items = []
                while True:
                    if self.peek().kind == "str":
                        items.append(("s", self.take().text[1:-1]))
                    else:
                        items.append(("e", self.expr()))
                    if not self.accept(","):
                        return ("print", items)
        if self.accept("{"):
            return ("block", self.block())
        return ("expr", self.expr())

    def statement_or_empty(self):
        if self.at(";"):
            return ("block", [])
        return self.statement()

    def define(self):
        self.i += 1
        name = self.take()
        if name.kind != "name":
            raise SyntaxErr(name.line)
        self.expect("(")
        params = self.names(")")
        self.expect(")")
        self.newlines()
        self.expect("{")
        self.newlines()
        autos: list[tuple[str, bool]] = []
        if self.accept("auto"):
            autos = self.names(None)
        self.funcs[name.text] = Func(params, autos, self.block())
        return ("nop",)

    def names(self, end: str | None) -> list[tuple[str, bool]]:
        out: list[tuple[str, bool]] = []
        if end is not None and self.at(end):
            return out
        while True:
            t = self.take()
            if t.kind != "name":
                raise SyntaxErr(t.line)
            array = False
            if self.accept("["):
                self.expect("]")
                array = True
            out.append((t.text, array))
            if not self.accept(","):
                return out

    # ---------------------------------------------------------------- expressions
    def expr(self):
        left = self.and_expr()
        while self.accept("||"):
            self.newlines()
            left = ("or", left, self.and_expr())
        return left

    def and_expr(self):
        left = self.not_expr()
        while self.accept("&&"):
            self.newlines()
            left = ("and", left, self.not_expr())
        return left

    def not_expr(self):
        if self.accept("!"):
            return ("not", self.not_expr())
        return self.rel_expr()

    def rel_expr(self):
        left = self.assign_expr()
        while self.at("<", ">", "<=", ">=", "==", "!="):
            op = self.take().text
            left = ("rel", op, left, self.assign_expr())
        return left

    def assign_expr(self):
        left = self.add_expr()
        if self.at("=", "+=", "-=", "*=", "/=", "%=", "^="):
            if left[0] not in LVALUES:
                raise SyntaxErr(self.peek().line)
            op = self.take().text
            self.newlines()
            return ("assign", op, left, self.assign_expr())
        return left

    def add_expr(self):
        left = self.mul_expr()
        while self.at("+", "-"):
            op = self.take().text
            self.newlines()
            left = ("bin", op, left, self.mul_expr())
        return left

    def mul_expr(self):
        left = self.pow_expr()
        while self.at("*", "/", "%"):
            op = self.take().text
            self.newlines()
            left = ("bin", op, left, self.pow_expr())
        return left

    def pow_expr(self):
        base = self.unary()
        if self.accept("^"):
            self.newlines()
            return ("bin", "^", base, self.pow_expr())
        return base

    def unary(self):
        if self.accept("-"):
            return ("neg", self.unary())
        if self.at("++", "--"):
            op = self.take().text
            target = self.primary()
            if target[0] not in LVALUES:
                raise SyntaxErr(self.peek().line)
            return ("pre", op, target)
        value = self.primary()
        if self.at("++", "--") and value[0] in LVALUES:
            return ("post", self.take().text, value)
        return value

    def primary(self):
        t = self.take()
        if t.kind == "num":
            return ("num", t.text)
        if t.kind == "op" and t.text == "(":
            e = self.expr()
            self.expect(")")
            return ("paren", e)
        if t.kind == "op" and t.text == ".":
            return ("special", "last")
        if t.kind == "kw":
            if t.text in ("scale", "ibase", "obase", "last"):
                if t.text == "scale" and self.accept("("):
                    e = self.expr()
                    self.expect(")")
                    return ("call_scale", e)
                return ("special", t.text)
            if t.text in ("length", "sqrt"):
                self.expect("(")
                e = self.expr()
                self.expect(")")
                return (t.text, e)
            if t.text == "read":
                self.expect("(")
                self.expect(")")
                return ("read",)
            raise SyntaxErr(t.line)
        if t.kind == "name":
            if self.accept("("):
                return ("call", t.text, self.arguments())
            if self.accept("["):
                e = self.expr()
                self.expect("]")
                return ("elem", t.text, e)
            return ("var", t.text)
        raise SyntaxErr(t.line)

    def arguments(self) -> list:
        args: list = []
        if self.accept(")"):
            return args
        while True:
            if self.peek().kind == "name" and self.peek(1).text == "[" and self.peek(2).text == "]":
                args.append(("array", self.take().text))
                self.i += 2
            else:
                args.append(self.expr())
            if self.accept(")"):
                return args
            self.expect(",")
