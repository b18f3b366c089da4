"""What a test run leaves behind: processes it started that still run, FUSE mounts it made that
are still mounted. The suite's end fails on any (tests/conftest.py): a server, mount daemon,
worker or sandbox that outlives its test holds a mount busy, keeps writing a state whose
directory is gone, and makes the next test's picture of the machine false.

Only the run's own are counted, never another run's on the same machine: a process is the
run's when it descends from the pytest process, or carries the run's token in its environment
(K_TEST_RUN, set by conftest before any test starts, inherited by every `komputer` child even
after its parent died and it was reparented), or lies in the run's own memory cgroup (`Fence`:
where cgroup v1 lets the run make one, every process it starts is in it and stays there,
whatever its parent or environment: a sandbox whose worker was killed before its
die-with-parent took hold is found there); a mount is the run's when the pytest process serves
it (a /dev/fuse descriptor of its own), or one of the run's processes does, or it lies under
the run's base temp directory. Nothing here kills or unmounts: it names what it found."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

TOKEN = "K_TEST_RUN"
CGROUPS = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    state: str
    cmdline: str


def _proc(pid: int) -> Proc | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # it ended meanwhile
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return Proc(pid, int(fields[1]), fields[0], raw.replace(b"\0", b" ").decode(errors="replace").strip())


def _environ_has(pid: int, marker: bytes) -> bool:
    try:
        return marker in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _fuse_fds(pid: int) -> int:
    """How many /dev/fuse descriptors `pid` holds: each is a mount it serves."""
    n = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/fuse":
                    n += 1
            except OSError:
                continue
    except OSError:
        return 0
    return n


def own_processes(token: str, me: int | None = None) -> list[Proc]:
    """The live (not zombie) processes of the run whose token is `token`, other than `me`."""
    me = os.getpid() if me is None else me
    marker = f"{TOKEN}={token}".encode()
    table = {p.pid: p for p in (_proc(int(d)) for d in os.listdir("/proc") if d.isdigit()) if p is not None}
    own: set[int] = set()
    for pid, p in table.items():
        if pid == me or p.state == "Z":
            continue
        if _environ_has(pid, marker):
            own.add(pid)
            continue
        seen, up = set(), p.ppid
        while up > 1 and up not in seen:  # a descendant of the pytest process
            if up == me:
                own.add(pid)
                break
            seen.add(up)
            up = table[up].ppid if up in table else 0
    changed = True
    while changed:  # and what those started, whatever its environment (a sandbox's program)
        changed = False
        for pid, p in table.items():
            if pid not in own and pid != me and p.state != "Z" and p.ppid in own:
                own.add(pid)
                changed = True
    return sorted((table[pid] for pid in own), key=lambda p: p.pid)


def _unescape(field: str) -> str:
    """mountinfo's octal escapes (\\040 for a space)."""
    return field.encode().decode("unicode_escape")


def fuse_mounts() -> list[tuple[str, str, str]]:
    """(mount point, fs type, source) of every FUSE mount in this mount namespace."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fstype, source = right.split()[:2]
        if fstype == "fuse" or fstype.startswith("fuse."):
            found.append((_unescape(left.split()[4]), fstype, _unescape(source)))
    return found


class Fence:
    """A cgroup v1 memory group of the run's own, under the one the run was started in: what
    the run starts is in it (a K server's worker tree is made beneath, as under any own
    cgroup) and stays in it when its parent dies. Only where the memory hierarchy is v1 (no
    rule there against processes beside child groups, so K's trees under it work as before)
    and writable; otherwise the run has none and counts by ancestry and token alone."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def enter(cls, name: str) -> Fence | None:
        """Make the group `name` and move this process into it; None where that cannot be."""
        try:
            for line in Path("/proc/self/cgroup").read_text().splitlines():
                _, controllers, own = line.split(":", 2)
                if "memory" in controllers.split(","):
                    path = CGROUPS / "memory" / own.lstrip("/") / name
                    path.mkdir()
                    (path / "cgroup.procs").write_text(str(os.getpid()))
                    return cls(path)
        except OSError:
            return None
        return None

    def members(self) -> list[int]:
        """Every process in the group and the groups beneath it."""
        found = []
        for procs in self.path.rglob("cgroup.procs"):
            try:
                found += [int(p) for p in procs.read_text().split()]
            except OSError:
                continue
        return found

    def leave(self) -> None:
        """This process back to the group it came from; the groups removed, deepest first, if
        nothing is left in them (a group that still holds a process stays, to be looked at)."""
        try:
            (self.path.parent / "cgroup.procs").write_text(str(os.getpid()))
        except OSError:
            return
        for group in sorted((p for p in self.path.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            with contextlib.suppress(OSError):
                group.rmdir()
        with contextlib.suppress(OSError):
            self.path.rmdir()


def leftovers(token: str, base_temp: Path | None, fence: Fence | None = None) -> list[str]:
    """What the run left: a line for each process and mount (empty when nothing)."""
    me = os.getpid()
    procs = own_processes(token, me)
    listed = {p.pid for p in procs} | {me}
    for pid in fence.members() if fence is not None else ():
        p = _proc(pid)
        if p is not None and pid not in listed and p.state != "Z":
            procs.append(p)
            listed.add(pid)
    lines = [f"process {p.pid} (parent {p.ppid}): {p.cmdline[:200]}" for p in procs]
    if _fuse_fds(me):
        lines.append(f"the pytest process still serves {_fuse_fds(me)} FUSE mount(s) of its own")
    if base_temp is not None:
        root = str(base_temp.resolve())
        for point, fstype, source in fuse_mounts():
            if point == root or point.startswith(root + "/") or root in source:
                lines.append(f"mount {point} ({fstype}, {source})")
    return lines


def naming(text: str) -> list[Proc]:
    """The live processes whose command line names `text` (a test's own directory: the
    sandboxes and daemons that bind or serve something under it)."""
    me = os.getpid()
    found = (_proc(int(d)) for d in os.listdir("/proc") if d.isdigit())
    return [p for p in found if p is not None and p.pid != me and p.state != "Z" and text in p.cmdline]
