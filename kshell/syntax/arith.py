"""Arithmetic expressions (`$((...))`, `((...))`, `for ((...))`): C operators and precedence,
assignment operators, ternary, comma, pre/post ++/--, bases (`16#ff`, `0x1f`, `010`).

The tokenizer follows bash's `expr.c` closely so that errors carry bash's message and "error
token" (the rest of the expression from the token bash was looking at). Parsing happens on
the text after `$` expansion, as in bash; evaluation belongs to the interpreter.
"""

from __future__ import annotations

import re

from kshell.syntax.ast import (
    ArithAssign,
    ArithBinary,
    ArithIncDec,
    ArithNode,
    ArithNum,
    ArithTernary,
    ArithUnary,
    ArithVar,
)
from kshell.syntax.errors import ArithSyntaxError
from kshell.syntax.stack import nesting_limit

MAX_DEPTH = 64  # nested parentheses / unary operators / assignments
FRAMES_PER_LEVEL = 8

_WS = " \t\n\r"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[0-9][A-Za-z0-9#@_]*")

_EOF = ""  # curtok value at end of input (bash: 0)
_NUM = "NUM"
_STR = "STR"
_OP_ASSIGN = "OP="
_PREINC, _PREDEC, _POSTINC, _POSTDEC = "++x", "--x", "x++", "x--"

# Single-character operators bash's _is_arithop accepts.
_ARITHOP = set("=><+-*/%!()&|^~?:,")
_MULTIOP = {"==", "!=", "<=", ">=", "&&", "||", "<<", ">>", _OP_ASSIGN, "COND", "**",
            _PREINC, _PREDEC, _POSTINC, _POSTDEC}
_TWO_CHAR = {"==": "==", "!=": "!=", ">=": ">=", "<=": "<=", "&&": "&&", "||": "||",
             "**": "**"}

# Binary operators from `||` up to `* / %`: precedence (higher binds tighter).
_BINARY_PREC = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, "<=": 7, ">": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}
_INT64 = 1 << 64


def _wrap(value: int) -> int:
    value &= _INT64 - 1
    return value - _INT64 if value >= 1 << 63 else value


class _ArithParser:
    __slots__ = (
        "assigntok",
        "curtok",
        "depth",
        "lasttok",
        "lasttp",
        "max_depth",
        "n",
        "text",
        "tokname",
        "toksub",
        "tokval",
        "tp",
    )

    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)
        self.tp = 0
        self.lasttp = 0
        self.curtok = _EOF
        self.lasttok = _EOF
        self.tokval = 0
        self.tokname = ""
        self.toksub: str | None = None
        self.assigntok = ""
        self.depth = 0
        self.max_depth = nesting_limit(MAX_DEPTH, FRAMES_PER_LEVEL)

    def error(self, message: str) -> ArithSyntaxError:
        return ArithSyntaxError(self.text, message, self.text[self.lasttp:])

    # ----------------------------------------------------------------- tokens

    def readtok(self) -> None:
        text, n = self.text, self.n
        cp = self.tp
        while cp < n and text[cp] in _WS:
            cp += 1
        if cp >= n:
            self.lasttok = self.curtok
            self.curtok = _EOF
            self.tp = cp
            return
        self.lasttp = cp
        c = text[cp]
        if c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z"):
            end = _NAME.match(text, cp).end()  # type: ignore[union-attr]
            self.tokname = text[cp:end]
            self.toksub = None
            if end < n and text[end] == "[":
                close = _skip_subscript(text, end)
                if close < 0:
                    raise self.error("bad array subscript")
                self.toksub = text[end + 1:close]
                end = close + 1
            self.lasttok = self.curtok
            self.curtok = _STR
            self.tp = end
            return
        if "0" <= c <= "9":
            end = _NUMBER.match(text, cp).end()  # type: ignore[union-attr]
            self.tokval = self.strlong(text[cp:end])
            self.lasttok = self.curtok
            self.curtok = _NUM
            self.tp = end
            return
        cp += 1
        c1 = text[cp] if cp < n else ""
        tok = c
        pair = c + c1
        if pair in _TWO_CHAR:
            tok = _TWO_CHAR[pair]
            cp += 1
        elif pair == "<<" or pair == ">>":
            cp += 1
            if cp < n and text[cp] == "=":
                self.assigntok = pair
                tok = _OP_ASSIGN
                cp += 1
            else:
                tok = pair
        elif (c == "-" or c == "+") and c1 == c:
            if self.curtok == _STR:
                tok = _POSTDEC if c == "-" else _POSTINC
                cp += 1
            elif self.curtok == _NUM and self.lasttok in (_PREINC, _PREDEC):
                raise self.error(f"{pair}: assignment requires lvalue")
            else:
                xp = cp + 1
                while xp < n and text[xp] in _WS:
                    xp += 1
                if xp < n and (text[xp] == "_" or text[xp].isascii() and text[xp].isalpha()):
                    tok = _PREDEC if c == "-" else _PREINC
                    cp += 1
        elif c1 == "=" and c in "*/%+-&^|":
            self.assigntok = c
            tok = _OP_ASSIGN
            cp += 1
        elif c not in _ARITHOP:
            cur = self.curtok
            if cur == _EOF or cur in _ARITHOP or cur in _MULTIOP:
                raise self.error("syntax error: operand expected")
            raise self.error("syntax error: invalid arithmetic operator")
        self.lasttok = self.curtok
        self.curtok = tok
        self.tp = cp

    def strlong(self, num: str) -> int:
        """bash's strlong: 0nnn octal, 0xnn hex, base#digits (2 <= base <= 64)."""
        if num == "0":
            return 0
        base, found, i = 10, False, 0
        if num[0] == "0":
            i = 1
            if num[1] in "xX":
                base, i = 16, 2
            else:
                base = 8
            found = True
        val = 0
        n = len(num)
        while i < n:
            c = num[i]
            i += 1
            if c == "#":
                if found:
                    raise self.error("invalid number")
                if val < 2 or val > 64:
                    raise self.error("invalid arithmetic base")
                base, val, found = val, 0, True
                if i >= n or not (num[i].isalnum() or num[i] in "_@"):
                    raise self.error("invalid integer constant")
                continue
            if "0" <= c <= "9":
                d = ord(c) - 48
            elif "a" <= c <= "z":
                d = ord(c) - 87
            elif "A" <= c <= "Z":
                d = ord(c) - (55 if base <= 36 else 29)
            elif c == "@":
                d = 62
            else:  # "_"
                d = 63
            if d >= base:
                raise self.error("value too great for base")
            val = val * base + d
        return _wrap(val)

    # ----------------------------------------------------------------- grammar

    def enter(self) -> None:
        self.depth += 1
        if self.depth > self.max_depth:
            raise self.error("expression recursion level exceeded")

    def lowest(self) -> ArithNode:  # expcomma
        self.enter()
        node = self.assign()
        while self.curtok == ",":
            self.readtok()
            node = ArithBinary(",", node, self.assign())
        self.depth -= 1
        return node

    def assign(self) -> ArithNode:
        node = self.cond()
        tok = self.curtok
        if tok == "=" or tok == _OP_ASSIGN:
            if self.lasttok != _STR or not isinstance(node, ArithVar):
                raise self.error("attempted assignment to non-variable")
            op = "=" if tok == "=" else self.assigntok + "="
            self.readtok()
            self.enter()
            value = self.assign()
            self.depth -= 1
            return ArithAssign(op, node, value, self.text[self.lasttp:])
        return node

    def cond(self) -> ArithNode:
        node = self.binary(1)
        if self.curtok == "?":
            self.readtok()
            if self.curtok == _EOF or self.curtok == ":":
                raise self.error("expression expected")
            if_true = self.lowest()
            if self.curtok != ":":
                raise self.error("`:' expected for conditional expression")
            self.readtok()
            if self.curtok == _EOF:
                raise self.error("expression expected")
            self.enter()
            if_false = self.cond()
            self.depth -= 1
            self.lasttok = "COND"
            return ArithTernary(node, if_true, if_false)
        return node

    def binary(self, min_prec: int) -> ArithNode:
        left = self.power()
        while True:
            op = self.curtok
            prec = _BINARY_PREC.get(op)
            if prec is None or prec < min_prec:
                return left
            after_op = self.tp
            self.readtok()
            right = self.binary(prec + 1)
            if op == "/" or op == "%":
                left = ArithBinary(op, left, right, self.text[after_op:].lstrip(" \t"))
            else:
                left = ArithBinary(op, left, right)
            self.lasttok = _NUM

    def power(self) -> ArithNode:
        left = self.unary()
        if self.curtok == "**":
            self.readtok()
            self.enter()
            right = self.power()
            self.depth -= 1
            self.lasttok = _NUM
            return ArithBinary("**", left, right, self.text[self.lasttp:])
        return left

    def unary(self) -> ArithNode:
        tok = self.curtok
        if tok in ("!", "~", "-", "+"):
            self.readtok()
            self.enter()
            operand = self.unary()
            self.depth -= 1
            self.lasttok = _NUM
            return ArithUnary(tok, operand)
        return self.primary()

    def primary(self) -> ArithNode:
        tok = self.curtok
        if tok in (_PREINC, _PREDEC):
            self.lasttok = tok
            self.readtok()
            if self.curtok != _STR:
                raise self.error("identifier expected after pre-increment or pre-decrement")
            node = ArithIncDec(tok[:2], True, self.variable())
            self.curtok = _NUM  # so that `++x=7` and `++x++` are flagged
            self.readtok()
            return node
        if tok == "(":
            self.readtok()
            node = self.lowest()
            if self.curtok != ")":
                raise self.error("missing `)'")
            self.readtok()
            return node
        if tok == _NUM:
            value = self.tokval
            self.readtok()
            return ArithNum(value)
        if tok == _STR:
            var = self.variable()
            self.readtok()
            if self.curtok == _POSTINC or self.curtok == _POSTDEC:
                op = "++" if self.curtok == _POSTINC else "--"
                self.lasttok = _STR
                self.curtok = _NUM  # so that `x++=7` is flagged
                self.readtok()
                return ArithIncDec(op, False, var)
            return var
        raise self.error("syntax error: operand expected")

    def variable(self) -> ArithVar:
        sub = self.toksub
        if sub is None:
            return ArithVar(self.tokname)
        index: ArithNode | None
        try:
            index = parse_arith(sub) if sub.strip() not in ("@", "*") else None
        except ArithSyntaxError:
            index = None
        return ArithVar(self.tokname, sub, index)


def _skip_subscript(text: str, start: int) -> int:
    """Index of the `]` matching the `[` at start, or -1."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i
    return -1


_cache: dict[str, ArithNode] = {}


def parse_arith(text: str) -> ArithNode:
    """Parse an (already expanded) arithmetic expression. Empty or blank text is 0, as in bash.
    Raises ArithSyntaxError with bash's wording. Results are cached by text."""
    node = _cache.get(text)
    if node is not None:
        return node
    p = _ArithParser(text)
    p.readtok()
    if p.curtok == _EOF:
        node = ArithNum(0)
    else:
        node = p.lowest()
        if p.curtok != _EOF:
            raise p.error("syntax error in expression")
    if len(_cache) > 4096:
        _cache.clear()
    _cache[text] = node
    return node
