"""expr: GNU coreutils 9.1's expression evaluator (`|` `&`, comparisons, arbitrary-precision
`+ - * / %`, `:` and match/substr/index/length, `+ TOKEN`, parentheses).

Scripts use expr for arithmetic and for anchored BRE matches (`expr "$x" : '\\(.*\\)\\.c'`),
and test its status: 0 for a value that is neither null nor 0, 1 for null or 0, 2 for a syntax
error, a non-integer argument, division by zero or a bad regular expression. The grammar and
the messages are GNU's, so a script that parses them sees the same words.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.exec import regexes
from kshell.core.options import Fail, Usage, tool
from kshell.tools.text.regex import RegexError, translate

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

INVALID = 2
_INTEGER = re.compile(r"-?[0-9]+\Z")
_COMPARE = {"<": lambda c: c < 0, "<=": lambda c: c <= 0, "=": lambda c: c == 0, "==": lambda c: c == 0,
            "!=": lambda c: c != 0, ">=": lambda c: c >= 0, ">": lambda c: c > 0}

_HELP = """\
Usage: expr EXPRESSION
  or:  expr OPTION

      --help        display this help and exit
      --version     output version information and exit

Print the value of EXPRESSION to standard output.  A blank line below
separates increasing precedence groups.  EXPRESSION may be:

  ARG1 | ARG2       ARG1 if it is neither null nor 0, otherwise ARG2

  ARG1 & ARG2       ARG1 if neither argument is null or 0, otherwise 0

  ARG1 < ARG2       ARG1 is less than ARG2
  ARG1 <= ARG2      ARG1 is less than or equal to ARG2
  ARG1 = ARG2       ARG1 is equal to ARG2
  ARG1 != ARG2      ARG1 is unequal to ARG2
  ARG1 >= ARG2      ARG1 is greater than or equal to ARG2
  ARG1 > ARG2       ARG1 is greater than ARG2

  ARG1 + ARG2       arithmetic sum of ARG1 and ARG2
  ARG1 - ARG2       arithmetic difference of ARG1 and ARG2

  ARG1 * ARG2       arithmetic product of ARG1 and ARG2
  ARG1 / ARG2       arithmetic quotient of ARG1 divided by ARG2
  ARG1 % ARG2       arithmetic remainder of ARG1 divided by ARG2

  STRING : REGEXP   anchored pattern match of REGEXP in STRING

  match STRING REGEXP        same as STRING : REGEXP
  substr STRING POS LENGTH   substring of STRING, POS counted from 1
  index STRING CHARS         index in STRING where any CHARS is found, or 0
  length STRING              length of STRING
  + TOKEN                    interpret TOKEN as a string, even if it is a
                               keyword like 'match' or an operator like '/'

  ( EXPRESSION )             value of EXPRESSION

Beware that many operators need to be escaped or quoted for shells.
Comparisons are arithmetic if both ARGs are numbers, else lexicographical.
Pattern matches return the string matched between \\( and \\) or null; if
\\( and \\) are not used, they return the number of characters matched or 0.

Exit status is 0 if EXPRESSION is neither null nor 0, 1 if EXPRESSION is null
or 0, 2 if EXPRESSION is syntactically invalid, and 3 if an error occurred.
"""

Value = int | str


def _null(v: Value) -> bool:
    """GNU's null(): 0, the empty string, and strings of zeros ("00", "-0")."""
    if isinstance(v, int):
        return v == 0
    if not v:
        return True
    digits = v[1:] if v[0] == "-" else v
    return bool(digits) and set(digits) == {"0"}


def _text(v: Value) -> str:
    return str(v)


def _bytes(v: Value) -> bytes:
    """The value as bytes: lengths and positions count bytes, as GNU expr in the C locale."""
    return str(v).encode("utf-8", "surrogateescape")


def _arith(v: Value) -> int:
    if isinstance(v, int):
        return v
    if not _INTEGER.match(v):
        raise Fail("non-integer argument", INVALID)
    return int(v)


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


class _Parser:
    """Recursive descent over the arguments, one method per precedence level (GNU's eval..eval7);
    `evaluate` is false in the branch that `|` or `&` short-circuits, as in GNU."""

    def __init__(self, args: list[str]) -> None:
        self.args = args
        self.i = 0

    def next_is(self, token: str) -> bool:
        if self.i < len(self.args) and self.args[self.i] == token:
            self.i += 1
            return True
        return False

    def missing(self) -> Fail:
        return Fail(f"syntax error: missing argument after {_quote(self.args[self.i - 1])}", INVALID)

    def or_(self, ev: bool) -> Value:
        left = self.and_(ev)
        while self.next_is("|"):
            right = self.and_(ev and _null(left))
            if _null(left):
                left = 0 if _null(right) else right
        return left

    def and_(self, ev: bool) -> Value:
        left = self.compare(ev)
        while self.next_is("&"):
            right = self.compare(ev and not _null(left))
            if _null(left) or _null(right):
                left = 0
        return left

    def compare(self, ev: bool) -> Value:
        left = self.sum(ev)
        while self.i < len(self.args) and self.args[self.i] in _COMPARE:
            op = self.args[self.i]
            self.i += 1
            right = self.sum(ev)
            value = 0
            if ev:
                a, b = _text(left), _text(right)
                if _INTEGER.match(a) and _INTEGER.match(b):
                    x, y = int(a), int(b)
                else:
                    x, y = a.encode("utf-8", "surrogateescape"), b.encode("utf-8", "surrogateescape")  # type: ignore[assignment]
                value = int(_COMPARE[op]((x > y) - (x < y)))
            left = value
        return left

    def sum(self, ev: bool) -> Value:
        left = self.product(ev)
        while self.i < len(self.args) and self.args[self.i] in ("+", "-"):
            op = self.args[self.i]
            self.i += 1
            right = self.product(ev)
            if ev:
                a, b = _arith(left), _arith(right)
                left = a + b if op == "+" else a - b
        return left

    def product(self, ev: bool) -> Value:
        left = self.match(ev)
        while self.i < len(self.args) and self.args[self.i] in ("*", "/", "%"):
            op = self.args[self.i]
            self.i += 1
            right = self.match(ev)
            if ev:
                a, b = _arith(left), _arith(right)
                if op != "*" and b == 0:
                    raise Fail("division by zero", INVALID)
                if op == "*":
                    left = a * b
                else:  # C's truncating division and its remainder (mpz_tdiv_q/r)
                    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
                    left = q if op == "/" else a - q * b
        return left

    def match(self, ev: bool) -> Value:
        left = self.unary(ev)
        while self.next_is(":"):
            right = self.unary(ev)
            if ev:
                left = _colon(left, right)
        return left

    def unary(self, ev: bool) -> Value:
        if self.i >= len(self.args):
            raise self.missing()
        if self.next_is("+"):
            if self.i >= len(self.args):
                raise self.missing()
            self.i += 1
            return self.args[self.i - 1]
        if self.next_is("length"):
            return len(_bytes(self.unary(ev)))
        if self.next_is("match"):
            left = self.unary(ev)
            right = self.unary(ev)
            return _colon(left, right) if ev else left
        if self.next_is("index"):
            s, chars = _bytes(self.unary(ev)), _bytes(self.unary(ev))
            return next((n for n, c in enumerate(s, 1) if c in chars), 0)
        if self.next_is("substr"):
            s = _bytes(self.unary(ev))
            p, n = self.unary(ev), self.unary(ev)
            if not (_INTEGER.match(_text(p)) and _INTEGER.match(_text(n))):
                return ""
            pos, length = int(_text(p)), int(_text(n))
            if pos <= 0 or length <= 0 or pos > len(s):
                return ""
            return s[pos - 1 : pos - 1 + length].decode("utf-8", "surrogateescape")
        return self.primary(ev)

    def primary(self, ev: bool) -> Value:
        if self.i >= len(self.args):
            raise self.missing()
        if self.next_is("("):
            value = self.or_(ev)
            if self.next_is(")"):
                return value
            if self.i >= len(self.args):
                raise Fail(f"syntax error: expecting ')' after {_quote(self.args[self.i - 1])}", INVALID)
            raise Fail(f"syntax error: expecting ')' instead of {_quote(self.args[self.i])}", INVALID)
        if self.next_is(")"):
            raise Fail("syntax error: unexpected ')'", INVALID)
        self.i += 1
        return self.args[self.i - 1]


def _colon(left: Value, right: Value) -> Value:
    """STRING : REGEXP, anchored at the start: the first \\(...\\) group's text, else the length
    of the match (0 or "" when it does not match)."""
    try:
        source, _ = translate(_text(right), False)
        rx = regexes.compile(source.encode("utf-8", "surrogateescape"))
    except RegexError as e:
        raise Fail(e.message, INVALID) from None
    except regexes.error as e:
        raise Fail(str(e), INVALID) from None
    m = rx.match(_text(left).encode("utf-8", "surrogateescape"))
    if rx.groups:
        return (m.group(1) or b"").decode("utf-8", "surrogateescape") if m else ""
    return len(m.group(0)) if m else 0


@tool("expr", usage_status=INVALID)
def expr(sh: ToolContext, argv: list[str]) -> int:
    args = argv[1:]
    if len(args) == 1 and len(args[0]) > 2 and args[0].startswith("--"):
        if "--help".startswith(args[0]):
            sh.out(_HELP.encode())
            return 0
        if "--version".startswith(args[0]):
            sh.out(b"expr (GNU coreutils) 9.1\n")
            return 0
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        raise Usage("missing operand")
    p = _Parser(args)
    value = p.or_(True)
    if p.i < len(args):
        raise Fail(f"syntax error: unexpected argument {_quote(args[p.i])}", INVALID)
    sh.out(_text(value).encode("utf-8", "surrogateescape") + b"\n")
    return 1 if _null(value) else 0
