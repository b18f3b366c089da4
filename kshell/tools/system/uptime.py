"""uptime (procps-ng 4.0.2): how long the machine K runs on has been up, and its load.

The time and load averages are the host's (/proc/uptime, /proc/loadavg): K's tools run on it.
The user count is the agent's own session (1): K keeps no utmp of logins, and other agents'
sessions are not the agent's to count. -p prints procps' pretty form, -s the boot time.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING

from kshell.core.clock import zone
from kshell.core.options import NONE, Usage, parse, tool

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

USAGE = """
Usage:
 uptime [options]

Options:
 -p, --pretty   show uptime in pretty format
 -h, --help     display this help and exit
 -s, --since    system up since
 -V, --version  output version information and exit

For more details see uptime(1).
"""
_LONG = {"pretty": ("p", NONE), "help": ("h", NONE), "since": ("s", NONE), "version": ("V", NONE)}


def seconds_up() -> float:
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def pretty(up: float) -> str:
    """procps' `up 1 week, 2 days, 3 hours, 4 minutes`."""
    minutes = int(up) // 60
    parts = []
    for name, size in (("year", 525600), ("week", 10080), ("day", 1440), ("hour", 60), ("minute", 1)):
        n, minutes = divmod(minutes, size)
        if n or (name == "minute" and not parts):
            parts.append(f"{n} {name}{'' if n == 1 else 's'}")
    return "up " + ", ".join(parts)


@tool("uptime")
def uptime(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, operands = parse(argv, "phsV", _LONG)
    except Usage as e:
        sh.write_err(f"uptime: {e.message}\n{USAGE}")
        return 1
    keys = [k for k, _ in opts]
    if operands:
        sh.write_err(USAGE)
        return 1
    if "h" in keys:
        sh.out(USAGE)
        return 0
    if "V" in keys:
        sh.out("uptime from procps-ng 4.0.2\n")
        return 0
    now = time.time()
    up = seconds_up()
    tz = zone(sh)
    if "s" in keys:
        sh.out(datetime.fromtimestamp(now - up, tz).strftime("%Y-%m-%d %H:%M:%S") + "\n")
        return 0
    if "p" in keys:
        sh.out(pretty(up) + "\n")
        return 0
    with open("/proc/loadavg") as f:
        loads = [float(x) for x in f.read().split()[:3]]
    days, rest = divmod(int(up), 86400)
    hours, minutes = rest // 3600, rest % 3600 // 60
    text = datetime.fromtimestamp(now, tz).strftime(" %H:%M:%S up ")
    if days:
        text += f"{days} day{'s' if days != 1 else ''}, "
    text += f"{hours:2d}:{minutes:02d}, " if hours else f"{minutes} min, "
    users = 1
    text += f"{users:2d} {'users' if users > 1 else 'user'},  load average: "
    sh.out(text + ", ".join(f"{x:.2f}" for x in loads) + "\n")
    return 0
