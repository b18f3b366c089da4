"""nice against GNU: the niceness printed, adjusted (obsolete -N too), clamped, inherited by
subshells; a lower niceness refused to an unprivileged user; errors and statuses."""

from __future__ import annotations

import pytest
from differential import Case, assert_same

CASES = [
    Case("print", "nice"),
    Case("adjust", "nice -n 5 nice"),
    Case("default_ten", "nice nice"),
    Case("obsolete", "nice -5 nice; nice --3 nice"),
    Case("long", "nice --adjustment=3 nice"),
    Case("clamped", "nice -n 100 nice; nice -n -100 nice"),
    Case("nested", "nice -n 1 nice -n 2 nice"),
    Case("last_wins", "nice -n 1 -n 2 nice"),
    Case("lower_as_root", "nice -n -3 nice"),
    Case("subshell_inherits", "nice -n 6 bash -c 'nice; (nice)'"),
    Case("status_passes", "nice -n 1 false; echo $?"),
    Case("invalid", "nice -n x nice; echo $?"),
    Case("missing_argument", "nice -n; echo $?"),
    Case("adjust_without_command", "nice -n 2; echo $?"),
    Case("not_found", "nice nosuchcmd; echo $?"),
    Case("dash_dash", "nice -- -5; echo $?"),
    Case("bad_option", "nice -z; echo $?"),
    Case("unprivileged_lower", "nice -n -5 nice; echo $?", user=1000),
    Case("unprivileged_raise", "nice -n 5 nice", user=1000),
]


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_nice_matches_gnu(case: Case) -> None:
    assert_same(case)
