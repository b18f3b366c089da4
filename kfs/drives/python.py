"""Python drives: a path of the tree whose files the image's own code serves.

The operator writes a class (docs/image.md, Drives); a session's worker loads it from the image,
makes one instance and calls its `mount(ctx)` (kshell.tools.image_drives), and hands that
object to `PythonBacking`. kfs never imports the image's code: the object is a plain one here.

    stat(path) -> {"type": "file"|"dir", "size": int, "mtime": float, "mode": int} | None
    readdir(path) -> list[str];  read(path) -> bytes
    write(path, data)                      optional: without it the drive is read-only
    mkdir(path), unlink(path), rmdir(path), rename(old, new)   optional

Paths given to it are the drive's own, absolute and normal ("/" its top). `PythonFS` is one
caller's view in PathFS's shape, as kfs.drives.host's HostFS is: the K shell's tools and SFTP
use it through kfs.drives.view.DriveFS. A file opened for writing is held in memory and given
back whole, `write(path, data)`, when it is closed or synced: the object sees whole files,
never offsets. There are no links, owners or permission changes: those fail with EPERM, as on a
filesystem that has none; a drive declared `readonly`, or whose class has no `write`, refuses
every write with EROFS.

The object's exceptions become errno values (`_errno`): FileNotFoundError is ENOENT, and so on;
anything else is EIO, and a log line names the file and line that raised, never the
exception's message (it may carry a secret). Calls to the objects of one process are serialised
(`_CALLS`): the operator's code need not be thread-safe, though a shell runs jobs in threads and
one object serves every session a worker has. Each call is bounded in time (CALL_TIMEOUT,
kfs.runtime.bounded): one that does not return is ETIMEDOUT for its caller, and, as it keeps
the lock, for the calls after it until it returns.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import posixpath
import stat as st
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

from kfs.drives.inodes import INO_MASK
from kfs.runtime.bounded import Overran, bounded
from kfs.runtime.drives import Drive
from kfs.vfs import NOW, Cred, Inode, StatFS
from kfs.vfs.attrs import Time
from kfs.vfs.errors import fs_error

T = TypeVar("T")
log = logging.getLogger("kfs.drives")
_CALLS = threading.RLock()  # one call into the operator's code at a time (module docstring)
CALL_TIMEOUT = 30.0  # seconds one call may take: ETIMEDOUT after that
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# exception classes the object may raise and what a Unix caller reads for each (subclasses first)
_ERRNO: tuple[tuple[type[BaseException], int], ...] = (
    (FileNotFoundError, errno.ENOENT), (PermissionError, errno.EACCES), (IsADirectoryError, errno.EISDIR),
    (NotADirectoryError, errno.ENOTDIR), (FileExistsError, errno.EEXIST))


def _errno(error: BaseException) -> int:
    """The errno the object meant by raising `error`: its class's, else an OSError's own
    errno, else EIO."""
    for kind, code in _ERRNO:
        if isinstance(error, kind):
            return code
    if isinstance(error, OSError) and error.errno:
        return error.errno
    return errno.EIO


def _where(error: BaseException) -> str:
    """`file:line` where `error` was raised in the operator's code: the innermost frame of the
    image's own files (their names are relative: kshell.tools.image_code), else the innermost
    frame outside this module."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename != __file__]
    image = [f for f in frames if not f.filename.startswith("/")]
    frame = (image or frames or [None])[-1]
    return f"{frame.filename}:{frame.lineno}" if frame is not None else "?"


def _normal(path: str) -> str:
    """The drive's path as the object is given it: absolute, normal, no trailing slash."""
    return posixpath.normpath("/" + path.lstrip("/"))


class Unserved:
    """The object of a python drive that is not served here, each call failing with `code`:
    ENOTSUP where the drive's class is not loaded (SFTP: the server runs no image code), EIO
    where it failed to load or mount (kshell.tools.image_drives)."""

    def __init__(self, code: int) -> None:
        self.code = code

    def stat(self, path: str) -> None:
        raise OSError(self.code, os.strerror(self.code))

    readdir = read = stat


class PythonBacking:
    """A mounted python drive: the operator's object, loaded and mounted by the worker."""

    def __init__(self, drive: Drive, index: int, obj: Any) -> None:
        self.drive = drive
        self.index = index
        self.obj = obj
        self.readonly = drive.readonly or not callable(getattr(obj, "write", None))
        self._views: dict[tuple[Cred, int], PythonFS] = {}

    def view(self, cred: Cred, umask: int) -> PythonFS:
        key = (cred, umask)
        found = self._views.get(key)
        if found is None:
            found = self._views[key] = PythonFS(self, cred, umask)
        return found

    def statfs(self) -> StatFS:
        """No room to speak of: the object's store is its own business (df shows 0)."""
        return StatFS(4096, 0, 0, 0, 0, 255)

    def call(self, path: str, name: str, *args: Any) -> Any:
        """The object's method `name` on the drive's `path` (and `args`), its exceptions as
        OSErrors naming `path`; EPERM when it has no such method."""
        method = getattr(self.obj, name, None)
        if not callable(method):
            raise fs_error(errno.EPERM, path)

        def serialised() -> Any:
            with _CALLS:
                return method(*args)

        try:
            return bounded(serialised, timeout=CALL_TIMEOUT, name=f"drive {self.drive.name}")
        except Overran:  # a hung call keeps the lock: the drive's later calls time out too
            log.warning("drive %s: %s.%s(%r) did not return within %g s", self.drive.name, type(self.obj).__name__,
                        name, _normal(path), CALL_TIMEOUT)
            raise fs_error(errno.ETIMEDOUT, path) from None
        except Exception as e:  # noqa: BLE001 - the operator's code: any failure is an errno
            code = _errno(e)
            if code == errno.EIO:
                log.warning("drive %s: %s.%s(%r) raised %s at %s", self.drive.name, type(self.obj).__name__,
                            name, _normal(path), type(e).__name__, _where(e))
            raise fs_error(code, path) from None

    def inode(self, path: str, found: dict[str, Any]) -> Inode:
        """The object's stat as an Inode: numbered by the path (stable while the drive is
        mounted, the same in every process), root's, mode from `mode` or 0644/0755 (0444/0555
        on a read-only drive)."""
        is_dir = found.get("type") == "dir"
        ro = self.readonly
        perm = found.get("mode")
        if not isinstance(perm, int) or isinstance(perm, bool):
            perm = (0o555 if ro else 0o755) if is_dir else (0o444 if ro else 0o644)
        mtime = found.get("mtime")
        ns = int(mtime * 1e9) if isinstance(mtime, int | float) and not isinstance(mtime, bool) else 0
        size = found.get("size", 0)
        size = size if isinstance(size, int) and size >= 0 else 0
        digest = hashlib.blake2b(_normal(path).encode("utf-8", "surrogateescape"), digest_size=8).digest()
        ino = (int.from_bytes(digest, "big") & INO_MASK) or 1
        return Inode(ino, (st.S_IFDIR if is_dir else st.S_IFREG) | (perm & 0o7777), 0, 0, 2 if is_dir else 1,
                     size, ns, ns, ns, ns)


class PythonFS:
    """One caller's path operations on a python drive, in PathFS's shape (module docstring).
    Paths are the drive's own ("/" its top); errors name them as given."""

    def __init__(self, backing: PythonBacking, cred: Cred, umask: int) -> None:
        self.backing = backing
        self.drive = backing.drive
        self.cred = cred
        self.umask = umask

    def _found(self, path: str) -> dict[str, Any] | None:
        found = self.backing.call(path, "stat", _normal(path))
        if found is not None and not isinstance(found, dict):
            log.warning("drive %s: stat(%r) answered a %s, not a dict or None", self.drive.name, _normal(path),
                        type(found).__name__)
            raise fs_error(errno.EIO, path)
        if found is not None and path.endswith("/") and found.get("type") != "dir" and _normal(path) != "/":
            raise fs_error(errno.ENOTDIR, path)
        return found

    def _existing(self, path: str) -> dict[str, Any]:
        found = self._found(path)
        if found is None:
            raise fs_error(errno.ENOENT, path)
        return found

    def _writable(self, path: str) -> None:
        if self.backing.readonly:
            raise fs_error(errno.EROFS, path)

    def _parent(self, path: str) -> None:
        """The directory a new entry of `path` goes in exists and is one."""
        parent = posixpath.dirname(_normal(path))
        if self._existing(parent if parent != "/" else "/").get("type") != "dir":
            raise fs_error(errno.ENOTDIR, path)

    # -- reads ---------------------------------------------------------------------------------

    def stat(self, path: str) -> Inode:
        return self.backing.inode(path, self._existing(path))

    lstat = stat  # no links on a python drive

    def exists(self, path: str) -> bool:
        try:
            return self._found(path) is not None
        except OSError:
            return False

    def access(self, path: str, mode: int) -> bool:
        from kfs.vfs.cred import W_OK, allowed

        try:
            inode = self.stat(path)
        except OSError:
            return False
        if mode & W_OK and self.backing.readonly:
            return False
        return allowed(self.cred, inode, mode) if mode else True

    def read_file(self, path: str) -> bytes:
        if self._existing(path).get("type") == "dir":
            raise fs_error(errno.EISDIR, path)
        return _bytes(self.backing, path, self.backing.call(path, "read", _normal(path)))

    def readlink(self, path: str) -> str:
        self._existing(path)
        raise fs_error(errno.EINVAL, path)

    def realpath(self, path: str, *, strict: bool = True) -> str:
        if strict:
            self._existing(path)
        return _normal(path)

    def scandir(self, path: str) -> list[tuple[str, Inode]]:
        if self._existing(path).get("type") != "dir":
            raise fs_error(errno.ENOTDIR, path)
        names = self.backing.call(path, "readdir", _normal(path))
        out = []
        for name in names:
            if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
                continue
            child = _normal(path).rstrip("/") + "/" + name
            found = self._found(child)
            if found is not None:
                out.append((name, self.backing.inode(child, found)))
        return out

    def getxattr(self, path: str, name: bytes, *, follow: bool = True) -> bytes:
        self._existing(path)
        raise fs_error(errno.ENODATA, path)

    def listxattr(self, path: str, *, follow: bool = True) -> list[bytes]:
        self._existing(path)
        return []

    # -- files ---------------------------------------------------------------------------------

    def _put(self, path: str, data: bytes) -> None:
        self.backing.call(path, "write", _normal(path), data)

    def write_file(self, path: str, content: bytes | str, *, mode: int = 0o666) -> int:
        payload = _encoded(content)
        self._writable(path)
        found = self._found(path)
        if found is None:
            self._parent(path)
        elif found.get("type") == "dir":
            raise fs_error(errno.EISDIR, path)
        self._put(path, payload)
        return len(payload)

    def append_file(self, path: str, content: bytes | str, *, mode: int = 0o666) -> int:
        payload = _encoded(content)
        self._writable(path)
        found = self._found(path)
        if found is None:
            self._parent(path)
            self._put(path, payload)
        elif found.get("type") == "dir":
            raise fs_error(errno.EISDIR, path)
        else:
            self._put(path, self.read_file(path) + payload)
        return len(payload)

    def open(self, path: str, flags: int = os.O_RDONLY, mode: int = 0o666) -> PythonHandle:
        if flags & _WRITES:
            self._writable(path)
        found = self._found(path)
        if found is None:
            if not flags & os.O_CREAT:
                raise fs_error(errno.ENOENT, path)
            self._parent(path)
            self._put(path, b"")  # there at once, as open(2) makes it
            found = self._existing(path)
        elif flags & os.O_CREAT and flags & os.O_EXCL:
            raise fs_error(errno.EEXIST, path)
        if found.get("type") == "dir" and flags & os.O_ACCMODE != os.O_RDONLY:
            raise fs_error(errno.EISDIR, path)
        return PythonHandle(self, path, flags, found)

    def truncate(self, path: str, size: int) -> Inode:
        with self.open(path, os.O_WRONLY) as handle:
            handle.truncate(size)
        return self.stat(path)

    # -- names ---------------------------------------------------------------------------------

    def mkdir(self, path: str, mode: int = 0o777, *, parents: bool = False) -> None:
        self._writable(path)
        if not parents:
            if self._found(path) is not None:
                raise fs_error(errno.EEXIST, path)
            self._parent(path)
            self.backing.call(path, "mkdir", _normal(path))
            return
        at = ""
        for part in _normal(path).split("/")[1:]:
            at += "/" + part
            found = self._found(at)
            if found is None:
                self.backing.call(path, "mkdir", at)
            elif found.get("type") != "dir":
                raise fs_error(errno.EEXIST if at == _normal(path) else errno.ENOTDIR, path)

    def unlink(self, path: str) -> None:
        self._writable(path)
        if self._existing(path).get("type") == "dir":
            raise fs_error(errno.EISDIR, path)
        self.backing.call(path, "unlink", _normal(path))

    def rmdir(self, path: str) -> None:
        self._writable(path)
        if _normal(path) == "/":
            raise fs_error(errno.EBUSY, path)
        if self._existing(path).get("type") != "dir":
            raise fs_error(errno.ENOTDIR, path)
        self.backing.call(path, "rmdir", _normal(path))

    def rm(self, path: str, *, recursive: bool = False, force: bool = False) -> None:
        """Remove a file, or with recursive=True a whole tree; with force=True a missing path
        is not an error."""
        self._writable(path)
        found = self._found(path)
        if found is None:
            if force:
                return
            raise fs_error(errno.ENOENT, path)
        if found.get("type") != "dir":
            self.unlink(path)
            return
        if not recursive:
            raise fs_error(errno.EISDIR, path)
        for name, _inode in self.scandir(path):
            self.rm(_normal(path).rstrip("/") + "/" + name, recursive=True, force=True)
        self.rmdir(path)

    def rename(self, src: str, dst: str, flags: int = 0) -> None:
        self._writable(src)
        if flags:
            raise fs_error(errno.EINVAL, src)  # RENAME_NOREPLACE, RENAME_EXCHANGE: not the object's
        if _normal(src) == "/" or _normal(dst) == "/":
            raise fs_error(errno.EBUSY, src)
        self._existing(src)
        self._parent(dst)
        self.backing.call(src, "rename", _normal(src), _normal(dst))

    # -- what a python drive does not have --------------------------------------------------------

    def _unsupported(self, path: str) -> OSError:
        """EROFS on a read-only drive, else EPERM ("Operation not permitted"), as on a
        filesystem without owners, modes or links."""
        self._writable(path)
        self._existing(path)
        return fs_error(errno.EPERM, path)

    def chmod(self, path: str, mode: int, *, follow: bool = True) -> Inode:
        raise self._unsupported(path)

    def chown(self, path: str, uid: int | None = None, gid: int | None = None, *, follow: bool = True) -> Inode:
        raise self._unsupported(path)

    def utime(self, path: str, atime: Time = NOW, mtime: Time = NOW, *, follow: bool = True) -> Inode:
        """`touch` (both times now) is allowed and changes nothing: a file's times are the
        object's; setting given times is EPERM."""
        if atime in (NOW, None) and mtime in (NOW, None):
            self._writable(path)
            return self.stat(path)
        raise self._unsupported(path)

    def mknod(self, path: str, mode: int, rdev: int = 0) -> None:
        if st.S_IFMT(mode) in (0, st.S_IFREG):
            self.write_file(path, b"")
            return
        raise self._unsupported_new(path)

    def symlink(self, target: str, path: str) -> None:
        raise self._unsupported_new(path)

    def link(self, existing: str, new: str) -> None:
        raise self._unsupported_new(new)

    def _unsupported_new(self, path: str) -> OSError:
        self._writable(path)
        return fs_error(errno.EPERM, path)

    def setxattr(self, path: str, name: bytes, value: bytes, flags: int = 0, *, follow: bool = True) -> None:
        self._writable(path)
        self._existing(path)
        raise fs_error(errno.ENOTSUP, path)

    def removexattr(self, path: str, name: bytes, *, follow: bool = True) -> None:
        self._writable(path)
        self._existing(path)
        raise fs_error(errno.ENODATA, path)


def _encoded(content: bytes | str) -> bytes:
    return content.encode("utf-8", "surrogateescape") if isinstance(content, str) else bytes(content)


def _bytes(backing: PythonBacking, path: str, data: Any) -> bytes:
    """What `read` answered, as bytes (a str is taken as UTF-8); EIO for anything else."""
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    if isinstance(data, str):
        return _encoded(data)
    log.warning("drive %s: read(%r) answered a %s, not bytes", backing.drive.name, _normal(path), type(data).__name__)
    raise fs_error(errno.EIO, path)


class PythonHandle:
    """An open file of a python drive: its bytes read once (when first needed), written back
    whole to the object at fsync and close when they changed (module docstring)."""

    def __init__(self, fs: PythonFS, path: str, flags: int, found: dict[str, Any]) -> None:
        access = flags & os.O_ACCMODE
        self.fs = fs
        self.rel = path  # the drive's path (`path` is what errors name: DriveFS gives the session's)
        self.path = path
        self.found = found
        self.readable = access in (os.O_RDONLY, os.O_RDWR)
        self.writable = access in (os.O_WRONLY, os.O_RDWR)
        self.append = bool(flags & os.O_APPEND)
        self.is_dir = found.get("type") == "dir"
        self._data: bytearray | None = None
        self.dirty = False
        self.closed = False
        if flags & os.O_TRUNC and self.writable and not self.is_dir:
            self._data, self.dirty = bytearray(), found.get("size", 0) != 0

    def _check(self, write: bool) -> None:
        if self.closed or (self.writable if write else self.readable) is False:
            raise fs_error(errno.EBADF, self.path)
        if self.is_dir:
            raise fs_error(errno.EISDIR, self.path)

    def _bytes(self) -> bytearray:
        if self._data is None:
            self._data = bytearray(self._named(lambda: self.fs.read_file(self.rel)))
        return self._data

    def _named(self, fn: Callable[[], T]) -> T:
        """fn(), its errors naming the handle's path."""
        try:
            return fn()
        except OSError as e:
            raise fs_error(e.errno or errno.EIO, self.path) from None

    def _io(self, fn: Callable[[], T]) -> T:
        if self.closed:
            raise fs_error(errno.EBADF, self.path)
        return fn()

    def getattr(self) -> Inode:
        def attrs() -> Inode:
            inode = self.fs.backing.inode(self.rel, self.found)
            if self._data is not None:
                inode.size = len(self._data)
            return inode

        return self._io(attrs)

    def pread(self, size: int, offset: int) -> bytes:
        self._check(False)
        return bytes(self._bytes()[offset:offset + size])

    def pread_into(self, out: memoryview, offset: int) -> int:
        chunk = self.pread(len(out), offset)
        out[:len(chunk)] = chunk
        return len(chunk)

    def read_all(self) -> bytes:
        self._check(False)
        return bytes(self._bytes())

    def pwrite(self, buf: bytes | memoryview, offset: int) -> int:
        self._check(True)
        data = self._bytes()
        at = len(data) if self.append else offset
        if at > len(data):
            data.extend(b"\0" * (at - len(data)))
        data[at:at + len(buf)] = buf
        self.dirty = self.dirty or len(buf) > 0
        return len(buf)

    def truncate(self, size: int) -> None:
        self._check(True)
        data = self._bytes()
        if size < len(data):
            del data[size:]
        else:
            data.extend(b"\0" * (size - len(data)))
        self.dirty = True

    def setattr(self, *, mode: int | None = None, uid: int | None = None, gid: int | None = None,
                size: int | None = None, atime: Time = None, mtime: Time = None) -> Inode:
        """SFTP's fsetstat: a size is a truncate; owners and modes are EPERM, times ignored."""
        if mode is not None or uid is not None or gid is not None:
            raise fs_error(errno.EPERM, self.path)
        if size is not None:
            self.truncate(size)
        return self.getattr()

    def fsync(self) -> None:
        """Give the object the file's bytes, if they changed since it last had them."""
        if self.closed or not self.dirty or self._data is None:
            return
        data = bytes(self._data)
        self._named(lambda: self.fs._put(self.rel, data))
        self.dirty = False
        self.found = dict(self.found, size=len(self._data), mtime=time.time())

    def close(self) -> None:
        if self.closed:
            return
        try:
            self.fsync()
        finally:
            self.closed = True
            self._data = None

    def __enter__(self) -> PythonHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
