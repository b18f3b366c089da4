"""The inode record: POSIX attributes packed into one LMDB value."""

from __future__ import annotations

import stat as st
import struct

from kfs.values import value_class

_PACK = INODE_STRUCT = struct.Struct(">IIIIQqqqqQQ")  # mode uid gid nlink size a/m/c/btime gen rdev
_unpack = _PACK.unpack
_new = object.__new__
# Byte offsets of fields in that record, for a hot path that edits it in place (a handle's write)
MODE_AT, SIZE_AT, MTIME_AT, CTIME_AT = 0, 16, 32, 40

ROOT_INO = 1
CHUNK_SIZE = 64 * 1024
NAME_MAX = 255
PATH_MAX = 4096
SYMLOOP_MAX = 40
DIR_SIZE = 4096  # what ext4 shows for a directory, so `ls -l` reads as agents expect


@value_class(slots=True)
class Inode:
    """Attributes of one file; `size` is the byte length, times are nanoseconds since the epoch.

    Inode numbers are never reused (they come from a monotonic counter), so `generation`
    stays 1 until a future scheme recycles numbers.
    """

    ino: int
    mode: int
    uid: int
    gid: int
    nlink: int
    size: int
    atime: int
    mtime: int
    ctime: int
    btime: int
    generation: int = 1
    rdev: int = 0

    def pack(self) -> bytes:
        return _PACK.pack(
            self.mode, self.uid, self.gid, self.nlink, self.size, self.atime, self.mtime,
            self.ctime, self.btime, self.generation, self.rdev,
        )

    @classmethod
    def unpack(cls, ino: int, raw: bytes) -> Inode:
        """The inode stored as `raw`. Built without calling `__init__`: twelve arguments cost
        more to pass than to store, and every request reads an inode or more."""
        inode = _new(cls)
        (inode.mode, inode.uid, inode.gid, inode.nlink, inode.size, inode.atime, inode.mtime,
         inode.ctime, inode.btime, inode.generation, inode.rdev) = _unpack(raw)
        inode.ino = ino
        return inode

    # The type tests run several times per path component: plain masks, no stat-module call.
    @property
    def is_dir(self) -> bool:
        return self.mode & 0o170000 == 0o040000

    @property
    def is_reg(self) -> bool:
        return self.mode & 0o170000 == 0o100000

    @property
    def is_lnk(self) -> bool:
        return self.mode & 0o170000 == 0o120000

    @property
    def kind(self) -> int:
        """The file type bits (S_IFMT part) of the mode."""
        return st.S_IFMT(self.mode)

    @property
    def perm(self) -> int:
        """The permission bits including setuid, setgid and sticky."""
        return st.S_IMODE(self.mode)

    @property
    def blocks(self) -> int:
        """512-byte blocks as st_blocks counts them, allocating in 4 KiB pages (holes count too)."""
        return (self.size + 4095) // 4096 * 8
