"""The shell's device files: /dev/null, /dev/zero, /dev/stdin, /dev/stdout, /dev/stderr and
/dev/fd/N.

The VFS has no /dev (it is the agents' shared, persistent tree, and a device node there could
only stand for the host's devices, not for a command's descriptors). These names are the
shell's, resolved against the descriptor table of the command that names them, and this module
is the one place that resolves them: for redirections (`> /dev/null`), for `test -c`, and for
every tool operand (`cat /dev/stdin`, `cp /dev/null f`, `tee /dev/stderr`, `ls -l /dev/null`).
Tools open and stat operands through `open_file`, `read_file` and `stat` below instead of the
PathFS methods of the same names.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat as st
import time
from typing import TYPE_CHECKING

from kfs.vfs.inode import Inode
from kshell.exec.streams import FileReader, FileWriter, InStream, NullStream, PipeReader, PipeWriter, Stream

if TYPE_CHECKING:
    from kfs.vfs.vfs import FileHandle
    from kshell.exec.interp import Interp

_STD = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_BOOT = time.time_ns()


class ZeroSource(InStream):
    """/dev/zero: endless NUL bytes; writes vanish."""

    writable = True
    name = "/dev/zero"

    def _fill(self) -> bytes:
        return bytes(65536)

    def write(self, data: bytes) -> None:
        pass


def device_name(path: str) -> str | None:
    """The device `path` names (`/dev//null` is /dev/null), or None for a VFS path."""
    if not path.startswith("/dev/"):
        return None
    name = posixpath.normpath(path)
    if name in ("/dev/null", "/dev/zero") or name in _STD:
        return name
    if name.startswith("/dev/fd/") and name[8:].isdigit():
        return name
    return None


def _fd(name: str) -> int | None:
    if name in _STD:
        return _STD[name]
    if name.startswith("/dev/fd/"):
        return int(name[8:])
    return None


def _enoent(path: str) -> OSError:
    return OSError(errno.ENOENT, os.strerror(errno.ENOENT), path)


def open_stream(path: str, fds: dict[int, Stream]) -> Stream | None:
    """The stream a device path stands for under the descriptor table `fds` (None for a VFS
    path). /dev/fd/N of a closed descriptor raises ENOENT; /dev/std* of one is /dev/null."""
    name = device_name(path)
    if name is None:
        return None
    if name == "/dev/null":
        return NullStream()
    if name == "/dev/zero":
        return ZeroSource()
    fd = _fd(name)
    stream = fds.get(fd)  # type: ignore[arg-type]
    if stream is None:
        if name.startswith("/dev/fd/"):
            raise _enoent(path)
        return NullStream()
    return stream


def _node(ino: int, mode: int, rdev: int = 0, size: int = 0) -> Inode:
    # inode numbers above the VFS's counter, so that `[ /dev/null -ef f ]` holds for no VFS file
    return Inode((1 << 48) + ino, mode, 0, 0, 1, size, _BOOT, _BOOT, _BOOT, _BOOT, 1, rdev)


_NULL = _node(5, st.S_IFCHR | 0o666, rdev=(1 << 8) | 3)
_ZERO = _node(6, st.S_IFCHR | 0o666, rdev=(1 << 8) | 5)


def device_inode(path: str, fds: dict[int, Stream], *, follow: bool = True) -> Inode | None:
    """What stat(2) tells of a device path: a character device for /dev/null and /dev/zero;
    for a descriptor, the file it reads or writes, a fifo for a pipe, else a terminal.
    lstat(2) of /dev/stdin, /dev/stdout, /dev/stderr: the symbolic links to /proc/self/fd/N
    they are on Linux."""
    name = device_name(path)
    if name is None:
        return None
    if not follow and name in _STD:
        return _node(9 + _STD[name], st.S_IFLNK | 0o777, size=len(_target(name)))
    if name == "/dev/null":
        return _NULL
    if name == "/dev/zero":
        return _ZERO
    stream = fds.get(_fd(name))  # type: ignore[arg-type]
    if stream is None:
        raise _enoent(path)
    if isinstance(stream, NullStream):
        return _NULL
    if isinstance(stream, ZeroSource):
        return _ZERO
    if isinstance(stream, (FileReader, FileWriter)):
        return stream.handle.getattr()
    if isinstance(stream, (PipeReader, PipeWriter, InStream)):
        return _node(7, st.S_IFIFO | 0o600)
    return _node(8, st.S_IFCHR | 0o620, rdev=(136 << 8))


class DeviceHandle:
    """A device opened by a tool, with the FileHandle methods tools use. Reads and writes go
    to the stream in order (offsets are ignored, as on a character device or a pipe); closing
    leaves the stream to its descriptor."""

    def __init__(self, stream: Stream, path: str, inode: Inode) -> None:
        self.stream = stream
        self.path = path
        self.inode = inode

    def getattr(self) -> Inode:
        return self.inode

    def pread(self, size: int, offset: int) -> bytes:
        if not self.stream.readable:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF), self.path)
        return self.stream.read(size)

    def pwrite(self, buf: bytes, offset: int) -> int:
        if not self.stream.writable:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF), self.path)
        self.stream.write(bytes(buf))
        return len(buf)

    def truncate(self, size: int) -> None:
        pass

    def close(self) -> None:
        self.stream.flush()

    def __enter__(self) -> DeviceHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _target(name: str) -> str:
    return f"/proc/self/fd/{_STD[name]}"


# --------------------------------------------------------------------------- for tools


def stat(sh: Interp, path: str, *, follow: bool = True) -> Inode:
    """sh.fs.stat (or lstat), with the device files."""
    inode = device_inode(path, sh.fds, follow=follow)
    if inode is not None:
        return inode
    return sh.fs.stat(path) if follow else sh.fs.lstat(path)


def readlink(sh: Interp, path: str) -> str:
    """sh.fs.readlink, with the device files."""
    name = device_name(path)
    if name in _STD:
        return _target(name)
    return sh.fs.readlink(path)


def exists(sh: Interp, path: str) -> bool:
    try:
        stat(sh, path)
    except OSError:
        return False
    return True


def open_file(sh: Interp, path: str, flags: int = os.O_RDONLY, mode: int = 0o666) -> FileHandle | DeviceHandle:
    """sh.fs.open, with the device files (a DeviceHandle)."""
    stream = open_stream(path, sh.fds)
    if stream is None:
        return sh.fs.open(path, flags, mode)
    return DeviceHandle(stream, path, device_inode(path, sh.fds))  # type: ignore[arg-type]


def read_file(sh: Interp, path: str) -> bytes:
    """sh.fs.read_file, with the device files (/dev/zero is refused: it never ends)."""
    stream = open_stream(path, sh.fds)
    if stream is None:
        return sh.fs.read_file(path)
    if isinstance(stream, ZeroSource):
        raise OSError(errno.EFBIG, os.strerror(errno.EFBIG), path)
    if not stream.readable:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF), path)
    return stream.read()


def write_file(sh: Interp, path: str, content: bytes, *, mode: int = 0o666) -> None:
    """sh.fs.write_file, with the device files."""
    stream = open_stream(path, sh.fds)
    if stream is None:
        sh.fs.write_file(path, content, mode=mode)
        return
    if not stream.writable:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF), path)
    stream.write(content)
    stream.flush()
