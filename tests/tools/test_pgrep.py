"""pgrep and pkill on K's process table: the session's jobs by name or command line, the
listing formats, selection, virtual signals; errors and statuses against procps-ng's."""

from __future__ import annotations

import pytest
from differential import Case, assert_same, run_k

ERRORS = [
    Case("no_criteria", "pgrep; echo $?"),
    Case("bad_option", "pgrep -z x; echo $?"),
    Case("bad_user", "pgrep -u nosuchuser x; echo $?"),
    Case("two_patterns", "pgrep a b; echo $?"),
    Case("no_match", "pgrep zzqqnomatch; echo $?"),
    Case("count_no_match", "pgrep -c zzqqnomatch; echo $?"),
    Case("pkill_no_criteria", "pkill; echo $?"),
    Case("pkill_bad_option", "pkill -z x; echo $?"),
    Case("version", "pgrep -V; pkill -V"),
]


@pytest.mark.parametrize("case", ERRORS, ids=Case.id)
def test_pgrep_errors_match_procps(case: Case) -> None:
    assert_same(case)


def lines(script: str) -> list[str]:
    return run_k(script).stdout.decode().splitlines()


def test_pgrep_finds_a_job_by_name() -> None:
    out = lines("sleep 300 & p=$!; pgrep sleep; echo $p; kill $p")
    assert out[0] == out[1]


def test_pgrep_list_name_and_full() -> None:
    out = lines("sleep 300 & p=$!; pgrep -l sleep; pgrep -a sleep; echo $p; kill $p")
    assert out[:2] == [f"{out[2]} sleep", f"{out[2]} sleep 300"]


def test_pgrep_full_matches_the_command_line() -> None:
    out = lines("sleep 301 & a=$!; sleep 302 & b=$!; pgrep -f 'sleep 302'; pgrep 'sleep 302'; echo $?:$b; kill $a $b")
    assert out[0] == out[1].split(":")[1] and out[1].startswith("1:")


def test_pgrep_exact_newest_oldest_count_delimiter() -> None:
    out = lines("sleep 300 & a=$!; sleep 300 & b=$!; pgrep -x slee; echo $?; pgrep -c sleep; pgrep -n sleep;"
                " pgrep -o sleep; pgrep -d, sleep; echo $a $b; kill $a $b")
    a, b = out[-1].split()
    assert out[:-1] == ["1", "2", b, a, f"{a},{b}"]


def test_pgrep_lists_the_shell_and_inverts() -> None:
    out = lines("pgrep -l -x bash; sleep 300 & p=$!; pgrep -v sleep | grep -c .; echo $$; kill $p")
    assert out[0] == f"{out[2]} bash" and out[1] == "1"


def test_pgrep_user_filter() -> None:
    out = lines("sleep 300 & p=$!; pgrep -u root sleep; pgrep -u 4242 sleep; echo $?; echo $p; kill $p")
    assert out == [out[-1], "1", out[-1]]


def test_pkill_ends_the_job_and_echoes() -> None:
    out = lines("sleep 300 & p=$!; pkill -e sleep; echo $?; wait $p; echo $?; echo $p")
    assert out == [f"sleep killed (pid {out[-1]})", "0", "143", out[-1]]


def test_pkill_signal_forms() -> None:
    assert lines("sleep 300 & p=$!; pkill -KILL sleep; wait $p; echo $?") == ["137"]
    assert lines("sleep 300 & p=$!; pkill -9 sleep; wait $p; echo $?") == ["137"]
    assert lines("sleep 300 & p=$!; pkill --signal INT -x sleep; wait $p; echo $?") == ["130"]


def test_pkill_never_signals_the_calling_shell() -> None:
    r = run_k("pkill -x bash; echo $?; echo alive")
    assert r.stdout == b"1\nalive\n"


def test_pkill_unknown_signal_is_refused() -> None:
    r = run_k("sleep 300 & p=$!; pkill --signal FOO sleep; echo $?; kill $p")
    assert r.stdout == b"2\n"
    assert r.stderr == b'pkill: Unknown signal "FOO".\n'


def test_unsupported_selection_is_refused_by_name() -> None:
    r = run_k("pgrep -s 1 x; echo $?")
    assert r.stdout == b"2\n"
    assert b"--session" in r.stderr
