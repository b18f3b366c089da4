"""strings against GNU binutils 2.40: minimum lengths, offsets in three radixes, file names,
-w, -s, several files, and the refusals."""

from __future__ import annotations

import pytest
from differential import Case, Dir, assert_same, require_tools

F = {"bin": b"ab\0hello world\tx\x01more text here\nzz\xffabcd" + bytes(range(256)) * 3 + b"tail end",
     "txt": "plain text\nsecond line\n", "d/": Dir()}
SCRIPTS = [
    "strings bin", "strings -n 2 bin", "strings -n 3 -t d bin", "strings -t x bin", "strings -t o bin",
    "strings -o bin", "strings -f bin txt", "strings bin txt", "strings -w bin | od -c", "strings -s '|' bin",
    "strings --bytes=6 bin", "strings -a -n 8 bin", "strings < bin", "strings -f < txt", "printf 'abcdefgh' | strings",
    "strings -n 0 bin; echo $?", "strings -n x bin; echo $?", "strings nope; echo $?", "strings d; echo $?",
    "strings -t q bin; echo $?", "strings -Q bin; echo $?",
]


@pytest.mark.parametrize("case", [Case(s, s, F) for s in SCRIPTS], ids=Case.id)
def test_strings(case: Case) -> None:
    require_tools("strings", "od")
    assert_same(case)
