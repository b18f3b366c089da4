"""Host files' attributes as K's Inodes, numbered under the tag of where K shows them (a host
drive, the shell's system view): kept apart from kfs.drives.host, which the shell loads only
when a session has a host drive."""

from __future__ import annotations

import os

from kfs.vfs import Inode

INO_MASK = (1 << 48) - 1  # a host inode number, below the tag of the drive (or view) it shows in


def inode_of(s: os.stat_result, base: int = 0) -> Inode:
    """A host file's attributes as an Inode, its number under `base` (where K shows it)."""
    return Inode(base | (s.st_ino & INO_MASK), s.st_mode, s.st_uid, s.st_gid, s.st_nlink, s.st_size,
                 s.st_atime_ns, s.st_mtime_ns, s.st_ctime_ns, s.st_ctime_ns, 1, s.st_rdev)
