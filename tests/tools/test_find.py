"""find against GNU findutils. GNU find walks in readdir order (hash order on ext4), so each
directory of these trees holds at most one entry that the expression selects, or one entry."""

from __future__ import annotations

import pytest
from differential import Case, Dir, File, Link, assert_same

OLD = 1600000000
CHAIN = {"a/": Dir(), "a/b/": Dir(), "a/b/c.txt": File("hello\n", 0o640), "a/b/.h": File("", 0o600, OLD)}
ONE = {"d/": Dir(), "d/x.py": File("x" * 3000, 0o755)}
NEST = {"top/": Dir(), "top/mid/": Dir(), "top/mid/leaf/": Dir(), "top/mid/leaf/f.TXT": "z\n"}

CASES = [
    Case(f"find_{i}", s, f)
    for i, (s, f) in enumerate(
        [
            ("find top", NEST),
            ("find top -type d", NEST),
            ("find top -type f", NEST),
            ("find top -name '*.TXT'", NEST),
            ("find top -iname '*.txt'", NEST),
            ("find top -path '*mid/leaf*'", NEST),
            ("find top -ipath '*MID*' -type f", NEST),
            ("find top -regex '.*f\\.TXT'", NEST),
            ("find top -maxdepth 1", NEST),
            ("find top -mindepth 2", NEST),
            ("find top -maxdepth 2 -mindepth 2", NEST),
            ("find top -print0; echo", NEST),
            ("find top -type d -name leaf -prune -o -print", NEST),
            ("find top ! -type d", NEST),
            ("find top -not -name top", NEST),
            ("find top \\( -name mid -o -name leaf \\)", NEST),
            ("find top -name mid -o -name leaf -print", NEST),
            ("find top -type f -printf '%p %f %s %m %y\\n'", NEST),
            ("find top -printf '%y %d %h\\n'", NEST),
            ("find top -exec echo X {} \\;", NEST),
            ("find top -exec echo {} +", NEST),
            ("find top -type f -execdir echo {} \\;", NEST),
            ("find top -type f -delete; find top", NEST),
            ("find top -depth", NEST),
            ("find top -empty", {"top/": Dir(), "top/e": ""}),
            ("find a -name '.h' -newer a/b/c.txt; find a -type f -newer a/b/.h", CHAIN),
            ("find a -name '*.txt' -size -1k; find a -size +0 -type f", CHAIN),
            ("find d -type f -size +2k; find d -size 6 -type f", ONE),
            ("find d -size 3000c; find d -size -3001c -name '*.py'", ONE),
            ("find d -perm 755; find d -perm -u+x -type f", ONE),
            ("find d -perm /o+w; echo $?", ONE),
            ("find a -type f -mtime +100", CHAIN),
            ("find a -type f -mmin -5", CHAIN),
            ("find d -user root", ONE),
            ("find nope; echo $?", {}),
            ("find top -bogus; echo $?", NEST),
            ("find top -type q; echo $?", NEST),
            ("find top -maxdepth x; echo $?", NEST),
            ("find top \\( -name x; echo $?", NEST),
            ("find top -name; echo $?", NEST),
            ("find top -exec echo; echo $?", NEST),
            ("find top -newer nope; echo $?", NEST),
            ("find . -maxdepth 1 -name 'd*'", ONE),
            ("find -name x.py", ONE),
            ("find d -type l", {"d/": Dir(), "d/l": Link("x")}),
            ("find d/ -name 'x*'", ONE),
            ("find d -name x.py -exec false {} \\; -print; echo $?", ONE),
            ("find d -print -quit; echo $?", ONE),
        ]
    )
] + [
    Case("find_permission_denied", "find p; echo $?", {"p/": Dir(0o000)}, user=1000),
    Case("find_file_as_start", "find d/x.py", ONE),
    Case("find_symlink_not_followed", "find l -type d; find l", {"t/": Dir(), "t/a": "1", "l": Link("t")}),
    # -newerXY (a date string for t, as date -d reads it), -anewer/-cnewer, the a/c times,
    # -executable/-readable/-writable, -links, -uid/-gid/-inum, -xdev
    Case("find_newer_times", "find . -newermt '2023-01-01' -name '*.txt'; find . -newermt '2030-01-01'; "
         "touch -d '2020-06-01' old; find . -maxdepth 1 ! -newermt '2021-01-01 00:00 +0200'; find . -maxdepth 1 "
         "-newer old | sort; find . -maxdepth 1 -newermm old | sort; find . -newerct '1 hour ago' -name c.txt; "
         "find . -newermt garbage; echo $?", CHAIN),
    Case("find_access_change_times", "find . -atime -1 -name c.txt; find . -amin +1 -name c.txt; "
         "find . -ctime -1 -name c.txt | wc -l; find . -cmin -60 -name c.txt | wc -l; touch x; find . -anewer x", CHAIN),
    Case("find_permissions_and_ids", "find . -type f -executable; chmod +x a/b/c.txt; find . -type f -executable; "
         "find . -readable -name c.txt; find . -writable -name .h; find . -links 3 -type d | sort; "
         "find . -uid 0 -name c.txt; find . -gid +5 | wc -l; find . -xdev -mount -name c.txt", CHAIN),
]


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_find_matches_gnu(case: Case) -> None:
    assert_same(case)
