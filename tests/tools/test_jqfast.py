"""jqfast, the Python runner for a common jq subset that goes before libjq: wherever it answers,
its answer must be libjq's (checked here against the real libjq binding), and it must give way
(Fallback, or None at compile time) wherever jq's meaning is not plainly Python's."""

from __future__ import annotations

import json
from typing import Any

import jq as libjq
import pytest

from kshell.tools.data import jqfast
from kshell.tools.data.jq import Dumper

INPUTS = [
    '{"items":[{"id":1,"name":"x","active":true,"score":5,"owner":{"region":"n"},"tags":["a"]},'
    '{"id":2,"name":"y\\u00e9\\n","active":false,"score":1.5,"owner":null,"tags":[]},'
    '{"id":3,"name":null,"active":null,"score":991,"owner":{"region":7}}],"count":3}',
    '1 2 "a" [1,2] {"a":{"b":null}} null true false',
    '{"a":1,"b":2,"a":3}',
    '[[1,2],[3],{"a":1},"s",null,true,4,4.5,-3,"b"]',
    '{"a":[999999999999999, 999999999999999, 999999999999999, 999999999999999, 999999999999999,'
    ' 999999999999999, 999999999999999, 999999999999999, 999999999999999, 999999999999997, 1, 2]}',
    '{"a":[1,"b"],"b":"x\\u007f\\u0001"}\n{"a":[2,3],"b":"y"}',
]
PROGRAMS = [
    ".", ".items[] | select(.active) | .score", "[.items[] | select(.active) | .score] | add",
    '.items[] | select(.score > 990) | "\\(.id) \\(.name) \\(.owner.region)"',
    '.items[] | "\\(.id):\\(.name) \\(.owner.region) \\(.active)"', ".count", ".[]", ".[0]", ".[-1]",
    ".[9]", ".a", ".a.b", "add", ".a | add", "length", ".[] | length", ".[] | not",
    "[.[] | . == 1]", "[.[] | . < 2]", '[.[] | . >= "a"]', ".[] | select(. != null)", ".a, .b",
    "(.a, .b) | . + 1", ".[] + 1", "[.[]] | add", "(1,2) + (10,20)", ".a - 1", '"a\\tb"', "empty",
    "[.[] | select(.)]", '."items"[0]."id"', ".items | length", ".a + .b", "[.a[] + 1]",
    ".a and .b", ".a or .b", "[.[] | (. and true)]", "true, false, null", "[]", '"\\(1)-\\(2)"',
]


def _libjq(program: str, text: str) -> list[Any] | None:
    try:
        return libjq.compile(program).input_text(text).all()
    except ValueError:
        return None


def _dump(values: list[Any]) -> list[str]:
    dumper = Dumper(None, False, False)
    return [dumper.dump(v) for v in values]


@pytest.mark.parametrize("program", PROGRAMS)
def test_answers_are_libjqs(program: str) -> None:
    run = jqfast.compile_program(program)
    assert run is not None, "the subset should cover this program"
    for text in INPUTS:
        try:
            got = [r for v in jqfast.parse_values(text.encode(), text) for r in run(v)]
        except jqfast.Fallback:
            continue
        want = _libjq(program, text)
        assert want is not None, f"jqfast answered where libjq fails: {program!r} on {text!r}"
        assert _dump(got) == _dump(want), (program, text)


def test_bench_programs_take_the_subset() -> None:
    """The programs of bench/tools.py case 6: losing the subset here loses the speed."""
    doc = {"items": [{"id": i, "name": f"n{i}", "active": i % 2 == 0, "score": i * 7 % 1000,
                      "owner": {"region": "north"}} for i in range(300)], "count": 300}
    text = json.dumps(doc, indent=1)
    for program in ("[.items[] | select(.active) | .score] | add",
                    '.items[] | select(.score > 990) | "\\(.id) \\(.name) \\(.owner.region)"', ".count"):
        run = jqfast.compile_program(program)
        assert run is not None
        got = [r for v in jqfast.parse_values(text.encode(), text) for r in run(v)]
        assert got == _libjq(program, text)


@pytest.mark.parametrize("program", ["$x", ".a?", "{a: 1}", "reduce .[] as $x (0; . + $x)", ".[] // 1",
                                     "map(.a)", ".a | tostring", "def f: .; f", "..", ".[1:]", "1.5",
                                     '"\\u00e9"', "input", "", ".a |", "if . then 1 else 2 end",
                                     "select(.a; .b)", ". * 2"])
def test_outside_the_subset(program: str) -> None:
    assert jqfast.compile_program(program) is None


@pytest.mark.parametrize("text", ["truefalse", "1true", '{"a":NaN}', "[Infinity]", "[12345678901234567]",
                                  "[1e400]", "[1E-400]", "[2e+308]", "[-1E+999]", '"\\uDC00"', '"\\ud800"', "[1, 2", "nan", "\ufeff{}", "[1]x"])
def test_inputs_jq_reads_otherwise(text: str) -> None:
    with pytest.raises(jqfast.Fallback):
        jqfast.parse_values(text.encode(), text)


@pytest.mark.parametrize(("program", "text"), [
    (".a", "[1]"), (".[]", "1"), (".[]", "null"), ("add", '[1, "a"]'), (".a + 1", '{"a": "x"}'),
    ('"\\(.)"', "1.5"), ('"\\(.)"', "[1]"), ("[.[] | . < [1]]", "[[0]]"), (".[] | length", "[true]"),
    ('"\\(.)"', "9007199254740993"), ("add", "[" + "999999999999999, " * 12 + "1, 3, 5]"),
    ("[.[] | . + 999999999999999]", "[999999999999999, 8999999999999999]"),
])
def test_gives_way_where_jq_differs(program: str, text: str) -> None:
    """Errors and type mixes go to libjq (its messages, its formatting); sums past 2^53 stay exact
    as doubles ("add" here must match libjq, not Python's exact integers)."""
    run = jqfast.compile_program(program)
    assert run is not None
    try:
        values = jqfast.parse_values(text.encode(), text)
        got = [r for v in values for r in run(v)]
    except jqfast.Fallback:
        return
    want = _libjq(program, text)
    assert want is not None and _dump(got) == _dump(want), (program, text)
