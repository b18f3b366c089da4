"""shuf against GNU coreutils 9.1 with --random-source=FILE, where GNU's output is determined:
the same bytes give the same permutation (-e, -i, files, -n, -r, -z, -o), and the refusals."""

from __future__ import annotations

import pytest
from differential import Case, assert_same, require_tools

F = {"r": bytes((i * 37 + 11) % 256 for i in range(20000)), "r2": bytes(range(256)) * 40, "short": b"\x07\x80",
     "lines": "".join(f"line {i}\n" for i in range(50)), "few": "a\nb\nc", "big": "".join(f"{i}\n" for i in range(3000))}
R = "--random-source=r"
SCRIPTS = [
    f"shuf {R} lines", f"shuf {R} -n 5 lines", f"shuf {R} few", "shuf --random-source=r2 big | md5sum",
    f"shuf {R} -e a b c d e f g", f"shuf {R} -n 2 -e a b c d", f"shuf {R} -i 1-10", f"shuf {R} -i 5-5",
    f"shuf {R} -i 1-1000 -n 7", f"shuf {R} -i 0-100000000 -n 5", f"shuf {R} -i 10-9; echo $?",
    f"shuf {R} -r -n 20 -e x y z", f"shuf {R} -r -i 1-6 -n 30", f"shuf {R} -r lines | head -n 10",
    f"shuf {R} -z -e a b c | od -c", f"printf 'a\\0b\\0c\\0' | shuf {R} -z | od -c", f"shuf {R} < lines | head -n 3",
    f"shuf {R} -o out lines; head -n 3 out", f"shuf {R} -o lines lines; head -n 3 lines",
    f"shuf {R} -n 0 lines; echo $?", "shuf --random-source=short -i 1-1000; echo $?",
    "shuf --random-source=nope -e a b; echo $?", f"shuf {R} -e; echo $?", f"shuf {R} -i x; echo $?",
    f"shuf {R} -n x lines; echo $?", f"shuf {R} -e -i 1-3 a; echo $?", f"shuf {R} lines few; echo $?",
    f"shuf {R} -i 1-3 lines; echo $?", f"shuf {R} nope; echo $?", f"shuf {R} -r -n 3 < /dev/null; echo $?",
    f"shuf {R} -n 3 -n 2 lines", "shuf -e a b c | sort", "shuf -i 1-5 | sort -n",
]


@pytest.mark.parametrize("case", [Case(s, s, F) for s in SCRIPTS], ids=Case.id)
def test_shuf(case: Case) -> None:
    require_tools("shuf", "od", "md5sum")
    assert_same(case)
