"""test / [ : POSIX's argument-count rules, -a/-o/!/( ), over the primaries that
kshell.exec.conditions evaluates (shared with [[ ]])."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.builtins import builtin
from kshell.exec.conditions import BINARY, UNARY, TestError, binary_test, unary_test
from kshell.syntax.errors import ArithSyntaxError

if TYPE_CHECKING:
    from kshell.core.context import ToolContext


class _TestParser:
    def __init__(self, sh: ToolContext, args: list[str]) -> None:
        self.sh = sh
        self.args = args
        self.pos = 0

    def parse(self) -> bool:
        n = len(self.args)
        if n == 0:
            return False
        result = self.eval_n(n)
        if self.pos < n:
            raise TestError(f"{self.args[self.pos]}: unexpected operator" if False
                            else "too many arguments")
        return result

    def eval_n(self, n: int) -> bool:
        args = self.args
        p = self.pos
        if n == 1:
            self.pos += 1
            return args[p] != ""
        if n == 2:
            if args[p] == "!":
                self.pos += 2
                return args[p + 1] == ""
            if args[p] in UNARY:
                self.pos += 2
                return unary_test(self.sh, args[p], args[p + 1])
            raise TestError(f"{args[p]}: unary operator expected")
        if n == 3:
            if args[p + 1] in BINARY:
                self.pos += 3
                return binary_test(self.sh, args[p + 1], args[p], args[p + 2])
            if args[p + 1] in ("-a", "-o"):
                self.pos += 3
                a = args[p] != ""
                b = args[p + 2] != ""
                return (a and b) if args[p + 1] == "-a" else (a or b)
            if args[p] == "!":
                self.pos += 1
                return not self.eval_n(2)
            if args[p] == "(" and args[p + 2] == ")":
                self.pos += 3
                return args[p + 1] != ""
            raise TestError(f"{args[p + 1]}: binary operator expected")
        if n == 4:
            if args[p] == "!":
                self.pos += 1
                return not self.eval_n(3)
            if args[p] == "(" and args[p + 3] == ")":
                self.pos += 1
                r = self.eval_n(2)
                self.pos += 1
                return r
        return self.expr_or()

    def remaining(self) -> int:
        return len(self.args) - self.pos

    def expr_or(self) -> bool:
        r = self.expr_and()
        while self.pos < len(self.args) and self.args[self.pos] == "-o":
            self.pos += 1
            r2 = self.expr_and()
            r = r or r2
        return r

    def expr_and(self) -> bool:
        r = self.expr_not()
        while self.pos < len(self.args) and self.args[self.pos] == "-a":
            self.pos += 1
            r2 = self.expr_not()
            r = r and r2
        return r

    def expr_not(self) -> bool:
        if self.pos < len(self.args) and self.args[self.pos] == "!":
            self.pos += 1
            return not self.expr_not()
        return self.primary()

    def primary(self) -> bool:
        args = self.args
        p = self.pos
        if p >= len(args):
            raise TestError("argument expected")
        if args[p] == "(":
            self.pos += 1
            r = self.expr_or()
            if self.pos >= len(args) or args[self.pos] != ")":
                raise TestError("`)' expected")
            self.pos += 1
            return r
        if p + 2 < len(args) + 0 and p + 1 < len(args) and args[p + 1] in BINARY and p + 2 < len(args):
            self.pos += 3
            return binary_test(self.sh, args[p + 1], args[p], args[p + 2])
        if args[p] in UNARY and p + 1 < len(args):
            self.pos += 2
            return unary_test(self.sh, args[p], args[p + 1])
        self.pos += 1
        return args[p] != ""


def run_test(sh: ToolContext, name: str, args: list[str]) -> int:
    try:
        return 0 if _TestParser(sh, args).parse() else 1
    except TestError as e:
        sh.error(f"{name}: {e.args[0]}")
        return 2
    except ArithSyntaxError as e:
        sh.error(f"{name}: {e.text}")
        return 2


@builtin("test")
def test(sh: ToolContext, argv: list[str]) -> int:
    return run_test(sh, "test", argv[1:])


@builtin("[")
def bracket(sh: ToolContext, argv: list[str]) -> int:
    if argv[-1] != "]":
        sh.error("[: missing `]'")
        return 2
    args = argv[1:-1]
    if len(args) == 3 and args[1] in ("-lt", "-gt", "-le", "-ge", "-eq", "-ne"):
        a, op, b = args
        if a.isdigit() and b.isdigit():
            x, y = int(a), int(b)
            if op == "-lt":
                return 0 if x < y else 1
            if op == "-gt":
                return 0 if x > y else 1
            if op == "-le":
                return 0 if x <= y else 1
            if op == "-ge":
                return 0 if x >= y else 1
            if op == "-eq":
                return 0 if x == y else 1
            return 0 if x != y else 1
    return run_test(sh, "[", args)
