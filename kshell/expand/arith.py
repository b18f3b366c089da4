"""Arithmetic evaluation with C semantics on 64-bit signed integers (wrapping), as bash does.

Syntax trees (`kshell.syntax.ast.Arith*`) are compiled once into Python closures, cached by
node, so a loop's `$((i + 1))` costs a few calls per iteration. A variable's value is itself
evaluated as an expression (`x=1+2; $((x*2))` is 6), bounded in depth like bash's.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from kshell.expand.params import _unbound
from kshell.syntax import parse_arith
from kshell.syntax.ast import (
    ArithAssign,
    ArithBinary,
    ArithExpr,
    ArithIncDec,
    ArithNode,
    ArithNum,
    ArithTernary,
    ArithUnary,
    ArithVar,
)
from kshell.syntax.errors import ArithSyntaxError

if TYPE_CHECKING:
    from kshell.expand.shell import Shell

Fn = Callable[["Shell"], int]
_MASK = (1 << 64) - 1
_SIGN = 1 << 63
_MAX_RECURSION = 1024


def wrap(v: int) -> int:
    if -_SIGN <= v < _SIGN:
        return v
    v &= _MASK
    return v - (1 << 64) if v & _SIGN else v


class ArithError(Exception):
    """An evaluation failure inside an expression; the caller adds the expression text."""

    def __init__(self, message: str, token: str) -> None:
        super().__init__(message)
        self.message = message
        self.token = token


def c_div(a: int, b: int, token: str) -> int:
    if b == 0:
        raise ArithError("division by 0", token)
    q = abs(a) // abs(b)
    return wrap(q if (a < 0) == (b < 0) else -q)


def c_mod(a: int, b: int, token: str) -> int:
    if b == 0:
        raise ArithError("division by 0", token)
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def c_pow(a: int, b: int, token: str) -> int:
    if b < 0:
        raise ArithError("exponent less than 0", token)
    return wrap(pow(a, b, 1 << 64))


_BINARY: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: wrap(a + b),
    "-": lambda a, b: wrap(a - b),
    "*": lambda a, b: wrap(a * b),
    "<<": lambda a, b: wrap(a << (b & 63)),
    ">>": lambda a, b: a >> (b & 63),
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b),
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
}
_CHECKED = {"/": c_div, "%": c_mod, "**": c_pow}


@lru_cache(maxsize=4096)
def parse_cached(text: str) -> ArithNode | None:
    """The tree of an expression text (None for blank text, which is 0). Raises
    ArithSyntaxError."""
    if not text.strip():
        return None
    return parse_arith(text)


_compiled: dict[int, tuple[object, Fn]] = {}


def compiled(node: ArithNode) -> Fn:
    hit = _compiled.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    fn = _compile(node)
    if len(_compiled) > 50000:
        _compiled.clear()
    _compiled[id(node)] = (node, fn)
    return fn


def _zero(sh: Shell) -> int:
    return 0


def _compile(node: ArithNode) -> Fn:
    t = type(node)
    if t is ArithNum:
        value = node.value  # type: ignore[union-attr]
        return lambda sh: value
    if t is ArithVar:
        return _compile_var(node)  # type: ignore[arg-type]
    if t is ArithBinary:
        op = node.op  # type: ignore[union-attr]
        left = _compile(node.left)  # type: ignore[union-attr]
        right = _compile(node.right)  # type: ignore[union-attr]
        if op == "&&":
            return lambda sh: int(bool(left(sh)) and bool(right(sh)))
        if op == "||":
            return lambda sh: int(bool(left(sh)) or bool(right(sh)))
        if op == ",":
            def comma(sh: Shell) -> int:
                left(sh)
                return right(sh)
            return comma
        if op in _CHECKED:
            checked = _CHECKED[op]
            token = node.error_token  # type: ignore[union-attr]
            return lambda sh: checked(left(sh), right(sh), token)
        fn = _BINARY[op]
        if op == "+":
            def add(sh: Shell) -> int:
                v = left(sh) + right(sh)
                return v if -_SIGN <= v < _SIGN else wrap(v)
            return add
        if op == "<":
            return lambda sh: 1 if left(sh) < right(sh) else 0
        return lambda sh: fn(left(sh), right(sh))
    if t is ArithUnary:
        op = node.op  # type: ignore[union-attr]
        inner = _compile(node.operand)  # type: ignore[union-attr]
        if op == "-":
            return lambda sh: wrap(-inner(sh))
        if op == "+":
            return inner
        if op == "!":
            return lambda sh: int(not inner(sh))
        return lambda sh: ~inner(sh)
    if t is ArithTernary:
        cond = _compile(node.cond)  # type: ignore[union-attr]
        yes = _compile(node.if_true)  # type: ignore[union-attr]
        no = _compile(node.if_false)  # type: ignore[union-attr]
        return lambda sh: yes(sh) if cond(sh) else no(sh)
    if t is ArithIncDec:
        target = node.target  # type: ignore[union-attr]
        get, put = _accessors(target)
        delta = 1 if node.op == "++" else -1  # type: ignore[union-attr]
        if node.prefix:  # type: ignore[union-attr]
            def pre(sh: Shell) -> int:
                v = wrap(get(sh) + delta)
                put(sh, v)
                return v
            return pre

        def post(sh: Shell) -> int:
            v = get(sh)
            put(sh, wrap(v + delta))
            return v
        return post
    if t is ArithAssign:
        target = node.target  # type: ignore[union-attr]
        get, put = _accessors(target)
        value = _compile(node.value)  # type: ignore[union-attr]
        op = node.op  # type: ignore[union-attr]
        if op == "=":
            def assign(sh: Shell) -> int:
                v = value(sh)
                put(sh, v)
                return v
            return assign
        base = op[:-1]
        token = node.error_token  # type: ignore[union-attr]
        if base in _CHECKED:
            checked = _CHECKED[base]
            combine = lambda a, b: checked(a, b, token)  # noqa: E731
        else:
            combine = _BINARY[base]

        def update(sh: Shell) -> int:
            current = get(sh)
            v = combine(current, value(sh))
            put(sh, v)
            return v
        return update
    raise TypeError(f"not an arithmetic node: {node!r}")


def _compile_var(node: ArithVar) -> Fn:
    name = node.name
    if node.subscript is None:
        return lambda sh: sh.arith_var(name)
    get, _ = _accessors(node)
    return get


def _accessors(node: ArithVar) -> tuple[Fn, Callable[[Shell, int], None]]:
    name = node.name
    if node.subscript is None:
        def put(sh: Shell, v: int) -> None:
            sh.assign_scalar(name, str(v))
        return (lambda sh: sh.arith_var(name)), put
    sub = node.subscript
    index = _compile(node.index) if node.index is not None else None

    def key(sh: Shell) -> str | int:
        return sh.subscript_key(name, sub, index)

    def get(sh: Shell) -> int:
        text = sh.get_element(name, key(sh))
        if text is None and "u" in sh.opts:
            var = sh.vars.table.get(name)
            if var is None or var.value is None:  # bash: only an unset array is an error,

                _unbound(sh, name)
        return value_of(sh, text or "")

    def put_el(sh: Shell, v: int) -> None:
        sh.set_element(name, key(sh), str(v))
    return get, put_el


def value_of(sh: Shell, text: str) -> int:
    """The integer a variable's text stands for: a number, or an expression evaluated."""
    if text.isdigit() and (text[0] != "0" or len(text) == 1) and text.isascii():
        return wrap(int(text))
    text_s = text.strip()
    if not text_s:
        return 0
    if text_s.isdigit() and (text_s[0] != "0" or len(text_s) == 1) and text_s.isascii():
        return wrap(int(text_s))
    sh.arith_depth += 1
    try:
        if sh.arith_depth > _MAX_RECURSION:
            raise ArithError("expression recursion level exceeded", text_s)
        return evaluate_text(sh, text)
    finally:
        sh.arith_depth -= 1


def evaluate_text(sh: Shell, text: str) -> int:
    """Evaluate expression text (already expanded). Raises ArithSyntaxError with bash's text."""
    try:
        node = parse_cached(text)
        if node is None:
            return 0
        return compiled(node)(sh)
    except ArithError as e:
        raise ArithSyntaxError(text, e.message, e.token) from None


def evaluate(sh: Shell, expr: ArithExpr) -> int:
    """Evaluate `$((...))`, `((...))` or a `for ((...))` part: expand first when needed."""
    node = expr.expr
    if node is not None:
        try:
            return compiled(node)(sh)
        except ArithError as e:
            raise ArithSyntaxError(expr.text, e.message, e.token) from None
    text = sh.expand_arith_text(expr.word)
    return evaluate_text(sh, text)
