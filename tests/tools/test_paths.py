"""basename, dirname, realpath, readlink and ln against GNU coreutils."""

from __future__ import annotations

import pytest
from differential import Case, Dir, Link, assert_same

T = {
    "f": "x\n",
    "d/": Dir(),
    "d/g": "y\n",
    "l": Link("d/g"),
    "dl": Link("d"),
    "loop": Link("loop"),
    "broken": Link("nowhere/x"),
    "ro/": Dir(0o555),
}

BASENAME = [
    Case(f"basename_{i}", s, T)
    for i, s in enumerate(
        [
            "basename /a/b/c",
            "basename /a/b/c/",
            "basename /",
            "basename //",
            "basename a",
            "basename ''",
            "basename /a/b.txt .txt",
            "basename b.txt b.txt",
            "basename -s .c a.c b.c x.h",
            "basename -a a/b c/d",
            "basename --suffix=.sh x.sh",
            "basename a b c; echo $?",
            "basename; echo $?",
            "basename -q x; echo $?",
            "basename -- -a",
            "basename /a//b//",
        ]
    )
]

DIRNAME = [
    Case(f"dirname_{i}", s, T)
    for i, s in enumerate(
        [
            "dirname /a/b/c",
            "dirname /a/b/c/",
            "dirname a",
            "dirname /",
            "dirname //",
            "dirname a/b",
            "dirname a//b",
            "dirname /a",
            "dirname ''",
            "dirname a/ b/c /d/e",
            "dirname; echo $?",
            "dirname -x; echo $?",
            "dirname ../x",
            "dirname ./x/",
            "dirname //a//b//",
        ]
    )
]

REALPATH = [
    Case(f"realpath_{i}", s, T)
    for i, s in enumerate(
        [
            "realpath f",
            "realpath .",
            "realpath d/../f",
            "realpath l",
            "realpath dl",
            "realpath dl/g",
            "realpath nope",
            "realpath nope/x; echo $?",
            "realpath -e nope; echo $?",
            "realpath -m nope/x/../y",
            "realpath -s l",
            "realpath --relative-to=d f",
            "realpath --relative-to=d d/g",
            "realpath loop; echo $?",
            "realpath f/x; echo $?",
            "realpath; echo $?",
            "realpath -k; echo $?",
            "realpath broken; echo $?",
            "realpath -m broken",
            "realpath / //",
            "realpath -q nope/x; echo $?",
        ]
    )
]

READLINK = [
    Case(f"readlink_{i}", s, T)
    for i, s in enumerate(
        [
            "readlink l",
            "readlink dl",
            "readlink f; echo $?",
            "readlink nope; echo $?",
            "readlink -f l",
            "readlink -f dl/g",
            "readlink -f nope",
            "readlink -f nope/x; echo $?",
            "readlink -e nope; echo $?",
            "readlink -e l",
            "readlink -m a/b/../c",
            "readlink -n l; echo",
            "readlink broken",
            "readlink -f broken; echo $?",
            "readlink -m broken",
            "readlink; echo $?",
            "readlink -x; echo $?",
            "readlink -f loop; echo $?",
            "readlink -v nope; echo $?",
            "readlink -f .",
        ]
    )
]

LN = [
    Case(f"ln_{i}", s, T)
    for i, s in enumerate(
        [
            "ln -s f s; readlink s; cat s",
            "ln f h; ls -l f h",
            "ln -s f l; echo $?",
            "ln f l; echo $?",
            "ln -sf f l; readlink l",
            "ln -s f d; ls d",
            "ln -s a b d; ls d",
            "ln nope h; echo $?",
            "ln d h; echo $?",
            "ln -s f g h; echo $?",
            "ln; echo $?",
            "ln -q f g; echo $?",
            "ln -sv f s",
            "ln -v f h",
            "ln -s f ro/x; echo $?",
            "ln -sfn d dl; readlink dl",
            "ln -sf d dl; readlink dl; readlink d/d",
            "ln -sT f d; echo $?",
            "ln -s /abs/target s; readlink s",
            "ln -s f; echo $?",
            "ln -s d/g; readlink g",
        ]
    )
]


@pytest.mark.parametrize("case", BASENAME + DIRNAME, ids=Case.id)
def test_basename_dirname_match_gnu(case: Case) -> None:
    assert_same(case)


@pytest.mark.parametrize("case", REALPATH + READLINK, ids=Case.id)
def test_realpath_readlink_match_gnu(case: Case) -> None:
    assert_same(case)


@pytest.mark.parametrize("case", LN, ids=Case.id)
def test_ln_matches_gnu(case: Case) -> None:
    sane = Case(
        case.name, case.script.replace("ro/x", "ro/x"), case.files, case.stdin, 1000 if "ro/" in case.script else None
    )
    assert_same(sane)
