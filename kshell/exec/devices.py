"""The shell's device files: /dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom,
/dev/tty, /dev/stdin, /dev/stdout, /dev/stderr and /dev/fd/N, and the directory /dev itself.

The VFS has no /dev (it is the agents' shared, persistent tree, and a device node there could
only stand for the host's devices, not for a command's descriptors). These names are the
shell's, resolved against the descriptor table of the command that names them, and this module
is the one place that resolves them: for redirections (`> /dev/null`), for `test -c`, and for
every tool operand (`cat /dev/stdin`, `cp /dev/null f`, `tee /dev/stderr`, `ls -l /dev/null`).
Tools open and stat operands through `open_file`, `read_file` and `stat` below instead of the
PathFS methods of the same names; `ls /dev` lists them through `scandir`, as Linux shows them
(character devices with their major/minor numbers, stdin/stdout/stderr and fd symbolic links
into /proc/self/fd).

/dev/full reads zeros and refuses every write with ENOSPC; /dev/random and /dev/urandom read
endless random bytes (writes are accepted and dropped); /dev/tty is ENXIO ("No such device or
address"), as for a process without a controlling terminal: K's builtins have none (in a
terminal session the line editor owns it), while a delegated program in a terminal session has
a pty of its own and its own /dev/tty (kshell.delegate.terminal).
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat as st
import time
from typing import TYPE_CHECKING

from kfs.vfs.inode import Inode
from kshell.exec import fifos
from kshell.exec.streams import FileReader, FileWriter, InStream, NullStream, PipeReader, PipeWriter, Stream

if TYPE_CHECKING:
    from kfs.vfs.vfs import FileHandle
    from kshell.exec.interp import Interp

_STD = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_BOOT = time.time_ns()
DEV = "/dev"
FD_DIR = "/dev/fd"


class ZeroSource(InStream):
    """/dev/zero: endless NUL bytes; writes vanish."""

    writable = True
    name = "/dev/zero"

    def _fill(self) -> bytes:
        return bytes(65536)

    def write(self, data: bytes) -> None:
        pass


class FullDevice(InStream):
    """/dev/full: reads give NUL bytes, every write fails with ENOSPC."""

    writable = True
    name = "/dev/full"

    def _fill(self) -> bytes:
        return bytes(65536)

    def write(self, data: bytes) -> None:
        if data:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self.name)


class RandomSource(InStream):
    """/dev/random and /dev/urandom: endless bytes from the host's CSPRNG; writes vanish."""

    writable = True

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def _fill(self) -> bytes:
        return os.urandom(4096)  # small: `head -c 16` should not pay for 64 KiB

    def write(self, data: bytes) -> None:
        pass


# The character devices: name -> (inode number, major, minor), as Linux numbers them
_CHARS = {
    "/dev/null": (5, 1, 3),
    "/dev/zero": (6, 1, 5),
    "/dev/full": (12, 1, 7),
    "/dev/random": (13, 1, 8),
    "/dev/urandom": (14, 1, 9),
    "/dev/tty": (15, 5, 0),
}
_PLAIN = frozenset(_CHARS)


def device_name(path: str) -> str | None:
    """The device `path` names (`/dev//null` is /dev/null), or None for a VFS path."""
    if not path.startswith("/dev/"):
        return None
    name = posixpath.normpath(path)
    if name in _PLAIN or name in _STD:
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
        if dev_dir(path) is not None:
            raise OSError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        return None
    if name == "/dev/null":
        return NullStream()
    if name == "/dev/zero":
        return ZeroSource()
    if name == "/dev/full":
        return FullDevice()
    if name in ("/dev/random", "/dev/urandom"):
        return RandomSource(name)
    if name == "/dev/tty":
        raise OSError(errno.ENXIO, os.strerror(errno.ENXIO), path)
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


_NODES = {name: _node(ino, st.S_IFCHR | 0o666, rdev=(major << 8) | minor)
          for name, (ino, major, minor) in _CHARS.items()}
_NULL = _NODES["/dev/null"]
_ZERO = _NODES["/dev/zero"]
_DEV_DIR = _node(1, st.S_IFDIR | 0o755, size=4096)
_FD_DIR = _node(2, st.S_IFDIR | 0o500)  # /proc/self/fd, what /dev/fd leads to


def device_inode(path: str, fds: dict[int, Stream], *, follow: bool = True) -> Inode | None:
    """What stat(2) tells of a device path: a character device for /dev/null and /dev/zero;
    for a descriptor, the file it reads or writes, a fifo for a pipe, else a terminal.
    lstat(2) of /dev/stdin, /dev/stdout, /dev/stderr: the symbolic links to /proc/self/fd/N
    they are on Linux."""
    special = dev_dir(path)
    if special is not None:
        if special == DEV:
            return _DEV_DIR
        if not follow:
            return _node(3, st.S_IFLNK | 0o777, size=len(_LINKS[FD_DIR]))
        return _FD_DIR
    name = device_name(path)
    if name is None:
        return None
    if not follow and name in _STD:
        return _node(9 + _STD[name], st.S_IFLNK | 0o777, size=len(_target(name)))
    if name in _NODES:
        return _NODES[name]
    stream = fds.get(_fd(name))  # type: ignore[arg-type]
    if stream is None:
        raise _enoent(path)
    if isinstance(stream, NullStream):
        return _NULL
    if isinstance(stream, (ZeroSource, FullDevice, RandomSource)):
        return _NODES[stream.name]
    if isinstance(stream, (FileReader, FileWriter)):
        return stream.handle.getattr()
    if isinstance(stream, (PipeReader, PipeWriter, InStream)):
        return _node(7, st.S_IFIFO | 0o600)
    return _node(8, st.S_IFCHR | 0o620, rdev=(136 << 8))


class DeviceHandle:
    """A device (or a FIFO) opened by a tool, with the FileHandle methods tools use. Reads and
    writes go to the stream in order (offsets are ignored, as on a character device or a pipe);
    closing leaves the stream to its descriptor, unless the handle `owns` it (a FIFO's end)."""

    def __init__(self, stream: Stream, path: str, inode: Inode, owns: bool = False) -> None:
        self.stream = stream
        self.path = path
        self.inode = inode
        self.owns = owns

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
        if self.owns:
            self.stream.close()

    def __enter__(self) -> DeviceHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _target(name: str) -> str:
    return f"/proc/self/fd/{_STD[name]}"


_LINKS = {**{name: _target(name) for name in _STD}, FD_DIR: "/proc/self/fd"}


def dev_dir(path: str) -> str | None:
    """`/dev` or `/dev/fd` when `path` names one of the shell's device directories, else None."""
    if not path.startswith("/dev"):
        return None
    name = posixpath.normpath(path)
    return name if name in (DEV, FD_DIR) else None


def dev_entries(fds: dict[int, Stream], path: str) -> list[tuple[str, Inode]] | None:
    """What readdir gives in /dev (lstat of each name) or /dev/fd (the open descriptors, as
    symbolic links), or None for any other directory."""
    special = dev_dir(path)
    if special == DEV:
        names = [*_CHARS, *_STD, FD_DIR]
        return [(n[5:], device_inode(n, fds, follow=False)) for n in names]  # type: ignore[misc]
    if special == FD_DIR:
        return [(str(fd), _node(16 + fd, st.S_IFLNK | 0o700, size=64)) for fd in sorted(fds) if fd >= 0]
    return None


# --------------------------------------------------------------------------- for tools


def stat(sh: Interp, path: str, *, follow: bool = True) -> Inode:
    """sh.fs.stat (or lstat), with the device files."""
    inode = device_inode(path, sh.fds, follow=follow)
    if inode is not None:
        return inode
    return sh.fs.stat(path) if follow else sh.fs.lstat(path)


def readlink(sh: Interp, path: str) -> str:
    """sh.fs.readlink, with the device files."""
    name = device_name(path) or dev_dir(path)
    if name in _LINKS:
        return _LINKS[name]
    if name is not None and name.startswith("/dev/fd/"):
        return _fd_target(sh.fds.get(int(name[8:])), path)
    if name is not None:
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), path)
    return sh.fs.readlink(path)


def _fd_target(stream: Stream | None, path: str) -> str:
    """What /proc/self/fd/N links to on Linux: the file, the device, `pipe:[N]`, a terminal."""
    if stream is None:
        raise _enoent(path)
    if isinstance(stream, (FileReader, FileWriter)):
        return stream.name
    if isinstance(stream, NullStream):
        return "/dev/null"
    if isinstance(stream, (ZeroSource, FullDevice, RandomSource)):
        return stream.name
    if isinstance(stream, (PipeReader, PipeWriter, InStream)):
        return f"pipe:[{id(stream) & 0xFFFFFF}]"
    return "/dev/pts/0"


def scandir(sh: Interp, path: str) -> list[tuple[str, Inode]]:
    """sh.fs.scandir, with /dev and /dev/fd."""
    entries = dev_entries(sh.fds, path)
    return entries if entries is not None else sh.fs.scandir(path)


def exists(sh: Interp, path: str) -> bool:
    try:
        stat(sh, path)
    except OSError:
        return False
    return True


def open_file(sh: Interp, path: str, flags: int = os.O_RDONLY, mode: int = 0o666) -> FileHandle | DeviceHandle:
    """sh.fs.open, with the device files (a DeviceHandle)."""
    stream = open_stream(path, sh.fds)
    if stream is not None:
        return DeviceHandle(stream, path, device_inode(path, sh.fds))  # type: ignore[arg-type]
    try:
        return sh.fs.open(path, flags, mode)
    except OSError as e:
        fifo = fifos.open_special(sh, path, flags, e)
    return DeviceHandle(fifo, path, sh.fs.stat(path), owns=True)


def read_file(sh: Interp, path: str) -> bytes:
    """sh.fs.read_file, with the device files (/dev/zero is refused: it never ends)."""
    stream = open_stream(path, sh.fds)
    if stream is None:
        try:
            return sh.fs.read_file(path)
        except OSError as e:
            fifo = fifos.open_special(sh, path, os.O_RDONLY, e)
        try:
            return fifo.read()
        finally:
            fifo.close()
    if isinstance(stream, (ZeroSource, FullDevice, RandomSource)):
        raise OSError(errno.EFBIG, os.strerror(errno.EFBIG), path)
    if not stream.readable:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF), path)
    return stream.read()


def write_file(sh: Interp, path: str, content: bytes, *, mode: int = 0o666) -> None:
    """sh.fs.write_file, with the device files."""
    stream = open_stream(path, sh.fds)
    if stream is None:
        try:
            sh.fs.write_file(path, content, mode=mode)
            return
        except OSError as e:
            stream = fifos.open_special(sh, path, os.O_WRONLY, e)
        try:
            stream.write(content)
        finally:
            stream.close()
        return
    if not stream.writable:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF), path)
    stream.write(content)
    stream.flush()
