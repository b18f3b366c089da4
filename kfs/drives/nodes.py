"""The inode face of the image's drives: `MountedVFS`, K's VFS with every drive mounted on it,
as the FUSE mount serves it (kfs.fuse.operations speaks inode numbers, a drive speaks paths).

A drive's files keep the numbers a session's shell shows for them (kfs.drives.view): drive i's
are `(16 + i) << 48 | the backing's own`. The kernel meets a drive where K's directory of its
path is: a lookup of that name, or a listing of its parent, answers with the drive's top, and
`..` of the top is K's parent again, as a Linux mount shows. The kernel names a drive's file by
a number; `DriveNodes` keeps the path in the drive it was looked up under (moved with a rename,
dropped when the kernel forgets it), and each request runs as the caller on the backing's view
of that path: a memory drive's PathFS, a host drive's directory (openat2, the caller's fsuid),
a python drive's object. The mount runs no image code, so a python drive answers "Operation not
supported" there, as over SFTP.

What other processes write on a drive (the sessions' shells, SFTP, programs on the host) comes
with no change feed the mount could follow, so a drive's attributes and names are never cached
by the kernel and its page cache is dropped at each open: close-to-open consistency, as NFS
gives. The drives follow the image in force and the server run: at most once a second, a lookup
checks whether a new image changed them or a new server run replaced the memory drives (whose
files are then gone, as a restart means), and mounts them again.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kfs.drives.inodes import INO_MASK
from kfs.drives.memory import MemoryDrives, run_directory
from kfs.drives.view import DRIVE_INO, Backing, mount, tag
from kfs.kstate import Txn
from kfs.runtime import image
from kfs.runtime.drives import of_image
from kfs.values import replace
from kfs.vfs import ROOT, VFS, W_OK, Cred, Inode, StatFS
from kfs.vfs.cred import allowed
from kfs.vfs.errors import fs_error

FIRST_TAG = DRIVE_INO  # an inode number at or above FIRST_TAG << 48 is a drive's
DRIVES_BASE = FIRST_TAG << 48
CHECK_SECONDS = 1.0  # how often a lookup asks whether the drives changed
_LISTINGS = 64  # open directory listings kept per drive (a listing is read in batches)


class DriveFile:
    """An open file of a drive: the backing's handle under the drive's number."""

    def __init__(self, ino: int, handle: Any) -> None:
        self.ino = ino
        self.handle = handle

    def pread(self, size: int, offset: int) -> bytes:
        return self.handle.pread(size, offset)

    def pread_into(self, out: memoryview, offset: int) -> int:
        return self.handle.pread_into(out, offset)

    def pwrite(self, buf: bytes | memoryview, offset: int) -> int:
        return self.handle.pwrite(buf, offset)


class DriveDir:
    """An open directory of a drive (its listing is read when it is opened)."""

    def __init__(self, ino: int) -> None:
        self.ino = ino


class DriveNodes:
    """One mounted drive by inode number: the paths the kernel knows its files by."""

    def __init__(self, backing: Backing, point: int) -> None:
        self.backing = backing
        self.point = point  # K's directory it is mounted on
        self.tag = tag(backing)
        self.paths: dict[int, str] = {}  # the backing's own number -> path in the drive
        self.open: dict[int, list[DriveFile]] = {}  # number -> its open files (an unlinked file's attributes)
        self.listings: dict[int, list[tuple[str, Inode]]] = {}  # number -> listing read at opendir

    @property
    def readonly(self) -> bool:
        return bool(getattr(self.backing, "readonly", self.backing.drive.readonly))

    def view(self, cred: Cred) -> Any:
        """The backing's path view for `cred` (the kernel applied the caller's umask)."""
        return self.backing.view(cred, 0)

    def writer(self, cred: Cred) -> Any:
        """`view`, for a write: EROFS on a read-only drive."""
        if self.readonly:
            raise fs_error(errno.EROFS)
        return self.backing.view(cred, 0)

    def tagged(self, inode: Inode, path: str | None = None) -> Inode:
        """`inode` under the drive's number; remembered as `path` when given."""
        raw = inode.ino & INO_MASK
        if path is not None:
            self.paths[raw] = path
        return replace(inode, ino=self.tag | raw)

    def path(self, ino: int) -> str:
        """The path in the drive of number `ino` (ESTALE: one the kernel never looked up here,
        as after the drive was mounted again)."""
        try:
            return self.paths[ino & INO_MASK]
        except KeyError:
            raise fs_error(errno.ESTALE) from None

    def child(self, parent: int, name: bytes) -> str:
        return posixpath.join(self.path(parent), os.fsdecode(name))

    def top(self, cred: Cred) -> Inode:
        return self.tagged(self.view(cred).lstat("/"), "/")

    def entry(self, path: str, cred: Cred = ROOT) -> Inode:
        return self.tagged(self.view(cred).lstat(path), path)

    def renamed(self, old: str, new: str) -> None:
        """Paths under `old` are under `new` now."""
        for raw, path in list(self.paths.items()):
            if path == old or path.startswith(old + "/"):
                self.paths[raw] = new + path[len(old):]


class MountedVFS:
    """K's VFS with the image's drives mounted on it (module docstring): the inode API the FUSE
    layer calls, each request sent to K or to the drive its number (or its parent's) lies on."""

    def __init__(self, vfs: VFS, memory_dir: Path | None = None) -> None:
        self.vfs = vfs
        self.state = vfs.state
        self._memory_dir = memory_dir if memory_dir is not None else run_directory(vfs.state)
        self._memory: MemoryDrives | None = None
        self._drives: dict[int, DriveNodes] = {}  # tag >> 48 -> drive
        self._points: dict[int, DriveNodes] = {}  # K directory -> the drive mounted on it
        self._version: object = ()  # the image version (and memory run) the drives were mounted for
        self._next_check = 0.0

    @property
    def by(self) -> str:
        return self.vfs.by

    @by.setter
    def by(self, value: str) -> None:
        self.vfs.by = value

    # -- which drives are mounted --------------------------------------------------------------

    def refresh(self, *, force: bool = False) -> None:
        """Mount the drives again when the image in force or the server run changed them."""
        now = time.monotonic()
        if not force and now < self._next_check:
            return
        self._next_check = now + CHECK_SECONDS
        record = image.current(self.state)
        records = of_image(record)
        run = _identity(self._memory_dir) if any(d.kind == "memory" for d in records) else None
        version = (record["version"] if record else None, run)
        if version == self._version and not (self._memory is not None and self._memory.stale()):
            return
        self.close()
        if run is not None:
            self._memory = MemoryDrives(self._memory_dir)
        overlay = getattr(self.state, "record", {}).get("disk") == "overlay"  # a fork's
        drives = mount(records, self.vfs, self._memory, overlay=overlay) if records else None
        self._drives, self._points = {}, {}
        for backing in drives or ():
            point = drives.point(backing)  # type: ignore[union-attr]
            if point is not None:
                nodes = DriveNodes(backing, point)
                self._drives[DRIVE_INO + backing.index] = self._points[point] = nodes
        self._version = version

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()
            self._memory = None

    def drive(self, ino: int) -> DriveNodes | None:
        """The drive `ino` lies on; None for K's own."""
        return None if ino < DRIVES_BASE else self._drive_of(ino)

    def _drive_of(self, ino: int) -> DriveNodes:
        return self._drives.get(ino >> 48) or _gone()

    def _shown(self, inode: Inode, cred: Cred) -> Inode:
        """K's `inode`, or the top of the drive mounted on it."""
        d = self._points.get(inode.ino)
        return inode if d is None else d.top(cred)

    def _busy(self, parent: int, name: bytes) -> None:
        """EBUSY for an entry of K that a drive is mounted on, or that holds one."""
        if not self._points:
            return
        try:
            ino = self.vfs.lookup(parent, name).ino
        except OSError:
            return
        if ino in self._points:
            raise fs_error(errno.EBUSY)
        try:
            prefix = self.vfs.path_of(ino).rstrip("/") + "/" if self.vfs.getattr(ino).is_dir else None
        except OSError:
            return
        if prefix is not None and any(d.backing.drive.path.startswith(prefix) for d in self._points.values()):
            raise fs_error(errno.EBUSY)

    def _same(self, *inos: int) -> DriveNodes | None:
        """The drive all of `inos` lie on (None: K's); EXDEV when they are on different ones."""
        found = {ino >> 48 if ino >= DRIVES_BASE else 0 for ino in inos}
        if len(found) > 1:
            raise fs_error(errno.EXDEV)
        return self.drive(inos[0])

    # -- the inode API -------------------------------------------------------------------------

    # The hot requests test `ino < DRIVES_BASE` (K's own) before calling `drive`: most are K's.

    def lookup(self, parent: int, name: bytes, cred: Cred = ROOT) -> Inode:
        if parent < DRIVES_BASE:
            if time.monotonic() >= self._next_check:
                self.refresh()
            inode = self.vfs.lookup(parent, name, cred)
            return self._shown(inode, cred) if self._points else inode
        d = self._drive_of(parent)
        if name == b"..":
            path = d.path(parent)
            if path == "/":
                return self.vfs.lookup(d.point, b"..", cred)
            return d.entry(posixpath.dirname(path), cred)
        if name == b".":
            return self.getattr(parent)
        return d.entry(d.child(parent, name), cred)

    def getattr(self, ino: int) -> Inode:
        if ino < DRIVES_BASE:
            return self.vfs.getattr(ino)
        d = self._drive_of(ino)
        try:
            return d.entry(d.path(ino))
        except FileNotFoundError:
            for f in d.open.get(ino & INO_MASK, ()):  # unlinked while open: fstat still answers
                return d.tagged(f.handle.getattr())
            raise

    def setattr(self, ino: int, cred: Cred, handle: Any = None, **changes: Any) -> Inode:
        if ino < DRIVES_BASE:
            return self.vfs.setattr(ino, cred, handle=handle, **changes)
        d = self._drive_of(ino)
        if isinstance(handle, DriveFile):
            return d.tagged(handle.handle.setattr(**changes))
        view, path = d.writer(cred), d.path(ino)
        if "uid" in changes or "gid" in changes:
            view.chown(path, changes.get("uid"), changes.get("gid"), follow=False)
        if "size" in changes:
            view.truncate(path, changes["size"])
        if "mode" in changes:
            view.chmod(path, changes["mode"])
        if "atime" in changes or "mtime" in changes:
            view.utime(path, changes.get("atime"), changes.get("mtime"), follow=False)
        return self.getattr(ino)

    def readlink(self, ino: int) -> bytes:
        d = self.drive(ino)
        if d is None:
            return self.vfs.readlink(ino)
        return os.fsencode(d.view(ROOT).readlink(d.path(ino)))

    def access(self, ino: int, mode: int, cred: Cred) -> None:
        d = self.drive(ino)
        if d is None:
            return self.vfs.access(ino, mode, cred)
        if mode & W_OK and d.readonly:
            raise fs_error(errno.EROFS)
        if mode and not allowed(cred, self.getattr(ino), mode & 7):
            raise fs_error(errno.EACCES)
        return None

    def statfs(self, uid: int = 0) -> StatFS:
        return self.vfs.statfs(uid)

    def mknod(self, parent: int, name: bytes, mode: int, rdev: int, cred: Cred) -> Inode:
        d = self.drive(parent)
        if d is None:
            return self.vfs.mknod(parent, name, mode, rdev, cred)
        path = d.child(parent, name)
        d.writer(cred).mknod(path, mode, rdev)
        return d.entry(path)

    def mkdir(self, parent: int, name: bytes, mode: int, cred: Cred) -> Inode:
        if parent < DRIVES_BASE:
            return self.vfs.mkdir(parent, name, mode, cred)
        d = self._drive_of(parent)
        path = d.child(parent, name)
        d.writer(cred).mkdir(path, mode)
        return d.entry(path)

    def symlink(self, parent: int, name: bytes, target: bytes, cred: Cred) -> Inode:
        d = self.drive(parent)
        if d is None:
            return self.vfs.symlink(parent, name, target, cred)
        path = d.child(parent, name)
        d.writer(cred).symlink(os.fsdecode(target), path)
        return d.entry(path)

    def link(self, ino: int, new_parent: int, new_name: bytes, cred: Cred) -> Inode:
        d = self._same(ino, new_parent)
        if d is None:
            return self.vfs.link(ino, new_parent, new_name, cred)
        path = d.child(new_parent, new_name)
        d.writer(cred).link(d.path(ino), path)
        return d.entry(path)

    def unlink(self, parent: int, name: bytes, cred: Cred) -> None:
        if parent < DRIVES_BASE:
            return self.vfs.unlink(parent, name, cred)
        d = self._drive_of(parent)
        return d.writer(cred).unlink(d.child(parent, name))

    def rmdir(self, parent: int, name: bytes, cred: Cred) -> None:
        d = self.drive(parent)
        if d is None:
            self._busy(parent, name)
            return self.vfs.rmdir(parent, name, cred)
        return d.writer(cred).rmdir(d.child(parent, name))

    def rename(self, parent_old: int, name_old: bytes, parent_new: int, name_new: bytes, flags: int,
               cred: Cred, judge: Callable[[Txn], None] | None = None) -> None:
        """`judge`: the policy's, in K's rename transaction (VFS.rename); a drive's rename is
        judged by its places alone."""
        d = None if parent_old < DRIVES_BASE and parent_new < DRIVES_BASE else self._same(parent_old, parent_new)
        if d is None:
            self._busy(parent_old, name_old)
            self._busy(parent_new, name_new)
            return self.vfs.rename(parent_old, name_old, parent_new, name_new, flags, cred, judge)
        old, new = d.child(parent_old, name_old), d.child(parent_new, name_new)
        d.writer(cred).rename(old, new, flags)
        d.renamed(old, new)
        return None

    def open(self, ino: int, flags: int, cred: Cred = ROOT) -> Any:
        d = self.drive(ino)
        if d is None:
            return self.vfs.open(ino, flags, cred)
        path = d.path(ino)
        if flags & os.O_DIRECTORY:
            listing = d.view(cred).scandir(path)  # the caller's right to list, checked here
            d.listings.pop(ino, None)
            d.listings[ino] = listing
            while len(d.listings) > _LISTINGS:
                d.listings.pop(next(iter(d.listings)))
            return DriveDir(ino)
        writes = flags & (os.O_WRONLY | os.O_RDWR | os.O_TRUNC | os.O_APPEND)
        view = d.writer(cred) if writes else d.view(cred)
        return self._opened(d, ino, _open(view, path, flags & ~(os.O_CREAT | os.O_EXCL)))

    def create(self, parent: int, name: bytes, mode: int, flags: int, cred: Cred) -> tuple[Any, Inode]:
        if parent < DRIVES_BASE:
            return self.vfs.create(parent, name, mode, flags, cred)
        d = self._drive_of(parent)
        path = d.child(parent, name)
        handle = _open(d.writer(cred), path, flags | os.O_CREAT, mode)
        inode = d.tagged(handle.getattr(), path)
        return self._opened(d, inode.ino, handle), inode

    @staticmethod
    def _opened(d: DriveNodes, ino: int, handle: Any) -> DriveFile:
        f = DriveFile(d.tag | (ino & INO_MASK), handle)
        d.open.setdefault(ino & INO_MASK, []).append(f)
        return f

    def release_later(self, handle: Any) -> None:
        if isinstance(handle, DriveFile):
            d = self.drive(handle.ino)
            files = d.open.get(handle.ino & INO_MASK, []) if d is not None else []
            with contextlib.suppress(ValueError):
                files.remove(handle)
            if d is not None and not files:
                d.open.pop(handle.ino & INO_MASK, None)
            handle.handle.close()
        elif not isinstance(handle, DriveDir):
            self.vfs.release_later(handle)

    def settle_releases(self) -> None:
        self.vfs.settle_releases()

    def fsync(self, handle: Any) -> None:
        """Make what was written to the open file `handle` durable (None: K's whole state)."""
        if isinstance(handle, DriveFile):
            handle.handle.fsync()
        else:
            self.vfs.sync()

    def sync(self) -> None:
        self.vfs.sync()

    def readdir(self, ino: int, after: int, cred: Cred = ROOT, limit: int | None = None,
                ) -> list[tuple[bytes, Inode, int]]:
        d = self.drive(ino)
        if d is None:
            batch = self.vfs.readdir(ino, after, cred, limit=limit)
            if not self._points:
                return batch
            return [(name, self._top_or(inode), cookie) for name, inode, cookie in batch]
        listing = d.listings.get(ino)
        if listing is None:
            listing = d.listings[ino] = d.view(cred).scandir(d.path(ino))
        base = d.path(ino)
        end = len(listing) if limit is None else after + limit
        return [(os.fsencode(name), d.tagged(inode, posixpath.join(base, name)), i)
                for i, (name, inode) in enumerate(listing[after:end], after + 1)]

    def _top_or(self, inode: Inode) -> Inode:
        """A listed entry that a drive is mounted on shows the drive's top, when it answers."""
        if inode.ino not in self._points:
            return inode
        try:
            return self._shown(inode, ROOT)
        except OSError:
            return inode

    def getxattr(self, ino: int, name: bytes, cred: Cred = ROOT) -> bytes:
        d = self.drive(ino)
        if d is None:
            return self.vfs.getxattr(ino, name, cred)
        return d.view(cred).getxattr(d.path(ino), name, follow=False)

    def setxattr(self, ino: int, name: bytes, value: bytes, flags: int, cred: Cred) -> None:
        d = self.drive(ino)
        if d is None:
            return self.vfs.setxattr(ino, name, value, flags, cred)
        return d.writer(cred).setxattr(d.path(ino), name, value, flags, follow=False)

    def listxattr(self, ino: int, cred: Cred = ROOT) -> list[bytes]:
        d = self.drive(ino)
        if d is None:
            return self.vfs.listxattr(ino, cred)
        return d.view(cred).listxattr(d.path(ino), follow=False)

    def removexattr(self, ino: int, name: bytes, cred: Cred) -> None:
        d = self.drive(ino)
        if d is None:
            return self.vfs.removexattr(ino, name, cred)
        return d.writer(cred).removexattr(d.path(ino), name, follow=False)

    def path_of(self, ino: int) -> str:
        d = self.drive(ino)
        if d is None:
            return self.vfs.path_of(ino)
        path = d.path(ino)
        return d.backing.drive.path + (path if path != "/" else "")

    def forget(self, ino: int) -> None:
        """The kernel holds no reference to `ino` any more: a drive's path of it goes."""
        d = self.drive(ino) if ino >= DRIVES_BASE and (ino >> 48) in self._drives else None
        if d is not None and d.paths.get(ino & INO_MASK) != "/":
            d.paths.pop(ino & INO_MASK, None)

    def drives(self) -> Iterator[DriveNodes]:
        return iter(self._drives.values())


def _open(view: Any, path: str, flags: int, mode: int = 0o666) -> Any:
    """Open a drive's file readable too when the caller may read it: under its writeback cache
    the kernel reads pages through whatever handle a file has, a write-only one included."""
    if flags & os.O_ACCMODE == os.O_WRONLY:
        try:
            return view.open(path, flags & ~os.O_ACCMODE | os.O_RDWR, mode)
        except PermissionError:
            pass
    return view.open(path, flags, mode)


def _gone() -> DriveNodes:
    """A number of a drive no longer mounted (the image changed): stale."""
    raise fs_error(errno.ESTALE)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        s = os.stat(path)
    except OSError:
        return None
    return s.st_dev, s.st_ino
