"""Control groups for session workers: memory, tasks and CPU bounded per session and per agent.

The tree is made under the server's own cgroup (so an outer container's limits still hold):

    <own cgroup>/komputer-<server pid>/<agent>/w<worker pid>

The agent level carries the agent's bounds (memory, tasks, CPU share and quota) shared by all of
its sessions; each worker's leaf carries the session's. The kernel enforces them: a worker past
its memory is killed by the OOM killer (`oom_killed` tells the front end so), thread or process
creation past `pids.max` fails with EAGAIN, and agents share the CPU by weight, each at most its
`cpu.max` (`[limits] agent_cpu_max`: half of the host's CPUs by default) however many sessions
it runs, so one agent's runaway loops cannot starve another's `echo`. Cgroup v1 (memory, pids and cpu hierarchies, as on
hosts that mount them separately) and v2 (one unified tree) are both understood; without either,
or without the right to write them, `CGroups.open` says why and the workers fall back to rlimits.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids", "cpu")
V2_CONTROLLERS = ("memory", "pids", "cpu")
SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")
PERIOD_US = 100_000
SERVICES = "services"  # the leaf of what serves the whole server (agents' view mounts)


@dataclass(frozen=True, slots=True)
class Bounds:
    """What one cgroup may use; 0 means no bound."""

    memory: int = 0  # bytes
    tasks: int = 0  # threads and processes together
    cpu_weight: int = 0  # relative share, 1..10000 (v2 cpu.weight; v1 shares = weight * 1024 / 100)
    cpu_max: float = 0.0  # CPUs' worth of time, e.g. 1.0 for one full core


def _own_path(controller: str, version: int) -> str:
    """This process's cgroup path in a hierarchy, from /proc/self/cgroup."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        ident, names, path = line.split(":", 2)
        if version == 2 and ident == "0" and names == "":
            return path
        if version == 1 and controller in names.split(","):
            return path
    raise OSError(f"no {controller} cgroup in /proc/self/cgroup")


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


class CGroups:
    """The cgroup tree of one server: created by the front end, joined by workers, cleaned by the
    zygote after each worker ends. Every method is safe to call from any of those processes."""

    def __init__(self, version: int, bases: dict[str, Path]) -> None:
        self.version = version
        self.bases = bases  # controller -> the server's base directory (one shared path on v2)

    @classmethod
    def open(cls, name: str) -> tuple[CGroups | None, str]:
        """Make this server's base (`name` under our own cgroup); (None, why not) when cgroups
        cannot be used here."""
        if os.geteuid() != 0:
            return None, "not running as root"
        try:
            if (ROOT / "cgroup.controllers").exists():
                return cls._open_v2(name)
            if all((ROOT / c / "cgroup.procs").exists() for c in V1_CONTROLLERS):
                bases = {c: ROOT / c / _own_path(c, 1).lstrip("/") / name for c in V1_CONTROLLERS}
                if not (ROOT / "cpu" / "cpuacct.usage").exists() and (ROOT / "cpuacct" / "cgroup.procs").exists():
                    # a cpuacct hierarchy of its own: the sessions' CPU time is read there
                    bases["cpuacct"] = ROOT / "cpuacct" / _own_path("cpuacct", 1).lstrip("/") / name
                for base in bases.values():
                    base.mkdir(exist_ok=True)
                return cls(1, bases), "cgroup v1 (memory, pids, cpu)"
        except OSError as e:
            return None, f"cgroups are not writable here ({e.strerror or e})"
        return None, "no cgroup v1 memory/pids/cpu hierarchies and no cgroup v2 tree"

    @classmethod
    def _open_v2(cls, name: str) -> tuple[CGroups | None, str]:
        own = ROOT / _own_path("", 2).lstrip("/")
        available = set((own / "cgroup.controllers").read_text().split())
        missing = [c for c in V2_CONTROLLERS if c not in available]
        if missing:
            return None, f"cgroup v2 without the {', '.join(missing)} controller(s) (delegate them to this service)"
        _write(own / "cgroup.subtree_control", " ".join("+" + c for c in V2_CONTROLLERS))
        base = own / name
        base.mkdir(exist_ok=True)
        _write(base / "cgroup.subtree_control", " ".join("+" + c for c in V2_CONTROLLERS))
        return cls(2, {c: base for c in V2_CONTROLLERS}), "cgroup v2 (memory, pids, cpu)"

    # -- the tree ----------------------------------------------------------------------------

    def _dirs(self, *parts: str) -> dict[str, Path]:
        return {c: base.joinpath(*parts) for c, base in self.bases.items()}

    @staticmethod
    def agent_dir(agent: str) -> str:
        return "a-" + SAFE_NAME.sub("_", agent)

    def ensure_agent(self, agent: str, bounds: Bounds) -> None:
        """The agent's level, made once with its bounds (the front end calls this)."""
        dirs = self._dirs(self.agent_dir(agent))
        for controller, path in dirs.items():
            if not path.exists():
                path.mkdir(exist_ok=True)
                if self.version == 2:
                    _write(path / "cgroup.subtree_control", " ".join("+" + c for c in V2_CONTROLLERS))
                self._limit(controller, path, bounds)
                if self.version == 2:
                    break  # one directory holds every controller

    def join(self, agent: str, pid: int, bounds: Bounds) -> None:
        """Put process `pid` (a worker, calling for itself) in a leaf of its own under the agent."""
        for controller, path in self._dirs(self.agent_dir(agent), f"w{pid}").items():
            path.mkdir(exist_ok=True)
            self._limit(controller, path, bounds)
            _write(path / "cgroup.procs", str(pid))
            if self.version == 2:
                break

    def hold_service(self, pid: int) -> None:
        """Put process `pid`, which a worker started for the whole server (an agent's view for
        delegated programs), in the server's `services` leaf: out of the agent's bounds, and out
        of the worker's leaf, which goes when the worker ends."""
        for path in self._dirs(SERVICES).values():
            path.mkdir(exist_ok=True)
            _write(path / "cgroup.procs", str(pid))
            if self.version == 2:
                break

    def _limit(self, controller: str, path: Path, b: Bounds) -> None:
        v2 = self.version == 2
        if (v2 or controller == "memory") and b.memory:
            _write(path / ("memory.max" if v2 else "memory.limit_in_bytes"), str(b.memory))
            if v2:
                with contextlib.suppress(OSError):  # no swap accounting on this kernel
                    _write(path / "memory.swap.max", "0")
        if (v2 or controller == "pids") and b.tasks:
            _write(path / "pids.max", str(b.tasks))
        if v2 or controller == "cpu":
            if b.cpu_weight:
                if v2:
                    _write(path / "cpu.weight", str(b.cpu_weight))
                else:
                    _write(path / "cpu.shares", str(max(2, b.cpu_weight * 1024 // 100)))
            if b.cpu_max:
                quota = max(1000, int(b.cpu_max * PERIOD_US))
                if v2:
                    _write(path / "cpu.max", f"{quota} {PERIOD_US}")
                else:
                    _write(path / "cpu.cfs_period_us", str(PERIOD_US))
                    _write(path / "cpu.cfs_quota_us", str(quota))

    def _leaves(self, pid: int) -> list[Path]:
        return [leaf for base in set(self.bases.values()) for leaf in base.glob(f"a-*/w{pid}")]

    def oom_killed(self, pid: int) -> bool:
        """Whether the kernel's OOM killer ended something in worker `pid`'s leaf."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        for leaf in self._leaves(pid):
            with contextlib.suppress(OSError):
                for line in (leaf / name).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and int(value or 0) > 0:
                        return True
        return False

    def cpu_seconds(self, pid: int) -> float | None:
        """The CPU time worker `pid` and everything in its leaf used, from the kernel's
        accounting (cpu.stat on v2, cpuacct.usage on v1); None when it keeps none here."""
        return self._cpu_used(self._leaves(pid))

    def agent_cpu(self, agent: str) -> tuple[float | None, int]:
        """The CPU time all of `agent`'s sessions used (its level's accounting, as
        `cpu_seconds`), and how many periods the kernel held it back at its `cpu.max`."""
        level = [base / self.agent_dir(agent) for base in set(self.bases.values())]
        throttled = 0
        with contextlib.suppress(OSError, ValueError):
            for line in (self.bases["cpu"] / self.agent_dir(agent) / "cpu.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "nr_throttled":
                    throttled = int(value)
        return self._cpu_used(level), throttled

    def _cpu_used(self, where: list[Path]) -> float | None:
        for leaf in where:
            with contextlib.suppress(OSError, ValueError):
                if self.version == 2:
                    for line in (leaf / "cpu.stat").read_text().splitlines():
                        key, _, value = line.partition(" ")
                        if key == "usage_usec":
                            return int(value) / 1e6
                elif (leaf / "cpuacct.usage").exists():
                    return int((leaf / "cpuacct.usage").read_text()) / 1e9
        return None

    def kill_worker(self, pid: int) -> None:
        """SIGKILL to whatever is left in an ended worker's leaf (a program it started in a
        process group or session of its own), so that nothing of the session outlives it."""
        for leaf in self._leaves(pid):
            if self.version == 2 and (leaf / "cgroup.kill").exists():
                with contextlib.suppress(OSError):
                    _write(leaf / "cgroup.kill", "1")
                continue
            for _ in range(10):  # a process forking meanwhile lands in the leaf too: look again
                with contextlib.suppress(OSError):
                    left = [int(p) for p in (leaf / "cgroup.procs").read_text().split()]
                    if not left:
                        break
                    for member in left:
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            os.kill(member, signal.SIGKILL)

    def remove_worker(self, pid: int) -> None:
        """Drop an ended worker's leaf (after it was reaped: a cgroup with tasks cannot go)."""
        for leaf in self._leaves(pid):
            with contextlib.suppress(OSError):
                leaf.rmdir()

    def remove_all(self) -> None:
        """The server stops: remove its whole tree (workers are gone by then)."""
        for base in set(self.bases.values()):
            for leaf in base.glob("a-*/w*"):
                with contextlib.suppress(OSError):
                    leaf.rmdir()
            for agent in (*base.glob("a-*"), base / SERVICES):
                with contextlib.suppress(OSError):
                    agent.rmdir()
            with contextlib.suppress(OSError):
                base.rmdir()

    def describe(self) -> dict[str, object]:
        return {"version": self.version, "bases": {c: str(p) for c, p in self.bases.items()}}

    @classmethod
    def attach(cls, described: dict[str, object]) -> CGroups:
        """The same tree in another process (the zygote and its workers)."""
        bases = described["bases"]
        assert isinstance(bases, dict)
        return cls(int(described["version"]), {c: Path(p) for c, p in bases.items()})  # type: ignore[arg-type]
