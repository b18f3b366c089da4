"""The inode-level face of the VFS: what the FUSE layer calls, one transaction per call."""

from __future__ import annotations

import errno
import os
import stat as st
import struct
import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from kfs.journal import ChangeKind, FixedReceipt, append_change_row, change_row
from kfs.kstate import KState, Txn, quota
from kfs.values import value_class
from kfs.vfs import attrs, data, handles, namespace, records
from kfs.vfs.attrs import Time
from kfs.vfs.cred import R_OK, ROOT, W_OK, X_OK, Cred, allowed, require
from kfs.vfs.data import DATA_BYTES, MAX_BYTES
from kfs.vfs.errors import fs_error
from kfs.vfs.inode import CTIME_AT, DIR_SIZE, MODE_AT, MTIME_AT, NAME_MAX, ROOT_INO, SIZE_AT, Inode
from kfs.vfs.ops import Op

T = TypeVar("T")
BLOCK_SIZE = 4096
# In the flags of the kernel's own open for execve (__FMODE_EXEC), which FUSE passes on in OPEN:
# that open needs x, not r (open(2) cannot set the bit: it is no O_ flag)
FMODE_EXEC = 0x20

# Fields of the packed inode record (inode.INODE_STRUCT) that a write changes in place.
_mode_uid_size = struct.Struct(f">II{SIZE_AT - MODE_AT - 8}xQ").unpack_from  # mode, uid (right after it), size
_pack_mode = struct.Struct(">I").pack_into
_pack_size = struct.Struct(">Q").pack_into
_pack_times = struct.Struct(">qq").pack_into  # mtime, then ctime right after it
assert CTIME_AT == MTIME_AT + 8 and MODE_AT == 0
_SETID = st.S_ISUID | st.S_ISGID
pack_ino = records.pack_ino


@value_class(frozen=True, slots=True)
class StatFS:
    block_size: int
    blocks: int
    blocks_free: int
    files: int
    files_free: int
    name_max: int = NAME_MAX


def count_usage(txn: Txn) -> None:
    """Set every uid's use counter from what the state stores (kfs.kstate.quota)."""
    quota.store(txn, *records.count_usage(txn))


def _make_root(txn: Txn) -> None:
    if records.find_inode(txn, ROOT_INO) is None:
        now = time.time_ns()
        records.put_inode(txn, Inode(ROOT_INO, st.S_IFDIR | 0o755, 0, 0, 2, DIR_SIZE, now, now, now, now))
        data.charge_owner(txn, 0, 1, kind=quota.FILES)
        if txn.counter(b"next_ino") < ROOT_INO:
            txn.incr(b"next_ino", ROOT_INO - txn.counter(b"next_ino"))


class VFS:
    """POSIX semantics over one KState, addressed by inode number.

    `by` is the provenance written into every receipt (e.g. "fuse", "ssh:agent");
    `origin` tags change-feed rows so a follower can skip what its own process wrote.
    `receipts=False` writes none: for a store whose journal nobody reads and nothing would
    prune (a memory drive: kfs.drives.memory), which must not fill with them.
    """

    def __init__(self, state: KState, *, by: str = "vfs", receipts: bool = True) -> None:
        self.state = state
        fork = getattr(state, "fork", None)  # a fork's view (kfs.kstate.layers.ForkState)
        # a fork's receipts name it: its writes are not the state's, and may be discarded
        self.by = by if fork is None or by.endswith(f" fork {fork}") else f"{by} fork {fork}"
        self.receipts = receipts
        self.origin = int.from_bytes(os.urandom(8), "big") >> 1  # 63 random bits (secrets would cost imports)
        self._holder: int | None = None
        self._releases: list[int] = []  # inos whose open record goes with the next transaction
        self._releases_lock = threading.Lock()
        with state.read() as txn:
            fresh = records.find_inode(txn, ROOT_INO) is None
            dirty = handles.needs_recovery(txn)
            uncounted = not txn.counter(quota.COUNTED)
        if fresh and not state.readonly:
            state.write(_make_root)
        if dirty and not state.readonly:
            state.write(handles.recover)
        if uncounted and not state.readonly:  # made before per-owner counts: count what it holds, once
            getattr(state, "state", state).write(count_usage, views=True)  # sizes read in place, not copied

    # -- plumbing ----------------------------------------------------------------------------

    def run(self, cred: Cred, fn: Callable[[Op], T], *, views: bool = False) -> T:
        """Run a mutation as one write transaction with a fresh operation context.

        Closes queued by `release_later` ride along, first, in the same transaction.
        views=True runs it in a `ViewTxn` (KState.write's option, for the data hot path).
        """
        if not self._releases:
            return self.state.write(self._in_op, cred, fn, views=views)
        return self._run_releasing(self._in_op, (cred, fn), views)

    def _in_op(self, txn: Txn, cred: Cred, fn: Callable[[Op], T]) -> T:
        """`run`'s transaction (a method and arguments, not a closure built per mutation)."""
        return fn(Op(txn, cred, self.by, self.origin, time.time_ns(), self.receipts))

    def run_txn(self, fn: Callable[..., T], *args: object, views: bool = False) -> T:
        """`run` for a hot path that needs no `Op` (a handle's write): `fn(txn, *args)` gets
        the bare transaction and writes its own receipt and change row."""
        if not self._releases:
            return self.state.write(fn, *args, views=views)
        return self._run_releasing(fn, args, views)

    def _run_releasing(self, fn: Callable[..., T], args: tuple[object, ...], views: bool) -> T:
        """Run `fn(txn, *args)` in one write transaction after dropping the open records
        `release_later` queued; they go back in the queue when the transaction fails."""
        with self._releases_lock:
            batch, self._releases = self._releases, []
        try:
            return self.state.write(self._releasing, batch, fn, args, views=views)
        except BaseException:
            with self._releases_lock:
                self._releases[:0] = batch
            raise

    def _releasing(self, txn: Txn, batch: list[int], fn: Callable[..., T], args: tuple[object, ...]) -> T:
        self._drop_opens(txn, batch)
        return fn(txn, *args)

    def _drop_opens(self, txn: Txn, inos: Sequence[int]) -> None:
        """Drop this process's open records of `inos`; the last close of an unlinked file frees it."""
        holder = self._holder
        if holder is None:
            return
        for ino in inos:
            handles.drop_open(txn, ino, holder)

    def release_later(self, handle: FileHandle) -> None:
        """Close `handle` now; its open record goes with this VFS's next transaction.

        For a caller that closes often (the FUSE daemon): the record only keeps an unlinked
        file's data alive, so dropping it a little later delays reclaiming that data and
        nothing else, and saves a transaction per close. `settle_releases` drops the queue.
        """
        if handle.closed:
            return
        handle.closed = True
        if handle.held and self._holder is not None:
            with self._releases_lock:
                self._releases.append(handle.ino)

    def settle_releases(self) -> None:
        """Drop the open records `release_later` queued, now (one transaction)."""
        if self._releases:
            self.run(ROOT, lambda op: None)

    def _holder_id(self, txn: Txn) -> int:
        """This process's holder number, registered at its first open (a forked child, whose
        pid differs, registers its own)."""
        if self._holder is None or self._holder_pid != handles.pid:
            self._holder = handles.register_holder(txn)
            self._holder_pid = handles.pid
        return self._holder

    # -- reads -------------------------------------------------------------------------------

    def path_of(self, ino: int) -> str:
        """The absolute path of directory `ino` (a directory has one name)."""
        with self.state.read() as txn:
            return os.fsdecode(records.dir_path(txn, ino))

    def getattr(self, ino: int) -> Inode:
        with self.state.read() as txn:
            return records.get_inode(txn, ino)

    def lookup(self, parent: int, name: bytes, cred: Cred = ROOT) -> Inode:
        with self.state.read() as txn:
            dir_ = records.get_inode(txn, parent)
            if not dir_.is_dir:
                raise fs_error(errno.ENOTDIR)
            require(cred, dir_, X_OK, None, txn)
            if len(name) > NAME_MAX:
                raise fs_error(errno.ENAMETOOLONG)
            if name == b".":
                return dir_
            if name == b"..":
                return records.get_inode(txn, records.dir_parent(txn, parent)[0])
            ino = records.lookup_entry(txn, parent, name)
            if ino is not None:
                return records.get_inode(txn, ino)
        raise fs_error(errno.ENOENT)  # raised out here: unwinding the read context costs more

    def readlink(self, ino: int) -> bytes:
        with self.state.read() as txn:
            inode = records.get_inode(txn, ino)
            if not inode.is_lnk:
                raise fs_error(errno.EINVAL)
            return records.read_symlink(txn, ino)

    def readdir(
        self, ino: int, after: int = 0, cred: Cred = ROOT, limit: int | None = None
    ) -> list[tuple[bytes, Inode, int]]:
        """(name, attributes, cookie) after cookie `after`, at most `limit` of them.

        Cookies stay valid across changes, so a reader pages through with the last cookie.
        """
        with self.state.read() as txn:
            dir_ = records.get_inode(txn, ino)
            if not dir_.is_dir:
                raise fs_error(errno.ENOTDIR)
            require(cred, dir_, R_OK, None, txn)
            return [
                (name, records.get_inode(txn, child), cookie)
                for name, child, _, cookie in records.list_entries(txn, ino, after, limit)
            ]

    def access(self, ino: int, mode: int, cred: Cred) -> None:
        with self.state.read() as txn:
            inode = records.get_inode(txn, ino)
            if mode and not allowed(cred, inode, mode & (R_OK | W_OK | X_OK), txn):
                raise fs_error(errno.EACCES)

    def statfs(self, uid: int = 0) -> StatFS:
        """The room left, as `uid` sees it: a uid with a quota sees its quota as the size and
        its own use as the used part (df in an agent's session), with no more free than the
        state has; any other (root) sees the state's whole quota or map."""
        with self.state.read() as txn:
            used = txn.counter(DATA_BYTES)
            limit = txn.counter(MAX_BYTES) or self.state.max_map_size
            files = txn.stat("inodes")["entries"]
            own = quota.limit(txn, uid) if uid else None
            mine = quota.total_use(txn, uid) if own is not None else 0
            own_files = quota.limit(txn, uid, quota.FILES) if uid else None
            my_files = quota.usage(txn, uid, quota.FILES) if own_files is not None else 0
        free = max(limit - used, 0)
        if own is not None:
            limit, free = own, max(min(own - mine, free), 0)
        total = max(limit // BLOCK_SIZE, 1)
        files_free = max(2**32 - files, 0)
        if own_files is not None:  # df -i: the agent's own files and what its limit leaves
            files, files_free = my_files, max(min(own_files - my_files, files_free), 0)
        return StatFS(BLOCK_SIZE, total, free // BLOCK_SIZE, files, files_free)

    def getxattr(self, ino: int, name: bytes, cred: Cred = ROOT) -> bytes:
        with self.state.read() as txn:
            value = attrs.find_xattr(Op(txn, cred, self.by, self.origin, 0), records.get_inode(txn, ino), name)
        if value is None:  # the common answer (the kernel asks for security.capability on every write)
            raise fs_error(errno.ENODATA)
        return value

    def listxattr(self, ino: int, cred: Cred = ROOT) -> list[bytes]:
        with self.state.read() as txn:
            return attrs.listxattr(Op(txn, cred, self.by, self.origin, 0), records.get_inode(txn, ino))

    # -- namespace ---------------------------------------------------------------------------

    def mknod(self, parent: int, name: bytes, mode: int, rdev: int = 0, cred: Cred = ROOT) -> Inode:
        return self.run(
            cred, lambda op: namespace.make_node(op, records.get_inode(op.txn, parent), name, mode, rdev=rdev)
        )

    def mkdir(self, parent: int, name: bytes, mode: int, cred: Cred = ROOT) -> Inode:
        return self.mknod(parent, name, st.S_IFDIR | st.S_IMODE(mode), 0, cred)

    def symlink(self, parent: int, name: bytes, target: bytes, cred: Cred = ROOT) -> Inode:
        if not target:
            raise fs_error(errno.ENOENT)
        mode = st.S_IFLNK | 0o777
        return self.run(
            cred, lambda op: namespace.make_node(op, records.get_inode(op.txn, parent), name, mode, target=target)
        )

    def link(self, ino: int, new_parent: int, new_name: bytes, cred: Cred = ROOT) -> Inode:
        return self.run(
            cred,
            lambda op: namespace.link(
                op, records.get_inode(op.txn, ino), records.get_inode(op.txn, new_parent), new_name
            ),
        )

    def unlink(self, parent: int, name: bytes, cred: Cred = ROOT) -> None:
        self.run(cred, lambda op: namespace.unlink(op, records.get_inode(op.txn, parent), name))

    def rmdir(self, parent: int, name: bytes, cred: Cred = ROOT) -> None:
        self.run(cred, lambda op: namespace.rmdir(op, records.get_inode(op.txn, parent), name))

    def rename(
        self, old_parent: int, old_name: bytes, new_parent: int, new_name: bytes, flags: int = 0, cred: Cred = ROOT,
        judge: Callable[[Txn], None] | None = None,
    ) -> None:
        """`judge`, if given, runs first in the rename's own transaction and refuses by raising
        (a session's policy: kfs.vfs.policy.WritePolicy.check_rename)."""

        def body(op: Op) -> None:
            if judge is not None:
                judge(op.txn)
            namespace.rename(
                op, records.get_inode(op.txn, old_parent), old_name, records.get_inode(op.txn, new_parent), new_name,
                flags,
            )

        self.run(cred, body)

    # -- attributes --------------------------------------------------------------------------

    def setattr(
        self,
        ino: int,
        cred: Cred = ROOT,
        *,
        mode: int | None = None,
        uid: int | None = None,
        gid: int | None = None,
        size: int | None = None,
        atime: Time = None,
        mtime: Time = None,
        handle: FileHandle | None = None,
    ) -> Inode:
        writable = handle is not None and handle.writable
        return self.run(
            cred,
            lambda op: attrs.setattr(
                op, records.get_inode(op.txn, ino), mode=mode, uid=uid, gid=gid, size=size,
                atime=atime, mtime=mtime, writable_handle=writable,
            ),
        )

    def setxattr(self, ino: int, name: bytes, value: bytes, flags: int = 0, cred: Cred = ROOT) -> None:
        self.run(cred, lambda op: attrs.setxattr(op, records.get_inode(op.txn, ino), name, value, flags))

    def removexattr(self, ino: int, name: bytes, cred: Cred = ROOT) -> None:
        self.run(cred, lambda op: attrs.removexattr(op, records.get_inode(op.txn, ino), name))

    # -- open files --------------------------------------------------------------------------

    def create(self, parent: int, name: bytes, mode: int, flags: int, cred: Cred = ROOT) -> tuple[FileHandle, Inode]:
        """Create and open a regular file; EEXIST if the name exists (callers open it instead)."""

        def body(op: Op) -> Inode:
            inode = namespace.make_node(op, records.get_inode(op.txn, parent), name, st.S_IFREG | st.S_IMODE(mode))
            handles.add_open(op.txn, inode.ino, self._holder_id(op.txn), first=True)
            return inode

        inode = self.run(cred, body)
        return FileHandle(self, inode.ino, flags, cred), inode

    def open(self, ino: int, flags: int, cred: Cred = ROOT, path: str | None = None) -> FileHandle:
        if flags & os.O_DIRECTORY and not flags & (os.O_ACCMODE | os.O_TRUNC | os.O_CREAT):
            # a directory's open writes nothing (no open record, no truncation): a read
            # transaction, not a write's lock and commit (`git status` opens every directory)
            with self.state.read() as txn:
                inode = records.get_inode(txn, ino, path)
                if inode.is_dir:
                    return self.open_in(Op(txn, cred, self.by, self.origin, 0, False), inode, flags, path)
        return self.run(cred, lambda op: self.open_in(op, records.get_inode(op.txn, ino, path), flags, path))

    def open_in(
        self, op: Op, inode: Inode, flags: int, path: str | None = None, *, created: bool = False
    ) -> FileHandle:
        """Open an inode inside an operation: permission checks, O_TRUNC, holder record.

        A file the same call just created is opened whatever its mode, as open(2) does.
        """
        access = flags & os.O_ACCMODE
        if inode.is_dir and (access != os.O_RDONLY or flags & (os.O_TRUNC | os.O_CREAT)):
            raise fs_error(errno.EISDIR, path)
        if not (inode.is_reg or inode.is_dir):
            raise fs_error(errno.EOPNOTSUPP, path)
        want = {os.O_RDONLY: R_OK, os.O_WRONLY: W_OK, os.O_RDWR: R_OK | W_OK}.get(access, R_OK | W_OK)
        if flags & os.O_TRUNC:
            want |= W_OK
        if flags & FMODE_EXEC and access == os.O_RDONLY:
            want = X_OK  # execve's open: a program of mode 0111 runs though no one may read it
        if not created:
            require(op.cred, inode, want, path, op.txn)
        if flags & os.O_TRUNC and inode.is_reg:  # Linux truncates even with O_RDONLY
            if inode.size:
                data.truncate(op.txn, inode, 0)
                attrs.drop_privileges_on_write(op, inode)
                op.receipt("vfs.truncate", path or f"ino {inode.ino}", 0)
                op.changed(ChangeKind.DATA, inode.ino)
            inode.mtime = inode.ctime = op.now
            records.put_inode(op.txn, inode)
        if inode.is_reg:
            handles.add_open(op.txn, inode.ino, self._holder_id(op.txn), first=created)
        return FileHandle(self, inode.ino, flags, op.cred, path, held=inode.is_reg)

    def sync(self) -> None:
        """fsync/fsyncdir: make everything committed so far durable on disk."""
        self.state.sync()


class FileHandle:
    """An open regular file. Reads see committed state; each write is one transaction."""

    __slots__ = (
        "vfs", "ino", "flags", "cred", "path", "readable", "writable", "append", "held", "closed",
        "_receipt", "_change", "_change_origin",
    )

    def __init__(
        self, vfs: VFS, ino: int, flags: int, cred: Cred, path: str | None = None, held: bool = True
    ) -> None:
        access = flags & os.O_ACCMODE
        self.vfs = vfs
        self.cred = cred
        self.ino = ino
        self.flags = flags
        self.path = path
        self.readable = access in (os.O_RDONLY, os.O_RDWR)
        self.writable = access in (os.O_WRONLY, os.O_RDWR)
        self.append = bool(flags & os.O_APPEND)
        self.held = held
        self.closed = False
        self._receipt: FixedReceipt | None = None  # pwrite's, made at the first write
        self._change: bytes | None = None
        self._change_origin = 0

    def _check(self, want_write: bool) -> None:
        if self.closed:
            raise fs_error(errno.EBADF, self.path)
        if want_write and not self.writable or not want_write and not self.readable:
            raise fs_error(errno.EBADF, self.path)

    def getattr(self) -> Inode:
        return self.vfs.getattr(self.ino)

    def pread(self, size: int, offset: int) -> bytes:
        self._check(False)
        with self.vfs.state.read(views=True) as txn:  # no copy of the whole 64 KiB chunk
            mode, length = records.mode_and_size(txn, self.ino, self.path)
            if st.S_ISDIR(mode):
                raise fs_error(errno.EISDIR, self.path)
            return data.read_span(txn, self.ino, length, offset, size)

    def pread_into(self, out: memoryview, offset: int) -> int:
        """Read up to len(out) bytes at `offset` into `out`; returns how many (0 at EOF)."""
        self._check(False)
        with self.vfs.state.read(views=True) as txn:
            inode = records.get_inode(txn, self.ino, self.path)
            if inode.is_dir:
                raise fs_error(errno.EISDIR, self.path)
            return data.read_into(txn, inode, offset, out)

    def pwrite(self, buf: bytes | memoryview, offset: int) -> int:
        """Write at `offset` (at the end with O_APPEND); returns the byte count.

        One transaction: the data, the inode's size, mtime and ctime (and setuid/setgid
        dropped for a non-root writer), a receipt and a DATA change row, as every mutation.
        The hot path of small writes, so it works on the packed inode record rather than an
        `Inode`, and reuses the receipt's encoded text and the change row across writes.
        """
        if self.closed or not self.writable:
            raise fs_error(errno.EBADF, self.path)
        if not buf:
            return 0
        vfs = self.vfs
        if vfs.receipts:
            receipt = self._receipt
            where = self.path or f"ino {self.ino}"
            if receipt is None or receipt.by != vfs.by or receipt.path != where:
                self._receipt = FixedReceipt("vfs.append" if self.append else "vfs.write", vfs.by, where)
        elif self._receipt is not None:
            self._receipt = None
        if self._change is None or self._change_origin != vfs.origin:
            self._change = change_row(vfs.origin, ChangeKind.DATA, self.ino)
            self._change_origin = vfs.origin
        # a ViewTxn: rewriting 4 KiB of a stored 64 KiB chunk copies it once, not twice
        return vfs.run_txn(self._write_in, buf, offset, views=True)

    def _write_in(self, txn: Txn, buf: bytes | memoryview, offset: int) -> int:
        """pwrite's transaction (a method, not a closure: the hot path builds no function)."""
        key = pack_ino(self.ino)
        t, inodes = txn.raw("inodes")
        raw = t.get(key, None, inodes)
        if raw is None:
            raise fs_error(errno.ENOENT, self.path)
        record = bytearray(raw)  # a view into the map, dead after the writes below: copied
        mode, owner, size = _mode_uid_size(record)
        end = data.write_span(txn, self.ino, size, size if self.append else offset, buf, self.path, owner,
                              not self.cred.is_root)
        if end != size:
            _pack_size(record, SIZE_AT, end)
        if mode & _SETID and mode & 0o170000 != 0o040000 and not self.cred.is_root:
            _pack_mode(record, MODE_AT, attrs.mode_after_write(mode))
        now = time.time_ns()
        _pack_times(record, MTIME_AT, now, now)  # mtime, ctime
        t.put(key, record, True, True, False, inodes)
        if self._receipt is not None:
            self._receipt.append(txn, len(buf))
        append_change_row(txn, self._change)
        return len(buf)

    def truncate(self, size: int) -> None:
        self._check(True)
        self.vfs.setattr(self.ino, self.cred, size=size, handle=self)

    def setattr(self, *, mode: int | None = None, uid: int | None = None, gid: int | None = None,
                size: int | None = None, atime: Time = None, mtime: Time = None) -> Inode:
        """Change the open file's attributes as its opener (a front end's fsetstat): by the
        handle, so a file unlinked while open is still reached."""
        if self.closed:
            raise fs_error(errno.EBADF, self.path)
        return self.vfs.setattr(self.ino, self.cred, mode=mode, uid=uid, gid=gid, size=size, atime=atime,
                                mtime=mtime, handle=self)

    def fsync(self) -> None:
        self.vfs.sync()

    def close(self) -> None:
        """Release the handle; the last close of an unlinked file frees its data."""
        if self.closed:
            return
        self.closed = True
        if not self.held or self.vfs._holder is None:
            return
        self.vfs.state.write(lambda txn: self.vfs._drop_opens(txn, (self.ino,)))

    def __enter__(self) -> FileHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
