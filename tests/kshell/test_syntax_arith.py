"""Arithmetic: precedence and associativity checked by evaluating the tree and comparing with
bash, number bases, operators, and bash's error messages and error tokens."""

from __future__ import annotations

import subprocess

import pytest

from kshell.syntax import ArithSyntaxError, parse_arith
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

MASK = (1 << 64) - 1


def wrap(v: int) -> int:
    v &= MASK
    return v - (1 << 64) if v >> 63 else v


def evaluate(node: ArithNode, env: dict[str, int]) -> int:
    """A small test-only evaluator (C semantics, 64-bit) to check the shape of trees."""
    def ev(n: ArithNode) -> int:
        return evaluate(n, env)

    if isinstance(node, ArithNum):
        return node.value
    if isinstance(node, ArithVar):
        return env.get(node.name, 0)
    if isinstance(node, ArithUnary):
        v = ev(node.operand)
        return {"-": -v, "+": v, "!": int(not v), "~": ~v}[node.op]
    if isinstance(node, ArithIncDec):
        old = env.get(node.target.name, 0)
        env[node.target.name] = new = old + (1 if node.op == "++" else -1)
        return new if node.prefix else old
    if isinstance(node, ArithTernary):
        return ev(node.if_true) if ev(node.cond) else ev(node.if_false)
    if isinstance(node, ArithAssign):
        value = ev(node.value)
        if node.op != "=":
            value = binary(node.op[:-1], env.get(node.target.name, 0), value)
        env[node.target.name] = value
        return value
    assert isinstance(node, ArithBinary)
    if node.op == "&&":
        return int(bool(ev(node.left)) and bool(ev(node.right)))
    if node.op == "||":
        return int(bool(ev(node.left)) or bool(ev(node.right)))
    left = ev(node.left)
    return binary(node.op, left, ev(node.right))


def binary(op: str, a: int, b: int) -> int:
    if op in ("/", "%"):
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return wrap(q if op == "/" else a - q * b)
    return wrap({
        ",": lambda: b, "|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b,
        "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b),
        "<=": lambda: int(a <= b), ">": lambda: int(a > b), ">=": lambda: int(a >= b),
        "<<": lambda: a << (b & 63), ">>": lambda: a >> (b & 63), "+": lambda: a + b,
        "-": lambda: a - b, "*": lambda: a * b, "**": lambda: a ** b,
    }[op]())


EXPRESSIONS = [
    "1 + 2 * 3", "(1 + 2) * 3", "2 ** 3 ** 2", "-2 ** 2", "10 - 4 - 3", "100 / 10 / 5",
    "7 % 3 * 2", "-7 / 2", "-7 % 2", "1 << 2 + 1", "1 < 2 == 1", "5 & 3 | 8 ^ 1",
    "1 || 0 && 0", "0 ? 1 : 2 ? 3 : 4", "x = y = 4, x + y", "x += 2 * 3", "x++ + ++x",
    "x-- - --x", "!0 + ~0", "16#ff + 2#101 + 0x1f + 010 + 36#z + 64#@ + 64#_",
    "x *= 2, x <<= 1, x", "1 ? x : y", "x > y ? x - y : y - x", "- - 3", "+-+3",
    "x+++y", "2 ** 62 * 4", "(x = 2) ** (y = 3)", "1, 2, 3", "x && y || z",
]


def test_trees_evaluate_as_bash_evaluates(bash: str) -> None:
    script = "".join(f"(x=5 y=3; echo $(({e})))\n" for e in EXPRESSIONS)
    result = subprocess.run(["bash", "-c", script], executable=bash, check=False,
                            capture_output=True, text=True, timeout=10)
    expected = [int(v) for v in result.stdout.split()]
    got = [evaluate(parse_arith(e), {"x": 5, "y": 3}) for e in EXPRESSIONS]
    assert list(zip(EXPRESSIONS, got, strict=True)) == list(
        zip(EXPRESSIONS, expected, strict=True))


def test_empty_expression_is_zero() -> None:
    assert parse_arith("  ") == ArithNum(0)


def test_assignment_operators_keep_their_operator() -> None:
    ops = ["=", "*=", "/=", "%=", "+=", "-=", "<<=", ">>=", "&=", "^=", "|="]
    assert [parse_arith(f"x {op} 1").op for op in ops] == ops


def test_increment_and_decrement_forms() -> None:
    x = ArithVar("x")
    assert parse_arith("x++") == ArithIncDec("++", False, x)
    assert parse_arith("--x") == ArithIncDec("--", True, x)
    assert parse_arith("++5") == ArithUnary("+", ArithUnary("+", ArithNum(5)))


def test_subscripted_variables_keep_text_and_index() -> None:
    assert parse_arith("a[i + 1]") == ArithVar(
        "a", "i + 1", ArithBinary("+", ArithVar("i"), ArithNum(1)))


def test_division_records_bash_error_token() -> None:
    node = parse_arith("1 / (2-2) + 3")
    assert node.left.error_token == "(2-2) + 3"


ERRORS = [
    "1 +* 2 ", "5++", "1+", "a b", "1 ? 2 ", "08", "1=2", "3#4", "65#1", "16#", "1 +  ",
    "1 2 ", "'1' + 2 ", "$ ", "a[1", "++x++", "x++=7", "(x)=1", "1 @ 2", "(1", "1 ? : 2",
    "1 ? 2 :", "((1)", "1 )",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_have_bash_wording_and_error_token(bash: str, expr: str) -> None:
    result = subprocess.run(["bash", "-c", "echo $(($E))"], executable=bash, env={"E": expr},
                            check=False, capture_output=True, text=True, timeout=10)
    assert result.returncode == 1
    expected = result.stderr.strip().removeprefix("bash: line 1: ")
    with pytest.raises(ArithSyntaxError) as info:
        parse_arith(expr)
    assert info.value.text == expected


def test_deep_nesting_is_an_arithmetic_error_not_a_crash() -> None:
    with pytest.raises(ArithSyntaxError) as info:
        parse_arith("(" * 5000 + "1" + ")" * 5000)
    assert info.value.message == "expression recursion level exceeded"
