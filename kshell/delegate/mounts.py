"""Finding the FUSE mount of the server's own state: delegated programs see the agent's files
through it, so that what they write lands in KState under the agent's uid.

`komputer mount` names its source `kfs:STATE_DIR` (what mount(8) and df show), so the kernel's
own mount table says where a state is mounted, whether its daemon is alive, and with which
options: no record in KState can go stale when a mount dies."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from kfs.fuse.mount import unescape
from kfs.fuse import COHERENCE_XATTR

MOUNTINFO = Path("/proc/self/mountinfo")


class Unavailable(Exception):
    """Delegation cannot run here; the message says why and what to configure."""


@dataclass(frozen=True, slots=True)
class Mount:
    path: str
    options: frozenset[str]


def find_mount(state_dir: str, configured: str = "", mountinfo: Path = MOUNTINFO, fork: int | None = None) -> Mount:
    """The live mount of `state_dir` (or the configured mount point; or of its fork `fork`: a
    session in a fork runs programs on the fork's tree), checked usable by agents."""
    if fork is not None:
        configured = ""
    source = f"kfs:{state_dir}" if fork is None else f"kfs-fork:{fork}:{state_dir}"
    found: Mount | None = None
    for line in mountinfo.read_text().splitlines():
        head, _, tail = line.partition(" - ")
        pre, post = head.split(), tail.split()
        if len(pre) < 6 or len(post) < 3 or not post[0].startswith("fuse"):
            continue
        where = unescape(pre[4])
        if (configured and where == configured) or (not configured and unescape(post[1]) == source):
            found = Mount(where, frozenset(post[2].split(",")) | frozenset(pre[5].split(",")))
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
    try:
        os.statvfs(found.path)
    except OSError as e:
        why = "its daemon has died" if e.errno == errno.ENOTCONN else e.strerror
        raise Unavailable(f"the mount at {found.path} does not answer: {why} "
                          f"(clear it: fusermount3 -uz {found.path}, then mount again)") from None
    _check_reachable(found.path)
    return found


def wait_coherent(mount: Mount, target: int, timeout: float = 2.0) -> None:
    """Wait until the mount's kernel caches reflect change `target` (what K commands wrote just
    before): a program must not chdir into a directory K has just replaced and find the old
    one. A daemon that cannot say (an older komputer) is trusted as it is."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        try:
            seen = int(os.getxattr(mount.path, COHERENCE_XATTR))
        except (OSError, ValueError):
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
