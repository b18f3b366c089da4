"""The drives' one composition, `Drives` (the set of drives mounted at paths of K's tree, made
by `mount` from the image's records), and the path face over it: `DriveFS`, the PathFS that
sends every path under a drive's path to that drive and the rest to K. The inode face, the FUSE
mount's `MountedVFS` (kfs.drives.nodes), serves the same `Drives` by number.

A path goes where it leads, as with Linux mounts. Its lexical absolute form (the working
directory joined, `.` and `..` taken off) picks the drive: `cd /mnt/scratch; cat a`,
`ls /mnt/data/../scratch` reach the drive. A walk in K that a link takes onto a drive's place
goes on in the drive (K's walk raises `Crossing` there: kfs.vfs.paths), so `ln -s /mnt/scratch
~/s; ls ~/s/` lists the drive. Inside the drive the path is the drive's own ("/" its top) and
resolves there: a link in a drive never leads out of it (kfs.drives.host).

Two paths of one operation on different backings (rename, link) fail with EXDEV, as across
Linux mounts (`mv` then copies and removes). A K directory holding a drive's place cannot be
renamed or removed as a tree (EBUSY), nor can a drive's top. Each drive's inode numbers are a
range of its own, `(16 + index) << 48` (`tag`), above K's, the devices' (1 << 48) and the
system view's (2 << 48): `cp`, `mv`, `du` and `find` never take a drive's file for a K file with the same
number. The session's write policy (modes, rules, hooks) applies on a drive as in K, on the path
the write reaches.

`mount` opens a session's drives from the image's records and makes each drive's path a
directory in K if it is not one: the mount point, which `ls /mnt` lists (with the drive's top's
attributes). A drive is anything behind the `Backing` protocol: the image's memory, host and
python drives, and synthetic ones (kfs.drives.synthetic: the shell's /sys), which have no mount
point in K and which df does not list.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from kfs.drives.inodes import INO_MASK
from kfs.runtime.drives import Drive, under
from kfs.values import replace
from kfs.vfs import ROOT, VFS, W_OK, Cred, Inode, PathFS, StatFS
from kfs.vfs.cred import allowed
from kfs.vfs.errors import fs_error
from kfs.vfs.namespace import RENAME_EXCHANGE
from kfs.vfs.paths import Crossing, Filesystem, PathLike
from kfs.vfs.policy import NeedsApproval

if TYPE_CHECKING:
    from kfs.drives.memory import MemoryDrives

DRIVE_INO = 16  # drive i's inode numbers are (DRIVE_INO + i) << 48 | the backing's own
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# which of an operation's arguments it writes, and whether following a link there: (args, kwargs) -> pairs
Writes = Callable[[tuple[Any, ...], dict[str, Any]], list[tuple[int, bool]]]


class Backing(Protocol):
    """A mounted drive: its record, its place among the session's drives (its inode numbers'
    range, `tag`), a PathFS-shaped view for a caller (paths of the drive), and its room. (A
    backing may also say `readonly`, over its record's, and `listed = False`: df skips it.)"""

    drive: Drive
    index: int

    def view(self, cred: Cred, umask: int) -> Any: ...

    def statfs(self) -> StatFS: ...


class Drives:
    """The drives mounted in one session view (drives nest in no other, so a path has at most
    one), and the K inode of each one's place (what a K walk taken there by a link meets)."""

    def __init__(self, backings: Sequence[Backing], points: dict[int, str] | None = None) -> None:
        self.backings = sorted(backings, key=lambda b: b.drive.path)
        self.points = points or {}

    def __bool__(self) -> bool:
        return bool(self.backings)

    def __iter__(self) -> Iterator[Backing]:
        return iter(self.backings)

    def find(self, path: str) -> tuple[Backing, str] | None:
        """The drive holding the absolute normal `path`, and the path in it ("/" its top)."""
        for b in self.backings:
            top = b.drive.path
            if path.startswith(top) and (len(path) == len(top) or path[len(top)] == "/"):
                return b, path[len(top):] or "/"
        return None

    def children(self, directory: str) -> list[tuple[str, Backing]]:
        """The drives whose place is an entry of the absolute normal `directory`."""
        prefix = directory.rstrip("/") + "/"
        return [(b.drive.path[len(prefix):], b) for b in self.backings
                if b.drive.path.startswith(prefix) and "/" not in b.drive.path[len(prefix):]]

    def beneath(self, path: str) -> bool:
        """Whether a drive's place is `path` or lies beneath it."""
        return any(under(b.drive.path, path) for b in self.backings)

    def point(self, backing: Backing) -> int | None:
        """The K directory drive `backing` is mounted on (None: it has none, as a synthetic one)."""
        return next((ino for ino, path in self.points.items() if path == backing.drive.path), None)

    def adding(self, backing: Backing) -> Drives:
        """These drives and `backing`, which has no mount point in K (a synthetic drive)."""
        return Drives([*self.backings, backing], self.points)


def tag(backing: Backing) -> int:
    """The top bits of drive `backing`'s inode numbers (the backing's own are below INO_MASK)."""
    return (DRIVE_INO + backing.index) << 48


def mount(records: Sequence[Drive], vfs: VFS, memory: MemoryDrives | None,
          python: Callable[[Drive], Any] | None = None, *, overlay: bool = False) -> Drives:
    """A session's drives, for the path face and the inode face alike: each record's backing (a
    memory drive from this server run's `memory`; without one, as outside a server, memory drives
    are not mounted; a python drive over the object `python` gives for it, loaded and mounted by
    the caller: without one, as in the SFTP server and the mount, which run no image code, every
    call there fails with "Operation not supported"), each one's path a directory in K. In an
    overlay fork (`overlay`) every drive is read-only: what a fork writes stays in it, and a
    drive cannot keep it apart."""
    from kfs.drives.host import HostBacking  # the backings: loaded by a session that has drives
    from kfs.drives.memory import MemoryBacking

    if overlay:
        records = [replace(d, readonly=True) for d in records]

    backings: list[Backing] = []
    for index, drive in enumerate(records):
        if drive.kind == "memory":
            if memory is not None:
                backings.append(MemoryBacking(drive, memory.state(drive), index))
        elif drive.kind == "python":
            from kfs.drives.python import PythonBacking, Unserved

            backings.append(PythonBacking(drive, index, Unserved(errno.ENOTSUP) if python is None else python(drive)))
        else:
            backings.append(HostBacking(drive, index, vfs.state))  # its agents' files charged in K's state
    return Drives(backings, _mount_points(vfs, backings))


def _mount_points(vfs: VFS, backings: Sequence[Backing]) -> dict[int, str]:
    """Make each drive's path a directory in K when nothing is there (root's, 0755, as
    `mkdir -p` makes /mnt); K inode -> drive path of those that are directories."""
    fs = PathFS(vfs, cred=ROOT)
    points: dict[int, str] = {}
    for b in backings:
        path = b.drive.path
        try:
            found = fs.lstat(path)
        except FileNotFoundError:
            with contextlib.suppress(OSError):
                fs.mkdir(path, 0o755, parents=True)
            try:
                found = fs.lstat(path)
            except OSError:
                continue
        if found.is_dir:
            points[found.ino] = path
    return points


def _none(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[int, bool]]:
    """The writes of an operation that makes none."""
    return []


def _tagged(inode: Inode, backing: Backing) -> Inode:
    return replace(inode, ino=tag(backing) | (inode.ino & INO_MASK))


class DriveHandle:
    """An open file of a drive: the backing's handle, its attributes numbered in the drive's
    range (everything else is the backing handle's)."""

    def __init__(self, handle: Any, backing: Backing) -> None:
        self._handle = handle
        self._backing = backing

    def getattr(self) -> Inode:
        return _tagged(self._handle.getattr(), self._backing)

    def setattr(self, **changes: Any) -> Inode:
        return _tagged(self._handle.setattr(**changes), self._backing)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> DriveHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()


class DriveFS(PathFS):
    """A PathFS with drives mounted at paths of its tree (module docstring). Without drives it
    is K's PathFS, at the cost of one test per call."""

    def __init__(self, vfs: VFS, *, drives: Drives | None = None, **kwargs: Any) -> None:
        super().__init__(vfs, **kwargs)
        self.drives = drives or Drives(())
        self.mount_points = self.drives.points

    # -- where a path goes -----------------------------------------------------------------------

    def _place(self, path: PathLike) -> tuple[Backing, str] | None:
        """The drive `path` lies on and its path there (a trailing slash kept), or None: K's."""
        found = self.drives.find(self.abspath(path))
        if found is None:
            return None
        backing, rel = found
        if rel != "/" and (path[-1:] == "/" if isinstance(path, str) else path[-1:] == b"/"):
            rel += "/"
        return backing, rel

    def on_drive(self, path: PathLike) -> Backing | None:
        """The drive `path` lies on (lexically), or None."""
        found = self._place(path) if self.drives.backings else None
        return found[0] if found else None

    def _reached(self, path: PathLike) -> Backing | None:
        """The drive `path` leads to, lexically or through K's links, or None."""
        if not self.drives.backings:
            return None
        try:
            return self.on_drive(self.realpath(path, strict=False))
        except OSError:
            return self.on_drive(path)

    def _dispatch(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], paths: tuple[int, ...],
                  writes: Writes = _none,
                  ) -> tuple[Backing | None, Any]:
        """PathFS.`name` in K, or the drive view's on the drive its path arguments (`paths`)
        lie on, the policy asked first on the paths `writes` names (EXDEV for two backings);
        a K walk a link takes onto a drive's place starts over at the drive's path. Returns the
        drive (None: K) and the result."""
        if not self.drives.backings:
            return None, getattr(PathFS, name)(self, *args, **kwargs)
        given = args  # what errors name, whichever backing the paths lead to
        while True:
            places = [self._place(args[i]) for i in paths]
            if not any(places):
                if (name == "rename" or name == "rm" and kwargs.get("recursive")) and \
                        self.drives.beneath(self.abspath(args[0])):
                    raise fs_error(errno.EBUSY, args[0])  # a drive's place would move or go
                try:
                    return None, getattr(PathFS, name)(self, *args, **kwargs)
                except Crossing as e:
                    args = _crossed(args, paths, e)
                    continue
            if name == "rename" and any(p is not None and p[1] == "/" for p in places):
                raise fs_error(errno.EBUSY, args[0])  # a drive's top is its place's entry: a mount point
            backing = places[0][0] if places[0] else None
            if any(p is None or p[0] is not backing for p in places):
                crossed = self._crossing(args, paths, places)
                if crossed is not None:  # a K path among them leads onto a drive: judge again
                    args = crossed
                    continue
                raise fs_error(errno.EXDEV, args[paths[0]])
            assert backing is not None
            rels = {i: p[1] for i, p in zip(paths, places, strict=True) if p is not None}
            for i, follow in writes(args, kwargs):
                if backing.drive.readonly:  # (a memory drive's own view knows no read-only)
                    raise fs_error(errno.EROFS, args[i])
                self._guard_drive(args[i], backing, rels[i], follow)
            if self.policy is not None and (name == "rename" or name == "rm" and kwargs.get("recursive")):
                exchange = name == "rename" and (args[2:3] or (kwargs.get("flags", 0),))[0] & RENAME_EXCHANGE
                self._guard_drive_trees(backing, [rels[i] for i in paths], both=bool(exchange))
            inner = tuple(rels.get(i, a) for i, a in enumerate(args))
            try:
                return backing, getattr(backing.view(self.cred, self.umask), name)(*inner, **kwargs)
            except OSError as e:
                shown = next((given[i] for i, rel in rels.items() if e.filename == rel), None)
                if shown is None:
                    raise
                raise fs_error(e.errno or errno.EIO, shown) from None

    def _crossing(self, args: tuple[Any, ...], paths: tuple[int, ...],
                  places: list[tuple[Backing, str] | None]) -> tuple[Any, ...] | None:
        """The arguments with a K path whose walk a link takes onto a drive given as the drive's
        path (the entries a rename or link names: their last component is not followed), or
        None when every K path stays in K."""
        for i, place in zip(paths, places, strict=True):
            if place is None:
                try:
                    with self.vfs.state.read() as txn:
                        self.resolve(txn, args[i], entry=True)
                except Crossing as e:
                    return _crossed(args, (i,), e)
                except OSError:
                    pass
        return None

    def _guard_drive(self, path: PathLike, backing: Backing, rel: str, follow: bool) -> None:
        """The session's write policy on a write to a drive, judged on the path it reaches:
        the drive's path joined with where the path leads in the drive."""
        policy = self.policy
        if policy is None:
            return
        physical = self._drive_path(backing, rel, follow)
        shown = os.fsdecode(path)
        while True:
            try:
                policy.check(shown, physical)
                return
            except NeedsApproval as e:
                self._approval(e)

    def _drive_path(self, backing: Backing, rel: str, follow: bool) -> str:
        """The path a write to `rel` of a drive reaches: the drive's path joined with where
        `rel` leads in the drive (its last component followed if `follow`)."""
        view = backing.view(self.cred, self.umask)
        head, _, last = rel.rstrip("/").rpartition("/")
        try:
            inner = view.realpath(rel, strict=False) if follow or not last else \
                view.realpath(head or "/").rstrip("/") + "/" + last
        except OSError:
            inner = rel.rstrip("/") or "/"
        return backing.drive.path + (inner if inner != "/" else "")

    def _guard_drive_trees(self, backing: Backing, rels: list[str], both: bool) -> None:
        """The session's write policy on every path under the directory a rename on a drive
        moves (at `rels`, its old and new place; `both`: an exchange moves the other one too)
        or `rm -r` removes (kfs.vfs.policy's judge_tree, as in K)."""
        policy = self.policy
        assert policy is not None
        view = backing.view(self.cred, self.umask)
        places = tuple(self._drive_path(backing, r, False) for r in rels)

        def listing(directory: str) -> tuple[list[bytes], list[tuple[bytes, str]]]:
            entries = view.scandir(directory)
            return ([os.fsencode(n) for n, _ in entries],
                    [(os.fsencode(n), directory.rstrip("/") + "/" + n) for n, inode in entries if inode.is_dir])

        for top in rels if both else rels[:1]:
            try:
                if not getattr(view, "lstat", view.stat)(top).is_dir:
                    continue
            except OSError:
                continue  # the operation itself says what is wrong
            while True:
                try:
                    policy.judge_tree(top, listing, places)
                    break
                except NeedsApproval as e:
                    self._approval(e)

    # -- what differs from an operation's plain dispatch ---------------------------------------

    def stat(self, path: PathLike) -> Inode:
        if not self.drives.backings:  # the hottest calls of all: no detour without drives
            return PathFS.stat(self, path)
        return _shaped(*self._dispatch("stat", (path,), {}, (0,)))

    def lstat(self, path: PathLike) -> Inode:
        if not self.drives.backings:
            return PathFS.lstat(self, path)
        return _shaped(*self._dispatch("lstat", (path,), {}, (0,)))

    def access(self, path: PathLike, mode: int) -> bool:
        backing = self._reached(path) if self.drives.backings else None
        if backing is None:  # K's own file: its mode and its POSIX ACL (PathFS)
            return PathFS.access(self, path, mode)
        if mode & W_OK and getattr(backing, "readonly", backing.drive.readonly):  # (python: by its class too)
            return False
        try:  # a drive's file: its own attributes, which carry no ACL
            inode = self.stat(path)
        except OSError:
            return False
        return allowed(self.cred, inode, mode) if mode else True

    def realpath(self, path: PathLike, *, strict: bool = True) -> str:
        backing, found = self._dispatch("realpath", (path,), {"strict": strict}, (0,))
        return found if backing is None else backing.drive.path + (found if found != "/" else "")

    def scandir(self, path: PathLike = ".") -> list[tuple[str, Inode]]:
        """A drive's directory (numbered in its range); a K directory with its entries that are
        drives' places shown as those drives' tops, as a mount shows."""
        backing, entries = self._dispatch("scandir", (path,), {}, (0,))
        if backing is not None:
            return [(name, _tagged(inode, backing)) for name, inode in entries]
        mounted = self.drives.children(self.realpath(path)) if self.drives.backings else []
        if not mounted:
            return entries
        tops = {}
        for name, b in mounted:
            with contextlib.suppress(OSError):
                tops[name] = _tagged(b.view(self.cred, self.umask).stat("/"), b)
        return [(n, tops.pop(n, i)) for n, i in entries] + list(tops.items())

    def open(self, path: PathLike, flags: int = os.O_RDONLY, mode: int = 0o666) -> Any:
        follow = not (flags & os.O_NOFOLLOW or flags & os.O_CREAT and flags & os.O_EXCL)
        backing, handle = self._dispatch("open", (path, flags, mode), {}, (0,),
                                         lambda a, k: [(0, follow)] if flags & _WRITES else [])
        if backing is None:
            return handle
        handle.path = self.abspath(path)
        return DriveHandle(handle, backing)

    def check_write(self, path: PathLike, *, follow: bool = True) -> None:
        while True:
            found = self._place(path) if self.drives.backings else None
            if found is not None:
                self._guard_drive(path, found[0], found[1], follow)
                return
            try:
                PathFS.check_write(self, path, follow=follow)
                return
            except Crossing as e:
                path = _crossed((path,), (0,), e)[0]

    def statfs(self, path: PathLike = "/") -> StatFS:
        backing = self._reached(path)
        return PathFS.statfs(self) if backing is None else backing.statfs()

    def filesystems(self) -> list[Filesystem]:
        """K's, then each drive that answers (a host drive whose source is gone does not)."""
        found = PathFS.filesystems(self)
        for b in self.drives:
            if not getattr(b, "listed", True):
                continue
            with contextlib.suppress(OSError):
                found.append(Filesystem(b.drive.kind, b.drive.path, b.statfs()))
        return found

    def filesystem(self, path: PathLike) -> Filesystem:
        backing = self._reached(path)
        if backing is None or not getattr(backing, "listed", True):
            return PathFS.filesystem(self, path)
        return Filesystem(backing.drive.kind, backing.drive.path, backing.statfs())


def _shaped(backing: Backing | None, inode: Inode) -> Inode:
    return inode if backing is None else _tagged(inode, backing)


def _crossed(args: tuple[Any, ...], paths: tuple[int, ...], e: Crossing) -> tuple[Any, ...]:
    """The arguments with the one whose walk crossed onto a drive (or began with the path that
    did: `mkdir -p` walks the prefixes) given as the drive's path."""
    given = os.fsencode(e.given).rstrip(b"/")
    out = list(args)
    for i in paths:
        raw = os.fsencode(args[i])
        if raw.rstrip(b"/") == given or raw.startswith(given + b"/"):
            out[i] = e.path + os.fsdecode(raw[len(given):])
            return tuple(out)
    raise fs_error(errno.ENOENT, args[paths[0]])  # not ours: never loop


def _route(name: str, paths: tuple[int, ...],
           writes: Writes = _none,
           inode: bool = False) -> Callable[..., Any]:
    """DriveFS.`name`: PathFS.`name` dispatched (K or a drive) on its path arguments `paths`,
    the policy asked first on the paths `writes` names; an Inode result numbered in the drive's
    range."""
    base = getattr(PathFS, name)

    def method(self: DriveFS, *args: Any, **kwargs: Any) -> Any:
        backing, result = self._dispatch(name, args, kwargs, paths, writes)
        return _shaped(backing, result) if inode else result

    method.__name__ = method.__qualname__ = name
    method.__doc__ = base.__doc__
    return method


def _written(index: int, follow: bool | None = None) -> Writes:
    """The write an operation makes on its argument `index`: following it, not, or as its
    `follow` keyword says (None)."""
    return lambda args, kwargs: [(index, kwargs.get("follow", True) if follow is None else follow)]


for _name, _paths in {"read_file": (0,), "readlink": (0,), "getxattr": (0,), "listxattr": (0,)}.items():
    setattr(DriveFS, _name, _route(_name, _paths))
for _name, _paths, _writes, _inode in (
    ("write_file", (0,), _written(0, True), False),
    ("append_file", (0,), _written(0, True), False),
    ("mkdir", (0,), _written(0, False), False),
    ("mknod", (0,), _written(0, False), False),
    ("symlink", (1,), _written(1, False), False),
    ("link", (0, 1), lambda args, kwargs: [(1, False), (0, False)], False),  # its source too
    ("unlink", (0,), _written(0, False), False),
    ("rmdir", (0,), _written(0, False), False),
    ("rm", (0,), _written(0, False), False),
    ("rename", (0, 1), lambda args, kwargs: [(0, False), (1, False)], False),
    ("chmod", (0,), _written(0, True), True),
    ("chown", (0,), _written(0), True),
    ("utime", (0,), _written(0), True),
    ("truncate", (0,), _written(0, True), True),
    ("setxattr", (0,), _written(0), False),
    ("removexattr", (0,), _written(0), False),
):
    setattr(DriveFS, _name, _route(_name, _paths, _writes, _inode))
