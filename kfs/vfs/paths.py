"""The path-level face of the VFS, in the seed's Node-like shape, for the shell and the CLI.

Paths resolve physically (symlinks followed, ".." taken from the directory actually reached),
from the root of the VFS: nothing resolves outside it. Every call is one transaction.
"""

from __future__ import annotations

import errno
import os
import stat as st
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

import native
from kfs.journal import ChangeKind
from kfs.kstate import Txn
from kfs.values import value_class
from kfs.vfs import attrs, data, namespace, records
from kfs.vfs.attrs import Time
from kfs.vfs.cred import R_OK, ROOT, W_OK, X_OK, Cred, allowed, require
from kfs.vfs.errors import fs_error
from kfs.vfs.inode import PATH_MAX, ROOT_INO, SYMLOOP_MAX, Inode
from kfs.vfs.ops import Op
from kfs.vfs.policy import NeedsApproval, WritePolicy
from kfs.vfs.vfs import VFS, FileHandle, StatFS

PathLike = str | bytes
T = TypeVar("T")


class Resolved:
    """Where a path led: the directory holding the last entry, its name, and the inode.

    `inode` is None when only the last component is missing (a name one may create).
    `parent` is None for the root or when the path ends in "..". `dir_only` marks a missing
    last component that may only become a directory.

    The walk knows the parent by number; its Inode is read on first access, in the
    resolving transaction (a stat never asks for it), and then stays the same object.
    """

    __slots__ = ("_parent", "_parent_ref", "name", "inode", "dir_only", "linked")

    def __init__(
        self,
        parent: Inode | None,
        name: bytes,
        inode: Inode | None,
        dir_only: bool = False,
        *,
        parent_ref: tuple[Txn, int] | None = None,
        linked: bool = False,
    ) -> None:
        self._parent = parent
        self._parent_ref = parent_ref
        self.name = name
        self.inode = inode
        self.dir_only = dir_only
        self.linked = linked  # the walk followed a symlink (else the lexical path is the real one)

    @property
    def parent(self) -> Inode | None:
        if self._parent is None and self._parent_ref is not None:
            txn, ino = self._parent_ref
            self._parent = records.get_inode(txn, ino)
            self._parent_ref = None
        return self._parent

    @parent.setter
    def parent(self, value: Inode | None) -> None:
        self._parent, self._parent_ref = value, None

    def __repr__(self) -> str:
        return f"Resolved(parent={self.parent!r}, name={self.name!r}, inode={self.inode!r}, dir_only={self.dir_only})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resolved):
            return NotImplemented
        return (self.parent, self.name, self.inode, self.dir_only) == (
            other.parent, other.name, other.inode, other.dir_only,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it replaced


class Crossing(Exception):  # noqa: N818 - not an error: the walk goes on elsewhere
    """A walk that a link took onto a drive's place (`PathFS.mount_points`): the operation goes
    on at `path`, the drive's path with the rest of the walk, for the path `given` to resolve
    (kfs.drives.view). Never an OSError: nothing on the way mistakes it for a failure."""

    def __init__(self, given: PathLike, path: str) -> None:
        super().__init__(path)
        self.given = given
        self.path = path


@value_class(frozen=True, slots=True)
class Filesystem:
    """One filesystem a view shows, as df lists it: its kind, where it is mounted, its room."""

    kind: str
    path: str
    stats: StatFS


_FS_ENCODING, _FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


def _fs(path: PathLike) -> bytes:
    """os.fsencode without its Python-level frame (it runs several times per operation)."""
    return path if isinstance(path, bytes) else path.encode(_FS_ENCODING, _FS_ERRORS)


def _show(path: PathLike) -> str:
    return path if isinstance(path, str) else os.fsdecode(path)


def _last_component(raw: bytes) -> bytes:
    stripped = raw.rstrip(b"/")
    return stripped.rsplit(b"/", 1)[-1] if stripped else b"/"


def _split(path: bytes) -> list[bytes]:
    """native.split's answer (components without empty ones and ".", ".." kept) in one C-level
    bytes.split: for the short paths of every call this is five times cheaper than the cffi
    round trip, and resolution runs on every operation."""
    return [comp for comp in path.split(b"/") if comp and comp != b"."]


def _is_plain(path: str) -> bool:
    """Whether an absolute path is already in normal form: no empty, "." or ".." component and
    no trailing slash ("/." also rules out dot-files, which merely take the slow way)."""
    return "//" not in path and "/." not in path and path[-1:] != "/"


_DOTS = (b".", b"..")
_DIR_TYPE = st.S_IFDIR >> 12  # file types as a dirent stores them
_LNK_TYPE = st.S_IFLNK >> 12
_unpack_child = records.unpack_child  # (child ino, file type)
pack_ino = records.pack_ino
key_tail = records.key_tail


class PathFS:
    """Path operations for one caller (`cred`) with a working directory and a home.

    `umask` applies to the modes of files and directories this face creates. `tilde` expands a
    leading `~` to the home, as the seed's API does; the shell turns it off, since it expands
    unquoted tildes itself and a quoted one names a file called `~`.
    """

    # K directories that are drives' places (ino -> drive path): a walk a link takes onto one
    # raises Crossing (kfs.drives.view sets them; a plain PathFS has none)
    mount_points: Mapping[int, str] = {}

    def __init__(
        self,
        vfs: VFS,
        *,
        cred: Cred = ROOT,
        cwd: PathLike = "/",
        home: PathLike = "/",
        umask: int = 0o022,
        tilde: bool = True,
        policy: WritePolicy | None = None,
    ) -> None:
        self.vfs = vfs
        self.tilde = tilde
        self.policy = policy  # a restricted mode's writes (kfs.vfs.policy); None: only the mode bits
        # the policy guard's walk, handed to the operation's own first walk of the same path in
        # the same transaction (a guarded write walks its path once, not twice)
        self._walked = threading.local()
        self.cred = cred
        self.home = native.normalize(_fs(home))
        self.cwd = native.normalize(_fs(cwd), b"/", self.home)
        self.umask = umask

    def clone(self) -> PathFS:
        """An independent copy (its own cwd and umask), of the same kind: what a subshell or a
        child shell starts from."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        return twin

    # -- resolution --------------------------------------------------------------------------

    def abspath(self, path: PathLike) -> str:
        """The lexical absolute form of `path` (what receipts record)."""
        if isinstance(path, str) and path[:1] == "/" and _is_plain(path):
            return path  # already normal: what nearly every caller passes, and normalize's fixpoint
        raw = _fs(path)
        if not self.tilde and raw.startswith(b"~"):
            raw = b"./" + raw
        return os.fsdecode(native.normalize(raw, self.cwd, self.home))

    def resolve(self, txn: Txn, path: PathLike, *, follow: bool = True, entry: bool = False) -> Resolved:
        """Resolve inside a caller's transaction, for operations composed of several steps.

        `follow` says whether a symlink in the last place is followed (a trailing slash forces
        it, as Linux does for stat). `entry=True` is for calls that act on the directory entry
        itself (unlink, rmdir, rename, mkdir): the last component is never followed and the
        caller judges a trailing slash.

        The walk reads only directory entries (they carry the child's type): the one inode
        read is the one the path leads to, plus each directory's for a caller other than root
        (search permission). A stat of /a/b/c is three entry lookups and one inode read.
        """
        raw = path if isinstance(path, bytes) else path.encode(_FS_ENCODING, _FS_ERRORS)
        if self.policy is not None:
            walked = getattr(self._walked, "last", None)
            if walked is not None:
                self._walked.last = None
                if walked[0] is txn and walked[1] == (raw, follow, entry):
                    return walked[2]
        if not raw:
            raise fs_error(errno.ENOENT, path)
        if len(raw) >= PATH_MAX:
            raise fs_error(errno.ENAMETOOLONG, path)
        if self.tilde and raw[:1] == b"~" and (len(raw) == 1 or raw[1:2] == b"/"):
            raw = self.home + raw[1:]
        comps = _split(raw) if raw[:1] == b"/" else _split(self.cwd) + _split(raw)
        if entry:
            follow = must_dir = False
        else:
            must_dir = raw[-1:] == b"/" or raw.rsplit(b"/", 1)[-1] in _DOTS
        t, dirents = txn.raw("dirents")
        # Directories walked, as (ino, file type from the entry that led there): a dirent
        # records its child's type, so a directory passed through is never read; only the
        # inode the path leads to is (and the parent, if the caller asks for it).
        stack: list[tuple[int, int]] = [(ROOT_INO, _DIR_TYPE)]
        pending = comps[::-1]
        parent = 0
        name = b""
        hops = 0
        cred = self.cred
        check = cred.uid != 0
        mounts = self.mount_points
        while pending:
            comp = pending.pop()
            cur_ino, cur_type = stack[-1]
            if cur_type != _DIR_TYPE:
                raise fs_error(errno.ENOTDIR, path)
            if check:
                require(cred, records.get_inode(txn, cur_ino, path), X_OK, path, txn)
            if comp == b"..":
                if len(stack) > 1:
                    stack.pop()
                parent, name = 0, b".."
                continue
            if len(comp) > 255:
                raise fs_error(errno.ENAMETOOLONG, path)
            ent = t.get(pack_ino(cur_ino) + key_tail(comp), None, dirents)
            if ent is None:
                if pending:
                    raise fs_error(errno.ENOENT, path)
                return Resolved(None, comp, None, must_dir, parent_ref=(txn, cur_ino), linked=hops > 0)
            child = _unpack_child(ent)
            if child[1] == _LNK_TYPE and (pending or follow or must_dir):
                hops += 1
                if hops > SYMLOOP_MAX:
                    raise fs_error(errno.ELOOP, path)
                target = records.read_symlink(txn, child[0])
                if not pending and (target.endswith(b"/") or _last_component(target) in _DOTS):
                    must_dir = True
                if target.startswith(b"/"):
                    stack = [stack[0]]
                    parent, name = 0, b"/"
                pending.extend(_split(target)[::-1])
                continue
            stack.append(child)
            if hops and child[0] in mounts:  # a link led onto a drive's place: the walk goes on there
                rest = "".join("/" + os.fsdecode(c) for c in reversed(pending))
                raise Crossing(path, mounts[child[0]] + rest + ("/" if raw.endswith(b"/") else ""))
            parent, name = cur_ino, comp
        ino, kind = stack[-1]
        if must_dir and kind != _DIR_TYPE:
            raise fs_error(errno.ENOTDIR, path)
        inode = records.get_inode(txn, ino, path)
        if len(stack) == 1:
            return Resolved(None, b"/", inode, linked=hops > 0)
        return Resolved(None, name, inode, parent_ref=(txn, parent) if parent else None, linked=hops > 0)

    def _existing(self, txn: Txn, path: PathLike, *, follow: bool = True) -> Inode:
        found = self.resolve(txn, path, follow=follow).inode
        if found is None:
            raise fs_error(errno.ENOENT, path)
        return found

    def _entry(self, txn: Txn, path: PathLike) -> tuple[Inode, bytes]:
        """The parent directory and name of the last component, for unlink/rmdir/rename."""
        found = self._found_entry(txn, path)
        assert found.parent is not None
        return found.parent, found.name

    def _found_entry(self, txn: Txn, path: PathLike) -> Resolved:
        """`_entry`'s checks, returning the whole resolution (the entry's inode included)."""
        raw = _fs(path)
        last = _last_component(raw)
        if last in (b".", b".."):
            raise fs_error(errno.EINVAL if last == b"." else errno.ENOTEMPTY, path)
        found = self.resolve(txn, path, entry=True)
        if found.parent is None:
            raise fs_error(errno.EBUSY, path)
        if found.inode is None:
            raise fs_error(errno.ENOENT, path)
        if raw.endswith(b"/") and not found.inode.is_dir:
            raise fs_error(errno.ENOTDIR, path)
        return found

    def _new_entry(self, txn: Txn, path: PathLike) -> tuple[Inode, bytes]:
        """The parent directory and name for a file about to be created; EEXIST if present."""
        found = self.resolve(txn, path, entry=True)
        if found.inode is not None or found.parent is None:
            raise fs_error(errno.EEXIST, path)
        return found.parent, found.name

    def _sibling(self, txn: Txn, source: Resolved, src_raw: bytes, dst_raw: bytes) -> Resolved | None:
        """`resolve(dst, entry=True)` without walking again when `dst` names another entry in the
        directory `src` was found in (the same text before the last slash, a plain last name):
        in one transaction the same prefix leads to the same directory through the same checks.
        None when the shortcut does not apply.
        """
        head, sep, name = dst_raw.rpartition(b"/")
        if not sep or not name or name in _DOTS or len(name) > 255 or len(dst_raw) >= PATH_MAX:
            return None
        if src_raw.rpartition(b"/")[:2] != (head, sep) or source.parent is None:
            return None
        if head.startswith(b"~") or source.name != src_raw.rpartition(b"/")[2]:
            return None  # tilde expansion or a symlink-ended walk: take the general way
        ino = records.lookup_entry(txn, source.parent.ino, name)
        return Resolved(source.parent, name, None if ino is None else records.get_inode(txn, ino, dst_raw))

    def _run(self, fn: Callable[[Op], T], path: PathLike, *writes: tuple[PathLike, bool]) -> T:
        """One operation; an error raised without a path (ENOSPC from the map) gets `path`.
        `writes`: the (path, follow) pairs it writes, checked against the session's policy in
        the operation's own transaction, on the paths they really reach."""
        if self.policy is not None and writes:
            body = fn

            def fn(op: Op) -> T:  # type: ignore[no-redef]
                for target, follow in writes:
                    self._guard(op.txn, target, follow)
                return body(op)

        while True:
            try:
                return self.vfs.run(self.cred, fn)
            except NeedsApproval as e:  # out of the transaction: wait for the decision, then again
                self._approval(e)
            except OSError as e:
                if e.filename is None and e.errno:
                    raise fs_error(e.errno, path) from e
                raise

    def _approval(self, e: NeedsApproval) -> None:
        """Wait for the decision on a write an `ask` rule matched (refused where nobody can
        decide, as `approve` answering None says): allowed, the path is granted for the session
        and the caller runs again."""
        policy = self.policy
        assert policy is not None
        allowed = policy.approve(e) if policy.approve is not None else None
        if allowed is None:
            raise policy.deny(e.filename, e.physical, f"needs an approval ({e.rule.describe()}), "
                              "which only a shell session can wait for")
        if not allowed:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), e.filename)
        policy.granted.add(e.physical)

    def check_write(self, path: PathLike, *, follow: bool = True) -> None:
        """Raise what the session's policy refuses writing `path` with (for a front end
        changing an open file through its handle)."""
        if self.policy is not None:
            while True:
                try:
                    with self.vfs.state.read() as txn:
                        self._guard(txn, path, follow)
                    return
                except NeedsApproval as e:
                    self._approval(e)

    def _guard(self, txn: Txn, path: PathLike, follow: bool) -> None:
        """Raise Refusal when the policy refuses a write reaching `path` (the entry itself
        unless `follow`; for a path whose directories are missing, the first one missing)."""
        policy = self.policy
        assert policy is not None
        raw = _fs(path)
        walk = (raw, follow, not follow)
        while True:
            try:
                found = self.resolve(txn, raw, follow=follow, entry=not follow)
                break
            except OSError as e:
                parent = raw.rstrip(b"/").rsplit(b"/", 1)[0] if b"/" in raw.rstrip(b"/") else b""
                if e.errno != errno.ENOENT or not parent or parent == raw:
                    raise
                raw, follow = parent, False  # mkdir -p: the first directory it would make
        if not found.linked:  # no link on the way: `..` undid what the walk did, as normalizing does
            physical = self.abspath(raw)
        elif found.inode is not None and found.inode.is_dir and (follow or found.parent is None):
            physical = os.fsdecode(records.dir_path(txn, found.inode.ino))
        elif found.parent is None:
            physical = "/"
        else:
            base = records.dir_path(txn, found.parent.ino)
            physical = os.fsdecode(base.rstrip(b"/") + b"/" + found.name)
        policy.check(os.fsdecode(_fs(path)), physical)
        if walk == (raw, follow, not follow):  # the path itself, not a missing one's first parent
            self._walked.last = (txn, walk, found)

    # -- queries -----------------------------------------------------------------------------

    def stat(self, path: PathLike) -> Inode:
        with self.vfs.state.read() as txn:
            return self._existing(txn, path)

    def lstat(self, path: PathLike) -> Inode:
        with self.vfs.state.read() as txn:
            return self._existing(txn, path, follow=False)

    def exists(self, path: PathLike) -> bool:
        try:
            self.stat(path)
        except OSError:
            return False
        return True

    def access(self, path: PathLike, mode: int) -> bool:
        """Whether the caller may access `path` for `mode` (R_OK/W_OK/X_OK; 0 tests existence)."""
        try:
            with self.vfs.state.read() as txn:
                inode = self._existing(txn, path)
                return allowed(self.cred, inode, mode, txn) if mode else True
        except OSError:
            return False

    def read_file(self, path: PathLike) -> bytes:
        with self.vfs.state.read() as txn:
            inode = self._existing(txn, path)
            if inode.is_dir:
                raise fs_error(errno.EISDIR, path)
            if not inode.is_reg:  # a FIFO, socket or device has no data here (as in open_in)
                raise fs_error(errno.EOPNOTSUPP, path)
            require(self.cred, inode, R_OK, path, txn)
            return data.read(txn, inode, 0, inode.size)

    def readlink(self, path: PathLike) -> str:
        with self.vfs.state.read() as txn:
            inode = self._existing(txn, path, follow=False)
            if not inode.is_lnk:
                raise fs_error(errno.EINVAL, path)
            return os.fsdecode(records.read_symlink(txn, inode.ino))

    def realpath(self, path: PathLike, *, strict: bool = True) -> str:
        """The physical absolute path; with strict=False the last component may be missing."""
        with self.vfs.state.read() as txn:
            found = self.resolve(txn, path)
            if found.inode is None:
                if strict or found.parent is None:
                    raise fs_error(errno.ENOENT, path)
                base = records.dir_path(txn, found.parent.ino)
                return os.fsdecode(base.rstrip(b"/") + b"/" + found.name)
            if found.inode.is_dir:
                return os.fsdecode(records.dir_path(txn, found.inode.ino))
            assert found.parent is not None
            return os.fsdecode(records.dir_path(txn, found.parent.ino).rstrip(b"/") + b"/" + found.name)

    def scandir(self, path: PathLike = ".") -> list[tuple[str, Inode]]:
        """Entries of a directory with their attributes (lstat), in readdir (name-hash) order."""
        with self.vfs.state.read() as txn:
            inode = self._existing(txn, path)
            if not inode.is_dir:
                raise fs_error(errno.ENOTDIR, path)
            require(self.cred, inode, R_OK, path, txn)
            return [
                (os.fsdecode(name), records.get_inode(txn, child))
                for name, child, _, _ in records.list_entries(txn, inode.ino)
            ]

    def scandir_contents(
        self, path: PathLike, wanted: Callable[[str, Inode], bool], budget: int
    ) -> list[tuple[str, Inode, bytes | OSError | None]]:
        """`scandir`, with the contents of the regular files that `wanted` accepts, read in
        the same transaction while they add up to at most `budget` bytes (or the OSError that
        reading one gives, as read_file would raise it); None for every other entry.

        For readers of whole trees (grep -r): a file read through read_file walks its path from
        the root again, which for small files costs more than reading them.
        """
        with self.vfs.state.read() as txn:
            inode = self._existing(txn, path)
            if not inode.is_dir:
                raise fs_error(errno.ENOTDIR, path)
            cred = self.cred
            require(cred, inode, R_OK, path, txn)
            searchable = allowed(cred, inode, X_OK, txn)
            prefix = _show(path).rstrip("/") + "/"
            out: list[tuple[str, Inode, bytes | OSError | None]] = []
            for raw, child, _, _ in records.list_entries(txn, inode.ino):
                name = os.fsdecode(raw)
                entry = records.get_inode(txn, child)
                content: bytes | OSError | None = None
                if entry.is_reg and entry.size <= budget and wanted(name, entry):
                    if not (searchable and allowed(cred, entry, R_OK, txn)):
                        content = fs_error(errno.EACCES, prefix + name)
                    else:
                        content = data.read(txn, entry, 0, entry.size)
                        budget -= len(content)
                out.append((name, entry, content))
            return out

    def readdir(self, path: PathLike = ".") -> list[str]:
        return sorted(name for name, _ in self.scandir(path))

    def walk(self, path: PathLike = ".") -> Iterator[tuple[str, list[str], list[str]]]:
        """os.walk's shape, top-down, not following symlinks to directories."""
        top = _show(path).rstrip("/") or "/"
        entries = self.scandir(top)
        dirs = sorted(n for n, i in entries if i.is_dir)
        files = sorted(n for n, i in entries if not i.is_dir)
        yield top, dirs, files
        for name in dirs:
            yield from self.walk(top + "/" + name if top != "/" else "/" + name)

    def statfs(self, path: PathLike = "/") -> StatFS:
        """The room of the filesystem holding `path` (here always K's own), as this view's
        user sees it (an agent: its quota)."""
        return self.vfs.statfs(self.cred.uid)

    def filesystems(self) -> list[Filesystem]:
        """The filesystems this view shows, as df lists them (here K's alone, on /)."""
        return [Filesystem("kfs", "/", self.statfs())]

    def filesystem(self, path: PathLike) -> Filesystem:
        """The filesystem holding `path`."""
        return self.filesystems()[0]

    # -- creation and contents ---------------------------------------------------------------

    def write_file(self, path: PathLike, content: bytes | str, *, mode: int = 0o666) -> int:
        """Create or replace the contents of a file (following symlinks); one transaction."""
        return self._put(path, content, mode, append=False)

    def append_file(self, path: PathLike, content: bytes | str, *, mode: int = 0o666) -> int:
        return self._put(path, content, mode, append=True)

    def _put(self, path: PathLike, content: bytes | str, mode: int, append: bool) -> int:
        payload = content.encode("utf-8", "surrogateescape") if isinstance(content, str) else bytes(content)
        shown = self.abspath(path)

        def body(op: Op) -> int:
            found = self.resolve(op.txn, path)
            inode = found.inode
            created = inode is None
            if inode is None:
                if found.parent is None or found.dir_only:
                    raise fs_error(errno.EISDIR, path)
                inode = namespace.make_node(
                    op, found.parent, found.name, st.S_IFREG | (mode & ~self.umask & 0o7777), path=shown,
                    receipt=False, absent=True,
                )
            elif inode.is_dir:
                raise fs_error(errno.EISDIR, path)
            elif not inode.is_reg:
                raise fs_error(errno.EOPNOTSUPP, path)
            else:
                require(op.cred, inode, W_OK, path, op.txn)
                if not append and inode.size:
                    data.truncate(op.txn, inode, 0, path)
            if payload:
                data.write(op.txn, inode, inode.size if append else 0, payload, path, not op.cred.is_root)
            mode_before = inode.mode
            attrs.drop_privileges_on_write(op, inode)
            if not created or payload or inode.mode != mode_before:  # a new file's times are op.now
                inode.mtime = inode.ctime = op.now
                records.put_inode(op.txn, inode)
            extra = {"created": True} if created else {}
            op.receipt("vfs.append" if append else "vfs.write", shown, len(payload), **extra)
            if not created:  # a new file's entry change already tells followers
                op.changed(ChangeKind.DATA, inode.ino)
            return len(payload)

        return self._run(body, path, (path, True))

    def open(self, path: PathLike, flags: int = os.O_RDONLY, mode: int = 0o666) -> FileHandle:
        """Open with os.open's flags (O_CREAT, O_EXCL, O_TRUNC, O_APPEND, O_NOFOLLOW, O_DIRECTORY)."""
        shown = self.abspath(path)
        exclusive = flags & os.O_CREAT and flags & os.O_EXCL
        follow = not (flags & os.O_NOFOLLOW or exclusive)

        def body(op: Op) -> FileHandle:
            found = self.resolve(op.txn, path, follow=follow)
            inode = found.inode
            if inode is None:
                if not flags & os.O_CREAT:
                    raise fs_error(errno.ENOENT, path)
                if found.parent is None or found.dir_only:
                    raise fs_error(errno.EISDIR, path)
                inode = namespace.make_node(
                    op, found.parent, found.name, st.S_IFREG | (mode & ~self.umask & 0o7777), path=shown, absent=True
                )
                return self.vfs.open_in(op, inode, flags & ~os.O_TRUNC, shown, created=True)
            if exclusive:
                raise fs_error(errno.EEXIST, path)
            if inode.is_lnk:
                raise fs_error(errno.ELOOP, path)
            if flags & os.O_DIRECTORY and not inode.is_dir:
                raise fs_error(errno.ENOTDIR, path)
            return self.vfs.open_in(op, inode, flags, shown)

        writes = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND)
        return self._run(body, path, *([(path, follow)] if writes else []))

    def mkdir(self, path: PathLike, mode: int = 0o777, *, parents: bool = False) -> None:
        """Create a directory; with parents=True create missing ancestors and accept an existing one."""
        shown = self.abspath(path)

        def body(op: Op) -> None:
            if not parents:
                parent, name = self._new_entry(op.txn, path)
                namespace.make_node(
                    op, parent, name, st.S_IFDIR | (mode & ~self.umask & 0o7777), path=shown, absent=True
                )
                return
            self.mkdirs_in(op, path, mode)

        self._run(body, path, (path, False))

    def mkdirs_in(self, op: Op, path: PathLike, mode: int = 0o777) -> Inode:
        """`mkdir -p` inside a caller's operation; returns the (possibly existing) directory."""
        raw = _fs(path)
        prefix = b"/" if raw.startswith(b"/") else b""
        parts = native.split(raw)
        for i in range(len(parts)):
            sub = prefix + b"/".join(parts[: i + 1])
            found = self.resolve(op.txn, sub)
            if found.inode is not None:
                if not found.inode.is_dir:
                    raise fs_error(errno.ENOTDIR if i < len(parts) - 1 else errno.EEXIST, os.fsdecode(sub))
                continue
            assert found.parent is not None
            # intermediate directories get u+wx, as `mkdir -p` gives them
            bits = mode if i == len(parts) - 1 else 0o777
            perm = bits & ~self.umask & 0o7777
            if i < len(parts) - 1:
                perm |= 0o300
            namespace.make_node(op, found.parent, found.name, st.S_IFDIR | perm, path=self.abspath(sub))

        return self._existing(op.txn, path)

    def mknod(self, path: PathLike, mode: int, rdev: int = 0) -> None:
        shown = self.abspath(path)

        def body(op: Op) -> None:
            parent, name = self._new_entry(op.txn, path)
            kind = st.S_IFMT(mode) or st.S_IFREG
            namespace.make_node(
                op, parent, name, kind | (mode & ~self.umask & 0o7777), rdev=rdev, path=shown, absent=True
            )

        self._run(body, path, (path, False))

    def symlink(self, target: PathLike, path: PathLike) -> None:
        """Create `path` as a symbolic link to `target` (stored verbatim, resolved on use)."""
        raw_target = _fs(target)
        if not raw_target:
            raise fs_error(errno.ENOENT, target)
        if len(raw_target) >= PATH_MAX:
            raise fs_error(errno.ENAMETOOLONG, target)
        shown = self.abspath(path)

        def body(op: Op) -> None:
            parent, name = self._new_entry(op.txn, path)
            namespace.make_node(op, parent, name, st.S_IFLNK | 0o777, target=raw_target, path=shown, absent=True)

        self._run(body, path, (path, False))

    def link(self, existing: PathLike, new: PathLike) -> None:
        """Hard link; like link(2) on Linux, a symlink operand is linked itself, not followed."""
        shown = self.abspath(new)

        def body(op: Op) -> None:
            inode = self._existing(op.txn, existing, follow=False)
            parent, name = self._new_entry(op.txn, new)
            namespace.link(op, inode, parent, name, path=shown)

        # the source too: a second name of a file the policy protects would be a writable one
        self._run(body, new, (new, False), (existing, False))

    def unlink(self, path: PathLike) -> None:
        shown = self.abspath(path)
        raw = _fs(path)  # once: the body may run again, and bytes resolve to the same errors

        def body(op: Op) -> None:
            if _last_component(raw) in _DOTS:
                raise fs_error(errno.EISDIR, path)
            found = self._found_entry(op.txn, raw)
            assert found.parent is not None and found.inode is not None
            namespace.unlink(op, found.parent, found.name, path=shown, child=found.inode)

        self._run(body, path, (path, False))

    def rmdir(self, path: PathLike) -> None:
        shown = self.abspath(path)

        def body(op: Op) -> None:
            parent, name = self._entry(op.txn, path)
            namespace.rmdir(op, parent, name, path=shown)

        self._run(body, path, (path, False))

    def rm(self, path: PathLike, *, recursive: bool = False, force: bool = False) -> None:
        """Remove a file, or with recursive=True a whole tree, in one transaction.

        With force=True a missing path is not an error. Without recursive, a directory is
        refused with EISDIR, as `rm` refuses it.
        """
        shown = self.abspath(path)

        def body(op: Op) -> None:
            found = self.resolve(op.txn, path, entry=True)
            if found.inode is None:
                if force:
                    return
                raise fs_error(errno.ENOENT, path)
            if found.parent is None:
                raise fs_error(errno.EBUSY, path)
            if not found.inode.is_dir:
                namespace.unlink(op, found.parent, found.name, path=shown, child=found.inode)
            elif not recursive:
                raise fs_error(errno.EISDIR, path)
            else:
                if self.policy is not None:  # every path under it goes too
                    self.policy.check_tree(op.txn, found.inode.ino, (self._physical(op.txn, found),))
                self._remove_tree(op, found.parent, found.name, found.inode, shown)

        self._run(body, path, (path, False))

    def _remove_tree(self, op: Op, parent: Inode, name: bytes, inode: Inode, shown: str) -> None:
        require(op.cred, inode, W_OK | X_OK, shown, op.txn)
        for child_name, child_ino, kind, _ in records.list_entries(op.txn, inode.ino):
            child_path = shown.rstrip("/") + "/" + os.fsdecode(child_name)
            current = records.get_inode(op.txn, inode.ino)
            if kind == st.S_IFDIR:
                child = records.get_inode(op.txn, child_ino)
                self._remove_tree(op, current, child_name, child, child_path)
            else:
                namespace.unlink(op, current, child_name, path=child_path)
        namespace.rmdir(op, records.get_inode(op.txn, parent.ino), name, path=shown)

    def rename(self, src: PathLike, dst: PathLike, flags: int = 0) -> None:
        """rename(2) with renameat2's RENAME_NOREPLACE and RENAME_EXCHANGE flags."""
        src_shown, dst_shown = self.abspath(src), self.abspath(dst)
        src_raw, dst_raw = _fs(src), _fs(dst)  # errors name bytes paths as they name the str

        def body(op: Op) -> None:
            for operand, raw in ((src, src_raw), (dst, dst_raw)):
                if _last_component(raw) in _DOTS:
                    raise fs_error(errno.EBUSY, operand)
            source = self._found_entry(op.txn, src_raw)
            src_parent, src_name, moving = source.parent, source.name, source.inode
            assert src_parent is not None and moving is not None
            found = self._sibling(op.txn, source, src_raw, dst_raw) or self.resolve(op.txn, dst_raw, entry=True)
            if found.parent is None:
                raise fs_error(errno.EBUSY if found.inode is not None else errno.ENOENT, dst)
            if found.inode is None and dst_raw.endswith(b"/") and not moving.is_dir:
                raise fs_error(errno.ENOTDIR, dst)
            if self.policy is not None:  # the places were judged (`writes`); now what moves under them
                self._moved_trees(op.txn, source, found, flags)
            namespace.rename(
                op, src_parent, src_name, found.parent, found.name, flags, src_path=src_shown, dst_path=dst_shown,
                known=(moving, found.inode),
            )

        self._run(body, src, (src, False), (dst, False))

    def _moved_trees(self, txn: Txn, source: Resolved, target: Resolved, flags: int) -> None:
        """The policy's judgement of every path a rename moves under the two places (the
        moved directory's, and with RENAME_EXCHANGE the other's too), at both."""
        assert self.policy is not None
        trees = [source.inode] + ([target.inode] if flags & namespace.RENAME_EXCHANGE else [])
        trees = [t for t in trees if t is not None and t.is_dir]
        if trees:
            places = (self._physical(txn, source), self._physical(txn, target))
            for tree in trees:
                self.policy.check_tree(txn, tree.ino, places)

    @staticmethod
    def _physical(txn: Txn, found: Resolved) -> str:
        """The physical path of a resolved entry (its directory's path and its name)."""
        if found.parent is None:
            return "/"
        return os.fsdecode(records.dir_path(txn, found.parent.ino).rstrip(b"/") + b"/" + found.name)

    # -- attributes --------------------------------------------------------------------------

    def _set(self, path: PathLike, follow: bool, **changes: object) -> Inode:
        shown = self.abspath(path)
        return self._run(
            lambda op: attrs.setattr(op, self._existing(op.txn, path, follow=follow), path=shown, **changes),  # type: ignore[arg-type]
            path,
            (path, follow),
        )

    def chmod(self, path: PathLike, mode: int, *, follow: bool = True) -> Inode:
        if not follow:
            raise fs_error(errno.EOPNOTSUPP, path)  # Linux has no lchmod either
        return self._set(path, True, mode=mode)

    def chown(self, path: PathLike, uid: int | None = None, gid: int | None = None, *, follow: bool = True) -> Inode:
        return self._set(path, follow, uid=uid, gid=gid)

    def utime(self, path: PathLike, atime: Time = attrs.NOW, mtime: Time = attrs.NOW, *, follow: bool = True) -> Inode:
        """Set access and modification times in ns; attrs.NOW for the current time, None to keep."""
        return self._set(path, follow, atime=atime, mtime=mtime)

    def truncate(self, path: PathLike, size: int) -> Inode:
        return self._set(path, True, size=size)

    def getxattr(self, path: PathLike, name: bytes, *, follow: bool = True) -> bytes:
        with self.vfs.state.read() as txn:
            inode = self._existing(txn, path, follow=follow)
            return attrs.getxattr(Op(txn, self.cred, self.vfs.by, self.vfs.origin, 0), inode, name, _show(path))

    def listxattr(self, path: PathLike, *, follow: bool = True) -> list[bytes]:
        with self.vfs.state.read() as txn:
            inode = self._existing(txn, path, follow=follow)
            return attrs.listxattr(Op(txn, self.cred, self.vfs.by, self.vfs.origin, 0), inode)

    def setxattr(self, path: PathLike, name: bytes, value: bytes, flags: int = 0, *, follow: bool = True) -> None:
        shown = self.abspath(path)
        self._run(
            lambda op: attrs.setxattr(op, self._existing(op.txn, path, follow=follow), name, value, flags, shown), path,
            (path, follow),
        )

    def removexattr(self, path: PathLike, name: bytes, *, follow: bool = True) -> None:
        shown = self.abspath(path)
        self._run(lambda op: attrs.removexattr(op, self._existing(op.txn, path, follow=follow), name, shown), path,
                  (path, follow))
