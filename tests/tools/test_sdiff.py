"""sdiff (no -o) against GNU diffutils: the side-by-side columns for several widths, tabs kept
or expanded, long lines cut, the gutter marks (| < > ( and / \\ for a missing newline), -l -s,
the ignore options, statuses and usage errors."""

from __future__ import annotations

import pytest
from differential import Case, assert_same

F = {"old": "a\nb\nc\nd\ne\nf\n", "mine": "a\nB\nc\nd\ne\nf\nmine\n", "conf": "a\nX\nc\nd\ne\nf\n",
     "gone": "a\nf\n", "nonl": "a\nb", "tabs": "x\tone\n\tlead\nmid\tdle\tmore\n", "tabs2": "x\tone\n\tLEAD\nmid\n",
     "long": "short\n" + "L" * 200 + "\n" + "tab\t" * 30 + "\n", "long2": "short\n" + "M" * 70 + "\nend\n",
     "case": "A\nb  c\nd \n", "case2": "a\nb c\nd\n", "blankline": "a\n\nb\n", "blankline2": "a\nz\n\n", "empty": ""}
PAIRS = [("old", "mine"), ("old", "conf"), ("old", "gone"), ("gone", "old"), ("nonl", "old"), ("old", "nonl"),
         ("tabs", "tabs2"), ("long", "long2"), ("blankline", "blankline2"), ("empty", "old"), ("old", "empty"),
         ("old", "old")]
OPTIONS = ["", "-w 40", "-l", "-s", "-t", "-w 20 -t", "-l -s -w 70", "-w 7"]
CASES = [Case(f"{a}_{b}{o.replace(' ', '').replace('-', '_')}", f"sdiff {o} {a} {b}; echo status=$?", F)
         for a, b in PAIRS for o in OPTIONS]
CASES += [
    Case("ignore_case", "sdiff -i case case2; echo status=$?", F),
    Case("ignore_space_change", "sdiff -b -w 40 case case2; echo status=$?", F),
    Case("ignore_all_space", "sdiff -W -i -w 40 case case2; echo status=$?", F),
    Case("ignore_trailing", "sdiff -Z -w 40 case case2; echo status=$?", F),
    Case("tabsize", "sdiff --tabsize=4 -w 50 tabs tabs2; echo status=$?", F),
    Case("stdin", "cat mine | sdiff -w 40 old -; echo status=$?", F),
    Case("one_operand", "sdiff a; echo status=$?", F),
    Case("three_operands", "sdiff a b c; echo status=$?", F),
    Case("missing_file", "sdiff old nope; echo status=$?", F),
    Case("bad_option", "sdiff -z a b; echo status=$?", F),
]


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_sdiff_matches_gnu(case: Case) -> None:
    assert_same(case)
