"""The kernel's requests, translated one by one to the VFS inode API.

A thin `pyfuse3.Operations`: each handler builds the caller's `Cred`, calls the VFS and turns
the returned `Inode` into kernel attributes. POSIX rules live in `kfs.vfs`; VFS errors become
`FUSEError(errno)` in one place (`_translated`), and anything unexpected becomes EIO and a log
line, because pyfuse3 stops its main loop on any other exception.
"""

from __future__ import annotations

import errno
import functools
import itertools
import logging
import os
import stat as st
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import pyfuse3
import trio
from pyfuse3 import EntryAttributes, FileInfo, FUSEError, SetattrFields, StatvfsData

from kfs.drives.nodes import DRIVES_BASE, DriveDir, DriveFile, MountedVFS
from kfs.fuse import COHERENCE_XATTR
from kfs.fuse.admin import DIR_INO, NAME, AdminView, Journal
from kfs.vfs import NOW, ROOT, ROOT_INO, VFS, Cred, FileHandle, Inode
from kfs.vfs.attrs import CAPABILITY
from kfs.vfs.inode import CHUNK_SIZE
from kfs.vfs.policy import WritePolicy

log = logging.getLogger("kfs.fuse")

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

# Offsets handed to readdir: 1 and 2 follow "." and "..", a VFS cookie c becomes c + 2.
_DOT_OFFSETS = 2
_READDIR_BATCH = 128


class Caller(Protocol):
    """What a handler needs of pyfuse3's RequestContext (tests pass a stand-in)."""

    uid: int
    gid: int
    pid: int
    umask: int


def _translated(fn: F) -> F:
    """VFS errors become their errno; anything else becomes EIO plus a log line."""

    @functools.wraps(fn)
    async def handler(self: Operations, *args: Any) -> Any:
        try:
            return await fn(self, *args)
        except FUSEError:
            raise
        except OSError as e:
            if not e.errno:
                log.exception("%s%r: OSError without errno", fn.__name__, args)
            elif log.isEnabledFor(logging.DEBUG):
                log.debug("%s%r: %s", fn.__name__, args[:-1] if args else args, e)
            raise FUSEError(e.errno or errno.EIO) from None
        except Exception:
            log.exception("%s%r failed", fn.__name__, args)
            raise FUSEError(errno.EIO) from None

    return handler  # type: ignore[return-value]


def _never_fails(fn: F) -> F:
    """For requests the kernel expects no reply to (forget): log, never raise."""

    @functools.wraps(fn)
    async def handler(self: Operations, *args: Any) -> Any:
        try:
            return await fn(self, *args)
        except Exception:
            log.exception("%s%r failed", fn.__name__, args)
            return None

    return handler  # type: ignore[return-value]


def _drops_only_privileges(old: int, new: int) -> bool:
    """Whether mode `new` is `old` with setuid and/or setgid cleared and nothing else changed."""
    cleared = st.S_IMODE(old) & ~st.S_IMODE(new)
    return bool(cleared) and not cleared & ~(st.S_ISUID | st.S_ISGID) and not st.S_IMODE(new) & ~st.S_IMODE(old)


# How long the kernel may trust an entry or attributes without asking. The kernel keeps its
# own changes current; other writers' changes reach it through the coherence thread's
# invalidations (kfs/fuse/coherence.py) within a poll, so the lifetime is not what bounds
# staleness, and a long one spares a lookup or getattr per path component and stat.
# Missing names are cached as long (negative entries): a create then costs no LOOKUP first.
CACHE_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class AgentView:
    """`komputer mount --agent NAME`: the agent's credentials for every request, whoever makes
    it (a container's root included), and its restricted mode's policy (None: full)."""

    name: str
    cred: Cred
    policy: WritePolicy | None


class Operations(pyfuse3.Operations):
    """One VFS served to the kernel. `timeout` is the entry and attribute cache lifetime.

    With `-o writeback` the kernel runs a writeback cache (`enable_writeback_cache`; off by
    default: kfs/fuse/mount.py says what it costs): write(2) fills its page
    cache and the pages reach the daemon later, in requests of up to 1 MiB, by the time of
    fsync or close at the latest (close waits for them). While it holds a regular file the
    kernel owns its size and times: it sends them with SETATTR and ignores theirs in GETATTR.
    So the kernel may READ through a handle opened write-only (to fill a page a partial write
    lands in), and WRITEs land at the offsets it chose, also for an O_APPEND handle: handles
    are opened accordingly (`_add_file`). Other processes' changes are pushed into the cache
    by kfs/fuse/coherence.py, pages and size included (`name_of` serves it).
    """

    supports_dot_lookup = True
    enable_writeback_cache = False
    enable_acl = False

    def __init__(self, vfs: VFS | MountedVFS, *, timeout: float = CACHE_SECONDS, agent: AgentView | None = None,
                 policy: WritePolicy | None = None) -> None:
        super().__init__()
        self.vfs = vfs if isinstance(vfs, MountedVFS) else MountedVFS(vfs)  # K with the image's drives
        self.agent = agent  # `komputer mount --agent`: every request is this agent's, under its policy
        # POSIX ACLs checked by the kernel (FUSE_POSIX_ACL, which implies default_permissions):
        # not in an agent's view, where the daemon checks as the agent (kfs/vfs/acl.py)
        self.enable_acl = agent is None
        # the writes' policy: the agent's, else `policy` (a restricted fork's mount: its mode and scope)
        self.policy = agent.policy if agent is not None else policy
        self.timeout = timeout
        self.lookups: dict[int, int] = {}  # ino -> the kernel's lookup count
        self.files: dict[int, FileHandle | DriveFile] = {}
        self.names: dict[int, tuple[int, bytes]] = {}  # ino -> (parent, name) it was last looked up as
        # the kernel asks for security.capability before every write(2) (must the write drop
        # file capabilities?); files almost never have one, so the daemon remembers which don't
        self.no_capability: set[int] = set()
        self.openers: dict[int, str] = {}  # fh -> the receipts' `by` of whoever opened it (writes name them)
        self.dirs: dict[int, FileHandle | DriveDir] = {}
        self.dir_seen: dict[int, Inode] = {}  # fh -> its directory as opened (fstat after it is removed)
        # ino -> (its inode record as last listed, the attributes built from it): a listing
        # the kernel asks for again (readdirplus sends every entry's attributes each time)
        # reuses them while the record is the same; dropped when the kernel forgets the inode
        self.listed: dict[int, tuple[bytes, EntryAttributes]] = {}
        self._next_fh = itertools.count(1)
        self._read_buffer = bytearray(0)
        self.initialised = False
        self.coherence: Callable[[], int] | None = None  # ChangeFollower.position, once it runs
        # /.komputer: events and receipts for root, none in an agent's mount (kfs/fuse/admin.py)
        self.admin = AdminView(vfs.state, agent.name if agent is not None else None)
        self.admin_files: dict[int, Journal] = {}
        self.admin_dirs: set[int] = set()
        self.admin_pushed: dict[int, int | None] = {}  # admin file -> the size last pushed to the kernel

    def init(self) -> None:
        """pyfuse3 calls this while answering the kernel's INIT: the mount is live after it."""
        self.initialised = True

    def known(self, ino: int) -> bool:
        """Whether the kernel may cache anything of `ino` (the root it never looks up)."""
        return ino == ROOT_INO or ino in self.lookups

    def name_of(self, ino: int) -> tuple[int, bytes] | None:
        """The (parent, name) the kernel last looked the file `ino` up by, if it holds it."""
        return self.names.get(ino) if ino in self.lookups else None

    def changed(self, inos: Iterable[int]) -> None:
        """Another process changed these inodes (the coherence thread says so): forget what
        the daemon remembers of them."""
        for ino in inos:
            self.no_capability.discard(ino)

    def tick(self) -> None:
        """Housekeeping, every few milliseconds: drop the open records of closed files.

        Runs on the coherence thread (the VFS serialises its transactions); a release
        usually rides along with the next request's transaction before this finds it.
        Also pushes the admin view's sizes to the kernel (`push_admin_sizes`).
        """
        self.vfs.settle_releases()
        if self.admin_pushed:
            self.push_admin_sizes()

    def push_admin_sizes(self) -> None:
        """The admin view's files grow with every event and receipt, but under the writeback
        cache the kernel keeps a regular file's size as its own: a store of the last byte
        moves it up. When retention shrank a file, the kernel is told the entry went, so that
        the next open finds a fresh inode (one held open meanwhile keeps the old size)."""
        for ino, pushed in list(self.admin_pushed.items()):
            journal = self.admin.journal(ino)
            journal.refresh()
            size = journal.size
            if size == pushed:
                continue
            self.admin_pushed[ino] = size
            try:
                if pushed is not None and size < pushed:
                    pyfuse3.invalidate_entry(DIR_INO, self.admin.files[ino][0], ino)
                elif size:
                    pyfuse3.notify_store(ino, size - 1, journal.read(size - 1, 1))
            except OSError as e:  # the kernel no longer holds it
                log.debug("admin view: size of %d not pushed: %s", ino, e)

    def shutdown(self) -> None:
        """Unmounting: drop the open records of closed files, close the drives."""
        self.vfs.settle_releases()
        self.vfs.close()

    # -- translation helpers -----------------------------------------------------------------

    def cred(self, ctx: Caller) -> Cred:
        """The caller's credentials (an agent mount's agent, whoever calls); supplementary
        groups come from /proc (root needs none).
        Every request that may write asks for them first, so this is also where the receipts
        of the request learn who made it: the uid and pid behind the mount (a delegated
        program's are its agent's uid and its own pid). Requests run one at a time."""
        if self.agent is not None:
            self.vfs.by = f"fuse agent {self.agent.name} uid {ctx.uid} pid {ctx.pid}"
            return self.agent.cred
        self.vfs.by = f"fuse uid {ctx.uid} pid {ctx.pid}"
        if ctx.uid == 0:
            return Cred(0, ctx.gid)
        try:
            groups = frozenset(pyfuse3.get_sup_groups(ctx.pid)) if ctx.pid else frozenset()
        except (OSError, ValueError):  # the caller already exited
            groups = frozenset()
        return Cred(ctx.uid, ctx.gid, groups)

    def attrs(self, inode: Inode) -> EntryAttributes:
        entry = EntryAttributes()
        entry.st_ino = inode.ino
        entry.generation = inode.generation
        # a drive's files change with no feed to follow (kfs.drives.nodes): never cached
        entry.entry_timeout = entry.attr_timeout = self.timeout if inode.ino < DRIVES_BASE else 0
        entry.st_mode = inode.mode
        entry.st_nlink = inode.nlink
        entry.st_uid = inode.uid
        entry.st_gid = inode.gid
        entry.st_rdev = inode.rdev
        entry.st_size = inode.size
        entry.st_blksize = CHUNK_SIZE
        entry.st_blocks = inode.blocks
        entry.st_atime_ns = inode.atime
        entry.st_mtime_ns = inode.mtime
        entry.st_ctime_ns = inode.ctime
        return entry

    def listed_attrs(self, inode: Inode) -> EntryAttributes:
        """`attrs` for a readdirplus entry: the object built when the entry was last listed, if
        its inode record is the same byte for byte (so no change can hide behind it). A
        `git status` lists every directory of the tree each time, with every entry's
        attributes; building them again was a third of each entry's cost. The object is only
        ever read (pyfuse3 copies it into the reply): callers must not change it."""
        record = inode.pack()
        seen = self.listed.get(inode.ino)
        if seen is not None and seen[0] == record:
            return seen[1]
        entry = self.attrs(inode)
        self.listed[inode.ino] = (record, entry)
        return entry

    def admin_attrs(self, inode: Inode) -> EntryAttributes:
        """The admin view's attributes: never cached, so every stat sees the newest size."""
        entry = self.attrs(inode)
        entry.entry_timeout = entry.attr_timeout = 0
        return entry

    def _writes(self, ino: int, name: bytes | None = None) -> None:
        """The mount's policy on the entry `name` of directory `ino` (or, without a
        name, the file `ino` by the name the kernel last looked it up under)."""
        policy = self.policy
        if policy is None:
            return
        if name is None:
            if not self.vfs.getattr(ino).is_dir:
                ino, name = self.names.get(ino, (0, b""))
                if not ino:
                    raise FUSEError(errno.EROFS)  # a file reached by no name we know: refuse
        path = (self.vfs.path_of(ino) + ("" if name is None else "/" + os.fsdecode(name))).replace("//", "/")
        try:
            policy.check(path, path)
        except PermissionError as e:  # the mode's EROFS, a rule's EACCES; `ask` too: a mount cannot wait
            policy.told.clear()
            raise FUSEError(e.errno) from None

    def _refuse_admin(self, *inos: int) -> None:
        """The admin view is read-only."""
        if any(AdminView.owns(ino) for ino in inos):
            raise FUSEError(errno.EROFS)

    def named(self, parent: int, name: bytes, inode: Inode) -> EntryAttributes:
        """`entry`, remembering the name (an agent mount checks writes to a file by it; the
        coherence thread drops a file another process resized by it)."""
        if not inode.is_dir:
            self.names[inode.ino] = (parent, name)
        return self.entry(inode)

    def negative(self, parent: int) -> EntryAttributes:
        """A lookup's answer for a missing name that the kernel caches for `timeout`: inode 0.
        A name another process creates meanwhile is invalidated by the coherence thread (on a
        drive, which has no feed to follow, it is not cached)."""
        entry = EntryAttributes()
        entry.entry_timeout = self.timeout if parent < DRIVES_BASE else 0
        return entry

    def entry(self, inode: Inode) -> EntryAttributes:
        """Attributes for a reply that gives the kernel a new reference (lookup count + 1)."""
        self.lookups[inode.ino] = self.lookups.get(inode.ino, 0) + 1
        return self.attrs(inode)

    def _file(self, fh: int) -> FileHandle:
        try:
            return self.files[fh]
        except KeyError:
            raise FUSEError(errno.EBADF) from None

    def _add_file(self, handle: FileHandle | DriveFile) -> FileInfo:
        inner = handle.handle if isinstance(handle, DriveFile) else handle
        if self.enable_writeback_cache and isinstance(inner, FileHandle):
            # the kernel reads pages through any handle and writes at offsets it chose; the
            # caller's own access mode and O_APPEND the kernel enforces on its file
            inner.readable = True
            inner.append = False
        fh = next(self._next_fh)
        self.files[fh] = handle
        self.openers[fh] = self.vfs.by
        return FileInfo(fh=fh, keep_cache=not isinstance(handle, DriveFile))  # a drive's: reread at open

    # -- lookup and attributes ---------------------------------------------------------------

    @_translated
    async def lookup(self, parent_inode: int, name: bytes, ctx: Caller) -> EntryAttributes:
        if parent_inode == ROOT_INO and name == NAME or AdminView.owns(parent_inode):
            self.admin.require_root(ctx.uid)
            if name == b"..":
                return self.entry(self.vfs.getattr(ROOT_INO))
            inode = self.admin.inode(DIR_INO) if parent_inode == ROOT_INO else self.admin.lookup(name)
            if self.enable_writeback_cache and inode.is_reg:
                self.admin_pushed[inode.ino] = None  # the kernel may hold an older size: push
            return self.admin_attrs(inode)
        try:
            inode = self.vfs.lookup(parent_inode, name, self.cred(ctx))
        except FileNotFoundError:
            return self.negative(parent_inode)
        return self.named(parent_inode, name, inode)

    @_never_fails
    async def forget(self, inode_list: Sequence[tuple[int, int]]) -> None:
        for ino, count in inode_list:
            left = self.lookups.get(ino, 0) - count
            if left > 0:
                self.lookups[ino] = left
            else:
                self.lookups.pop(ino, None)
                self.names.pop(ino, None)
                self.listed.pop(ino, None)
                self.no_capability.discard(ino)
                self.vfs.forget(ino)

    @_translated
    async def getattr(self, inode: int, ctx: Caller) -> EntryAttributes:
        if AdminView.owns(inode):
            return self.admin_attrs(self.admin.inode(inode))
        try:
            return self.attrs(self.vfs.getattr(inode))
        except FileNotFoundError:
            return self.attrs(self._removed_dir(inode))

    def _removed_dir(self, ino: int) -> Inode:
        """An open directory removed since (rmdir, or a rename over it): fstat on its handle
        answers with no links, as Linux does, not ENOENT. Only directories: a removed open
        file stays in the VFS until its last close."""
        for seen in self.dir_seen.values():
            if seen.ino == ino:
                gone = Inode.unpack(ino, seen.pack())
                gone.nlink = 0
                return gone
        raise FUSEError(errno.ENOENT)

    @_translated
    async def setattr(
        self, inode: int, attr: EntryAttributes, fields: SetattrFields, fh: int | None, ctx: Caller
    ) -> EntryAttributes:
        self._refuse_admin(inode)
        self._writes(inode)
        cred = self.cred(ctx)
        changes: dict[str, Any] = {}
        if fields.update_mode:
            changes["mode"] = attr.st_mode
        if fields.update_uid:
            changes["uid"] = attr.st_uid
        if fields.update_gid:
            changes["gid"] = attr.st_gid
        if fields.update_size:
            changes["size"] = attr.st_size
        if fields.update_atime:
            changes["atime"] = attr.st_atime_ns
        if fields.update_mtime:
            changes["mtime"] = attr.st_mtime_ns
        handle = self.files.get(fh) if fh is not None else None
        try:
            return self.attrs(self.vfs.setattr(inode, cred, handle=handle, **changes))
        except OSError as e:
            if e.errno != errno.EPERM or cred.is_root or not changes:
                raise
            # The kernel (default_permissions) refuses explicit times and chmod to non-owners
            # before asking us, so a non-owner's request the VFS refuses as not-owner is one
            # the kernel makes on its own behalf: pyfuse3 reports UTIME_NOW as the clock's
            # reading, and a write or truncate by a non-owner first clears setuid/setgid.
            if not set(changes) - {"atime", "mtime"}:
                now = {name: NOW for name in changes}
                return self.attrs(self.vfs.setattr(inode, cred, handle=handle, **now))
            if set(changes) == {"mode"} and _drops_only_privileges(self.vfs.getattr(inode).mode, changes["mode"]):
                return self.attrs(self.vfs.setattr(inode, ROOT, mode=changes["mode"]))
            raise

    @_translated
    async def readlink(self, inode: int, ctx: Caller) -> bytes:
        return self.vfs.readlink(inode)

    @_translated
    async def access(self, inode: int, mode: int, ctx: Caller) -> bool:
        if AdminView.owns(inode):
            self.admin.require_root(ctx.uid)
            if mode & os.W_OK:
                raise FUSEError(errno.EROFS)
            return True
        self.vfs.access(inode, mode, self.cred(ctx))
        return True

    @_translated
    async def statfs(self, ctx: Caller) -> StatvfsData:
        fs = self.vfs.statfs(self.cred(ctx).uid)  # an agent sees its own quota (kfs.kstate.quota)
        out = StatvfsData()
        out.f_bsize = fs.block_size
        out.f_frsize = fs.block_size
        out.f_blocks = fs.blocks
        out.f_bfree = fs.blocks_free
        out.f_bavail = fs.blocks_free
        out.f_files = fs.files + fs.files_free
        out.f_ffree = fs.files_free
        out.f_favail = fs.files_free
        out.f_namemax = fs.name_max
        return out

    # -- namespace ---------------------------------------------------------------------------

    @_translated
    async def mknod(self, parent_inode: int, name: bytes, mode: int, rdev: int, ctx: Caller) -> EntryAttributes:
        self._refuse_admin(parent_inode)
        self._writes(parent_inode, name)
        mode &= ~ctx.umask
        return self.entry(self.vfs.mknod(parent_inode, name, mode, rdev, self.cred(ctx)))

    @_translated
    async def mkdir(self, parent_inode: int, name: bytes, mode: int, ctx: Caller) -> EntryAttributes:
        self._refuse_admin(parent_inode)
        self._writes(parent_inode, name)
        return self.entry(self.vfs.mkdir(parent_inode, name, mode & ~ctx.umask, self.cred(ctx)))

    @_translated
    async def symlink(self, parent_inode: int, name: bytes, target: bytes, ctx: Caller) -> EntryAttributes:
        self._refuse_admin(parent_inode)
        self._writes(parent_inode, name)
        return self.entry(self.vfs.symlink(parent_inode, name, target, self.cred(ctx)))

    @_translated
    async def link(self, inode: int, new_parent_inode: int, new_name: bytes, ctx: Caller) -> EntryAttributes:
        self._refuse_admin(inode, new_parent_inode)
        self._writes(new_parent_inode, new_name)
        self._writes(inode)  # the source's name too: a second name of a protected file would be writable
        return self.entry(self.vfs.link(inode, new_parent_inode, new_name, self.cred(ctx)))

    @_translated
    async def unlink(self, parent_inode: int, name: bytes, ctx: Caller) -> None:
        self._refuse_admin(parent_inode)
        self._writes(parent_inode, name)
        self.vfs.unlink(parent_inode, name, self.cred(ctx))

    @_translated
    async def rmdir(self, parent_inode: int, name: bytes, ctx: Caller) -> None:
        self._refuse_admin(parent_inode)
        self._writes(parent_inode, name)
        self.vfs.rmdir(parent_inode, name, self.cred(ctx))

    @_translated
    async def rename(
        self, parent_inode_old: int, name_old: bytes, parent_inode_new: int, name_new: bytes, flags: int, ctx: Caller
    ) -> None:
        self._refuse_admin(parent_inode_old, parent_inode_new)
        self._writes(parent_inode_old, name_old)
        self._writes(parent_inode_new, name_new)
        judge = None
        if self.policy is not None:  # every path the rename moves, at both places, in its transaction
            judge = functools.partial(self.policy.check_rename, src_dir=parent_inode_old, src_name=name_old,
                                      dst_dir=parent_inode_new, dst_name=name_new,
                                      exchange=bool(flags & pyfuse3.RENAME_EXCHANGE))
        try:
            self.vfs.rename(parent_inode_old, name_old, parent_inode_new, name_new, flags, self.cred(ctx), judge)
        finally:
            if self.policy is not None:
                self.policy.told.clear()  # nobody reads the lines here: the errno says it
        self._renamed(parent_inode_new, name_new, parent_inode_old, name_old)  # the kernel moved its dentry
        if flags & pyfuse3.RENAME_EXCHANGE:
            self._renamed(parent_inode_old, name_old, parent_inode_new, name_new)

    def _renamed(self, parent: int, name: bytes, old_parent: int, old_name: bytes) -> None:
        """Follow a file the kernel knows to its new name (a stale name is harmless: the
        coherence thread's use of it checks the inode)."""
        if not self.names:
            return
        try:
            ino = self.vfs.lookup(parent, name, ROOT).ino
        except OSError:
            return
        if self.names.get(ino) == (old_parent, old_name):
            self.names[ino] = (parent, name)

    # -- open files --------------------------------------------------------------------------

    @_translated
    async def open(self, inode: int, flags: int, ctx: Caller) -> FileInfo:
        if AdminView.owns(inode):
            self.admin.require_root(ctx.uid)
            if flags & (os.O_WRONLY | os.O_RDWR | os.O_TRUNC | os.O_APPEND):
                raise FUSEError(errno.EROFS)
            fh = next(self._next_fh)
            self.admin_files[fh] = self.admin.journal(inode)
            return FileInfo(fh=fh, direct_io=True, keep_cache=False)  # every read asks for the newest
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_TRUNC | os.O_APPEND):
            self._writes(inode)
        return self._add_file(self.vfs.open(inode, flags, self.cred(ctx)))

    @_translated
    async def create(
        self, parent_inode: int, name: bytes, mode: int, flags: int, ctx: Caller
    ) -> tuple[FileInfo, EntryAttributes]:
        self._refuse_admin(parent_inode)
        self._writes(parent_inode, name)
        cred = self.cred(ctx)
        try:
            handle, inode = self.vfs.create(parent_inode, name, mode & ~ctx.umask, flags, cred)
        except FileExistsError:
            if flags & os.O_EXCL:
                raise
            # another writer created it since the kernel's lookup: open what is there
            inode = self.vfs.lookup(parent_inode, name, cred)
            handle = self.vfs.open(inode.ino, flags & ~os.O_CREAT, cred)
        return self._add_file(handle), self.named(parent_inode, name, inode)

    @_translated
    async def read(self, fh: int, off: int, size: int) -> bytes | memoryview:
        """Reads past one chunk are copied into one reused buffer, not a fresh one each time.

        Safe because pyfuse3 sends the reply before any other request runs: this handler
        never awaits anything.
        """
        journal = self.admin_files.get(fh)
        if journal is not None:
            return journal.read(off, size)
        handle = self._file(fh)
        if size <= CHUNK_SIZE:
            return handle.pread(size, off)
        if len(self._read_buffer) < size:
            self._read_buffer = bytearray(size)
        view = memoryview(self._read_buffer)[:size]
        return view[: handle.pread_into(view, off)]

    @_translated
    async def write(self, fh: int, off: int, buf: bytes) -> int:
        handle = self._file(fh)
        self.vfs.by = self.openers.get(fh, "fuse")
        return handle.pwrite(buf, off)

    @_translated
    async def flush(self, fh: int) -> None:
        """Every write is committed when it is answered: close(2) has nothing to wait for.

        ENOSYS tells the kernel so once and for all (it stops sending FLUSH, and close
        succeeds): a round trip saved on every close.
        """
        raise FUSEError(errno.ENOSYS)

    @_translated
    async def release(self, fh: int) -> None:
        self.admin_files.pop(fh, None)
        self.openers.pop(fh, None)
        handle = self.files.pop(fh, None)
        if handle is not None:
            self.vfs.release_later(handle)

    @_translated
    async def fsync(self, fh: int, datasync: bool) -> None:
        await trio.to_thread.run_sync(self.vfs.fsync, self.files.get(fh))

    # -- directories -------------------------------------------------------------------------

    @_translated
    async def opendir(self, inode: int, ctx: Caller) -> int:
        if AdminView.owns(inode):
            self.admin.require_root(ctx.uid)
            fh = next(self._next_fh)
            self.admin_dirs.add(fh)
            return fh
        handle = self.vfs.open(inode, os.O_RDONLY | os.O_DIRECTORY, self.cred(ctx))
        fh = next(self._next_fh)
        self.dirs[fh] = handle
        if isinstance(handle, FileHandle):
            self.dir_seen[fh] = handle.getattr()
        return fh

    def dir_entries(self, fh: int, start_id: int) -> Iterator[tuple[bytes, Inode, int]]:
        """(name, inode, next offset) from offset `start_id`: ".", "..", then the VFS's entries.

        Offsets come from the VFS's readdir cookies, which stay valid while the directory
        changes. The right to list was checked when the directory was opened, as for any
        open file, so the listing itself runs with root's rights.
        """
        try:
            ino = self.dirs[fh].ino
        except KeyError:
            raise FUSEError(errno.EBADF) from None
        if start_id < 1:
            yield b".", self.vfs.getattr(ino), 1
        if start_id < 2:
            yield b"..", self.vfs.lookup(ino, b"..", ROOT), 2
        after = max(start_id - _DOT_OFFSETS, 0)
        while True:  # in batches: the kernel takes a page or so of entries per request
            batch = self.vfs.readdir(ino, after, ROOT, limit=_READDIR_BATCH)
            for name, inode, cookie in batch:
                yield name, inode, cookie + _DOT_OFFSETS
            if len(batch) < _READDIR_BATCH:
                return
            after = batch[-1][2]

    @_translated
    async def readdir(self, fh: int, start_id: int, token: pyfuse3.ReaddirToken) -> None:
        if fh in self.admin_dirs:
            listing = [(b".", DIR_INO), (b"..", ROOT_INO), *self.admin.entries()]
            for i, (name, ino) in enumerate(listing[start_id:], start_id + 1):
                inode = self.vfs.getattr(ino) if ino == ROOT_INO else self.admin.inode(ino)
                if self.enable_writeback_cache and inode.is_reg:
                    self.admin_pushed[inode.ino] = None
                if not pyfuse3.readdir_reply(token, name, self.admin_attrs(inode), i):
                    return
            return
        lookups = self.lookups
        for name, inode, next_id in self.dir_entries(fh, start_id):
            if name in (b".", b".."):  # not lookups: the kernel takes no reference for them
                if not pyfuse3.readdir_reply(token, name, self.attrs(inode), next_id):
                    return
                continue
            if not pyfuse3.readdir_reply(token, name, self.listed_attrs(inode), next_id):
                return
            lookups[inode.ino] = lookups.get(inode.ino, 0) + 1  # readdirplus: each entry is a lookup

    @_translated
    async def releasedir(self, fh: int) -> None:
        self.admin_dirs.discard(fh)
        self.dirs.pop(fh, None)
        self.dir_seen.pop(fh, None)

    @_translated
    async def fsyncdir(self, fh: int, datasync: bool) -> None:
        await trio.to_thread.run_sync(self.vfs.sync)

    # -- extended attributes -----------------------------------------------------------------

    @_translated
    async def getxattr(self, inode: int, name: bytes, ctx: Caller) -> bytes:
        if name == COHERENCE_XATTR and inode == ROOT_INO and self.coherence is not None:
            self.vfs.refresh(force=True)  # delegation asks before a program runs: drives as they are now
            return str(self.coherence()).encode()  # trusted.*: the kernel lets only root ask
        if name == CAPABILITY:
            if inode in self.no_capability:
                raise FUSEError(errno.ENODATA)
            if AdminView.owns(inode):
                raise FUSEError(errno.ENODATA)
            try:
                return self.vfs.getxattr(inode, name, self.cred(ctx))
            except OSError as e:
                if e.errno == errno.ENODATA and inode in self.lookups:
                    self.no_capability.add(inode)
                raise
        if AdminView.owns(inode):
            raise FUSEError(errno.ENODATA)
        return self.vfs.getxattr(inode, name, self.cred(ctx))

    @_translated
    async def setxattr(self, inode: int, name: bytes, value: bytes, ctx: Caller) -> None:
        self._refuse_admin(inode)
        self._writes(inode)
        self.no_capability.discard(inode)
        self.vfs.setxattr(inode, name, value, 0, self.cred(ctx))

    @_translated
    async def listxattr(self, inode: int, ctx: Caller) -> list[bytes]:
        if AdminView.owns(inode):
            return []
        return self.vfs.listxattr(inode, self.cred(ctx))

    @_translated
    async def removexattr(self, inode: int, name: bytes, ctx: Caller) -> None:
        self._refuse_admin(inode)
        self._writes(inode)
        self.vfs.removexattr(inode, name, self.cred(ctx))

