"""numfmt against GNU coreutils 9.1: --to and --from in every scale, rounding at the decimal
and at the base, --suffix, --padding, fields (kept aligned), --format, -d, --header, and errors."""

from __future__ import annotations

import pytest
from differential import Case, assert_same, require_tools

F = {"du": "4096 ./a\n1048576 ./b\n123456789 ./c\n", "cols": "name 2000 3000000 x\nb 5 70000 y\n"}
SCRIPTS = [
    "numfmt --to=si 1000 1500 1501 999 999999 123456 0 -- -1500", "numfmt --to=iec 1024 1536 2047 1048576 5 1023",
    "numfmt --to=iec-i 1024 3000000 1", "numfmt --from=si 1K 1.5M 2G", "numfmt --from=iec 1K 1.5M",
    "numfmt --from=auto 1Ki 1K 3Mi", "numfmt --from=iec-i 2Ki", "numfmt --to=si --suffix=B 2000 5",
    "numfmt --padding=8 --to=si 2000", "numfmt --padding=-8 --to=si 2000 | od -c", "numfmt --to=iec < du",
    "numfmt --field=2,3 --to=si < cols", "numfmt --field=2- --to=iec < cols", "numfmt --field 3 --to=si < cols",
    "numfmt --format='%08.2f' 3.14159", "numfmt --format='x%fy' 12", "numfmt --format='%-10f|' --to=si 12345",
    "numfmt --format='%10.1f' --to=iec 99999", "numfmt abc; echo $?", "numfmt --from=si 1Q; echo $?",
    "numfmt 1K; echo $?", "printf 'h1\\n1000\\n' | numfmt --header --to=si", "echo 'a,2000,3' | numfmt -d, --field 2 --to=si",
    "numfmt --to=si --round=down 1999", "numfmt --to=si --round=nearest 1449 1450", "numfmt --to=si --round=towards-zero -- -1999",
    "numfmt --from=si 1.5", "numfmt --to=si 1000000000000000000000000000; echo $?", "numfmt --to=si 9999 99999 999999999",
    "numfmt --to=iec 10239 10240 10241", "numfmt --to=si 1000000000000000000000", "numfmt --from-unit=512 --to=iec 4",
    "numfmt --to-unit=1000 --to=si 5000000", "numfmt --to=foo 1; echo $?", "numfmt --from=iec-i 2K; echo $?",
    "numfmt 12 2.50 -3; echo $?", "echo 2000,x,3 | numfmt -d, --field=- --to=si; echo $?", "numfmt --padding=x 1; echo $?",
]


@pytest.mark.parametrize("case", [Case(s, s, F) for s in SCRIPTS], ids=Case.id)
def test_numfmt(case: Case) -> None:
    require_tools("numfmt", "od")
    assert_same(case)
