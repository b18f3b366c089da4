"""truncate against GNU coreutils 9.1: absolute and relative sizes with every prefix and
suffix, -c, -r, -o, and the refusals (bad numbers, division by zero, missing options)."""

from __future__ import annotations

import pytest
from differential import Case, Dir, assert_same, require_tools

F = {"f": "hello world\n", "big": "x" * 5000, "d/": Dir()}
SIZE = "; echo $?; stat -c '%n %s' f g 2>/dev/null; od -c f | tail -n 2"
SCRIPTS = [
    "truncate; echo $?", "truncate f; echo $?", "truncate -s 5; echo $?", "truncate -s x f; echo $?",
    "truncate -s 5Q f; echo $?", "truncate -s /0 f; echo $?", "truncate -s %0 f; echo $?",
    "truncate -o f; echo $?", "truncate -o -r f g; echo $?", "truncate -r f -s 3 g; echo $?", "truncate -r nope g; echo $?",
    "truncate -s 5 d; echo $?", "truncate -c -s 5 nope; echo $?; ls nope",
    "truncate -s 5 nope/x; echo $?", "truncate -s '<x' f; echo $?", "truncate -s '+-3' f; echo $?",
    "truncate -s '<+3' f; echo $?", "truncate -s 1Ki f; echo $?", "truncate -s 0x10 f; echo $?",
    "truncate -s 1b f; echo $?", "truncate -s '' f; echo $?", "truncate -s 1.5 f; echo $?",
    "truncate -s 99999999999999999999 f; echo $?", "truncate --bogus; echo $?",
    "truncate -s 3 f" + SIZE, "truncate -s 0 f" + SIZE, "truncate -s 20 f" + SIZE,
    "truncate -s 1K g" + SIZE, "truncate -s 1kB g" + SIZE, "truncate -s 1MiB g" + SIZE,
    "truncate -s 2KB f" + SIZE, "truncate -s +3 f" + SIZE, "truncate -s -3 f" + SIZE,
    "truncate -s -99999 f" + SIZE, "truncate -s ' +3' f" + SIZE, "truncate -s ' 5' f" + SIZE,
    "truncate -s '<5' f" + SIZE, "truncate -s '<50' f" + SIZE, "truncate -s '>10' f" + SIZE,
    "truncate -s '>50' f" + SIZE, "truncate -s /5 f" + SIZE, "truncate -s %5 f" + SIZE,
    "truncate -s %4 f" + SIZE, "truncate -s 010 f" + SIZE, "truncate -r big f" + SIZE,
    "truncate -r big -s +2 g" + SIZE, "truncate -r f -s -100 g" + SIZE, "truncate -s 2 -s 4 f" + SIZE,
    "truncate -o -s 1 g" + SIZE, "truncate --size=4 f" + SIZE, "truncate --no-create -s 7 g f" + SIZE,
    "truncate -s 5 f nope/x g" + SIZE, "truncate -s 8 - < /dev/null; echo $?; ls",
]


@pytest.mark.parametrize("case", [Case(s, s, F) for s in SCRIPTS], ids=Case.id)
def test_truncate(case: Case) -> None:
    require_tools("truncate", "stat", "od")
    assert_same(case)
