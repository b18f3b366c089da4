"""stat -c and chmod against GNU coreutils."""

from __future__ import annotations

import pytest
from differential import Case, Dir, File, Link, assert_same

T = {
    "f": File("hello\n", 0o640),
    "x": File("#!/bin/sh\n", 0o755),
    "e": "",
    "d/": Dir(0o750),
    "d/g": "y\n",
    "l": Link("f"),
    "ro/": Dir(0o555),
    "ro/y": File("1", 0o644),
}

STAT = [
    Case(f"stat_{i}", s, T)
    for i, s in enumerate(
        [
            "stat -c '%a %A %s %n' f x e",
            "stat -c %F f e d l",
            "stat -c '%U %G %u %g' f",
            "stat -c %N l f",
            "stat -c %h d f",
            "stat -c '%x|%y' f",
            "stat -c '%X %Y' f",
            "stat --format=%n:%s f",
            "stat -L -c %F l",
            "stat -c %a d",
            "stat nope; echo $?",
            "stat -c %n nope f; echo $?",
            "stat; echo $?",
            "stat -q f; echo $?",
            "stat -c; echo $?",
            "stat --printf '%n\\n' f x",
            "stat -c '%%%a' f",
            "stat -c %A l",
            "stat -c %s l",
            "touch -d '2022-02-03 04:05:06.5' f; stat -c %y f",
        ]
    )
]

CHMOD = [
    Case(f"chmod_{i}", s, T)
    for i, s in enumerate(
        [
            "chmod 600 f; stat -c %a f",
            "chmod u+x,go-w f; stat -c %a f",
            "chmod a=r,+t f; stat -c %A f",
            "chmod +x f; stat -c %a f",
            "chmod -x x; stat -c %a x",
            "chmod g=u f; stat -c %a f",
            "chmod o+X d f; stat -c %a d f",
            "chmod -R go-rwx d; stat -c %a d d/g",
            "chmod --reference=x f; stat -c %a f",
            "chmod 999 f; echo $?",
            "chmod u+q f; echo $?",
            "chmod 644 nope; echo $?",
            "chmod; echo $?",
            "chmod 644; echo $?",
            "chmod -v 600 f",
            "chmod -c 640 f; chmod -c 600 f",
            "chmod --bogus 600 f; echo $?",
            "chmod 4755 x; stat -c %A x",
            "chmod 600 l; stat -c %a f",
            "chmod =rw e; stat -c %a e",
            "chmod u=rwx,g=rx,o= f; stat -c %A f",
        ]
    )
] + [
    Case("chmod_permission", "chmod 600 ro/y; echo $?", T, user=None),
    Case("chmod_not_owner", "chmod 600 /tmp; echo $?", T, user=1000),
]


@pytest.mark.parametrize("case", STAT, ids=Case.id)
def test_stat_matches_gnu(case: Case) -> None:
    assert_same(case)


@pytest.mark.parametrize("case", CHMOD, ids=Case.id)
def test_chmod_matches_gnu(case: Case) -> None:
    assert_same(case)
