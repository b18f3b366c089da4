"""The SFTP subsystem (and scp, which asyncssh runs on it) entirely on the VFS.

`VFSSFTPServer` overrides every method of asyncssh's `SFTPServer`, whose defaults act on the
host filesystem: nothing here touches a host path itself. Paths are the agent's (relative ones
resolve against its home, `.` is home), in the same view as its shell (K's tree and the image's
drives: kfs.drives.view), and every call runs with the agent's uid/gid.
VFS errors are OSErrors; `sftp_error` maps them to SFTP status codes, in this one place.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat as st
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import asyncssh
from asyncssh import SFTPAttrs, SFTPName, SFTPVFSAttrs
from asyncssh.sftp import SFTPLimits, SFTPServerHandler

from kfs.accounts import group_name, user_name
from kfs.vfs import RENAME_NOREPLACE, FileHandle, Inode, PathFS
from kfs.vfs.policy import PolicyDenial, Refusal
from kshell.worker.limits import WorkerLimits, size_text

T = TypeVar("T")

_ERRORS: dict[int, type[asyncssh.SFTPError]] = {
    errno.ENOENT: asyncssh.SFTPNoSuchFile,
    errno.EACCES: asyncssh.SFTPPermissionDenied,
    errno.EPERM: asyncssh.SFTPPermissionDenied,
    errno.EEXIST: asyncssh.SFTPFileAlreadyExists,
    errno.EROFS: asyncssh.SFTPWriteProtect,
    errno.ENOSPC: asyncssh.SFTPNoSpaceOnFilesystem,
    errno.EDQUOT: asyncssh.SFTPQuotaExceeded,
    errno.ENOTEMPTY: asyncssh.SFTPDirNotEmpty,
    errno.ENOTDIR: asyncssh.SFTPNotADirectory,
    errno.ENAMETOOLONG: asyncssh.SFTPInvalidFilename,
    errno.EILSEQ: asyncssh.SFTPInvalidFilename,
    errno.ELOOP: asyncssh.SFTPLinkLoop,
    errno.EINVAL: asyncssh.SFTPInvalidParameter,
    errno.EISDIR: asyncssh.SFTPFileIsADirectory,
    errno.EBADF: asyncssh.SFTPInvalidHandle,
    errno.EOPNOTSUPP: asyncssh.SFTPOpUnsupported,
    errno.ENOSYS: asyncssh.SFTPOpUnsupported,
    errno.EBUSY: asyncssh.SFTPFailure,
    errno.EXDEV: asyncssh.SFTPFailure,
}


def sftp_error(e: OSError) -> asyncssh.SFTPError:
    """The SFTP status for a VFS error (v3 clients see the codes their version has). A write
    the session's mode refuses is permission denied, its message naming the mode."""
    if isinstance(e, Refusal):
        return asyncssh.SFTPPermissionDenied(f"{e.strerror} ({e.mode} mode)")
    if isinstance(e, PolicyDenial):
        return asyncssh.SFTPPermissionDenied(f"{e.strerror}: {e.why}")
    cls = _ERRORS.get(e.errno or 0, asyncssh.SFTPFailure)
    return cls(e.strerror or str(e))


def _vfs_call(method: Callable[..., T]) -> Callable[..., T]:
    """Translate OSError into SFTP status codes and mark the connection as active."""

    @functools.wraps(method)
    def wrapper(self: VFSSFTPServer, *args: Any) -> T:
        self._touch()
        try:
            return method(self, *args)
        except OSError as e:
            raise sftp_error(e) from None

    return wrapper


def _ns(sec: int | None, frac: int | None) -> int | None:
    return None if sec is None else sec * 1_000_000_000 + (frac or 0)


def inode_attrs(inode: Inode) -> SFTPAttrs:
    """SFTP attributes of an inode (seconds plus nanosecond remainders for v4+ clients)."""
    atime, atime_ns = divmod(inode.atime, 1_000_000_000)
    mtime, mtime_ns = divmod(inode.mtime, 1_000_000_000)
    ctime, ctime_ns = divmod(inode.ctime, 1_000_000_000)
    crtime, crtime_ns = divmod(inode.btime, 1_000_000_000)
    kind = {
        st.S_IFREG: asyncssh.FILEXFER_TYPE_REGULAR,
        st.S_IFDIR: asyncssh.FILEXFER_TYPE_DIRECTORY,
        st.S_IFLNK: asyncssh.FILEXFER_TYPE_SYMLINK,
    }.get(inode.kind, asyncssh.FILEXFER_TYPE_SPECIAL)
    return SFTPAttrs(
        type=kind, size=inode.size, uid=inode.uid, gid=inode.gid, permissions=inode.mode,
        atime=atime, atime_ns=atime_ns, mtime=mtime, mtime_ns=mtime_ns,
        ctime=ctime, ctime_ns=ctime_ns, crtime=crtime, crtime_ns=crtime_ns, nlink=inode.nlink,
    )


class OpenFile:
    """An SFTP file handle: a VFS FileHandle plus the seek() asyncssh's ranges request uses."""

    __slots__ = ("handle", "path")

    def __init__(self, handle: FileHandle, path: str) -> None:
        self.handle = handle
        self.path = path

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        """SEEK_DATA/SEEK_HOLE as a file without holes answers them (the whole file is data)."""
        size = self.handle.getattr().size
        if whence in (os.SEEK_DATA, os.SEEK_HOLE):
            if offset >= size:
                raise OSError(errno.ENXIO, os.strerror(errno.ENXIO))
            return offset if whence == os.SEEK_DATA else size
        if whence == os.SEEK_END:
            return size + offset
        return offset

    def close(self) -> None:
        self.handle.close()


def _open_flags(pflags: int) -> int:
    access = pflags & (asyncssh.FXF_READ | asyncssh.FXF_WRITE)
    if access == asyncssh.FXF_READ | asyncssh.FXF_WRITE:
        flags = os.O_RDWR
    elif access == asyncssh.FXF_WRITE:
        flags = os.O_WRONLY
    else:
        flags = os.O_RDONLY
    if pflags & asyncssh.FXF_APPEND:
        flags |= os.O_APPEND
    if pflags & asyncssh.FXF_CREAT:
        flags |= os.O_CREAT
    if pflags & asyncssh.FXF_TRUNC:
        flags |= os.O_TRUNC
    if pflags & asyncssh.FXF_EXCL:
        flags |= os.O_EXCL
    return flags


class VFSSFTPServer(asyncssh.SFTPServer):
    """One SFTP session of one agent, on the VFS with the agent's credentials, within the
    `[limits]` bounds on handles and READ/WRITE lengths (one client must not make the server
    allocate without bound: a READ of 4 GiB on a sparse file would)."""

    def __init__(
        self,
        chan: asyncssh.SSHServerChannel,
        fs: PathFS,
        *,
        limits: WorkerLimits | None = None,
        touch: Callable[[], None] = lambda: None,
        on_exit: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(chan)
        self.fs = fs
        self.limits = limits or WorkerLimits()
        self._touch = touch
        self._on_exit = on_exit
        self._files: set[OpenFile] = set()
        self._dirs: weakref.WeakSet[Any] = weakref.WeakSet()  # asyncssh drops a closed one

    def _new_handle(self) -> None:
        """Another open file or directory, if the session has room (as sftp-server runs out of
        descriptors: the open fails, the session goes on)."""
        if len(self._files) + len(self._dirs) >= self.limits.sftp_handles:
            raise asyncssh.SFTPFailure(f"too many open handles (the limit is {self.limits.sftp_handles})")

    # -- paths and names ---------------------------------------------------------------------

    def map_path(self, path: bytes) -> bytes:
        return path

    def reverse_map_path(self, path: bytes) -> bytes:
        return path

    def format_user(self, uid: int | None) -> str:
        """The owner in `ls -l` listings: K's name for the uid, else the number (as sftp-server)."""
        if uid is None:
            return ""
        return user_name(self.fs.vfs.state, uid) or str(uid)

    def format_group(self, gid: int | None) -> str:
        if gid is None:
            return ""
        return group_name(self.fs.vfs.state, gid) or str(gid)

    @staticmethod
    def _path(path: bytes) -> bytes:
        return path or b"."

    @_vfs_call
    def realpath(self, path: bytes) -> bytes:
        """Physical absolute path; the last component may be missing (scp targets)."""
        return os.fsencode(self.fs.realpath(self._path(path), strict=False))

    # -- attributes --------------------------------------------------------------------------

    @_vfs_call
    def stat(self, path: bytes) -> SFTPAttrs:
        return inode_attrs(self.fs.stat(self._path(path)))

    @_vfs_call
    def lstat(self, path: bytes) -> SFTPAttrs:
        return inode_attrs(self.fs.lstat(self._path(path)))

    @_vfs_call
    def fstat(self, file_obj: object) -> SFTPAttrs:
        return inode_attrs(self._file(file_obj).handle.getattr())

    def _apply(self, path: bytes, attrs: SFTPAttrs, follow: bool) -> None:
        fs = self.fs
        if attrs.uid is not None or attrs.gid is not None:
            fs.chown(path, attrs.uid, attrs.gid, follow=follow)
        if attrs.size is not None:
            fs.truncate(path, attrs.size)
        if attrs.permissions is not None:
            fs.chmod(path, st.S_IMODE(attrs.permissions), follow=follow)
        atime, mtime = _ns(attrs.atime, attrs.atime_ns), _ns(attrs.mtime, attrs.mtime_ns)
        if atime is not None or mtime is not None:
            fs.utime(path, atime, mtime, follow=follow)

    @_vfs_call
    def setstat(self, path: bytes, attrs: SFTPAttrs) -> None:
        self._apply(self._path(path), attrs, True)

    @_vfs_call
    def lsetstat(self, path: bytes, attrs: SFTPAttrs) -> None:
        self._apply(self._path(path), attrs, False)

    @_vfs_call
    def fsetstat(self, file_obj: object, attrs: SFTPAttrs) -> None:
        f = self._file(file_obj)
        self.fs.check_write(f.path)  # a restricted mode: the handle's file, by its path
        if attrs.size is not None:
            f.handle.truncate(attrs.size)  # scp (SFTP mode) shrinks its target this way
        atime, mtime = _ns(attrs.atime, attrs.atime_ns), _ns(attrs.mtime, attrs.mtime_ns)
        if attrs.uid is not None or attrs.gid is not None:
            f.handle.setattr(uid=attrs.uid, gid=attrs.gid)
        if attrs.permissions is not None:
            f.handle.setattr(mode=st.S_IMODE(attrs.permissions))
        if atime is not None or mtime is not None:
            f.handle.setattr(atime=atime, mtime=mtime)

    @_vfs_call
    def statvfs(self, path: bytes) -> SFTPVFSAttrs:
        self.fs.stat(self._path(path))
        return self._statvfs(self._path(path))

    @_vfs_call
    def fstatvfs(self, file_obj: object) -> SFTPVFSAttrs:
        return self._statvfs(self._file(file_obj).path)

    def _statvfs(self, path: bytes | str) -> SFTPVFSAttrs:
        """The room of the filesystem holding `path` (K's, or a drive's)."""
        s = self.fs.statfs(path)
        fsid = int(self.fs.vfs.state.fs_uuid.replace("-", "")[:16] or "0", 16)
        return SFTPVFSAttrs(
            bsize=s.block_size, frsize=s.block_size, blocks=s.blocks, bfree=s.blocks_free,
            bavail=s.blocks_free, files=s.files + s.files_free, ffree=s.files_free,
            favail=s.files_free, fsid=fsid, flags=0, namemax=s.name_max,
        )

    # -- files -------------------------------------------------------------------------------

    @staticmethod
    def _file(file_obj: object) -> OpenFile:
        if not isinstance(file_obj, OpenFile):
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        return file_obj

    @_vfs_call
    def open(self, path: bytes, pflags: int, attrs: SFTPAttrs) -> OpenFile:
        self._new_handle()
        mode = 0o666 if attrs.permissions is None else st.S_IMODE(attrs.permissions)
        path = self._path(path)
        handle = self.fs.open(path, _open_flags(pflags), mode)
        f = OpenFile(handle, self.fs.abspath(path))
        self._files.add(f)
        return f

    def open56(self, path: bytes, desired_access: int, flags: int, attrs: SFTPAttrs) -> OpenFile:
        """SFTP v5/v6 open, mapped onto the v3 flags (K serves v3, as OpenSSH does)."""
        pflags = 0
        if desired_access & asyncssh.ACE4_READ_DATA:
            pflags |= asyncssh.FXF_READ
        if desired_access & (asyncssh.ACE4_WRITE_DATA | asyncssh.ACE4_APPEND_DATA):
            pflags |= asyncssh.FXF_WRITE
        disp = flags & asyncssh.FXF_ACCESS_DISPOSITION
        pflags |= {
            asyncssh.FXF_CREATE_NEW: asyncssh.FXF_CREAT | asyncssh.FXF_EXCL,
            asyncssh.FXF_CREATE_TRUNCATE: asyncssh.FXF_CREAT | asyncssh.FXF_TRUNC,
            asyncssh.FXF_OPEN_OR_CREATE: asyncssh.FXF_CREAT,
            asyncssh.FXF_TRUNCATE_EXISTING: asyncssh.FXF_TRUNC,
        }.get(disp, 0)
        if desired_access & asyncssh.ACE4_APPEND_DATA or flags & asyncssh.FXF_APPEND_DATA:
            pflags |= asyncssh.FXF_APPEND
        return self.open(path, pflags, attrs)

    @_vfs_call
    def close(self, file_obj: object) -> None:
        f = self._file(file_obj)
        self._files.discard(f)
        f.close()

    @_vfs_call
    def read(self, file_obj: object, offset: int, size: int) -> bytes:
        """At most `sftp_read` bytes: a longer request gets a short read, which every client
        continues from (OpenSSH's sftp-server clamps the same way)."""
        return self._file(file_obj).handle.pread(min(size, self.limits.sftp_read), offset)

    @_vfs_call
    def write(self, file_obj: object, offset: int, data: bytes) -> int:
        if len(data) > self.limits.sftp_write:
            raise asyncssh.SFTPFailure(f"write of {len(data)} bytes is longer than the limit of "
                                       f"{size_text(self.limits.sftp_write)}")
        return self._file(file_obj).handle.pwrite(data, offset)

    @_vfs_call
    def fsync(self, file_obj: object) -> None:
        self._file(file_obj).handle.fsync()

    def lock(self, file_obj: object, offset: int, length: int, flags: int) -> None:
        raise asyncssh.SFTPOpUnsupported("byte-range locks are not supported")

    def unlock(self, file_obj: object, offset: int, length: int) -> None:
        raise asyncssh.SFTPOpUnsupported("byte-range locks are not supported")

    # -- directories and names ---------------------------------------------------------------

    @_vfs_call
    def scandir(self, path: bytes) -> AsyncIterator[SFTPName]:  # type: ignore[override]
        """List eagerly, so that opendir of a missing or unreadable directory fails at once."""
        path = self._path(path)
        entries = self.fs.scandir(path)
        here = self.fs.stat(path)
        try:
            up = self.fs.stat(path.rstrip(b"/") + b"/..")
        except OSError:
            up = here
        names = [SFTPName(b".", attrs=inode_attrs(here)), SFTPName(b"..", attrs=inode_attrs(up))]
        names += [SFTPName(os.fsencode(name), attrs=inode_attrs(inode)) for name, inode in entries]
        self._new_handle()
        listing = _iterate(names)
        self._dirs.add(listing)
        return listing

    @_vfs_call
    def mkdir(self, path: bytes, attrs: SFTPAttrs) -> None:
        mode = 0o777 if attrs.permissions is None else st.S_IMODE(attrs.permissions)
        self.fs.mkdir(self._path(path), mode)

    @_vfs_call
    def rmdir(self, path: bytes) -> None:
        self.fs.rmdir(path)

    @_vfs_call
    def remove(self, path: bytes) -> None:
        self.fs.unlink(path)

    @_vfs_call
    def rename(self, oldpath: bytes, newpath: bytes) -> None:
        """SFTP v3 rename never replaces an existing target (posix_rename does)."""
        self.fs.rename(oldpath, newpath, RENAME_NOREPLACE)

    @_vfs_call
    def posix_rename(self, oldpath: bytes, newpath: bytes) -> None:
        self.fs.rename(oldpath, newpath)

    @_vfs_call
    def readlink(self, path: bytes) -> bytes:
        return os.fsencode(self.fs.readlink(path))

    @_vfs_call
    def symlink(self, oldpath: bytes, newpath: bytes) -> None:
        """Create `newpath` pointing at `oldpath`, stored verbatim (asyncssh has already undone
        OpenSSH's swapped argument order)."""
        self.fs.symlink(oldpath, newpath)

    @_vfs_call
    def link(self, oldpath: bytes, newpath: bytes) -> None:
        self.fs.link(oldpath, newpath)

    def exit(self) -> None:
        """End the session with exit status 0: OpenSSH 9 scp reports failure without it."""
        with contextlib.suppress(OSError, asyncssh.Error, AttributeError):
            self.channel.exit(0)
        self._on_exit()


async def _process_limits(handler: Any, packet: Any) -> SFTPLimits:
    """limits@openssh.com with the session's own bounds. asyncssh answers with its constants
    (4 MiB reads and writes), and clients size their requests by the answer: an asyncssh
    client would send writes the server then refuses."""
    server = handler._server  # noqa: SLF001
    if not isinstance(server, VFSSFTPServer):
        return await _asyncssh_limits(handler, packet)
    packet.check_end()
    limits = server.limits
    return SFTPLimits(max(limits.sftp_read, limits.sftp_write) + 1024, limits.sftp_read, limits.sftp_write,
                      limits.sftp_handles)


_asyncssh_limits = SFTPServerHandler._packet_handlers[b"limits@openssh.com"]  # noqa: SLF001
SFTPServerHandler._packet_handlers[b"limits@openssh.com"] = _process_limits  # noqa: SLF001


async def _recv_when_drained(handler: Any) -> Any:
    """The next request, once the answers before it went to the client (down to asyncssh's
    low-water mark): asyncssh answers without waiting, so a client sending READs and reading
    none of the answers made the front end hold them all (200 READs: 50 MiB); now it holds
    at most the high-water mark and one answer per SFTP session."""
    await handler._writer.drain()  # noqa: SLF001
    return await _asyncssh_recv(handler)


_asyncssh_recv = SFTPServerHandler.recv_packet
SFTPServerHandler.recv_packet = _recv_when_drained  # type: ignore[method-assign]


async def _iterate(names: list[SFTPName]) -> AsyncIterator[SFTPName]:
    for name in names:
        yield name
