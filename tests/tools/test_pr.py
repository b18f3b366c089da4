"""pr against GNU coreutils 9.1 on seeded files (their fixed mtime is the header's date): pages,
-h, -l, -w, -t, -n, -m and columns, padded with tabs as GNU pads them."""

from __future__ import annotations

import pytest
from differential import Case, assert_same, require_tools

F = {"s": "".join(f"{i}\n" for i in range(1, 11)), "long": "".join(f"line {i} " + "x" * (i % 30) + "\n" for i in range(1, 150)),
     "m1": "a\nb\n", "m2": "xx\nyy\nzz\n"}
SCRIPTS = [
    "pr s | cat -A", "pr -l 12 s | cat -A", "pr -h Title s | cat -A", "pr long | md5sum", "pr -t -3 s | cat -A",
    "pr -t -n s | cat -A", "pr -m -t m1 m2 | cat -A", "pr -t -2 -w 20 s | cat -A", "pr -3 long | cat -A | head -n 80",
    "pr -t -4 long | cat -A", "pr -n -l 20 long | cat -A | head -n 40", "pr -w 40 -h 'a b' m1 | cat -A",
    "pr -t -2 long | md5sum", "pr -m m1 m2 | cat -A | sed 1,3d", "pr -2 s | cat -A", "pr s m1 | cat -A", "pr -t -m s long m2 | cat -A", "TZ=Asia/Tokyo pr -l 12 s | head -n 3", "pr nope; echo $?", "pr -l 0 s; echo $?",
]


@pytest.mark.parametrize("case", [Case(s, s, F) for s in SCRIPTS], ids=Case.id)
def test_pr(case: Case) -> None:
    require_tools("pr", "md5sum")
    assert_same(case)
