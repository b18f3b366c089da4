"""Every builtin bash 5.2 has is a builtin of the K shell: `compgen -b` lists bash's, and K's
`type -t` must say `builtin` for each (bg, fg, jobs, kill and help were K tools, `file` to
`type -t`). What each builtin does is compared with bash in tests/kshell/corpus/builtins_more.sh."""

from __future__ import annotations

import subprocess

import pytest

from tests.kshell.interp_support import assert_same, run_k


def test_k_has_every_builtin_bash_lists(bash: str) -> None:
    names = subprocess.run([bash, "-c", "compgen -b"], capture_output=True, text=True,
                           check=True).stdout.split()
    assert "pushd" in names and "kill" in names  # bash's list, not an empty one
    script = "".join(f"printf '%s %s\\n' '{n}' \"$(type -t '{n}')\"\n" for n in names)
    got = dict(line.split(" ", 1) for line in run_k(script).stdout.decode().splitlines())
    assert {n: kind for n, kind in got.items() if kind != "builtin"} == {}
    assert sorted(got) == sorted(names)


def test_command_v_prints_a_builtin_by_name() -> None:
    """`command -v kill` prints `kill` in bash, a path only for a file."""
    out = run_k("for n in bg fg jobs kill help wait; do command -v $n; done").stdout.decode()
    assert out.split() == ["bg", "fg", "jobs", "kill", "help", "wait"]


# hash: the table of command paths, as bash keeps it (each program run from $PATH counted, a
# listing in bash's bucket order, -p used for what the name runs, a lookup by -t counted, any
# PATH= empties it), umask's symbolic modes, declare -F with names
HASH_CASES = [
    "hash -t; echo $?; hash -d; echo $?; hash -p /x; echo $?; hash -l; echo $?; hash -p /bin/true t1; hash -rl;"
    " echo $?; hash -p; echo $?; hash -p /bin/true t2; hash -l; hash -dt t2; echo $?; hash -p /bin/true t3;"
    " hash -t t3 nope t3; echo $?; hash -d nope; echo $?; hash -p /nonexist t4; t4; echo $?; hash -t t4; hash cd;"
    " echo $?; hash true; hash -t true; hash; hash -z; echo $?",
    "hash -p /usr/bin/sort srt; printf 'b\\na\\n' | srt; hash -t srt; hash; hash -d srt; srt; echo $?",
    "sort /dev/null; sort /dev/null; cat /dev/null; hash; hash -l; PATH=$PATH; hash; echo $?",
    "hash sort; hash; hash -r; hash; hash nosuchcmd; echo $?; (sort /dev/null; hash); hash",
    "umask 022; umask -p; umask u=rwx,g=rx,o=; umask; umask -S a-w; umask 1000; umask; umask ''; echo $?",
    "f() { :; }; declare -F f nosuch; echo $?; declare -pF f; declare -F",
]


@pytest.mark.parametrize("script", HASH_CASES)
def test_builtin_options_as_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


# the variables bash makes read-only (UID, EUID, PPID, BASH_VERSINFO, and SHELLOPTS/BASHOPTS, which
# show the options on now): each way of assigning or unsetting one fails as in bash, and the
# listings show them as bash does (PPID's value differs: K's worker is not bash's parent)
READONLY_CASES = [
    "UID=5; echo $? $UID\necho next $? $UID\nunset UID; echo $?\nEUID=3; echo $?\nPPID=3\necho $?\n"
    "unset PPID; echo $?\nBASHOPTS=x\nSHELLOPTS=x\necho $?; unset SHELLOPTS; echo $?\nUID=5 true; echo $?\n"
    "declare UID=4; echo $?; readonly UID=3; echo $?; export EUID=1; echo $?; declare +r UID; echo $?\n"
    "readonly -p | sed 's/PPID=\"[0-9]*\"/PPID/'; declare -p UID EUID BASHOPTS SHELLOPTS BASH_VERSINFO",
    "for UID in 1; do :; done; echo $?\nread UID <<< 5; echo $?\nprintf -v UID 5; echo $?\n((UID=3)); echo $?\n"
    "let EUID=2; echo $?\nUID+=1\nBASH_VERSINFO[0]=6\nunset 'BASH_VERSINFO[0]'; echo $?\nmapfile UID < /dev/null;"
    " echo $?\n[[ UID=1 -eq 1 ]]; echo $?\nfor ((UID=1;;)); do break; done; echo $?\necho $UID $EUID",
    "echo $SHELLOPTS; set -eu -o pipefail; echo $SHELLOPTS; set +eu +o pipefail; shopt -s extglob nullglob;"
    " echo $BASHOPTS; (set -x; shopt -u extglob; echo $SHELLOPTS $BASHOPTS) 2>/dev/null; echo $SHELLOPTS $BASHOPTS;"
    " export SHELLOPTS; env | grep OPTS=; declare -p SHELLOPTS; x=$(set -f; echo $SHELLOPTS); echo $x",
    "readonly x=1; getopts a x; echo $?; getopts a x -a; echo $?; OPTIND=1; getopts a x -b; echo $?\n"
    "readonly OPTARG=1; OPTIND=1; getopts a: y -a; echo $?; OPTIND=1; getopts a: y -ab; echo $? $y $OPTARG",
]


@pytest.mark.parametrize("script", READONLY_CASES)
def test_special_variables_are_readonly_as_bash(bash: str, script: str) -> None:
    assert_same(bash, script)
