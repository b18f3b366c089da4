"""Commands that never read or never finish a match still end at `timeout`, the wall time and
a job's kill: awk and sed loops check at their back edges, and a pattern that could backtrack
without bound is matched within the command's deadline."""

from __future__ import annotations

import re
import time

import pytest

from kshell import Limits
from kshell.exec import regexes
from kshell.exec.streams import Cancel
from tests.kshell.interp_support import run_k

A30 = "a" * 30
BLOWUP = "(.*){1,32000}[bc]"  # even the regex engine backtracks here: only its timeout ends it
# Only a hang fails on time: what is asserted is how the runaway ended (124, the wall-time
# message, LimitExceeded), which it cannot show without being ended; a loaded 2-core machine
# takes seconds where an idle one takes one (the figures are bench/shell.py's to report).
HANG = 60


@pytest.mark.parametrize("command", [
    "timeout 1 awk 'BEGIN{while(1){}}'",
    "timeout 1 awk 'BEGIN{do{}while(1)}'",
    "timeout 1 awk 'BEGIN{for(;;);}'",
    "timeout 1 awk 'function f(){while(1);} BEGIN{f()}'",
    "timeout 1 sed ':a;ba' <<< x",
    "timeout 1 sed -n ':a;s/x/x/;ta' <<< x",
    f"echo {A30} | timeout 1 grep -E '{BLOWUP}'",
    f"echo {A30} | timeout 1 grep '\\(.*\\)\\{{1,32000\\}}[bc]'",
    f"echo {A30} | timeout 1 sed -E 's/{BLOWUP}/x/'",
    f"echo {A30} | timeout 1 awk '/{BLOWUP}/'",
])
def test_timeout_ends_a_runaway_with_124(command: str) -> None:
    t0 = time.monotonic()
    r = run_k(command + "; echo status=$?")
    assert r.stdout.endswith(b"status=124\n"), r
    assert time.monotonic() - t0 < HANG


def test_the_wall_time_ends_a_runaway_match() -> None:
    t0 = time.monotonic()
    r = run_k(f"[[ {A30} =~ {BLOWUP} ]]; echo never", limits=Limits(wall_time=1.0))
    assert b"never" not in r.stdout and b"wall-time" in r.stderr
    assert time.monotonic() - t0 < HANG


def test_a_killed_job_in_an_awk_loop_ends() -> None:
    t0 = time.monotonic()
    r = run_k("awk 'BEGIN{while(1){}}' & sleep 0.2; kill %1; wait %1; echo st=$?")
    assert r.stdout == b"st=143\n"
    assert time.monotonic() - t0 < HANG


@pytest.mark.parametrize("command", [
    f"echo {'a' * 50}c | grep -E '(a|aa)*b'",
    f"echo {'x' * 40} | grep -E '(x+x+)+y'",
    f"echo {'a' * 40}! | sed -E 's/^(a|a?)+$/m/'",
])
def test_classic_catastrophic_patterns_finish_at_once(command: str) -> None:
    t0 = time.monotonic()
    r = run_k(command + "; echo status=$?")
    assert r.stdout.endswith((b"status=1\n", b"!\nstatus=0\n")), r
    assert time.monotonic() - t0 < HANG


@pytest.mark.parametrize(("pattern", "expected"), [
    ("foo=12", False), ("(foo|bar)=[0-9]+", False), (r"a.*b.*c", False), ("[)*]x", False), (r"\)+", False),
    ("(a)?b", False), ("(a|aa)*b", True), ("(x+)+", True), ("(.*a){20}", True), (r"(a)\1", True),
    ("(?:a|b)+c", True),
])
def test_risky_means_a_repeated_group_or_a_back_reference(pattern: str, expected: bool) -> None:
    assert regexes.risky(pattern) is expected


def test_only_risky_patterns_pay_for_the_bounded_engine() -> None:
    assert isinstance(regexes.compile("foo=12"), re.Pattern)
    bounded = regexes.compile("(a|aa)*b", re.IGNORECASE, Cancel(float("inf")))
    assert bounded.search("xAAb").span() == (1, 4)
    assert bounded.sub("-", "ab aab") == "- -"
    assert [m.group() for m in bounded.finditer("ab aab")] == ["ab", "aab"]


def test_a_bounded_match_past_its_deadline_raises_the_commands_limit() -> None:
    from kshell.limits import LimitExceeded

    cancel = Cancel(time.monotonic() + 0.3)
    t0 = time.monotonic()
    with pytest.raises(LimitExceeded, match="wall-time"):
        regexes.compile(BLOWUP, 0, cancel).search(A30)
    assert time.monotonic() - t0 < HANG


def test_a_fork_bomb_runs_out_of_room_not_out_of_the_machine() -> None:
    t0 = time.monotonic()
    r = run_k("f(){ f | f & }; f; sleep 0.5; echo alive", limits=Limits(threads=64))
    assert r.stdout == b"alive\n"
    assert set(r.stderr.decode().splitlines()) == {"bash: fork: Resource temporarily unavailable"}
    assert time.monotonic() - t0 < HANG


def test_a_full_thread_budget_abandons_the_line_with_126_and_frees_its_slots() -> None:
    r = run_k("for i in 1 2 3 4 5; do sleep 2 & done; echo never", limits=Limits(threads=3))
    assert (r.stdout, r.stderr, r.status) == (b"", b"bash: fork: Resource temporarily unavailable\n", 126)
    # sleeps long enough that the first stages still hold their threads when the last one
    # starts, however loaded the machine (0.3 s ran out under a parallel run: the line went on)
    r = run_k("sleep 3 | sleep 3 | sleep 3 | sleep 3; echo $?", limits=Limits(threads=3))
    assert (r.stdout, r.status) == (b"", 126)  # a pipeline is a thread per command
    r = run_k("sleep 0.2 & wait; sleep 0.2 & wait; echo a | cat | cat", limits=Limits(threads=3))
    assert (r.stdout, r.status) == (b"a\n", 0)  # ended jobs give their threads back
