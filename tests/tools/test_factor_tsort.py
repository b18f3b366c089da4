"""factor and tsort against GNU coreutils 9.1: small and big numbers, operands and standard input,
invalid numbers; orders, self-relations, loops (reported and broken as GNU does), odd input."""

from __future__ import annotations

import pytest
from differential import Case, assert_same, require_tools

F = {"deps": "main lib\nlib util\nmain util\napp main\nx x\nzeta alpha\n",
     "loops": "a b\nb c\nc a\nc d\nd c\n", "loop2": "a b b c c b b d d b\n", "odd": "a b c\n",
     "chain": "".join(f"n{i} n{i + 1}\n" for i in range(300)) + "".join(f"m{i % 7} n{i}\n" for i in range(0, 300, 13)),
     "tabs": "b\ta\n\n  c  b\n"}
SCRIPTS = [
    "factor 0 1 2 3 4 12 97 100 1001 65536 999999", "factor +12 ' 12'", "factor 12a -- -5; echo $?",
    "factor -5; echo $?", "factor ''; echo $?", "factor 18446744073709551617 1208925819614629174706189",
    "factor 18446744073709551615 18446744073709551557 4611686018427387903", "factor 1000000016000000063",
    "factor 10000000000000000000000000000000000000000", "echo '6 x 8' | factor; echo $?",
    "seq 2 200 | factor | md5sum", "printf '9\\n\\n  10\\t11\\n' | factor", "factor 170141183460469231731687303715884105727",
    "factor 2305843009213693951 1000000000000000000000007", "factor 29 --bogus; echo $?",
    "tsort deps", "tsort < deps", "tsort - < deps", "tsort loops; echo $?", "tsort loop2; echo $?",
    "tsort odd; echo $?", "tsort nope; echo $?", "tsort a b; echo $?", "tsort chain | md5sum", "tsort tabs",
    "printf 'a b b a' | tsort; echo $?", "printf '' | tsort; echo $?", "printf 'x x' | tsort",
    "printf 'a b\\nb c\\nc d\\nd b\\nd e\\ne a\\n' | tsort; echo $?",
    "printf '1 2\\n2 3\\n3 1\\n4 5\\n5 4\\n6 6\\n' | tsort; echo $?",
]


@pytest.mark.parametrize("case", [Case(s, s, F) for s in SCRIPTS], ids=Case.id)
def test_factor_tsort(case: Case) -> None:
    require_tools("factor", "tsort", "seq", "md5sum")
    assert_same(case)
