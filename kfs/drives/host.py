"""Host drives: a real directory of the host at a path of the tree.

Every operation goes to the host's filesystem, confined to the drive's `source`. Paths are
resolved by the kernel, with openat2's RESOLVE_IN_ROOT from a descriptor of the source: the
drive is its own root for everything in it. An absolute symlink names a path of the drive,
`..` stops at its top, and neither a link nor a rename made while a path is resolved leads out
(RESOLVE_NO_MAGICLINKS keeps /proc's links from doing it). An operation on an entry itself
(unlink, rename, lstat, readlink) resolves its directory that way and then acts on one name in
it, never following it. A memory drive resolves the same way (its PathFS walks from its own
root), so a link means the same on both kinds.

Operations run with the caller's credentials. When the server is root, the thread takes the
agent's filesystem uid and gid (setfsuid, setfsgid) and groups (the raw setgroups call, which
changes only the calling thread, unlike glibc's) for the length of one operation: the kernel
checks permissions as it would for the agent, and what the agent creates is its own. A server
that is not root acts as itself. A `readonly` drive refuses every write with EROFS.

What an agent's files take on a host drive is the host's disk: it is charged to the agent's
quota in K's state (kfs.kstate.quota.HOST, beside its K files and held to the same limit), by
the drive's `Ledger`. The charge is a file's apparent size (st_size, what `ls -l` shows), to its
owner (as Linux's user quotas count), when that owner is an agent: what a write, truncate or
O_TRUNC adds, and what an unlink, a rename over the file or a removal takes away with the
file's last name. A write that would take the owner past its limit fails with EDQUOT before
anything is written; an overwrite in place costs no transaction at all. Apparent sizes rather
than blocks: a filesystem's allocation (XFS's speculative preallocation, delayed allocation)
changes after the write, and a count must give back exactly what it took. So a sparse file
counts its holes, and a file that was there before the drive counted anything, or that the
host itself changes, is counted from what K sees of it (a refund never goes below nothing).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import posixpath
import stat as st
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

from kfs.drives.inodes import inode_of
from kfs.kstate import quota
from kfs.kstate.quota import FIRST_AGENT_UID
from kfs.runtime.drives import Drive
from kfs.vfs import NOW, Cred, Inode, StatFS
from kfs.vfs.attrs import Time
from kfs.vfs.errors import fs_error

if TYPE_CHECKING:
    from kfs.kstate import KState

T = TypeVar("T")
_libc = ctypes.CDLL(None, use_errno=True)  # an instance of our own: its functions' argtypes stay ours
_SYS_OPENAT2 = 437  # the same on every architecture (system calls are numbered alike since 5.1)
_RESOLVE = 0x02 | 0x10  # RESOLVE_NO_MAGICLINKS | RESOLVE_IN_ROOT
_SYS_GROUPS = {"x86_64": (115, 116), "aarch64": (158, 159)}.get(os.uname().machine)  # getgroups, setgroups
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_RENAME_EXCHANGE = 2


class _How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _errno() -> OSError:
    code = ctypes.get_errno()
    return OSError(code, os.strerror(code))


def openat2(root: int, path: str, flags: int, mode: int = 0) -> int:
    """open `path` beneath the directory `root` as if it were `/` (module docstring). The
    kernel asks for another try when a rename raced with a `..`: it gets a few."""
    how = _How(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, _RESOLVE)
    raw = os.fsencode(path)
    for _ in range(8):
        fd = _libc.syscall(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(root), ctypes.c_char_p(raw), ctypes.byref(how),
                           ctypes.c_size_t(ctypes.sizeof(how)))
        if fd >= 0:
            return fd
        if ctypes.get_errno() != errno.EAGAIN:
            break
    raise _errno()


def _getgroups() -> list[int]:
    assert _SYS_GROUPS is not None
    n = _libc.syscall(ctypes.c_long(_SYS_GROUPS[0]), ctypes.c_int(0), None)
    groups = (ctypes.c_uint * max(n, 1))()
    n = _libc.syscall(ctypes.c_long(_SYS_GROUPS[0]), ctypes.c_int(n), groups)
    if n < 0:
        raise _errno()
    return list(groups[:n])


def _setgroups(groups: list[int]) -> None:
    assert _SYS_GROUPS is not None
    array = (ctypes.c_uint * max(len(groups), 1))(*groups)
    if _libc.syscall(ctypes.c_long(_SYS_GROUPS[1]), ctypes.c_size_t(len(groups)), array) < 0:
        raise _errno()


@contextlib.contextmanager
def as_caller(cred: Cred) -> Iterator[None]:
    """This thread's filesystem identity is `cred`'s while the block runs (module docstring)."""
    if cred.is_root or os.geteuid() != 0:
        yield
        return
    if _SYS_GROUPS is None:
        raise OSError(errno.ENOSYS, f"cannot act as the agent on a host drive on {os.uname().machine}")
    saved = _getgroups()
    _setgroups(sorted(cred.groups))
    gid_before = _libc.setfsgid(cred.gid)
    uid_before = _libc.setfsuid(cred.uid)
    try:
        yield
    finally:
        _libc.setfsuid(uid_before)
        _libc.setfsgid(gid_before)
        _setgroups(saved)


class Ledger:
    """An agent's host-drive bytes, kept in K's state (module docstring): the one count every
    process writing the drive shares (the server's SFTP, each session's worker, the FUSE mount
    delegated programs write through), with LMDB's writer lock between them."""

    def __init__(self, state: KState) -> None:
        self.state = getattr(state, "state", state)  # a fork's view: its base (the counters are not layered)
        # one change of a size at a time in this process: two writes extending one file at once
        # (the kernel's parallel FUSE writes) would each see the other's growth as their own
        self._sizing = threading.Lock()

    def charge(self, uid: int, delta: int, path: str | None = None, *, check: bool = True) -> None:
        """Add `delta` bytes to agent `uid`'s host-drive use; EDQUOT past its limit (`check`)."""
        if delta and uid >= FIRST_AGENT_UID:
            self.state.write(lambda txn: quota.charge(txn, uid, delta, path, check, quota.HOST))

    def grown(self, fd: int, end: Callable[[int], int], change: Callable[[], T], path: str | None = None) -> T:
        """Run `change`, which makes the open file `fd` `end(its size now)` bytes long at most:
        its owner is charged the growth first (EDQUOT: nothing is done), then what the size
        really moved by."""
        s = os.fstat(fd)
        if not st.S_ISREG(s.st_mode) or s.st_uid < FIRST_AGENT_UID:
            return change()  # a host user's file (or no file): not K's to count
        with self._sizing:
            s = os.fstat(fd)
            need = max(end(s.st_size) - s.st_size, 0)
            self.charge(s.st_uid, need, path)
            try:
                return change()
            finally:
                self.charge(s.st_uid, os.fstat(fd).st_size - s.st_size - need, path, check=False)

    def removed(self, found: os.stat_result | None) -> None:
        """A name of the file `found` (stat before its removal) is gone: its last one gives
        its bytes back."""
        if found is not None and st.S_ISREG(found.st_mode) and found.st_nlink <= 1:
            self.charge(found.st_uid, -found.st_size, check=False)

    def moved(self, before: os.stat_result, after: os.stat_result) -> None:
        """A chown gave the file to another owner: its bytes are the new owner's (root's
        chown: never refused, as K's own)."""
        if st.S_ISREG(before.st_mode) and before.st_uid != after.st_uid:
            self.charge(before.st_uid, -before.st_size, check=False)
            self.charge(after.st_uid, after.st_size, check=False)


class _Unledgered(Ledger):
    """No count: a drive outside a state (as in tests of the backing alone), or a read-only one."""

    def __init__(self) -> None:
        pass

    def charge(self, uid: int, delta: int, path: str | None = None, *, check: bool = True) -> None:
        return None

    def grown(self, fd: int, end: Callable[[int], int], change: Callable[[], T], path: str | None = None) -> T:
        return change()


UNLEDGERED = _Unledgered()


def recount(state: KState, drives: list[Drive]) -> dict[int, int]:
    """Count again what each agent's files take on the writable host `drives` (the image's), as
    the ledger counts them (apparent sizes, a file with many names once), and store it: what
    the host changed behind K's back, and what was there before, is counted as it is now. The
    walk never follows a link; a write made while it runs may be missed or counted twice."""
    seen: set[tuple[int, int]] = set()
    counts: dict[int, int] = {}
    for drive in drives:
        if drive.kind != "host" or drive.readonly:
            continue
        for top, dirs, files in os.walk(drive.source):
            for name in files + dirs:
                try:
                    s = os.lstat(os.path.join(top, name))
                except OSError:
                    continue  # gone meanwhile
                if st.S_ISREG(s.st_mode) and s.st_uid >= FIRST_AGENT_UID and (s.st_dev, s.st_ino) not in seen:
                    seen.add((s.st_dev, s.st_ino))
                    counts[s.st_uid] = counts.get(s.st_uid, 0) + s.st_size
    Ledger(state).state.write(lambda txn: quota.store_host(txn, counts))
    return counts


def _entry_stat(dirfd: int, name: str) -> os.stat_result | None:
    """The entry `name` of `dirfd`, not followed; None when there is none."""
    try:
        return os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _proc(fd: int) -> str:
    """A path to what `fd` holds (an O_PATH descriptor serves chmod, utime, xattrs this way)."""
    return f"/proc/self/fd/{fd}"


class _Call:
    """The descriptors of one operation, closed when it ends."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.fds = [root]

    def open(self, path: str, flags: int = os.O_PATH, mode: int = 0, *, keep: bool = False) -> int:
        fd = openat2(self.root, path, flags, mode)
        if not keep:
            self.fds.append(fd)
        return fd

    def entry(self, path: str, at_top: int) -> tuple[int, str]:
        """The directory holding the last component of `path` (resolved), and that name;
        `at_top` is the errno for the drive's top itself, which no directory holds."""
        parent, name = posixpath.split(path.rstrip("/"))
        if not name:
            raise OSError(at_top, os.strerror(at_top))
        return self.open(parent or "/", os.O_PATH | os.O_DIRECTORY), name

    def target(self, path: str, follow: bool) -> tuple[str, bool]:
        """A path for os calls that take no descriptor (chown, utime, xattrs) reaching what
        `path` names, and whether to follow it: the entry itself unless `follow`."""
        if follow or path.rstrip("/") == "":
            return _proc(self.open(path)), True
        dirfd, name = self.entry(path, errno.EBUSY)
        return f"{_proc(dirfd)}/{name}", False

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)


# The permission bits an agent may give a host file: never setuid or setgid. The file is the
# host's, owned by the agent's uid: a setuid program there would run as that uid for any host
# user (as a nosuid mount makes the bits inert, a host drive does not set them at all).
PERM_BITS = 0o7777 & ~(st.S_ISUID | st.S_ISGID)


def _settle_mode(fd: int, perm: int) -> None:
    """Give a file just made the permission bits asked for: the kernel took the server's own
    umask off them, and the session has its own umask (already taken off `perm`)."""
    s = os.stat(fd)
    if s.st_mode & 0o777 != perm & 0o777:
        os.chmod(_proc(fd), (s.st_mode & 0o7000) | perm)


class HostBacking:
    """A mounted host drive."""

    def __init__(self, drive: Drive, index: int, state: KState | None = None) -> None:
        self.drive = drive
        self.index = index
        self.ledger = UNLEDGERED if state is None or state.readonly or drive.readonly else Ledger(state)
        self._views: dict[tuple[Cred, int], HostFS] = {}

    def view(self, cred: Cred, umask: int) -> HostFS:
        key = (cred, umask)
        found = self._views.get(key)
        if found is None:
            found = self._views[key] = HostFS(self.drive, cred, umask, self.ledger)
        return found

    def statfs(self) -> StatFS:
        s = os.statvfs(self.drive.source)
        return StatFS(s.f_frsize, s.f_blocks, s.f_bavail, s.f_files, s.f_favail, s.f_namemax)


class HostFS:
    """One caller's path operations on a host drive, in PathFS's shape. Paths are the drive's
    own, absolute and normal ("/" its top); errors name them."""

    def __init__(self, drive: Drive, cred: Cred, umask: int, ledger: Ledger = UNLEDGERED) -> None:
        self.drive = drive
        self.cred = cred
        self.umask = umask
        self.ledger = ledger

    def _do(self, path: str, fn: Callable[[_Call], T], *, write: bool = False) -> T:
        """Run `fn` on a fresh descriptor of the source (opened as the server: the directories
        above the source are no business of the agent's), as the caller."""
        if write and self.drive.readonly:
            raise fs_error(errno.EROFS, path)
        try:
            call = _Call(os.open(self.drive.source, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC))
        except OSError as e:
            raise fs_error(e.errno, path) from None
        try:
            with as_caller(self.cred):
                return fn(call)
        except OSError as e:
            raise fs_error(e.errno, path) from None
        finally:
            call.close()

    # -- reads ---------------------------------------------------------------------------------

    def stat(self, path: str) -> Inode:
        return self._do(path, lambda c: inode_of(os.stat(c.open(path))))

    def lstat(self, path: str) -> Inode:
        return self._do(path, lambda c: inode_of(os.stat(c.open(path, os.O_PATH | os.O_NOFOLLOW))))

    def read_file(self, path: str) -> bytes:
        def body(c: _Call) -> bytes:
            fd = c.open(path, os.O_RDONLY | os.O_NONBLOCK)
            _regular(fd)
            parts = []
            while chunk := os.read(fd, 1 << 20):
                parts.append(chunk)
            return b"".join(parts)

        return self._do(path, body)

    def readlink(self, path: str) -> str:
        def body(c: _Call) -> str:
            dirfd, name = c.entry(path, errno.EINVAL)
            return os.readlink(name, dir_fd=dirfd)

        return self._do(path, body)

    def realpath(self, path: str, *, strict: bool = True) -> str:
        """The path with the drive's links resolved, as a path of the drive."""

        def body(c: _Call) -> str:
            top = os.readlink(_proc(c.root))
            try:
                real = os.readlink(_proc(c.open(path)))
            except FileNotFoundError:
                if strict:
                    raise
                dirfd, name = c.entry(path, errno.ENOENT)
                real = os.readlink(_proc(dirfd)).rstrip("/") + "/" + name
            if real != top and not real.startswith(top.rstrip("/") + "/"):
                raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))  # moved out while it was resolved
            return real[len(top.rstrip("/")):] or "/"

        return self._do(path, body)

    def scandir(self, path: str) -> list[tuple[str, Inode]]:
        def body(c: _Call) -> list[tuple[str, Inode]]:
            with os.scandir(c.open(path, os.O_RDONLY | os.O_DIRECTORY)) as listing:
                return [(e.name, inode_of(e.stat(follow_symlinks=False))) for e in listing]

        return self._do(path, body)

    def getxattr(self, path: str, name: bytes, *, follow: bool = True) -> bytes:
        def body(c: _Call) -> bytes:
            where, deref = c.target(path, follow)
            return os.getxattr(where, name, follow_symlinks=deref)

        return self._do(path, body)

    def listxattr(self, path: str, *, follow: bool = True) -> list[bytes]:
        def body(c: _Call) -> list[bytes]:
            where, deref = c.target(path, follow)
            return [os.fsencode(n) for n in os.listxattr(where, follow_symlinks=deref)]

        return self._do(path, body)

    # -- files ---------------------------------------------------------------------------------

    def _create(self, c: _Call, path: str, flags: int, mode: int, *, keep: bool = False) -> int:
        """Open `path` with `flags`, making it (with `mode`, less the session's umask) when it
        is not there; never a FIFO or device (opening one would wait, or touch hardware)."""
        perm = mode & ~self.umask & PERM_BITS
        try:
            fd = c.open(path, flags | os.O_CREAT | os.O_EXCL | os.O_NONBLOCK, perm, keep=keep)
        except FileExistsError:  # there already (or a link, maybe to nothing yet: open(2) makes its target)
            if flags & os.O_EXCL:
                raise
            return _checked(c.open(path, flags | os.O_CREAT | os.O_NONBLOCK, perm, keep=keep), keep)
        try:
            _settle_mode(fd, perm)
        except OSError:
            if keep:
                os.close(fd)
            raise
        return fd

    def write_file(self, path: str, content: bytes | str, *, mode: int = 0o666) -> int:
        return self._put(path, content, mode, os.O_TRUNC)

    def append_file(self, path: str, content: bytes | str, *, mode: int = 0o666) -> int:
        return self._put(path, content, mode, os.O_APPEND)

    def _put(self, path: str, content: bytes | str, mode: int, how: int) -> int:
        payload = content.encode("utf-8", "surrogateescape") if isinstance(content, str) else bytes(content)
        trunc = bool(how & os.O_TRUNC)  # done by hand: what the old content took is given back

        def body(c: _Call) -> int:
            fd = self._create(c, path, os.O_WRONLY | (how & ~os.O_TRUNC), mode)

            def put() -> int:
                if trunc:
                    os.ftruncate(fd, 0)
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view):]
                return len(payload)

            return self.ledger.grown(fd, lambda size: len(payload) + (0 if trunc else size), put, path)

        return self._do(path, body, write=True)

    def open(self, path: str, flags: int = os.O_RDONLY, mode: int = 0o666) -> HostHandle:
        trunc = flags & os.O_TRUNC and flags & os.O_ACCMODE != os.O_RDONLY  # by hand: the old bytes given back
        flags &= ~os.O_TRUNC if trunc else ~0

        def body(c: _Call) -> HostHandle:
            fd = self._create(c, path, flags & ~os.O_CREAT, mode, keep=True) if flags & os.O_CREAT else \
                _open_existing(c, path, flags)
            handle = HostHandle(fd, path, self.cred, self.ledger)
            if trunc:
                try:
                    handle.truncate(0)
                except OSError:
                    handle.close()
                    raise
            return handle

        return self._do(path, body, write=bool(flags & _WRITES))

    def truncate(self, path: str, size: int) -> Inode:
        def body(c: _Call) -> Inode:
            fd = c.open(path, os.O_WRONLY | os.O_NONBLOCK)
            _regular(fd)
            self.ledger.grown(fd, lambda _: size, lambda: os.ftruncate(fd, size), path)
            return inode_of(os.stat(fd))

        return self._do(path, body, write=True)

    # -- names ---------------------------------------------------------------------------------

    def mkdir(self, path: str, mode: int = 0o777, *, parents: bool = False) -> None:
        def make(c: _Call, sub: str, perm: int) -> None:
            dirfd, name = c.entry(sub, errno.EEXIST)
            os.mkdir(name, perm, dir_fd=dirfd)
            fd = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dirfd)
            c.fds.append(fd)
            _settle_mode(fd, perm)

        def body(c: _Call) -> None:
            perm = mode & ~self.umask & PERM_BITS
            if not parents:
                make(c, path, perm)
                return
            parts = [p for p in path.split("/") if p]
            for i in range(len(parts)):
                sub = "/" + "/".join(parts[: i + 1])
                last = i == len(parts) - 1
                try:
                    found = os.stat(c.open(sub))
                except FileNotFoundError:
                    make(c, sub, perm if last else (0o777 & ~self.umask) | 0o300)  # as `mkdir -p`
                    continue
                if not st.S_ISDIR(found.st_mode):
                    raise OSError(errno.EEXIST if last else errno.ENOTDIR, "")

        self._do(path, body, write=True)

    def mknod(self, path: str, mode: int, rdev: int = 0) -> None:
        def body(c: _Call) -> None:
            dirfd, name = c.entry(path, errno.EEXIST)
            perm = mode & ~self.umask & PERM_BITS
            os.mknod(name, (st.S_IFMT(mode) or st.S_IFREG) | perm, rdev, dir_fd=dirfd)
            fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dirfd)
            c.fds.append(fd)
            _settle_mode(fd, perm)

        self._do(path, body, write=True)

    def symlink(self, target: str, path: str) -> None:
        def body(c: _Call) -> None:
            dirfd, name = c.entry(path, errno.EEXIST)
            os.symlink(target, name, dir_fd=dirfd)

        self._do(path, body, write=True)

    def link(self, existing: str, new: str) -> None:
        def body(c: _Call) -> None:
            src_dir, src_name = c.entry(existing, errno.EPERM)
            dst_dir, dst_name = c.entry(new, errno.EEXIST)
            os.link(src_name, dst_name, src_dir_fd=src_dir, dst_dir_fd=dst_dir, follow_symlinks=False)

        self._do(new, body, write=True)

    def unlink(self, path: str) -> None:
        def body(c: _Call) -> None:
            dirfd, name = c.entry(path, errno.EBUSY)
            found = _entry_stat(dirfd, name)
            os.unlink(name, dir_fd=dirfd)
            self.ledger.removed(found)

        self._do(path, body, write=True)

    def rmdir(self, path: str) -> None:
        def body(c: _Call) -> None:
            dirfd, name = c.entry(path, errno.EBUSY)
            os.rmdir(name, dir_fd=dirfd)

        self._do(path, body, write=True)

    def rm(self, path: str, *, recursive: bool = False, force: bool = False) -> None:
        """Remove a file, or with recursive=True a whole tree (never following a link out of
        it); with force=True a missing path is not an error."""

        def tree(dirfd: int, name: str) -> None:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dirfd)
            try:
                with os.scandir(fd) as listing:
                    for entry in list(listing):
                        if entry.is_dir(follow_symlinks=False):
                            tree(fd, entry.name)
                        else:
                            found = _entry_stat(fd, entry.name)
                            os.unlink(entry.name, dir_fd=fd)
                            self.ledger.removed(found)
            finally:
                os.close(fd)
            os.rmdir(name, dir_fd=dirfd)

        def body(c: _Call) -> None:
            try:
                dirfd, name = c.entry(path, errno.EBUSY)
                found = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
            except FileNotFoundError:
                if force:
                    return
                raise
            if not st.S_ISDIR(found.st_mode):
                os.unlink(name, dir_fd=dirfd)
                self.ledger.removed(found)
            elif not recursive:
                raise OSError(errno.EISDIR, "")
            else:
                tree(dirfd, name)

        self._do(path, body, write=True)

    def rename(self, src: str, dst: str, flags: int = 0) -> None:
        """rename(2), with renameat2's RENAME_NOREPLACE and RENAME_EXCHANGE."""

        def body(c: _Call) -> None:
            src_dir, src_name = c.entry(src, errno.EBUSY)
            dst_dir, dst_name = c.entry(dst, errno.EBUSY)
            replaced = None if flags & _RENAME_EXCHANGE else _entry_stat(dst_dir, dst_name)
            moved = _entry_stat(src_dir, src_name) if replaced is not None else None
            if not flags:
                os.rename(src_name, dst_name, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
            elif _libc.renameat2(src_dir, os.fsencode(src_name), dst_dir, os.fsencode(dst_name), flags) < 0:
                raise _errno()
            if replaced is not None and moved is not None and \
                    (replaced.st_dev, replaced.st_ino) != (moved.st_dev, moved.st_ino):
                self.ledger.removed(replaced)  # the file renamed over lost that name

        self._do(src, body, write=True)

    # -- attributes ----------------------------------------------------------------------------

    def chmod(self, path: str, mode: int, *, follow: bool = True) -> Inode:
        if not follow:
            raise fs_error(errno.EOPNOTSUPP, path)  # Linux has no lchmod either

        def body(c: _Call) -> Inode:
            fd = c.open(path)
            os.chmod(_proc(fd), mode & PERM_BITS)
            return inode_of(os.stat(fd))

        return self._do(path, body, write=True)

    def chown(self, path: str, uid: int | None = None, gid: int | None = None, *, follow: bool = True) -> Inode:
        def body(c: _Call) -> Inode:
            where, deref = c.target(path, follow)
            before = os.stat(where, follow_symlinks=deref)
            os.chown(where, -1 if uid is None else uid, -1 if gid is None else gid, follow_symlinks=deref)
            after = os.stat(where, follow_symlinks=deref)
            self.ledger.moved(before, after)
            return inode_of(after)

        return self._do(path, body, write=True)

    def utime(self, path: str, atime: Time = NOW, mtime: Time = NOW, *, follow: bool = True) -> Inode:
        """Set times in ns; NOW for the current time (what a writer may do to a file it does
        not own, as touch does), None to keep one."""

        def body(c: _Call) -> Inode:
            where, deref = c.target(path, follow)
            if atime == NOW and mtime == NOW:
                os.utime(where, None, follow_symlinks=deref)
            elif atime is not None or mtime is not None:
                now, s = time.time_ns(), os.stat(where, follow_symlinks=deref)
                ns = tuple(old if new is None else now if new == NOW else int(new)
                           for new, old in ((atime, s.st_atime_ns), (mtime, s.st_mtime_ns)))
                os.utime(where, ns=ns, follow_symlinks=deref)
            return inode_of(os.stat(where, follow_symlinks=deref))

        return self._do(path, body, write=True)

    def setxattr(self, path: str, name: bytes, value: bytes, flags: int = 0, *, follow: bool = True) -> None:
        def body(c: _Call) -> None:
            where, deref = c.target(path, follow)
            os.setxattr(where, name, value, flags, follow_symlinks=deref)

        self._do(path, body, write=True)

    def removexattr(self, path: str, name: bytes, *, follow: bool = True) -> None:
        def body(c: _Call) -> None:
            where, deref = c.target(path, follow)
            os.removexattr(where, name, follow_symlinks=deref)

        self._do(path, body, write=True)


def _regular(fd: int, *, directory_ok: bool = False) -> None:
    """EISDIR for a directory (unless it may be one), EOPNOTSUPP for a FIFO, socket or device:
    K's files are regular files, directories and links, and so are a drive's."""
    mode = os.stat(fd).st_mode
    if st.S_ISDIR(mode) and not directory_ok:
        raise OSError(errno.EISDIR, os.strerror(errno.EISDIR))
    if not st.S_ISREG(mode) and not st.S_ISDIR(mode):
        raise OSError(errno.EOPNOTSUPP, os.strerror(errno.EOPNOTSUPP))


def _checked(fd: int, keep: bool) -> int:
    """`fd`, unless it is a FIFO, socket or device (closed then, if the caller keeps it)."""
    try:
        _regular(fd, directory_ok=True)
    except OSError:
        if keep:
            os.close(fd)
        raise
    return fd


def _open_existing(c: _Call, path: str, flags: int) -> int:
    """An open descriptor of an existing regular file or directory (flags as os.open's)."""
    fd = c.open(path, flags | os.O_NONBLOCK, keep=True)
    try:
        _regular(fd, directory_ok=True)
        os.set_blocking(fd, True)
    except OSError:
        os.close(fd)
        raise
    return fd


class HostHandle:
    """An open file of a host drive, with the FileHandle methods tools and SFTP use."""

    def __init__(self, fd: int, path: str, cred: Cred, ledger: Ledger = UNLEDGERED) -> None:
        self.fd = fd
        self.path = path
        self.cred = cred
        self.ledger = ledger
        self.append = bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND)  # writes land at the end
        self.closed = False

    def _io(self, fn: Callable[[], T]) -> T:
        if self.closed:
            raise fs_error(errno.EBADF, self.path)
        try:
            return fn()
        except OSError as e:
            raise fs_error(e.errno, self.path) from None

    def getattr(self) -> Inode:
        return self._io(lambda: inode_of(os.stat(self.fd)))

    def pread(self, size: int, offset: int) -> bytes:
        return self._io(lambda: os.pread(self.fd, size, offset))

    def pread_into(self, out: memoryview, offset: int) -> int:
        return self._io(lambda: os.preadv(self.fd, [out], offset))

    def pwrite(self, buf: bytes | memoryview, offset: int) -> int:
        def write() -> int:
            view = memoryview(buf)
            at = offset
            while view:  # O_APPEND: the kernel writes at the end, whatever the offset
                n = os.pwrite(self.fd, view, at)
                view, at = view[n:], at + n
            return len(buf)

        end = (lambda size: size + len(buf)) if self.append else (lambda size: offset + len(buf))
        return self._io(lambda: self.ledger.grown(self.fd, end, write))

    def truncate(self, size: int) -> None:
        self._io(lambda: self.ledger.grown(self.fd, lambda _: size, lambda: os.ftruncate(self.fd, size)))

    def setattr(self, *, mode: int | None = None, uid: int | None = None, gid: int | None = None,
                size: int | None = None, atime: Time = None, mtime: Time = None) -> Inode:
        """Change the open file's attributes (SFTP's fsetstat), as the caller."""

        def change() -> Inode:
            with as_caller(self.cred):
                if uid is not None or gid is not None:
                    before = os.stat(self.fd)
                    os.fchown(self.fd, -1 if uid is None else uid, -1 if gid is None else gid)
                    self.ledger.moved(before, os.stat(self.fd))
                if size is not None:
                    self.ledger.grown(self.fd, lambda _: size, lambda: os.ftruncate(self.fd, size))
                if mode is not None:
                    os.fchmod(self.fd, mode & PERM_BITS)
                if atime is not None or mtime is not None:
                    now, s = time.time_ns(), os.stat(self.fd)
                    os.utime(self.fd, ns=(s.st_atime_ns if atime is None else now if atime == NOW else int(atime),
                                          s.st_mtime_ns if mtime is None else now if mtime == NOW else int(mtime)))
                return inode_of(os.stat(self.fd))

        return self._io(change)

    def fsync(self) -> None:
        self._io(lambda: os.fsync(self.fd))

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self.fd)

    def __enter__(self) -> HostHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
