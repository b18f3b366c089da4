"""What a process tree holds, read from /proc: its processes, the files it has open or mapped,
and its memory (proportional set size, so pages shared between a zygote and its forks count once)."""

from __future__ import annotations

import os
from pathlib import Path


def tree(pid: int) -> list[int]:
    """`pid` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def fds(pid: int) -> list[str]:
    """What each open file descriptor of `pid` names."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue  # closed meanwhile
    return out


def mapped(pid: int) -> set[str]:
    """The files `pid` has mapped (LMDB maps its data file)."""
    out = set()
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and parts[5].startswith("/"):
            out.add(parts[5])
    return out


def holding(pid: int, under: Path) -> dict[int, set[str]]:
    """The processes of `pid`'s tree that have a file under `under` open or mapped, and which."""
    prefix = str(under).rstrip("/") + "/"
    out = {}
    for p in tree(pid):
        try:
            held = {f for f in fds(p) if f.startswith(prefix)} | {f for f in mapped(p) if f.startswith(prefix)}
        except OSError:
            continue  # gone meanwhile
        if held:
            out[p] = held
    return out


def pss_kib(pid: int) -> int:
    """The tree's memory in KiB: the sum of its processes' proportional set sizes."""
    total = 0
    for p in tree(pid):
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def fd_count(pid: int) -> int:
    """Open file descriptors in the tree."""
    total = 0
    for p in tree(pid):
        try:
            total += len(os.listdir(f"/proc/{p}/fd"))
        except OSError:
            continue
    return total
