"""The awk lexer and parser: source text to a tree of tuples `(kind, ...)`, with gawk's syntax
error report (the source line and a caret under the offending token)."""

from __future__ import annotations

import re

KEYWORDS = {"BEGIN", "END", "function", "func", "if", "else", "while", "for", "do", "break",
            "continue", "next", "nextfile", "exit", "return", "delete", "in", "getline",
            "print", "printf"}
BUILTINS = {"length", "substr", "index", "split", "sub", "gsub", "match", "sprintf", "sin",
            "cos", "atan2", "exp", "log", "sqrt", "int", "rand", "srand", "tolower", "toupper",
            "system", "close", "fflush"}
_OPS = sorted(["{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/", "%", "^", "!", ">",
               "<", "|", "?", ":", "~", "$", "=", "+=", "-=", "*=", "/=", "%=", "^=", "==", "<=",
               ">=", "!=", "++", "--", "&&", "||", ">>", "!~", "**", "**=", "|&"], key=len, reverse=True)
_NUM = re.compile(r"(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STR_ESC = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "/": "/", "a": "\a",
            "b": "\b", "f": "\f", "v": "\v"}


class AwkSyntaxError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Tok:
    __slots__ = ("kind", "value", "line", "col")

    def __init__(self, kind: str, value: object, line: int, col: int) -> None:
        self.kind = kind
        self.value = value
        self.line = line
        self.col = col

    def __repr__(self) -> str:
        return f"Tok({self.kind!r}, {self.value!r})"


def _unescape(body: str, regex: bool) -> str:
    out: list[str] = []
    i = 0
    n = len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = body[i + 1]
        i += 2
        if regex:
            if d == "/":
                out.append("/")
            elif d in "ntrfvab" and d != "b":
                out.append(_STR_ESC[d])
            elif d == "y":
                out.append("\\b")
            else:
                out.append("\\" + d)
            continue
        if d in _STR_ESC:
            out.append(_STR_ESC[d])
        elif d in "01234567":
            j = i - 1
            k = j
            while k < n and k < j + 3 and body[k] in "01234567":
                k += 1
            out.append(chr(int(body[j:k], 8) & 0xFF))
            i = k
        elif d == "\n":
            pass
        else:
            out.append("\\" + d)
    return "".join(out)


class Lexer:
    def __init__(self, src: str, names: list[str]) -> None:
        self.src = src
        self.names = names  # the source name of each line (for messages)

    def tokens(self) -> list[Tok]:
        src = self.src
        toks: list[Tok] = []
        i = 0
        n = len(src)
        line = 1
        line_start = 0
        while i < n:
            c = src[i]
            col = i - line_start
            if c in " \t\r":
                i += 1
                continue
            if c == "\\" and src.startswith("\n", i + 1):
                i += 2
                line += 1
                line_start = i
                continue
            if c == "\\" and src.startswith("\r\n", i + 1):
                i += 3
                line += 1
                line_start = i
                continue
            if c == "#":
                while i < n and src[i] != "\n":
                    i += 1
                continue
            if c == "\n":
                toks.append(Tok("NEWLINE", "\n", line, col))
                i += 1
                line += 1
                line_start = i
                continue
            if c == '"':
                j = i + 1
                while j < n and src[j] != '"':
                    if src[j] == "\\":
                        j += 1
                    if j < n and src[j] == "\n":
                        self.error(line, n - line_start if src.find("\n", i) < 0 else j - line_start,
                                   "unterminated string", toks)
                    j += 1
                if j >= n:
                    self.error(line, col, "unterminated string", toks)
                toks.append(Tok("STRING", _unescape(src[i + 1 : j], False), line, col))
                i = j + 1
                continue
            if c == "/" and self.regex_allowed(toks):
                j = i + 1
                in_br = False
                while j < n and (src[j] != "/" or in_br):
                    if src[j] == "\n":
                        self.error(line, col, "unterminated regexp", toks)
                    if src[j] == "\\":
                        j += 1
                    elif src[j] == "[" and not in_br:
                        in_br = True
                        if src.startswith("]", j + 1):
                            j += 1
                        elif src.startswith("^]", j + 1):
                            j += 2
                    elif src[j] == "]" and in_br:
                        in_br = False
                    j += 1
                if j >= n:
                    self.error(line, col, "unterminated regexp", toks)
                toks.append(Tok("ERE", _unescape(src[i + 1 : j], True), line, col))
                i = j + 1
                continue
            if c.isdigit() or (c == "." and i + 1 < n and src[i + 1].isdigit()):
                m = _NUM.match(src, i)
                text = m.group()
                value = float(int(text, 16)) if text[:2] in ("0x", "0X") else float(text)
                toks.append(Tok("NUMBER", value, line, col))
                i = m.end()
                continue
            if c.isalpha() or c == "_":
                m = _NAME.match(src, i)
                word = m.group()
                i = m.end()
                if word in KEYWORDS:
                    kind = "func" if word == "func" else word
                    toks.append(Tok(kind if kind != "func" else "function", word, line, col))
                elif word in BUILTINS:
                    toks.append(Tok("BUILTIN", word, line, col))
                elif i < n and src[i] == "(":
                    toks.append(Tok("FUNC_NAME", word, line, col))
                else:
                    toks.append(Tok("NAME", word, line, col))
                continue
            for op in _OPS:
                if src.startswith(op, i):
                    toks.append(Tok(op, op, line, col))
                    i += len(op)
                    break
            else:
                self.error(line, col, "invalid char '" + c + "' in expression", toks)
        toks.append(Tok("EOF", None, line, n - line_start))
        return toks

    @staticmethod
    def regex_allowed(toks: list[Tok]) -> bool:
        if not toks:
            return True
        return toks[-1].kind not in ("NAME", "NUMBER", "STRING", ")", "]", "BUILTIN", "$", "++",
                                     "--", "ERE")

    def error(self, line: int, col: int, message: str, toks: list[Tok]) -> None:
        raise AwkSyntaxError(format_error(self.src, self.names, line, col, message))


def format_error(src: str, names: list[str], line: int, col: int, message: str) -> str:
    lines = src.split("\n")
    text = lines[line - 1] if line - 1 < len(lines) else ""
    where = names[line - 1] if line - 1 < len(names) else names[-1]
    return f"awk: {where}: {text}\nawk: {where}: {' ' * col}^ {message}\n"


# ------------------------------------------------------------------------------------- parser

_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "^=", "**="}
_CMP = {"<", "<=", "!=", "==", ">", ">="}
_CONCAT_START = {"NAME", "NUMBER", "STRING", "ERE", "FUNC_NAME", "BUILTIN", "$", "(", "++", "--"}


class Parser:
    def __init__(self, src: str, names: list[str]) -> None:
        self.src = src
        self.names = names
        self.toks = Lexer(src, names).tokens()
        self.pos = 0
        self.funcs: dict[str, tuple] = {}
        self.no_gt = 0
        self.no_in = 0
        self.context = "rule"  # what is being parsed: BEGIN, END, function or rule (gawk's checks)

    # ---------------------------------------------------------------- tokens

    @property
    def tok(self) -> Tok:
        return self.toks[self.pos]

    def next(self) -> Tok:
        t = self.toks[self.pos]
        self.pos += 1
        return t

    def at(self, *kinds: str) -> bool:
        return self.toks[self.pos].kind in kinds

    def accept(self, kind: str) -> bool:
        if self.toks[self.pos].kind == kind:
            self.pos += 1
            return True
        return False

    def expect(self, kind: str) -> Tok:
        if self.toks[self.pos].kind != kind:
            self.fail()
        return self.next()

    def fail(self, tok: Tok | None = None) -> None:
        t = tok or self.tok
        if t.kind in ("EOF", "NEWLINE"):
            if t.kind == "NEWLINE":
                msg = "unexpected newline or end of string"
            else:
                msg = "unexpected newline or end of string"
            raise AwkSyntaxError(format_error(self.src, self.names, t.line, t.col, msg))
        raise AwkSyntaxError(format_error(self.src, self.names, t.line, t.col, "syntax error"))

    def newlines(self) -> None:
        while self.toks[self.pos].kind == "NEWLINE":
            self.pos += 1

    def terminators(self) -> None:
        while self.toks[self.pos].kind in ("NEWLINE", ";"):
            self.pos += 1

    # ---------------------------------------------------------------- program

    def program(self) -> tuple[list, list, list, dict]:
        begins: list = []
        ends: list = []
        rules: list = []
        self.terminators()
        while not self.at("EOF"):
            if self.at("BEGIN", "END"):
                self.context = self.next().kind
                self.newlines()
                if not self.at("{"):
                    self.fail()
                (begins if self.context == "BEGIN" else ends).append(self.block())
            elif self.at("function"):
                self.context = "function"
                self.function()
            else:
                self.context = "rule"
                pattern = None
                if not self.at("{"):
                    first = self.expr()
                    pattern = first
                    if self.accept(","):
                        self.newlines()
                        pattern = ("range", first, self.expr())
                action = self.block() if self.at("{") else None
                rules.append((pattern, action))
            if (not self.at("EOF", "NEWLINE", ";", "BEGIN", "END", "function", "{")
                    and self.toks[self.pos - 1].kind != "}"):
                self.fail()
            self.terminators()
        return begins, ends, rules, self.funcs

    def function(self) -> None:
        self.next()
        t = self.next()
        if t.kind not in ("NAME", "FUNC_NAME"):
            self.fail(t)
        name = t.value
        if name in self.funcs:
            raise AwkSyntaxError(format_error(self.src, self.names, t.line, t.col,
                                              f"function name `{name}' previously defined"))
        self.expect("(")
        params: list[str] = []
        while not self.accept(")"):
            p = self.expect("NAME")
            params.append(p.value)
            if not self.at(")"):
                self.expect(",")
                self.newlines()
        self.newlines()
        self.funcs[name] = (params, None)
        body = self.block()
        self.funcs[name] = (params, body)

    def block(self) -> tuple:
        self.expect("{")
        stmts = []
        self.terminators()
        while not self.accept("}"):
            if self.at("EOF"):
                self.fail()
            stmts.append(self.statement())
            self.terminators()
        return ("block", stmts)

    def simple_end(self) -> None:
        if self.at(";", "NEWLINE"):
            self.next()
        elif not self.at("}", "EOF"):
            self.fail()

    def stmt_body(self) -> tuple:
        self.newlines()
        if self.accept(";"):
            return ("block", [])
        return self.statement()

    def statement(self) -> tuple:
        t = self.tok
        k = t.kind
        if k == "{":
            return self.block()
        if k == "if":
            self.next()
            self.expect("(")
            cond = self.expr()
            self.expect(")")
            then = self.stmt_body()
            save = self.pos
            self.terminators()
            if self.accept("else"):
                return ("if", cond, then, self.stmt_body())
            self.pos = save
            return ("if", cond, then, None)
        if k == "while":
            self.next()
            self.expect("(")
            cond = self.expr()
            self.expect(")")
            if self.at(";"):
                self.next()
                return ("while", cond, ("block", []))
            return ("while", cond, self.stmt_body())
        if k == "do":
            self.next()
            body = self.stmt_body()
            self.terminators()
            self.expect("while")
            self.expect("(")
            cond = self.expr()
            self.expect(")")
            self.simple_end()
            return ("do", body, cond)
        if k == "for":
            self.next()
            self.expect("(")
            if (self.at("NAME") and self.toks[self.pos + 1].kind == "in"
                    and self.toks[self.pos + 2].kind == "NAME" and self.toks[self.pos + 3].kind == ")"):
                var = self.next().value
                self.next()
                arr = self.next().value
                self.next()
                return ("forin", var, arr, self.stmt_body())
            init = None if self.at(";") else self.simple_statement()
            self.expect(";")
            self.newlines()
            cond = None if self.at(";") else self.expr()
            self.expect(";")
            self.newlines()
            step = None if self.at(")") else self.simple_statement()
            self.expect(")")
            if self.at(";"):
                self.next()
                return ("for", init, cond, step, ("block", []))
            return ("for", init, cond, step, self.stmt_body())
        if k == ";":
            self.next()
            return ("block", [])
        s = self.simple_statement()
        self.simple_end()
        return s

    def simple_statement(self) -> tuple:
        t = self.tok
        k = t.kind
        if k in ("print", "printf"):
            return self.print_stmt()
        if k == "break":
            self.next()
            return ("break",)
        if k == "continue":
            self.next()
            return ("continue",)
        if k in ("next", "nextfile"):
            t = self.next()
            if self.context in ("BEGIN", "END"):  # gawk says it without the source line
                where = self.names[min(t.line, len(self.names)) - 1]
                raise AwkSyntaxError(f"awk: {where}: error: `{k}' used in {self.context} action\n")
            return (k,)
        if k == "exit":
            self.next()
            if self.at(";", "NEWLINE", "}", "EOF"):
                return ("exit", None)
            return ("exit", self.expr())
        if k == "return":
            t = self.next()
            if self.context != "function":
                raise AwkSyntaxError(format_error(self.src, self.names, t.line, t.col,
                                                  "`return' used outside function context"))
            if self.at(";", "NEWLINE", "}", "EOF"):
                return ("return", None)
            return ("return", self.expr())
        if k == "delete":
            self.next()
            name = self.expect("NAME").value
            if self.accept("["):
                subs = self.expr_list()
                self.expect("]")
                return ("delete", name, subs)
            return ("delete", name, None)
        return ("expr", self.expr())

    def print_stmt(self) -> tuple:
        kind = self.next().kind
        args: list = []
        self.no_gt += 1
        try:
            if self.at("("):
                save = self.pos
                self.next()
                self.no_gt -= 1
                try:
                    inner = self.expr_list() if not self.at(")") else []
                finally:
                    self.no_gt += 1
                if self.accept(")") and self.at(";", "NEWLINE", "}", ">", ">>", "|", "EOF"):
                    args = inner
                else:
                    self.pos = save
                    args = self.expr_list()
            elif not self.at(";", "NEWLINE", "}", ">", ">>", "|", "EOF"):
                args = self.expr_list()
        finally:
            self.no_gt -= 1
        dest = None
        if self.at(">", ">>", "|"):
            op = self.next().kind
            dest = (op, self.concat_expr())
        if kind == "printf" and not args:
            self.fail()
        return (kind, args, dest)

    def expr_list(self) -> list:
        out = [self.expr()]
        while self.accept(","):
            self.newlines()
            out.append(self.expr())
        return out

    # ---------------------------------------------------------------- expressions

    def expr(self) -> tuple:
        return self.ternary()

    def ternary(self) -> tuple:
        cond = self.or_expr()
        if self.at("?"):
            self.next()
            self.newlines()
            a = self.ternary()
            self.newlines()
            self.expect(":")
            self.newlines()
            b = self.ternary()
            return ("cond", cond, a, b)
        if self.at(*_ASSIGN) and cond[0] in ("var", "index", "field"):
            op = self.next().kind
            self.newlines()
            value = self.ternary()
            return ("assign", op, cond, value)
        return cond

    def or_expr(self) -> tuple:
        left = self.and_expr()
        while self.at("||"):
            self.next()
            self.newlines()
            left = ("or", left, self.and_expr())
        return left

    def and_expr(self) -> tuple:
        left = self.in_expr()
        while self.at("&&"):
            self.next()
            self.newlines()
            left = ("and", left, self.in_expr())
        return left

    def in_expr(self) -> tuple:
        left = self.match_expr()
        while self.at("in") and not self.no_in:
            self.next()
            arr = self.expect("NAME").value
            left = ("in", [left], arr)
        return left

    def match_expr(self) -> tuple:
        left = self.cmp_expr()
        while self.at("~", "!~"):
            op = self.next().kind
            left = ("match", op == "!~", left, self.cmp_expr())
        return left

    def cmp_expr(self) -> tuple:
        left = self.concat_expr()
        if self.at(*_CMP) and not (self.no_gt and self.at(">")):
            op = self.next().kind
            left = ("cmp", op, left, self.concat_expr())
        return left

    def concat_expr(self) -> tuple:
        left = self.additive()
        while True:
            if self.at("|") and self.toks[self.pos + 1].kind == "getline":
                self.next()
                self.next()
                var = self.opt_lvalue()
                left = ("pgetline", left, var)
                continue
            t = self.tok
            if t.kind in _CONCAT_START:
                left = ("concat", left, self.additive())
                continue
            return left

    def additive(self) -> tuple:
        left = self.mul()
        while self.at("+", "-"):
            op = self.next().kind
            left = ("bin", op, left, self.mul())
        return left

    def mul(self) -> tuple:
        left = self.unary()
        while self.at("*", "/", "%"):
            op = self.next().kind
            left = ("bin", op, left, self.unary())
        return left

    def unary(self) -> tuple:
        if self.at("!"):
            self.next()
            return ("not", self.unary())
        if self.at("-"):
            self.next()
            return ("neg", self.unary())
        if self.at("+"):
            self.next()
            return ("pos", self.unary())
        return self.power()

    def power(self) -> tuple:
        base = self.postfix()
        if self.at("^", "**"):
            self.next()
            if self.at("-", "+", "!"):
                return ("bin", "^", base, self.unary())
            return ("bin", "^", base, self.power())
        return base

    def postfix(self) -> tuple:
        if self.at("++", "--"):
            op = self.next().kind
            target = self.postfix()
            if target[0] not in ("var", "index", "field"):
                self.fail()
            return ("preinc", 1.0 if op == "++" else -1.0, target)
        e = self.primary()
        if e[0] in ("var", "index", "field") and self.at("++", "--"):
            op = self.next().kind
            return ("postinc", 1.0 if op == "++" else -1.0, e)
        return e

    def opt_lvalue(self) -> tuple | None:
        if self.at("$"):
            self.next()
            return ("field", self.field_operand())
        if self.at("NAME"):
            return self.name_ref()
        return None

    def field_operand(self) -> tuple:
        if self.at("++", "--"):
            op = self.next().kind
            return ("preinc", 1.0 if op == "++" else -1.0, self.primary())
        if self.at("-"):
            self.next()
            return ("neg", self.field_operand())
        return self.primary()

    def name_ref(self) -> tuple:
        name = self.next().value
        if self.accept("["):
            subs = self.expr_list()
            self.expect("]")
            return ("index", name, subs)
        return ("var", name)

    def primary(self) -> tuple:
        t = self.tok
        k = t.kind
        if k == "NUMBER":
            self.next()
            return ("num", t.value)
        if k == "STRING":
            self.next()
            return ("str", t.value)
        if k == "ERE":
            self.next()
            return ("regex", t.value)
        if k == "$":
            self.next()
            return ("field", self.field_operand())
        if k == "NAME":
            return self.name_ref()
        if k == "(":
            self.next()
            saved_gt = self.no_gt
            self.no_gt = 0
            first = self.expr()
            if self.at(","):
                items = [first]
                while self.accept(","):
                    self.newlines()
                    items.append(self.expr())
                self.expect(")")
                self.no_gt = saved_gt
                if not self.at("in"):
                    self.fail()
                self.next()
                arr = self.expect("NAME").value
                return ("in", items, arr)
            self.expect(")")
            self.no_gt = saved_gt
            return ("group", first)
        if k == "!":
            self.next()
            return ("not", self.unary())
        if k == "-":
            self.next()
            return ("neg", self.unary())
        if k == "+":
            self.next()
            return ("pos", self.unary())
        if k in ("++", "--"):
            return self.postfix()
        if k == "getline":
            self.next()
            var = self.opt_lvalue()
            if self.at("<"):
                self.next()
                src = self.primary_no_concat()
                return ("fgetline", var, src)
            return ("getline", var)
        if k == "FUNC_NAME":
            self.next()
            self.expect("(")
            args = []
            self.newlines()
            if not self.at(")"):
                args = self.expr_list()
            self.newlines()
            self.expect(")")
            return ("call", t.value, args, t)
        if k == "BUILTIN":
            self.next()
            name = t.value
            if self.accept("("):
                args = []
                self.newlines()
                if not self.at(")"):
                    args = self.expr_list()
                self.newlines()
                self.expect(")")
            elif name == "length":
                args = []
            else:
                self.fail()
            return ("builtin", name, args, t)
        self.fail()
        raise AssertionError

    def primary_no_concat(self) -> tuple:
        if self.at("$"):
            self.next()
            return ("field", self.field_operand())
        return self.primary()
