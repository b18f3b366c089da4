"""The bounds on an agent's sessions (their workers, and SFTP in the front end): the
`[limits]` section of komputer.toml.

Sizes are bytes, or a number with K, M, G (binary: 512M is 512 MiB). Every bound has a safe
default, so a server with no settings already keeps one agent from exhausting the machine.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from kshell.worker.cgroups import Bounds

MIB = 1 << 20
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", re.IGNORECASE)
SIZES = frozenset({"session_memory", "agent_memory", "sftp_read", "sftp_write"})
KIB = 1 << 10
# what a worker bounds itself (the kernel bounds the rest through its cgroup)
WORKER_BOUNDS = ("session_memory", "session_tasks", "wall_time", "process_output", "interrupt_grace",
                 "session_cpu", "session_jobs", "agent_jobs")


def parse_size(value: int | str, where: str) -> int:
    if isinstance(value, int):
        return value
    m = SIZE.fullmatch(str(value))
    if m is None:
        raise ValueError(f"{where}: {value!r} is not a size (bytes, or a number with K, M or G)")
    return int(float(m.group(1)) * UNITS[m.group(2).upper()])


def size_text(n: int) -> str:
    """512 MiB, 2 GiB: how limit messages name a size."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"


@dataclass(frozen=True, slots=True)
class WorkerLimits:
    session_memory: int = 512 * MIB  # one session's worker and what it runs
    agent_memory: int = 2048 * MIB  # all sessions of one agent together
    session_tasks: int = 512  # threads and processes of one session (a fork bomb stops here)
    agent_tasks: int = 2048
    agent_cpu_weight: int = 100  # agents share the CPU by weight (cgroup cpu.weight; 100 = equal)
    # at most this many CPUs' time per agent, all its sessions and jobs together (cgroup cpu.max):
    # -1, half of the host's CPUs and at least one, so one agent's loops in many sessions leave
    # the rest to the others; 0: no cap
    agent_cpu_max: float = -1.0
    session_cpu: float = 3600.0  # CPU seconds one session (its worker and what it runs) may use in all (0: no bound)
    session_jobs: int = 256  # jobs, pipeline stages and xargs -P commands of one session alive at once
    agent_jobs: int = 1024  # background jobs and exec commands of one agent alive at once, in all its sessions
    wall_time: float = 300.0  # seconds one top-level command may run
    process_output: int = 4096  # bytes of a background job's output its events keep, from the start and the end
    interrupt_grace: float = 0.5  # after Ctrl-C, timeout or hang-up, seconds before the worker is killed
    terminal_wall_time: float = 7 * 86400.0  # seconds the command of a persistent terminal may run
    terminal_scrollback: int = 1000  # lines a persistent terminal keeps above its screen
    park_idle: float = 30.0  # an interactive session idle this long (no jobs) gives its worker back
    spare_workers: int = 2  # workers forked ahead of need, so a new command does not wait for a fork
    max_workers: int = 512  # workers alive at once on this server; more sessions wait for one
    # SFTP runs in the front end: its bounds keep one client from making the server allocate
    sftp_handles: int = 1024  # open files and directories per SFTP session
    sftp_read: int = 256 * KIB - 1024  # the longest READ answered (a longer one gets a short read)
    sftp_write: int = 256 * KIB  # the longest WRITE accepted

    def session_bounds(self) -> Bounds:
        return Bounds(memory=self.session_memory, tasks=self.session_tasks)

    def for_worker(self) -> dict[str, Any]:
        """The bounds a worker enforces itself, as its BIND carries them."""
        return {name: getattr(self, name) for name in WORKER_BOUNDS}

    def agent_bounds(self) -> Bounds:
        return Bounds(memory=self.agent_memory, tasks=self.agent_tasks,
                      cpu_weight=self.agent_cpu_weight, cpu_max=self.agent_cpus())

    def agent_cpus(self) -> float:
        """`agent_cpu_max` in CPUs (0: no cap): -1 is half of the CPUs this server may run on."""
        if self.agent_cpu_max >= 0:
            return self.agent_cpu_max
        return max(1.0, len(os.sched_getaffinity(0)) / 2)

    @classmethod
    def from_toml(cls, data: dict[str, Any], where: str) -> WorkerLimits:
        limits = cls(**section_settings(cls, data, where, lambda name, value, at: parse_size(value, at)
                                        if name in SIZES else value))
        if limits.session_cpu < 0 or limits.session_jobs < 1 or limits.agent_jobs < 1:
            raise ValueError(f"{where}: session_cpu >= 0, session_jobs >= 1 and agent_jobs >= 1 are required")
        if limits.agent_cpu_max < 0 and limits.agent_cpu_max != -1:
            raise ValueError(f"{where}: agent_cpu_max is a number of CPUs, 0 (no cap) or -1 (half of the host's)")
        if limits.spare_workers < 0 or limits.max_workers < 1 or limits.interrupt_grace <= 0:
            raise ValueError(f"{where}: spare_workers >= 0, max_workers >= 1 and interrupt_grace > 0 are required")
        lengths = (limits.sftp_read, limits.sftp_write)  # asyncssh takes no SFTP packet over 4 MiB
        if limits.sftp_handles < 1 or not all(1024 <= n <= 4 * MIB for n in lengths):
            raise ValueError(f"{where}: sftp_handles >= 1, and sftp_read and sftp_write from 1K to 4M, are required")
        return limits


def section_settings(cls: type, data: dict[str, Any], where: str,
                     convert: Callable[[str, Any, str], Any] = lambda name, value, at: value) -> dict[str, Any]:
    """A komputer.toml section as keyword arguments for the dataclass `cls`: `a-b` is `a_b`,
    an unknown key is an error (a typo must not pass silently), `convert(name, value, where)`
    turns each value into what the field holds."""
    known = {f.name for f in fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        if name not in known:
            raise ValueError(f"{where}: unknown setting {key!r}")
        kwargs[name] = convert(name, value, f"{where}.{key}")
    return kwargs
