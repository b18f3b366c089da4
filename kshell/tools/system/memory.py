"""free (procps-ng 4.0.2): the memory the appliance has, in procps' layout and units.

K presents the host's memory as its own, bounded by the appliance's control group: the numbers
come from /proc/meminfo, and when the cgroup that K runs in (v2 memory.max, v1
memory.limit_in_bytes, read from /sys/fs/cgroup) allows less than MemTotal, `Mem:` shows that
limit as total, the cgroup's usage as used, and the rest (never more than the host has free) as
free and available. used = total - available, as procps 4. -s/-c (repeating) are refused: a K
tool runs to completion inside its command.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

USAGE = """
Usage:
 free [options]

Options:
 -b, --bytes         show output in bytes
     --kilo          show output in kilobytes
     --mega          show output in megabytes
     --giga          show output in gigabytes
     --tera          show output in terabytes
     --peta          show output in petabytes
 -k, --kibi          show output in kibibytes
 -m, --mebi          show output in mebibytes
 -g, --gibi          show output in gibibytes
     --tebi          show output in tebibytes
     --pebi          show output in pebibytes
 -h, --human         show human-readable output
     --si            use powers of 1000 not 1024
 -l, --lohi          show detailed low and high memory statistics
 -t, --total         show total for RAM + swap
 -v, --committed     show committed memory and commit limit
 -s N, --seconds N   repeat printing every N seconds
 -c N, --count N     repeat printing N times, then exit
 -w, --wide          wide output

     --help     display this help and exit
 -V, --version  output version information and exit

For more details see free(1).
"""
_LONG = {"bytes": ("b", NONE), "kilo": ("kilo", NONE), "mega": ("mega", NONE), "giga": ("giga", NONE),
         "tera": ("tera", NONE), "peta": ("peta", NONE), "kibi": ("k", NONE), "mebi": ("m", NONE),
         "gibi": ("g", NONE), "tebi": ("tebi", NONE), "pebi": ("pebi", NONE), "human": ("h", NONE),
         "si": ("si", NONE), "lohi": ("l", NONE), "total": ("t", NONE), "committed": ("v", NONE),
         "seconds": ("s", REQUIRED), "count": ("c", REQUIRED), "wide": ("w", NONE), "help": ("help", NONE),
         "version": ("V", NONE)}
# unit option -> (power, whether --si's base 1000 applies regardless)
_UNITS = {"b": (0, False), "k": (1, False), "m": (2, False), "g": (3, False), "tebi": (4, False),
          "pebi": (5, False), "kilo": (1, True), "mega": (2, True), "giga": (3, True), "tera": (4, True),
          "peta": (5, True)}


def meminfo(path: str = "/proc/meminfo") -> dict[str, int]:
    """/proc/meminfo in bytes."""
    out: dict[str, int] = {}
    with open(path) as f:
        for line in f:
            key, _, rest = line.partition(":")
            words = rest.split()
            if words and words[0].isdigit():
                out[key] = int(words[0]) * (1024 if len(words) > 1 else 1)
    return out


def _read_int(path: str) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        with open(path) as f:
            text = f.read().strip()
        return None if text == "max" else int(text)
    return None


def cgroup_memory() -> tuple[int, int] | None:
    """(limit, usage) of the appliance's memory cgroup, None when it sets no limit."""
    places: list[tuple[str, str]] = []
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if controllers == "":
                places.append((f"/sys/fs/cgroup{path}/memory.max", f"/sys/fs/cgroup{path}/memory.current"))
            elif "memory" in controllers.split(","):
                base = "/sys/fs/cgroup/memory"
                for where in (base + path, base):
                    places.append((f"{where}/memory.limit_in_bytes", f"{where}/memory.usage_in_bytes"))
    for limit_path, usage_path in places:
        if not os.path.exists(limit_path):
            continue
        limit, usage = _read_int(limit_path), _read_int(usage_path)
        if limit is not None and usage is not None:
            return limit, usage
    return None


def presented() -> dict[str, int]:
    """The numbers free prints (bytes), with the cgroup bound applied."""
    m = meminfo()
    total, free = m.get("MemTotal", 0), m.get("MemFree", 0)
    buffers = m.get("Buffers", 0)
    cache = m.get("Cached", 0) + m.get("SReclaimable", 0)
    available = m.get("MemAvailable", free + buffers + cache)
    shared = m.get("Shmem", 0)
    bound = cgroup_memory()
    if bound is not None and bound[0] < total:
        total = bound[0]
        left = max(0, total - bound[1])
        free, available = min(free, left), min(available, left)
        buffers, cache = min(buffers, bound[1]), min(cache, bound[1])
    return {"total": total, "used": max(0, total - available), "free": free, "shared": shared,
            "buffers": buffers, "cache": cache, "available": available,
            "swap_total": m.get("SwapTotal", 0), "swap_free": m.get("SwapFree", 0),
            "low_total": m.get("LowTotal", total), "low_free": m.get("LowFree", free),
            "high_total": m.get("HighTotal", 0), "high_free": m.get("HighFree", 0),
            "commit_limit": m.get("CommitLimit", 0), "committed": m.get("Committed_AS", 0)}


def scale(n: int, power: int, base: int, human: bool) -> str:
    """A value as procps' scale_size: in the unit asked for, or human (`1.5Gi`, `985Mi`, `0B`)."""
    if not human:
        return str(n // base**power)
    if n < base:
        return f"{n}B"
    suffix = "i" if base == 1024 else ""
    for i, letter in enumerate("KMGTPE", start=1):
        v = n / base**i
        if v >= base and letter != "E":
            continue
        short = f"{v:.1f}"
        if len(short) <= 3:
            return f"{short}{letter}{suffix}"
        return f"{int(v)}{letter}{suffix}"
    return f"{n}B"


@tool("free")
def free(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, operands = parse(argv, "bkmghltvs:c:wV", _LONG)
    except Usage as e:
        sh.write_err(f"free: {e.message}\n{USAGE}")
        return 1
    given = dict(opts)
    if operands:
        sh.write_err(USAGE)
        return 1
    if "help" in given:
        sh.out(USAGE)
        return 0
    if "V" in given:
        sh.out("free from procps-ng 4.0.2\n")
        return 0
    if "s" in given or "c" in given:
        raise Fail("repeating (-s, -c) is not supported in K: run free in a loop")
    power, base = 1, 1024
    for key, _ in opts:
        if key in _UNITS:
            power, forced = _UNITS[key]
            base = 1000 if forced else 1024
    if "si" in given:
        base = 1000
    human = "h" in given
    m = presented()

    def row(label: str, values: list[int]) -> str:
        return f"{label:<8}" + "".join(f"{scale(v, power, base, human):>12}" for v in values) + "\n"

    wide = "w" in given
    head = "               total        used        free      shared"
    head += "     buffers       cache   available\n" if wide else "  buff/cache   available\n"
    mem = [m["total"], m["used"], m["free"], m["shared"]]
    mem += [m["buffers"], m["cache"], m["available"]] if wide else [m["buffers"] + m["cache"], m["available"]]
    out = head + row("Mem:", mem)
    if "l" in given:
        out += row("Low:", [m["low_total"], m["low_total"] - m["low_free"], m["low_free"]])
        out += row("High:", [m["high_total"], m["high_total"] - m["high_free"], m["high_free"]])
    swap = [m["swap_total"], m["swap_total"] - m["swap_free"], m["swap_free"]]
    out += row("Swap:", swap)
    if "t" in given:
        out += row("Total:", [mem[0] + swap[0], mem[1] + swap[1], mem[2] + swap[2]])
    if "v" in given:
        out += row("Comm:", [m["commit_limit"], m["committed"], m["commit_limit"] - m["committed"]])
    sh.out(out)
    return 0
