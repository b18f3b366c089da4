"""A synthetic drive: a read-only directory of files made when read, behind the `Backing`
protocol of kfs.drives.view like the image's drives. The shell's /sys is one (kshell.exec.system:
its hosts.md, secrets.md), so that the session's view sends /sys where it sends a drive's paths.

Its files are `name -> () -> bytes`, a table the caller keeps and may change at any time (two
sessions with different tables each see their own); each is root's, 0644, and its bytes are
made at each stat and open. Its top is root's directory, 0755. With an empty table the drive
has nothing, not even its top (ENOENT): a view shows no /sys then. Writes fail with EROFS (the
drive is read-only), and df does not list it (`listed`), as it lists no /sys.
"""

from __future__ import annotations

import errno
import os
import stat as st
import time
import zlib
from collections.abc import Callable, Mapping
from typing import Any

from kfs.runtime.drives import Drive
from kfs.vfs import Cred, Inode, StatFS
from kfs.vfs.cred import R_OK, require
from kfs.vfs.errors import fs_error
from kfs.vfs.paths import PathLike

_BOOT = time.time_ns()
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def synthetic_inode(ino: int, mode: int, size: int = 0) -> Inode:
    """A synthetic node's attributes: root's, made at this process's start."""
    return Inode(ino, mode, 0, 0, 1, size, _BOOT, _BOOT, _BOOT, _BOOT)


class BytesHandle:
    """An open read-only file over bytes, with the FileHandle methods tools use."""

    def __init__(self, inode: Inode, data: bytes, path: str) -> None:
        self.inode = inode
        self.path = path
        self._data = data

    def getattr(self) -> Inode:
        return self.inode

    def pread(self, size: int, offset: int) -> bytes:
        return self._data[offset:offset + size]

    def pread_into(self, out: memoryview, offset: int) -> int:
        chunk = self.pread(len(out), offset)
        out[:len(chunk)] = chunk
        return len(chunk)

    def read_all(self) -> bytes:
        parts = []
        offset = 0
        while chunk := self.pread(1 << 20, offset):
            parts.append(chunk)
            offset += len(chunk)
        return b"".join(parts)

    def pwrite(self, buf: bytes | memoryview, offset: int) -> int:
        raise fs_error(errno.EBADF, self.path)

    def truncate(self, size: int) -> None:
        raise fs_error(errno.EROFS, self.path)

    def fsync(self) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> BytesHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SyntheticBacking:
    """A mounted synthetic drive at `path` over the table `files` (module docstring)."""

    listed = False  # df lists no synthetic filesystem
    readonly = True

    def __init__(self, path: str, index: int, files: Mapping[str, Callable[[], bytes]]) -> None:
        self.drive = Drive(name=path.rsplit("/", 1)[-1], path=path, kind="synthetic", readonly=True)
        self.index = index
        self.files = files

    def view(self, cred: Cred, umask: int) -> SyntheticView:
        return SyntheticView(self, cred)

    def statfs(self) -> StatFS:
        return StatFS(4096, 0, 0, 0, 0)  # as sysfs: no room, nothing to count


class SyntheticView:
    """A synthetic drive's paths ("/" its top) for one caller: the PathFS-shaped calls a
    session's view sends there (kfs.drives.view), read-only."""

    def __init__(self, backing: SyntheticBacking, cred: Cred) -> None:
        self.backing = backing
        self.cred = cred

    def _top(self) -> Inode:
        return synthetic_inode(16 + zlib.crc32(self.backing.drive.path.encode()), st.S_IFDIR | 0o755, 4096)

    def _node(self, path: PathLike) -> tuple[Inode, Callable[[], bytes] | None]:
        """The inode at the drive's `path` and, for a file, what makes its bytes."""
        files = self.backing.files
        rel = os.fsdecode(path).strip("/")
        if not files:
            raise fs_error(errno.ENOENT, path)
        if not rel or rel == ".":
            return self._top(), None
        make = files.get(rel)
        if make is None:
            raise fs_error(errno.ENOENT, path)
        shown = f"{self.backing.drive.path}/{rel}"
        return synthetic_inode(4 << 40 | zlib.crc32(shown.encode()), st.S_IFREG | 0o644, len(make())), make

    def stat(self, path: PathLike) -> Inode:
        return self._node(path)[0]

    lstat = stat  # no links here

    def realpath(self, path: PathLike, *, strict: bool = True) -> str:
        if strict:
            self._node(path)
        return "/" + os.fsdecode(path).strip("/")

    def scandir(self, path: PathLike = "/") -> list[tuple[str, Inode]]:
        inode, make = self._node(path)
        if make is not None:
            raise fs_error(errno.ENOTDIR, path)
        require(self.cred, inode, R_OK, path)
        return [(name, self.stat(name)) for name in sorted(self.backing.files)]

    def open(self, path: PathLike, flags: int = os.O_RDONLY, mode: int = 0o666) -> BytesHandle:
        if flags & _WRITES:
            raise fs_error(errno.EROFS, path)
        inode, make = self._node(path)
        if make is None:
            raise fs_error(errno.EISDIR, path)
        require(self.cred, inode, R_OK, path)
        data = make()
        return BytesHandle(synthetic_inode(inode.ino, inode.mode, len(data)), data, os.fsdecode(path))

    def read_file(self, path: PathLike) -> bytes:
        with self.open(path) as handle:
            return handle.read_all()

    def readlink(self, path: PathLike) -> str:
        self._node(path)
        raise fs_error(errno.EINVAL, path)

    def getxattr(self, path: PathLike, name: bytes, *, follow: bool = True) -> bytes:
        self._node(path)
        raise fs_error(errno.ENODATA, path)

    def listxattr(self, path: PathLike, *, follow: bool = True) -> list[bytes]:
        self._node(path)
        return []

    def __getattr__(self, name: str) -> Any:
        """Every other call would change the drive: EROFS."""

        def refused(path: PathLike, *args: Any, **kwargs: Any) -> Any:
            raise fs_error(errno.EROFS, path)

        return refused

