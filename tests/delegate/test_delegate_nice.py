"""`nice` reaches delegated programs: a real program started under `nice -n N` runs N above the
sandbox's own niceness, as under GNU nice; a K tool sees the shell's niceness."""

from __future__ import annotations

from delegation import run
from kserver import Bench

NICENESS = "python3 -c 'import os; print(os.nice(0))'"


def test_a_delegated_program_runs_at_the_niceness_nice_gives(mounted: Bench) -> None:
    status, out, err = run(mounted, f"{NICENESS}; nice -n 7 {NICENESS}; nice -n 3 nice -n 2 {NICENESS}")
    assert status == 0, err
    base, raised, nested = (int(x) for x in out.split())
    assert (raised, nested) == (min(19, base + 7), min(19, base + 5))


def test_a_k_tool_sees_the_shells_niceness(mounted: Bench) -> None:
    assert run(mounted, "nice; nice -n 4 nice; nice -n 4 bash -c nice")[1] == "0\n4\n4\n"
