"""The image's drives: paths of the tree mounted from other backings (docs/image.md, Drives).

    [drives.scratch]
    path = "/mnt/scratch"      # where it is mounted
    kind = "memory"            # memory: a fresh, bounded store for each server run
    max_bytes = "64M"
    agent_max_bytes = "16M"    # what one agent may hold there (default: half of max_bytes)

    [drives.data]
    path = "/mnt/data"
    kind = "host"              # host: a real directory of the host
    source = "/srv/data"
    readonly = true

    [drives.crm]
    path = "/mnt/crm"
    kind = "python"            # python: files the image's own code serves
    handler = "crmdrive:CRMDrive"

`kfs.runtime.image` checks these tables (naming file and line) and stores them in the image's
spec; `of_image` turns the record in force into `Drive`s for whoever mounts them
(kfs.drives). The backings themselves live in kfs.drives.memory, kfs.drives.host and
kfs.drives.python.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import Any

from kfs.values import value_class

KINDS = ("memory", "host", "python")
# K's own trees: its devices and the session's /sys, the account files (/etc), the admin view
# (/.komputer), and the host's programs a delegating session shows (/usr, /bin, /sbin, /lib*):
# a drive there would hide them
RESERVED = ("/dev", "/proc", "/sys", "/etc", "/.komputer", "/usr", "/bin", "/sbin", "/lib*")
# the host's system trees, which a host drive may not show (with the agents' uids, writable)
HOST_SYSTEM = ("/etc", "/usr", "/bin", "/sbin", "/lib*", "/boot", "/proc", "/sys", "/dev", "/root", "/run",
               "/var")
_SIZE = re.compile(r"([0-9]+)\s*([KMG]?)(?:i?B)?\Z", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


@value_class(frozen=True, slots=True)
class Drive:
    """One drive of the image: `name` (its table), `path` (absolute, normal), `kind`, and what
    that kind needs: `max_bytes` (and `agent_max_bytes`, 0: the default) for memory, `source`
    (and `readonly`) for host, `handler` (and `readonly`) for python: the image's class, as
    `module:Name`."""

    name: str
    path: str
    kind: str
    max_bytes: int = 0
    source: str = ""
    readonly: bool = False
    handler: str = ""
    agent_max_bytes: int = 0

    @property
    def agent_share(self) -> int:
        """What one agent may hold on a memory drive: `agent_max_bytes`, else half the drive,
        so that no one agent can fill it for the others (a tmpfs is shared whole: this is
        what tmpfs's per-user quota, `usrquota_block_hardlimit`, adds)."""
        return self.agent_max_bytes or max(self.max_bytes // 2, 1)

    @property
    def agent_files(self) -> int:
        """How many files one agent may have on a memory drive: one per 4 KiB of its share,
        tmpfs's own default ratio (nr_inodes: a page's worth of size per inode), at least 64.
        A file's records take room beyond the bytes counted, so many empty files would
        otherwise fill the drive as surely as one large one."""
        return max(self.agent_share // 4096, 64)

    def describe(self) -> str:
        """What backs it, in a few words: the host directory, the python drive's class, or the
        memory drive's limit."""
        if self.kind == "host":
            return self.source
        if self.kind == "python":
            return self.handler
        return f"max {size_text(self.max_bytes)}, {size_text(self.agent_share)} per agent"


def of_image(record: dict[str, Any] | None) -> list[Drive]:
    """The drives of an image record (`kfs.runtime.image.current`), by path; none without one
    (or for a record stored before images had drives)."""
    if record is None:
        return []
    spec = record["spec"].get("drives", {})
    return sorted((Drive(name, **fields) for name, fields in spec.items()), key=lambda d: d.path)


def parse_size(value: object) -> int:
    """A byte count as the image writes it: an integer, or digits with a K, M or G suffix
    (powers of 1024: "64M" is 64 MiB). ValueError for anything else, or for zero."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(value)
    if isinstance(value, int):
        n = value
    else:
        m = _SIZE.match(value.strip())
        if m is None:
            raise ValueError(value)
        n = int(m.group(1)) * _UNITS[m.group(2).upper()]
    if n <= 0:
        raise ValueError(value)
    return n


def size_text(n: int) -> str:
    """`n` bytes the way the image may write it: 64M rather than 67108864."""
    for unit in "GMK":
        if n % _UNITS[unit] == 0:
            return f"{n // _UNITS[unit]}{unit}"
    return str(n)


def under(path: str, top: str) -> bool:
    """Whether the absolute normal `path` is `top` or lies beneath it."""
    return path == top or top == "/" or path.startswith(top + "/")


def tree_of(path: str, trees: tuple[str, ...]) -> str | None:
    """The tree of `trees` the absolute normal `path` is or lies beneath (`/lib*` is every
    top-level name that starts with lib), or None."""
    top = "/" + path.split("/")[1]
    for tree in trees:
        if tree.endswith("*") and tree.count("/") == 1 and top.startswith(tree[:-1]):
            return top
        if not tree.endswith("*") and under(path, tree):
            return tree
    return None


def is_home(path: str) -> bool:
    """Whether `path` is a home (/root, /home/NAME) or /home itself (module's HOMES)."""
    return path in ("/root", "/home") or posixpath.dirname(path) == "/home"


def memory_bound() -> int:
    """What the image's memory drives may hold, together: the host's physical memory. A memory
    drive lives in tmpfs, whose pages are RAM (or swap): a size beyond what the machine has
    can never be held and only hides a mistake."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
