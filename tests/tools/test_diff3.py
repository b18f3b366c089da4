"""diff3 against GNU diffutils: the default listing, ed scripts (-e -E -A -x -X -3 -i), merges
(-m and its narrowings, -L labels), files without a final newline, and usage errors."""

from __future__ import annotations

import pytest
from differential import Case, assert_same

OLD = "a\nb\nc\nd\ne\nf\n"
F = {"old": OLD, "mine": "a\nB\nc\nd\ne\nf\nmine\n", "yours": "a\nb\nc\nD\ne\nf\n", "conf": "a\nX\nc\nd\ne\nf\n",
     "same": "a\nB\nc\nd\ne\nf\n", "nonl": "a\nb", "gone": "a\nf\n", "dots": "a\n.b\nc\nd\ne\nf\n",
     "long_old": "".join(f"{i}\n" for i in range(30)),
     "long_mine": "".join(f"{i}\n" if i not in (3, 4, 20) else f"m{i}\n" for i in range(30)) + "end\n",
     "long_yours": "".join(f"{i}\n" if i not in (4, 5, 25) else f"y{i}\n" for i in range(29)),
     "empty": ""}
MODES = ["", "-m", "-A", "-e", "-E", "-x", "-X", "-3", "-m -E", "-m -x", "-m -3", "-e -i"]
TRIPLES = [("mine", "old", "yours"), ("mine", "old", "conf"), ("mine", "old", "same"), ("nonl", "old", "old"),
           ("gone", "old", "yours"), ("mine", "old", "gone"), ("dots", "old", "conf"),
           ("long_mine", "long_old", "long_yours"), ("empty", "old", "yours"), ("yours", "empty", "conf")]
CASES = [Case(f"{'_'.join(t)}{m.replace(' ', '').replace('-', '_')}", f"diff3 {m} {' '.join(t)}; echo status=$?", F)
         for t in TRIPLES for m in MODES]
CASES += [
    Case("labels", "diff3 -L M -L O -L Y -m mine old conf; echo status=$?", F),
    Case("initial_tab", "diff3 -T mine old yours", F),
    Case("identical", "diff3 old old old; echo status=$?", F),
    Case("two_operands", "diff3 a b; echo status=$?", F),
    Case("no_operands", "diff3; echo status=$?", F),
    Case("extra_operand", "diff3 a b c d; echo status=$?", F),
    Case("missing_file", "diff3 mine nope yours; echo status=$?", F),
    Case("incompatible", "diff3 -A -e mine old yours; echo status=$?", F),
    Case("stdin", "cat mine | diff3 - old yours", F),
]


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_diff3_matches_gnu(case: Case) -> None:
    assert_same(case)
