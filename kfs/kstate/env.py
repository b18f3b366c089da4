"""The LMDB environment: opening, schema checks, transactions, map growth and ENOSPC."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import stat as st
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from threading import get_ident
from typing import TypeVar

import lmdb

from kfs.kstate.schema import DATABASES, MIGRATIONS, SCHEMA_VERSION, U64
from kfs.kstate.layers import STATE, children_key, state_view
from kfs.kstate.txn import Txn, ViewTxn

T = TypeVar("T")

DEFAULT_STATE_DIR = "/var/lib/komputer"
MIB = 1 << 20
GIB = 1 << 30
GROW_MIN = 8 * MIB
REMAP_PREFAULT_MAX = 2 * GIB  # a growth maps again the whole map up to this size (`_prefault`)
# The state holds every agent's files: only its owner (the server's user) reads it, as backups are
STATE_DIR_MODE = 0o700
STATE_FILE_MODE = 0o600
STATE_FILES = ("data.mdb", "lock.mdb")
log = logging.getLogger(__name__)


def default_state_dir() -> Path:
    """`KOMPUTER_STATE`, else /var/lib/komputer for root, else ~/.local/share/komputer."""
    env = os.environ.get("KOMPUTER_STATE")
    if env:
        return Path(env)
    if os.geteuid() == 0:
        return Path(DEFAULT_STATE_DIR)
    return Path.home() / ".local/share/komputer"


def tighten(state_dir: Path) -> list[str]:
    """Make a state its owner's alone (directory 0700, data.mdb and lock.mdb 0600), when this
    process owns it: a state made before K did so was 0755 and 0644, every agent's files
    readable by every user of the host. Says what it changed (a warning) and returns it."""
    changed = []
    for path, mode in ((state_dir, STATE_DIR_MODE), *((state_dir / n, STATE_FILE_MODE) for n in STATE_FILES)):
        try:
            s = os.stat(path)
        except FileNotFoundError:
            continue
        if s.st_uid != os.geteuid() or not st.S_IMODE(s.st_mode) & 0o077:
            continue
        os.chmod(path, st.S_IMODE(s.st_mode) & mode)
        changed.append(f"{path} {st.S_IMODE(s.st_mode):04o} -> {st.S_IMODE(s.st_mode) & mode:04o}")
    if changed:
        log.warning("komputer: the state holds every agent's files; made it its owner's alone: %s",
                    ", ".join(changed))
    return changed


class StateError(Exception):
    """The state directory cannot be used (missing, wrong schema, not a KState)."""


class KState:
    """One LMDB environment shared by every K process on the host.

    Writes run as functions (`write(fn)`) so that a full map can grow and the whole operation
    be retried; reads run in snapshot transactions (`read()`). LMDB's own lock file makes it
    safe for the FUSE daemon, the SSH server and the CLI to open the same state at once.

    Commits are not fsynced one by one (a killed process loses nothing: the pages are in the
    kernel's cache); `sync()` makes everything committed so far durable against power loss,
    and `durable=True` fsyncs every commit.

    The map is written in place (LMDB's WRITEMAP: commits cost a third of what copying pages
    out with write() costs). A store into a sparse mapped file on a full disk would kill the
    process with SIGBUS, so the data file is always fully allocated to the map size
    (`posix_fallocate`); a full disk then shows up as ENOSPC when the map grows, never later.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        create: bool = False,
        map_size: int = 1 * MIB,
        max_map_size: int = 64 * GIB,
        durable: bool = False,
        readonly: bool = False,
    ) -> None:
        self.path = Path(path)
        if create:
            self.path.mkdir(STATE_DIR_MODE, parents=True, exist_ok=True)
        elif not (self.path / "data.mdb").exists():
            raise StateError(f"{self.path}: no KState here (run `komputer init --state {self.path}`)")
        self.max_map_size = max_map_size
        self.readonly = readonly
        with self._sizing(not readonly):
            self._env = lmdb.open(
                str(self.path),
                map_size=min(_round_up(max(map_size, self._file_size())), max_map_size),
                max_dbs=len(DATABASES) + 4,
                max_readers=1024,
                sync=durable,
                metasync=durable,
                readonly=readonly,
                lock=True,
                readahead=False,
                meminit=False,
                writemap=not readonly,
                mode=STATE_FILE_MODE,
            )
        if not readonly:
            tighten(self.path)
            self._reserve()
        self._cleared_readers = self._env.reader_check()
        self._wlock = threading.Lock()
        self._writer = 0  # ident of the thread inside `write`, to refuse a nested write
        self._readers = 0
        self._readers_lock = threading.Lock()
        self._readers_cv = threading.Condition(self._readers_lock)
        self._quiescing = 0  # threads waiting in `_resize`: only then does a read's end notify
        self._prefaulting: threading.Thread | None = None  # mapping a growth's stretch (`_prefault`)
        self._dbs: dict[str, lmdb._Database] = {}
        # The sequence numbers this process's last write handed out (Txn.next_seq), valid while
        # the next write transaction's id is that write's id + 1: LMDB numbers every commit that
        # changed anything, so then no other writer committed in between. A write that changed
        # nothing keeps its id unspent, so only one that appended rows (then it changed
        # something) records its id here.
        self._seqs: dict[str, int] = {}
        self._seqs_txnid = -2
        while True:
            try:
                with self._env.begin(write=not readonly) as t:
                    for name in DATABASES:
                        try:
                            self._dbs[name.decode()] = self._env.open_db(name, txn=t, create=not readonly)
                        except lmdb.NotFoundError:  # read-only, a state from before it: empty
                            pass
                break
            except lmdb.MapResizedError:  # another process grew the map since ours was set
                self._adopt_new_size()
        self._check_schema(create)

    # -- lifecycle ---------------------------------------------------------------------------

    def _check_schema(self, create: bool) -> None:
        with self.read() as txn:
            raw = txn.get("meta", b"schema")
        if raw is None:
            if not create:
                raise StateError(f"{self.path}: not initialised (run `komputer init`)")
            self.write(_initialise)
            return
        version = U64.unpack(raw)[0]
        if version > SCHEMA_VERSION:
            raise StateError(
                f"{self.path}: schema version {version} is newer than this komputer "
                f"understands ({SCHEMA_VERSION}); upgrade komputer"
            )
        if version < SCHEMA_VERSION:
            self.write(_migrate)

    @property
    def stale_readers_cleared(self) -> int:
        """How many reader slots of dead processes were freed when this state was opened."""
        return self._cleared_readers

    def close(self) -> None:
        if self._prefaulting is not None:
            self._prefaulting.join()
        self._env.close()

    def __enter__(self) -> KState:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def sync(self) -> None:
        """Make every committed transaction durable on disk (fsync)."""
        if not self.readonly:
            self._env.sync(True)

    @property
    def fs_uuid(self) -> str:
        with self.read() as txn:
            raw = txn.get("meta", b"uuid")
        return raw.decode() if raw else ""

    @property
    def map_size(self) -> int:
        return self._env.info()["map_size"]

    def used_bytes(self) -> int:
        """Bytes of the map in use (last page number times page size)."""
        info = self._env.info()
        return (info["last_pgno"] + 1) * self._env.stat()["psize"]

    # -- transactions ------------------------------------------------------------------------

    def read(self, *, views: bool = False) -> _Read:
        """A snapshot read transaction; it sees every write committed before it began.

        Use as `with state.read() as txn:`. A small class rather than a generator context
        manager: a stat is a handful of microseconds, and contextlib's machinery cost a third.
        views=True gives a `ViewTxn` (see there), for readers that copy out only what they
        need (a 4 KiB read of a 64 KiB chunk).
        """
        return _Read(self, views)

    def _begin_read(self, buffers: bool = False) -> lmdb.Transaction:
        """Begin a read, counted in `_readers` (resizing the map waits for them to end)."""
        while True:
            with self._readers_lock:  # the condition's own lock (its `with` costs a Python call)
                if self._quiescing:  # a resize or abort is waiting: let the open reads drain first,
                    # for a bounded time (a reader that keeps its transaction open while it waits
                    # on this thread must not stall it for the resize's whole 10 s)
                    self._readers_cv.wait_for(lambda: not self._quiescing, timeout=0.5)
                self._readers += 1
            try:
                return self._env.begin(None, None, False, buffers)  # positional: cheaper to parse
            except lmdb.MapResizedError:
                self._end_read()
                if self._writer == get_ident():  # a read inside this thread's own write
                    self._adopt_new_size()
                else:  # LMDB cannot remap under another thread's open write transaction
                    with self._wlock:
                        self._adopt_new_size()
            except BaseException:
                self._end_read()
                raise

    def _end_read(self) -> None:
        with self._readers_lock:
            self._readers -= 1
            if self._quiescing and not self._readers:
                self._readers_cv.notify_all()

    def write(self, fn: Callable[..., T], *args: object, views: bool = False) -> T:
        """Run `fn(txn, *args)` in one write transaction and commit it; all of it happens or
        none of it.

        `fn` may run more than once (after the map grows), so it must have no effects outside
        the transaction. An `OSError` raised by `fn` aborts the transaction and propagates.
        views=True hands `fn` a `ViewTxn` (see there), for the data hot paths. `args` spare
        a hot caller building a closure per call.
        """
        if self.readonly:
            raise OSError(errno.EROFS, "read-only state")
        me = get_ident()
        if self._writer == me:
            raise RuntimeError("nested KState.write in one thread")
        with self._wlock:
            self._writer = me
            try:
                while True:
                    try:
                        t = self._env.begin(write=True, buffers=views)
                        tid = t.id()
                        if tid != self._seqs_txnid + 1:  # another writer committed since ours
                            self._seqs = {}
                        txn = (ViewTxn if views else Txn)(t, self._dbs, True, self._seqs)
                        try:
                            view = state_view(txn) if t.get(_STATE_FORKS, None, self._dbs["forks"]) is not None \
                                else txn  # with forks of the state, its writes keep their snapshots
                            result = fn(view, *args)
                        except BaseException:
                            self._seqs_txnid = -2  # the aborted appends' numbers were never written
                            self._abort(t)
                            raise
                        try:
                            t.commit()
                        except BaseException:
                            self._seqs_txnid = -2
                            raise
                        if txn.appended or view.appended:
                            self._seqs_txnid = tid  # rows were appended: the commit took txnid `tid`
                        return result
                    except lmdb.MapFullError:
                        self._grow()
                    except lmdb.MapResizedError:
                        self._adopt_new_size()
                    except lmdb.DiskError as e:
                        raise OSError(errno.ENOSPC, f"{self.path}: {e}") from e
            finally:
                self._writer = 0

    def _abort(self, t: lmdb.Transaction) -> None:
        """Abort a write with new reads held back: py-lmdb's abort waits until no LMDB call of
        any thread is in flight, which two threads reading in a loop can postpone for ever."""
        with self._readers_cv:
            self._quiescing += 1
        try:
            t.abort()
        finally:
            with self._readers_cv:
                self._quiescing -= 1
                self._readers_cv.notify_all()

    # -- map size ----------------------------------------------------------------------------

    def _resize(self, size: int) -> None:
        """Set the map size (0: adopt the size another process set) once no read transaction of
        this process is open and with no write transaction open (the caller holds the write
        lock), as LMDB requires. The readers' lock is held through the resize, so
        a read cannot begin between the wait and the remap."""
        with self._readers_cv:
            self._quiescing += 1
            try:
                if not self._readers_cv.wait_for(lambda: self._readers == 0, timeout=10):
                    raise OSError(errno.EBUSY, "cannot resize the KState map while read transactions stay open")
                self._env.set_mapsize(size)
            finally:
                self._quiescing -= 1
                self._readers_cv.notify_all()

    def _grow(self) -> None:
        with self._sizing():
            current = max(self._env.info()["map_size"], self._file_size())
            if current >= self.max_map_size:
                raise OSError(errno.ENOSPC, f"No space left on device (KState map is at its ceiling of {current} bytes)")
            # reserved on disk: grow gently, but not by less than GROW_MIN, since a growth remaps
            # the file and every page mapped before then faults again on its next use (the
            # first MiBs of a new state would otherwise remap at 2, 4 and 8 MiB)
            new = min(max(current * 2, current + GROW_MIN), current + GIB, self.max_map_size)
            self._reserve(new)  # first, so a full disk leaves the map as it was
            self._resize(new)
        self._prefault(current, new)

    def _prefault(self, start: int, end: int) -> None:
        """Map the stretch a growth added, in a thread of its own: the writer that grew the map
        goes on at once and finds most pages mapped (kfs/kstate/prefault.py). Then the rest of
        the map, which the growth's remap dropped: every page would fault again on its next
        read (measured: 512 MiB read through the mount right after they were written, 1707-1848
        MiB/s before, 2505-3402 after). Up to REMAP_PREFAULT_MAX only, past which a map is more
        than a working set. The thread counts as a reader, so the mapping it populates stays
        put: a resize (or an abort) waits for it, and it stops at its next step when one does;
        `close` waits for it too."""
        from kfs.kstate.prefault import prefault  # on a growth only: ctypes stays off start-up

        def run() -> None:
            waited_for = lambda: self._quiescing > 0  # noqa: E731 - a resize or an abort
            try:
                prefault(self.path / "data.mdb", start, end, waited_for)
                if end <= REMAP_PREFAULT_MAX:
                    prefault(self.path / "data.mdb", 0, start, waited_for)
            finally:
                self._end_read()

        with self._readers_cv:
            self._readers += 1
        self._prefaulting = threading.Thread(target=run, name="kstate-prefault", daemon=True)
        self._prefaulting.start()

    def _adopt_new_size(self) -> None:
        with self._sizing():
            self._resize(max(self._env.info()["map_size"], self._file_size()))

    @contextlib.contextmanager
    def _sizing(self, needed: bool = True) -> Iterator[None]:
        """Held (across processes: flock on the state directory) while a map size is chosen and
        set. With WRITEMAP, LMDB truncates the data file to the map size it is given, at open
        and at every resize; chosen from a file size read while another process grows the
        file, that would cut off pages the other process is writing (SIGBUS there). So sizes
        are never below the file's size, and are read and set under this lock."""
        if not needed:  # read-only: no WRITEMAP, LMDB never truncates
            yield
            return
        fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _file_size(self) -> int:
        try:
            return (self.path / "data.mdb").stat().st_size
        except FileNotFoundError:
            return 0

    def _reserve(self, size: int | None = None) -> None:
        """Allocate the data file's blocks up to `size` (default: the map size) or raise ENOSPC."""
        size = size if size is not None else self._env.info()["map_size"]
        fd = os.open(self.path / "data.mdb", os.O_RDWR)
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError as e:
            raise OSError(errno.ENOSPC, f"No space left on device (cannot reserve {size} bytes for {self.path})") from e
        finally:
            os.close(fd)


_STATE_FORKS = children_key(STATE)


def _round_up(size: int) -> int:
    return (size + MIB - 1) // MIB * MIB


def _initialise(txn: Txn) -> None:
    import uuid  # only a new state needs one (and uuid imports platform: start-up time)

    txn.put("meta", b"schema", U64.pack(SCHEMA_VERSION))
    txn.put("meta", b"uuid", str(uuid.uuid4()).encode())


def _migrate(txn: Txn) -> None:
    version = U64.unpack(txn.get("meta", b"schema") or U64.pack(0))[0]
    while version < SCHEMA_VERSION:
        MIGRATIONS[version](txn)
        version += 1
    txn.put("meta", b"schema", U64.pack(version))


class _Read:
    """The context manager `KState.read` returns: begins on enter, aborts on exit."""

    __slots__ = ("_state", "_buffers", "_t")

    def __init__(self, state: KState, buffers: bool) -> None:
        self._state = state
        self._buffers = buffers

    def __enter__(self) -> Txn:
        self._t = self._state._begin_read(self._buffers)
        return (ViewTxn if self._buffers else Txn)(self._t, self._state._dbs, False)

    def __exit__(self, *exc: object) -> None:
        try:
            self._t.abort()
        finally:
            self._state._end_read()
