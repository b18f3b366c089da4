"""Every builtin bash 5.2 has is a builtin of the K shell: `compgen -b` lists bash's, and K's
`type -t` must say `builtin` for each (bg, fg, jobs, kill and help were K tools, `file` to
`type -t`). What each builtin does is compared with bash in tests/kshell/corpus/builtins_more.sh."""

from __future__ import annotations

import subprocess

from tests.kshell.interp_support import run_k


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
