"""The shell's view of the system directories, beside K's own tree.

`type ls` prints /usr/bin/ls and `command -v python3` prints /usr/bin/python3: those paths
must exist where the shell looks. So the session's PathFS shows
- always, /usr/bin (and /bin, a link to it as on a merged-/usr Debian) holding K's tools, each
  a small read-only script that runs the tool by its name;
- in a session that delegates programs, the host's program trees (HOST_DIRS and the configured
  extras) read-only, exactly what the sandbox binds for the program: `ls /usr/bin`,
  `test -x /usr/bin/python3`, `head /usr/lib/os-release` see what the program would. K's tools
  the host lacks still appear in /usr/bin.

/sys, the files this session's view generates (its hosts, its secrets' handles), is a synthetic
drive (kfs.drives.synthetic) among the session's drives while it has files: a mount, as Linux
mounts sysfs there. K's own tree, with the drives (kfs.drives.view), comes first: the system
view answers only where K has nothing (ENOENT), so a K script an operator put in /usr/local/bin
stays, and a directory both have lists both. Host files are read with the agent's permission bits, as the
kernel checks them for the agent's uid in the sandbox, and only inside the shown trees (a link
leading elsewhere is ENOENT): the worker's own rights never leak. Writes fail with EROFS, as on
the sandbox's read-only binds.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import stat as st
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kfs.drives.inodes import inode_of
from kfs.drives.synthetic import BytesHandle, SyntheticBacking, synthetic_inode
from kfs.drives.view import DriveFS, Drives
from kfs.values import value_class
from kfs.vfs import PathFS
from kfs.vfs.cred import R_OK, W_OK, X_OK, allowed, require
from kfs.vfs.errors import fs_error
from kfs.vfs.inode import Inode

if TYPE_CHECKING:
    from kfs.vfs.paths import PathLike
    from kshell.exec.interp import Session

HOST_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
TOOL_DIR = "/usr/bin"
_HOST_INO = 2 << 48  # above the VFS's counter and the shell's devices (1 << 48)
_SYS_INO = 3 << 48
SYS_INDEX = 239  # /sys's place among the drives: numbers (16 + 239) << 48, above any image drive's
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


# builtins that are programs in /usr/bin too (coreutils', procps', bash itself): a path to one,
# `/bin/false`, `xargs echo`, `env test`, runs the builtin as the program would
PROGRAM_BUILTINS = frozenset({"echo", "printf", "test", "[", "true", "false", "kill", "pwd", "sh", "bash"})


def tool_script(name: str) -> bytes:
    return f'#!/bin/sh\n# {name}: a tool built into the K shell; this file runs it\nexec {name} "$@"\n'.encode()


@value_class(frozen=True, slots=True)
class _Node:
    """One thing the system view shows: `real` is a host path, `data` a synthetic file's
    bytes, `names` a synthetic directory's entries, `target` a synthetic link's."""

    inode: Inode
    real: str | None = None
    data: bytes | None = None
    names: tuple[str, ...] = ()
    target: str | None = None


def _synthetic(ino: int, mode: int, size: int = 0) -> Inode:
    return synthetic_inode(_SYS_INO + ino, mode, size)


def _host_inode(s: os.stat_result) -> Inode:
    return inode_of(s, _HOST_INO)


class SystemFS(DriveFS):
    """A session's PathFS: K's tree and its drives (kfs.drives.view), then the system
    directories (module docstring)."""

    def __init__(self, vfs: Any, *, session: Session, **kwargs: Any) -> None:
        self.session = session
        super().__init__(vfs, **kwargs)

    @property  # type: ignore[override]
    def drives(self) -> Drives:
        """The session's drives, with /sys among them while its view has files."""
        return self._with_sys if self.session.view_files else self._mounted

    @drives.setter
    def drives(self, mounted: Drives) -> None:
        self._mounted = mounted
        self._with_sys = mounted.adding(SyntheticBacking("/sys", SYS_INDEX, self.session.view_files))

    # -- what is shown -------------------------------------------------------------------------

    def host_tops(self) -> tuple[str, ...]:
        """The host trees this session shows: those its sandbox binds, when it delegates."""
        d = self.session.delegation
        if d is None or d.config.remote == "none":
            return ()
        return HOST_DIRS + tuple(posixpath.normpath(p) for p in d.config.read_only)

    def host_path(self, path: PathLike) -> str | None:
        """The absolute path of a host file this view shows at `path` (K has nothing there),
        which a delegated program reaches at the same path; None otherwise."""
        try:
            DriveFS.lstat(self, path)
            return None
        except OSError as e:
            if e.errno != errno.ENOENT:
                return None
        shown = self.abspath(path)
        if not any(_under(shown, t) for t in self.host_tops()):
            return None
        try:
            node = self._lookup(shown, follow=True)
        except OSError:
            return None
        return shown if node is not None and node.real is not None else None

    def _lookup(self, path: str, follow: bool) -> _Node | None:
        """What the system view shows at the absolute normal `path`, or None."""
        tops = self.host_tops()
        if tops:
            if any(_under(path, t) for t in tops):
                return self._host(path, follow, tops)
            names = self._children(path, tops)
            return self._dir(path, names) if names else None
        tools = self.programs()
        if path == "/":
            return self._dir(path, ("bin", "usr"))
        if path == TOOL_DIR or path == "/bin" and follow:
            return self._dir(path, tuple(sorted(tools)))
        if path == "/bin":
            return _Node(_synthetic(2, st.S_IFLNK | 0o777, 7), target="usr/bin")
        if path == "/usr":
            return self._dir(path, ("bin",))
        parent, name = posixpath.split(path)
        if parent in (TOOL_DIR, "/bin") and name in tools:
            return self._tool(name)
        return None

    def programs(self) -> set[str]:
        """What /usr/bin holds of K's own: its tools, and the builtins that are programs too."""
        return {*self.session.tools, *PROGRAM_BUILTINS}

    def _children(self, path: str, tops: tuple[str, ...]) -> tuple[str, ...]:
        """Names under `path` that lead to a shown tree (`/` has usr, bin, lib, ...)."""
        prefix = path.rstrip("/") + "/"
        names = {t[len(prefix):].split("/", 1)[0] for t in tops if t.startswith(prefix) and t != prefix}
        return tuple(sorted(n for n in names if os.path.lexists(prefix + n)))

    def _dir(self, path: str, names: tuple[str, ...]) -> _Node:
        return _Node(_synthetic(16 + zlib.crc32(path.encode()), st.S_IFDIR | 0o755, 4096), names=names)

    def _tool(self, name: str) -> _Node:
        data = tool_script(name)
        return _Node(_synthetic(1 << 32 | zlib.crc32(name.encode()), st.S_IFREG | 0o755, len(data)), data=data)

    def _host(self, path: str, follow: bool, tops: tuple[str, ...]) -> _Node | None:
        """A host file, confined to the shown trees and checked with the caller's bits."""
        parent, name = posixpath.split(path)
        real_parent = os.path.realpath(parent)
        real = os.path.realpath(path) if follow else posixpath.join(real_parent, name)
        inside = tops + tuple(os.path.realpath(t) for t in tops)
        if not any(_under(real, t) for t in inside):
            return None
        try:
            found = os.lstat(real)
        except (FileNotFoundError, NotADirectoryError):
            if posixpath.dirname(real) == TOOL_DIR and name in self.programs():
                return self._tool(name)
            return None
        self._search(posixpath.dirname(real), path)
        inode = _host_inode(found)
        if st.S_ISDIR(found.st_mode) and real == TOOL_DIR:
            return _Node(inode, real=real, names=tuple(sorted(self.programs())))
        return _Node(inode, real=real)

    def _search(self, directory: str, path: str) -> None:
        """EACCES unless the caller may search every directory down to `directory`."""
        if self.cred.is_root:
            return
        walked = ""
        for comp in directory.strip("/").split("/"):
            walked += "/" + comp
            if comp:
                require(self.cred, _host_inode(os.stat(walked)), X_OK, path)

    def _missing(self, e: OSError, path: PathLike, follow: bool = True) -> _Node:
        """The system node for a path K has not (K's error when the view has none either)."""
        if e.errno != errno.ENOENT:
            raise e
        trailing = path[-1:] in ("/", b"/")  # forces the link to be followed, as Linux does
        node = self._lookup(self.abspath(path), follow or trailing)
        if node is None:
            raise e
        return node

    def _entries(self, path: str, node: _Node) -> list[tuple[str, Inode]]:
        """A shown directory's entries, as lstat sees each."""
        require(self.cred, node.inode, R_OK, path)
        found: dict[str, Inode] = {}
        if node.real is not None:
            with os.scandir(node.real) as listing:
                for entry in listing:
                    found[entry.name] = _host_inode(entry.stat(follow_symlinks=False))
        prefix = path.rstrip("/") + "/"
        for name in node.names:
            if name not in found:
                child = self._lookup(prefix + name, follow=False)
                if child is not None:
                    found[name] = child.inode
        return list(found.items())

    # -- reads: K first, then the view ---------------------------------------------------------

    def stat(self, path: PathLike) -> Inode:
        try:
            return DriveFS.stat(self, path)
        except OSError as e:
            return self._missing(e, path).inode

    def lstat(self, path: PathLike) -> Inode:
        try:
            return DriveFS.lstat(self, path)
        except OSError as e:
            return self._missing(e, path, follow=False).inode

    def access(self, path: PathLike, mode: int) -> bool:
        if self._reached(path) is not None:  # a drive's: its own bits (and read-only flag) decide
            return DriveFS.access(self, path, mode)
        try:
            inode = self.stat(path)
        except OSError:
            return False
        if mode & W_OK and inode.ino >= _HOST_INO:  # the view is read-only
            return False
        return allowed(self.cred, inode, mode) if mode else True

    def read_file(self, path: PathLike) -> bytes:
        try:
            return DriveFS.read_file(self, path)
        except OSError as e:
            node = self._missing(e, path)
        with self._open_node(node, path) as handle:
            return handle.read_all()

    def readlink(self, path: PathLike) -> str:
        try:
            return DriveFS.readlink(self, path)
        except OSError as e:
            node = self._missing(e, path, follow=False)
        if node.target is not None:
            return node.target
        if node.real is not None and st.S_ISLNK(node.inode.mode):
            return os.readlink(node.real)
        raise fs_error(errno.EINVAL, path)

    def realpath(self, path: PathLike, *, strict: bool = True) -> str:
        try:
            return DriveFS.realpath(self, path, strict=strict)
        except OSError as e:
            node = self._missing(e, path)
        if node.real is not None:
            return node.real
        shown = self.abspath(path)
        return TOOL_DIR + shown[4:] if _under(shown, "/bin") else shown

    def scandir(self, path: PathLike = ".") -> list[tuple[str, Inode]]:
        try:
            entries = DriveFS.scandir(self, path)
        except OSError as e:
            node = self._missing(e, path)
            if not st.S_ISDIR(node.inode.mode):
                raise fs_error(errno.ENOTDIR, path) from None
            return self._entries(self.abspath(path), node)
        shown = self.abspath(path)
        try:  # a K directory where the view also shows one (`/`, or a K-made /usr): both
            node = self._lookup(shown, follow=True) if shown == "/" or self._shows_under(shown) else None
        except OSError:
            node = None
        if node is None or not st.S_ISDIR(node.inode.mode):
            return entries
        have = {name for name, _ in entries}
        extra = [(n, i) for n, i in self._entries(shown, node) if n not in have]
        return entries + extra

    def scandir_contents(
        self, path: PathLike, wanted: Callable[[str, Inode], bool], budget: int
    ) -> list[tuple[str, Inode, bytes | OSError | None]]:
        """PathFS.scandir_contents for K's own directories; where the view may show entries
        (or is all there is) and on a drive, scandir's entries without contents: their readers
        read them."""
        shown = self.abspath(path)
        if shown != "/" and not self._shows_under(shown) and self.on_drive(shown) is None:
            with contextlib.suppress(OSError):
                return PathFS.scandir_contents(self, path, wanted, budget)
        return [(name, inode, None) for name, inode in self.scandir(path)]

    def _shows_under(self, path: str) -> bool:
        tops = self.host_tops() or (TOOL_DIR, "/bin")
        return any(_under(path, t) or _under(t, path) for t in tops)

    def open(self, path: PathLike, flags: int = os.O_RDONLY, mode: int = 0o666) -> Any:
        try:
            return DriveFS.open(self, path, flags, mode)
        except OSError as e:
            if flags & os.O_CREAT and e.errno == errno.ENOENT and self._copy_up(path):
                return DriveFS.open(self, path, flags, mode)
            if flags & _WRITES and e.errno == errno.ENOENT and self._shows(path):
                raise fs_error(errno.EROFS, path) from None
            node = self._missing(e, path, follow=not flags & os.O_NOFOLLOW)
        if flags & _WRITES:
            raise fs_error(errno.EROFS, path)
        if flags & os.O_DIRECTORY and not st.S_ISDIR(node.inode.mode):
            raise fs_error(errno.ENOTDIR, path)
        return self._open_node(node, path)

    def _open_node(self, node: _Node, path: PathLike) -> SystemHandle:
        if st.S_ISDIR(node.inode.mode) and node.real is None:
            raise fs_error(errno.EISDIR, path)
        require(self.cred, node.inode, R_OK, path)
        return SystemHandle(node, self.abspath(path))

    def getxattr(self, path: PathLike, name: bytes, *, follow: bool = True) -> bytes:
        try:
            return DriveFS.getxattr(self, path, name, follow=follow)
        except OSError as e:
            self._missing(e, path, follow)
        raise fs_error(errno.ENODATA, path)

    def listxattr(self, path: PathLike, *, follow: bool = True) -> list[bytes]:
        try:
            return DriveFS.listxattr(self, path, follow=follow)
        except OSError as e:
            self._missing(e, path, follow)
        return []

    def _copy_up(self, path: PathLike) -> bool:
        """Make K's own copy of the synthetic directory `path` would be made in, when the
        caller may write there (only root: they are root's, 0755); False when it may not."""
        parent = posixpath.dirname(self.abspath(path))
        try:
            node = self._lookup(parent, follow=True)
        except OSError:
            return False
        if node is None or node.real is not None or not allowed(self.cred, node.inode, W_OK):
            return False
        DriveFS.mkdir(self, parent, 0o755, parents=True)
        return True

    def _shows(self, path: PathLike) -> bool:
        """Whether the view shows `path` or the directory it would be made in."""
        shown = self.abspath(path)
        try:
            return self._lookup(shown, follow=False) is not None or self._lookup(posixpath.dirname(shown), True) is not None
        except OSError:
            return True


def _read_only(name: str, *which: int, creates: int | None = None) -> Any:
    """DriveFS.`name`, with EROFS where K has nothing and the view shows the path (arguments
    `which`) or the directory it would go in: the sandbox's binds are read-only. An entry made
    (argument `creates`) in a synthetic directory its caller may write (root, in /usr of a
    fresh state) makes that directory K's own first, as overlayfs copies a directory up."""
    base = getattr(DriveFS, name)

    def method(self: SystemFS, *args: Any, **kwargs: Any) -> Any:
        try:
            return base(self, *args, **kwargs)
        except OSError as e:
            if e.errno != errno.ENOENT:
                raise
            if creates is not None and self._copy_up(args[creates]):
                return base(self, *args, **kwargs)
            for i in which:
                if self._shows(args[i]):
                    raise fs_error(errno.EROFS, args[i]) from None
            raise

    method.__name__ = method.__qualname__ = name
    method.__doc__ = base.__doc__
    return method


for _name, _which in {"write_file": (0,), "append_file": (0,), "mkdir": (0,), "mknod": (0,), "symlink": (1,),
                      "link": (1,), "rename": (0, 1)}.items():
    setattr(SystemFS, _name, _read_only(_name, *_which, creates=_which[-1]))
for _name in ("unlink", "rmdir", "rm", "chmod", "chown", "utime", "truncate", "setxattr", "removexattr"):
    setattr(SystemFS, _name, _read_only(_name, 0))


class SystemHandle(BytesHandle):
    """An open file of the system view: a synthetic one's bytes, or a host file read through
    a descriptor of its own (read-only)."""

    def __init__(self, node: _Node, path: str) -> None:
        super().__init__(node.inode, node.data or b"", path)
        self._fd = os.open(node.real, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW) if node.real else -1

    def pread(self, size: int, offset: int) -> bytes:
        if self._fd < 0:
            return super().pread(size, offset)
        try:
            return os.pread(self._fd, size, offset)
        except OSError as e:
            raise fs_error(e.errno, self.path) from None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
