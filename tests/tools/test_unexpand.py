"""unexpand against GNU coreutils 9.1: leading blanks by default, -a, -t N and lists,
--first-only, single blanks before a stop, tabs among spaces, backspaces."""

from __future__ import annotations

import pytest
from differential import Case, assert_same, require_tools

F = {"s": "        eight\n    four\n                sixteen x       y\n a\n       seven\n" "  \t  mixed \t x\n"
          "abc     def  g\n\t\tboth\n         nine\n       \t\n x       y        z\n",
     "bs": "ab\b      c\n", "nl": "        no newline"}
SCRIPTS = [
    "unexpand s | od -c", "unexpand -a s | od -c", "unexpand -t 4 s | od -c", "unexpand -t 3 s | od -c",
    "unexpand -t 2,6,9 s | od -c", "unexpand -t '4 8' s | od -c", "unexpand --first-only -t 4 s | od -c",
    "unexpand -a bs | od -c", "unexpand nl | od -c", "unexpand -4 s | od -c", "unexpand -t 0 s; echo $?",
    "unexpand -t 4,2 s; echo $?", "unexpand -t x s; echo $?", "unexpand nope s | od -c; echo $?",
    "printf '  a  b   c    d\\n' | unexpand -a -t 2 | od -c", "printf '        \\n' | unexpand | od -c",
    "printf ' \\t x\\n' | unexpand -a | od -c", "printf 'x \\t\\n' | unexpand -a | od -c",
]


@pytest.mark.parametrize("case", [Case(s, s, F) for s in SCRIPTS], ids=Case.id)
def test_unexpand(case: Case) -> None:
    require_tools("unexpand", "od")
    assert_same(case)
