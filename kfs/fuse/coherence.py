"""Coherence with other writers: follow the KState change feed, invalidate the kernel's caches.

The SSH server and the CLI write KState directly. A worker thread polls the change feed and,
for every row another process wrote, tells the kernel to drop what it cached of that inode or
directory entry. The calls block (and could deadlock inside a request handler), so they run
only here, never in the trio thread that answers requests.

With the kernel's writeback cache (kfs/fuse/operations.py) the kernel keeps a regular file's
size as its own while it holds the inode: a size from GETATTR is ignored. So for a file
another process changed, dropping its pages and attributes is not enough. The follower
also (1) tells the kernel the entry was deleted (FUSE_NOTIFY_DELETE): an inode no process
holds open is then evicted and looked up afresh, new size and all; and (2) stores the file's
last byte in the kernel's cache (FUSE_NOTIFY_STORE), which moves the size of an inode still
held open up to the new one. What stays stale: a file kept open through the mount (or reached
by a second hard link) that another process shrank keeps its old size until it is closed.
"""

from __future__ import annotations

import errno
import logging
import threading
from collections.abc import Callable, Iterable

import pyfuse3

from kfs.journal import Change, ChangeKind, changes_since, last_change
from kfs.vfs import VFS
from kfs.vfs import data as vfs_data
from kfs.vfs import records

log = logging.getLogger("kfs.fuse")

POLL_SECONDS = 0.01


class Invalidations:
    """What the kernel is told to forget: the seam between the feed and pyfuse3 (tests swap it)."""

    def inode(self, ino: int, attr_only: bool) -> None:
        pyfuse3.invalidate_inode(ino, attr_only)

    def entry(self, parent: int, name: bytes) -> None:
        pyfuse3.invalidate_entry(parent, name)

    def deleted(self, parent: int, name: bytes, ino: int) -> None:
        """The entry `name` of `parent` (the inode `ino`) is gone: the kernel drops the dentry
        and, unless a process holds the inode, the inode with its cached size."""
        pyfuse3.invalidate_entry(parent, name, ino)

    def store(self, ino: int, offset: int, data: bytes) -> None:
        """Put `data` at `offset` in the kernel's page cache; a store past the cached size
        moves the size up to its end."""
        pyfuse3.notify_store(ino, offset, data)


class ChangeFollower:
    """Polls the change feed from where it stood at start; skips rows this VFS wrote.

    `known(ino)` says whether the kernel holds a reference to an inode: invalidating one it
    never looked up is a wasted system call (and fails with ENOENT). `chores`, if given, runs
    after every poll: the daemon's housekeeping, kept off the thread that answers requests.
    `changed(inos)`, if given, hears of every inode another process changed (the daemon's own
    caches). `name_of(ino)`, given when the kernel runs a writeback cache, is the (parent,
    name) the kernel last looked a file up by: see the module's docstring for what it is for.

    Every invalidation is sent twice, the second time one poll later. A reply the daemon
    read from the VFS just before the foreign change, but that reaches the kernel only after
    the first invalidation, would otherwise stay cached for the whole entry/attribute
    timeout; the echo bounds that staleness by a poll instead (the kernel drops stale
    attribute replies by itself, but not stale entries).
    """

    def __init__(
        self,
        vfs: VFS,
        known: Callable[[int], bool],
        invalidate: Invalidations | None = None,
        poll: float = POLL_SECONDS,
        chores: Callable[[], None] | None = None,
        changed: Callable[[Iterable[int]], None] | None = None,
        name_of: Callable[[int], tuple[int, bytes] | None] | None = None,
    ) -> None:
        self.vfs = vfs
        self.known = known
        self.invalidate = invalidate or Invalidations()
        self.poll = poll
        self.chores = chores
        self.changed = changed
        self.name_of = name_of
        self.seq = last_change(vfs.state)
        self.applied = self.seq  # every change up to here has reached the kernel
        self._echo: list[Change] = []  # foreign rows of this poll, applied again at the next
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kfs-coherence", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def position(self) -> int:
        """How far the kernel's caches are coherent, and a nudge to poll now: a program about
        to be started on the mount (kshell.delegate) waits until this reaches the newest change,
        so it never sees what the mount cached before a K command changed it."""
        self._wake.set()
        return self.applied

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.poll)
            self._wake.clear()
            if self._stop.is_set():
                return
            echo, self._echo = self._echo, []
            try:
                self.catch_up()
                if echo:
                    self.apply(echo)
            except Exception:  # a failed poll must not end coherence for the mount's life
                log.exception("following the change feed failed")
            if self.chores is not None:
                try:
                    self.chores()
                except Exception:
                    log.exception("the daemon's housekeeping failed")

    def catch_up(self) -> int:
        """Apply every change since the last call; returns how many rows came from elsewhere."""
        applied = 0
        while True:
            rows = changes_since(self.vfs.state, self.seq)
            if not rows:
                return applied
            self.seq = rows[-1].seq
            foreign = [row for row in rows if row.origin != self.vfs.origin]
            self.apply(foreign)
            self._echo.extend(foreign)
            applied += len(foreign)
            self.applied = self.seq

    def apply(self, rows: Iterable[Change]) -> None:
        inodes: dict[int, bool] = {}  # ino -> attr_only, merged over the batch
        entries: dict[tuple[int, bytes], None] = {}  # an ordered set
        for row in rows:
            if row.kind in (ChangeKind.ENTRY_ADD, ChangeKind.ENTRY_DEL):
                entries[(row.parent, row.name)] = None
                inodes[row.parent] = False  # its mtime, nlink and listing changed
                inodes.setdefault(row.ino, True)  # its nlink and ctime changed
            else:
                attr_only = row.kind == ChangeKind.ATTR
                inodes[row.ino] = inodes.get(row.ino, True) and attr_only
        if self.changed is not None and inodes:
            self.changed(inodes)
        for parent, name in entries:
            if self.known(parent):
                self._quietly(self.invalidate.entry, parent, name)
        for ino, attr_only in inodes.items():
            if self.known(ino):
                self._quietly(self.invalidate.inode, ino, attr_only)
                if not attr_only and self.name_of is not None:
                    self._resize(ino)

    def _resize(self, ino: int) -> None:
        """A writeback-cached regular file another process changed: bring the kernel's size to
        the new one (an inode nobody holds is dropped; a held one grows by a store)."""
        try:
            with self.vfs.state.read() as txn:
                inode = records.get_inode(txn, ino)
                if not inode.is_reg:
                    return
                last = vfs_data.read(txn, inode, inode.size - 1, 1) if inode.size else b""
        except OSError:  # gone meanwhile: its entry's row says so
            return
        name = self.name_of(ino) if self.name_of is not None else None
        if name is not None and self.known(name[0]):
            self._quietly(self.invalidate.deleted, name[0], name[1], ino)
        if last and self.known(ino):
            self._quietly(self.invalidate.store, ino, inode.size - 1, last)

    @staticmethod
    def _quietly(call: Callable[..., None], *args: object) -> None:
        try:
            call(*args)
        except OSError as e:  # the kernel forgot it meanwhile: nothing cached, nothing to drop
            if e.errno not in (errno.ENOENT, errno.ENOTCONN):
                log.warning("invalidation %s%r failed: %s", call.__name__, args, e)
