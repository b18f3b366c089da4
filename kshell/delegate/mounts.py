"""Finding the FUSE mount of the server's own state: delegated programs see the agent's files
through it, so that what they write lands in KState under the agent's uid.

`komputer mount` names its source `kfs:STATE_DIR` (what mount(8) and df show), so the kernel's
own mount table says where a state is mounted, whether its daemon is alive, and with which
options: no record in KState can go stale when a mount dies.

A restricted session's programs see K through an agent's view instead (`komputer mount --agent
NAME --mode M`): every request there is the agent's and asks the session's write policy, so the
kernel asks K before each create, rename, link or write. Views are mounted on demand, one per
distinct policy (agent, mode, fork, and a digest of the rules), in a directory beside the admin
mount; their source `kfs-view:AGENT:MODE:FORK:DIGEST:STATE_DIR` finds them again, for every
session and program of that policy, and the server unmounts them all when it stops (and as it
starts: a killed run's)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import re
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kfs.fuse import COHERENCE_XATTR
from kfs.fuse.mount import unescape

MOUNTINFO = Path("/proc/self/mountinfo")
log = logging.getLogger("kshell.delegate")


class Unavailable(Exception):
    """Delegation cannot run here; the message says why and what to configure."""


@dataclass(frozen=True, slots=True)
class Mount:
    path: str
    options: frozenset[str]


class _Table:
    """The FUSE mounts of /proc/self/mountinfo, read again only once the kernel says the mount
    table changed (it wakes a poll for POLLPRI on the open file): a program's start need not
    parse the whole table."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._poll: select.poll | None = None
        self._file: Any = None
        self._mounts: list[tuple[str, str, Mount]] = []

    def mounts(self) -> list[tuple[str, str, Mount]]:
        with self._lock:
            if self._poll is None:
                self._file = open(MOUNTINFO, "rb")  # noqa: SIM115 - kept open: its poll says when to read again
                self._poll = select.poll()
                self._poll.register(self._file, select.POLLPRI | select.POLLERR)
            elif not self._poll.poll(0):
                return self._mounts
            self._mounts = list(_parse(MOUNTINFO.read_text()))  # after the poll: nothing missed
            return self._mounts


    def forget(self) -> None:
        """In a forked child: its own open file (a shared one's poll would answer for both)."""
        self._lock = threading.Lock()
        self._poll = self._file = None


_TABLE = _Table()
os.register_at_fork(after_in_child=_TABLE.forget)


def _fuse_mounts(mountinfo: Path = MOUNTINFO) -> Iterator[tuple[str, str, Mount]]:
    """(mount point, source, Mount) of every FUSE mount, in the kernel's order (the last of one
    place is the one on top)."""
    if mountinfo == MOUNTINFO:
        yield from _TABLE.mounts()
    else:
        yield from _parse(mountinfo.read_text())


def _parse(table: str) -> Iterator[tuple[str, str, Mount]]:
    for line in table.splitlines():
        head, _, tail = line.partition(" - ")
        pre, post = head.split(), tail.split()
        if len(pre) < 6 or len(post) < 3 or not post[0].startswith("fuse"):
            continue
        where = unescape(pre[4])
        yield where, unescape(post[1]), Mount(where, frozenset(post[2].split(",")) | frozenset(pre[5].split(",")))


def find_mount(state_dir: str, configured: str = "", mountinfo: Path = MOUNTINFO, fork: int | None = None,
               answers: bool = True) -> Mount:
    """The live mount of `state_dir` (or the configured mount point; or of its fork `fork`: a
    session in a fork runs programs on the fork's tree), checked usable by agents. `answers`:
    ask its daemon here (else `wait_coherent`'s question is the one that finds it dead)."""
    if fork is not None:
        configured = ""
    source = f"kfs:{state_dir}" if fork is None else f"kfs-fork:{fork}:{state_dir}"
    found: Mount | None = None
    for where, named, mount in _fuse_mounts(mountinfo):
        if (configured and where == configured) or (not configured and named == source):
            found = mount
    if found is None and fork is not None:
        raise Unavailable(f"no FUSE mount of fork {fork} (mount it: komputer mount --fork {fork} -o allow_other "
                          f"--state {state_dir} DIR)")
    if found is None:
        what = f"{configured} is not a FUSE mount" if configured else f"no FUSE mount of {state_dir}"
        raise Unavailable(f"{what} (mount it: komputer mount -o allow_other --state {state_dir} DIR; "
                          "komputer up does it for you)")
    if "allow_other" not in found.options:
        raise Unavailable(f"{found.path} is mounted without allow_other, so agents' programs cannot "
                          f"see it (remount: komputer mount -o allow_other --state {state_dir} {found.path})")
    if answers:
        try:
            os.statvfs(found.path)
        except OSError as e:
            raise _silent(found.path, e) from None
    _check_reachable(found.path)
    return found


def _silent(path: str, e: OSError) -> Unavailable:
    why = "its daemon has died" if e.errno == errno.ENOTCONN else e.strerror
    return Unavailable(f"the mount at {path} does not answer: {why} "
                       f"(clear it: fusermount3 -uz {path}, then mount again)")


def wait_coherent(mount: Mount, target: int, timeout: float = 2.0) -> None:
    """Wait until the mount's kernel caches reflect change `target` (what K commands wrote just
    before): a program must not chdir into a directory K has just replaced and find the old
    one. A daemon that cannot say (an older komputer) is trusted as it is; one that does not
    answer (it died) is Unavailable."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        try:
            seen = int(os.getxattr(mount.path, COHERENCE_XATTR))
        except OSError as e:
            if e.errno in (errno.ENOTCONN, errno.ECONNABORTED):
                raise _silent(mount.path, e) from None
            return
        except ValueError:
            return
        if seen >= target or time.monotonic() > deadline:
            return
        time.sleep(0.0005)


def _check_reachable(path: str) -> None:
    """Agents' programs run as the agent's uid: every directory above the mount must let
    others through (a mount under /root or a 0700 temp directory would fail inside bwrap
    with a less helpful message)."""
    parent = os.path.dirname(path.rstrip("/")) or "/"
    while True:
        mode = os.stat(parent).st_mode
        if not mode & 0o001:
            raise Unavailable(f"agents cannot reach the mount at {path}: {parent} is not searchable "
                              f"by others (chmod o+x {parent}, or mount somewhere like /mnt)")
        if parent == "/":
            return
        parent = os.path.dirname(parent)


VIEW = "kfs-view"  # the source of an agent's view mounted for delegated programs


def views_directory(admin: str) -> str:
    """Where the views of the state mounted at `admin` are mounted: beside it, so that agents
    reach them as they reach it (`/mnt/komputer` -> `/mnt/.komputer-views`)."""
    return os.path.join(os.path.dirname(admin.rstrip("/")) or "/", f".{os.path.basename(admin.rstrip('/'))}-views")


def agent_view(admin: Mount, state_dir: str, agent: str, mode: str, fork: int | None, configured: dict,
               digest: str, hold: Callable[[int], None] | None = None) -> Mount:
    """The live view of `agent` under `mode` (the session's effective mode; `fork`'s tree when
    given; `configured`: what the server's configuration says of the agent) for the policy
    whose digest is `digest`, mounted now if no session mounted it before. `hold` takes the
    daemon's pid (the worker moves it out of the session's cgroup: it serves every session)."""
    source = f"{VIEW}:{agent}:{mode}:{'-' if fork is None else fork}:{digest}:{state_dir}"
    found = _live(source)
    if found is not None:
        return found
    directory = views_directory(admin.path)
    os.makedirs(directory, mode=0o755, exist_ok=True)
    with open(os.path.join(directory, ".lock"), "a") as lock:  # one session mounts; the others wait and find it
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _live(source)
        if found is not None:
            return found
        where = os.path.join(directory, f"{agent}-{mode}{'' if fork is None else f'-fork-{fork}'}-{digest}")
        os.makedirs(where, mode=0o755, exist_ok=True)
        command = [sys.executable, "-m", "kshell.cli", "mount", "--state", state_dir, "--agent", agent, "--mode", mode,
                   "--configured", json.dumps(configured or {}), "-o", f"allow_other,fsname={source}",
                   "--log", where + ".log", *(["--fork", str(fork)] if fork is not None else []), where]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd="/")
        if done.returncode != 0:
            raise Unavailable(f"cannot mount {agent}'s view for its programs at {where}: "
                              f"{(done.stderr or done.stdout).strip() or f'exit status {done.returncode}'}")
        daemon = re.search(r"daemon pid (\d+)", done.stdout)
        if daemon is not None and hold is not None:
            try:
                hold(int(daemon.group(1)))
            except OSError as e:  # it serves all the same, bounded as the session that started it
                log.warning("the view at %s stays in the session's cgroup: %s", where, e)
    found = _live(source)
    if found is None:
        raise Unavailable(f"the view mounted at {where} does not answer (see {where}.log)")
    return found


def _live(source: str) -> Mount | None:
    """The mount of `source` whose daemon answers; one whose daemon died is cleared (None)."""
    found = None
    for _, named, mount in _fuse_mounts():
        if named == source:
            found = mount
    if found is None:
        return None
    try:
        os.statvfs(found.path)
    except OSError:
        subprocess.run(["fusermount3", "-uz", found.path], capture_output=True, check=False, timeout=30)
        return None
    return found


def stop_views(state_dir: str) -> None:
    """The server stops: unmount every view of `state_dir` (lazily: a program still running
    keeps its files until it ends), and remove their mount points."""
    for where, named, _ in list(_fuse_mounts()):
        if named.startswith(VIEW + ":") and named.endswith(":" + state_dir):
            subprocess.run(["fusermount3", "-uz", where], capture_output=True, check=False, timeout=30)
            with contextlib.suppress(OSError):
                os.rmdir(where)


def start_admin_mount(state_dir: Path, mountpoint: Path) -> tuple[subprocess.Popen[str] | None, str]:
    """Run `komputer mount --foreground` as its own process (the FUSE daemon is a separate
    service); returns the process once mounted, or None and the reason it is not."""
    if not Path("/dev/fuse").exists():
        return None, "/dev/fuse is missing (load the fuse module, or run the container with --device /dev/fuse)"
    try:
        import kfs.fuse.mount  # noqa: F401
    except ImportError as e:
        return None, f"the FUSE layer cannot load ({e})"
    mountpoint.mkdir(parents=True, exist_ok=True)
    # agents' delegated programs run as the agent's uid and reach their files through this mount
    shared = ["-o", "allow_other"] if os.geteuid() == 0 else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "kshell.cli", "mount", "--state", str(state_dir), str(mountpoint), "--foreground",
         *shared],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None
    result: list[str] = []

    def wait_ready() -> None:
        line = proc.stdout.readline() if proc.stdout else ""
        result.append(line)

    waiter = threading.Thread(target=wait_ready, daemon=True)
    waiter.start()
    waiter.join(30)
    if result and "mounted at" in result[0]:
        return proc, ""
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        err = ""
    return None, (err or "".join(result)).strip() or "the mount did not come up within 30 s"


def stop_admin_mount(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
