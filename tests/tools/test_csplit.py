"""csplit against GNU coreutils 9.1: line numbers, /RE/ and %RE% with offsets, {N} and {*},
-f -b -n -z -s -k, and failures (files removed unless -k)."""

from __future__ import annotations

import pytest
from differential import Case, assert_same, require_tools

F = {"f": "".join(f"{i}\n" for i in range(1, 21)), "doc": "# a\none\ntwo\n# b\nthree\n# c\nfour\nfive"}
SHOW = "; echo \"[$?]\"; for x in $(ls | grep -v -x -e f -e doc); do echo \"$x: $(tr '\\n' , < $x)\"; done"
SCRIPTS = [s + SHOW for s in [
    "csplit f 5 12", "csplit f /3/ '{2}'", "csplit f /1/ '{*}'", "csplit f %5% /8/+1", "csplit f /7/-2 15",
    "csplit f 30", "csplit f 5 3", "csplit f /zz/", "csplit -k f /5/ /zz/", "csplit -s -f p -n 3 f 10",
    "csplit -z f 1 5", "csplit f 1 5", "csplit f '{2}'", "csplit f /5/ '{20}'", "csplit -k f 5 '{20}'",
    "csplit f '/1[0-9]/' '{*}'", "csplit f 0", "csplit f x", "csplit f", "csplit nope 3", "csplit -b '%02x.txt' f 5 10",
    "csplit doc '/^#/' '{*}'", "csplit -z doc '/^#/' '{*}'", "csplit -f part- doc %two% /five/", "csplit f 5 '{2}' 18",
    "csplit - 3 < f", "csplit f /5/ /5/", "csplit f 20", "csplit f 21", "csplit f '/1\\(/'",
    "csplit -k f /9/+15", "csplit f %9%-3 /12/",
]]


@pytest.mark.parametrize("case", [Case(s.split(";")[0], s, F) for s in SCRIPTS], ids=Case.id)
def test_csplit(case: Case) -> None:
    require_tools("csplit", "tr", "grep")
    assert_same(case)
