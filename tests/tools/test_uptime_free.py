"""uptime and free against procps-ng: options, usage errors and layout exactly; the numbers, which
move between two runs, against the real tools' and /proc's where they are stable (the totals,
the boot time within the second the two runs may straddle)."""

from __future__ import annotations

import subprocess
from datetime import datetime

import pytest
from differential import Case, assert_same, require_tools, run_k

from kshell.tools.system.memory import scale
from kshell.tools.system.uptime import pretty

ERRORS = [
    Case("uptime_bad_option", "uptime -x; echo $?"),
    Case("uptime_operand", "uptime a; echo $?"),
    Case("uptime_help", "uptime --help; echo $?"),
    Case("uptime_version", "uptime -V"),
    Case("free_bad_option", "free -x; echo $?"),
    Case("free_operand", "free a; echo $?"),
    Case("free_help", "free --help; echo $?"),
    Case("free_version", "free -V"),
    Case("free_header", "free | head -1; free -w | head -1"),
    Case("free_swap_and_totals_in_bytes", "free -b | awk 'NR == 2 {print $1, $2} NR == 3'"),
    Case("free_kib_total", "free | awk 'NR == 2 {print $2}'; free -m | awk 'NR == 2 {print $2}'"),
    Case("free_giga_si", "free --giga | awk 'NR == 2 {print $2}'; free --si -k | awk 'NR == 2 {print $2}'"),
    Case("free_row_labels", "free -l -t -v | awk '{print $1}'"),
    Case("free_line_widths", "free -w -t | awk '{print length($0)}'"),
]


@pytest.mark.parametrize("case", ERRORS, ids=Case.id)
def test_matches_procps(case: Case) -> None:
    require_tools("free", "uptime")
    assert_same(case)


def test_uptime_since_is_the_hosts_boot_time() -> None:
    require_tools("uptime")
    real = subprocess.run(["uptime", "-s"], capture_output=True, text=True, env={"TZ": "UTC"}).stdout.strip()
    k = run_k("uptime -s").stdout.decode().strip()
    apart = abs((datetime.fromisoformat(k) - datetime.fromisoformat(real)).total_seconds())
    assert apart <= 1


def test_uptime_default_layout() -> None:
    line = run_k("uptime").stdout.decode()
    head, _, loads = line.partition(",  load average: ")
    assert line.startswith(" ") and " up " in head and head.endswith(" 1 user")
    assert len(loads.strip().split(", ")) == 3


def test_pretty_uptime_names_each_unit_as_procps() -> None:
    assert pretty(59) == "up 0 minutes"
    assert pretty(60) == "up 1 minute"
    assert pretty(3600 + 180) == "up 1 hour, 3 minutes"
    assert pretty(86400 * 9 + 7200) == "up 1 week, 2 days, 2 hours"


def test_human_sizes_as_procps() -> None:
    kib = 1024
    assert [scale(n * kib, 1, 1024, True) for n in (24683656, 1530012, 8952, 1009156, 0)] == \
        ["23Gi", "1.5Gi", "8.7Mi", "985Mi", "0B"]
    assert scale(25276063 * 1000, 1, 1000, True) == "25G"


def test_free_refuses_repeating() -> None:
    r = run_k("free -s 1; echo $?")
    assert r.stdout == b"1\n"
    assert b"not supported in K" in r.stderr
