"""Layers: a fork's copy-on-write view of the state, kept in the state's own keys.

A fork (kfs.forks) sees its parent's files as they were when it was made, plus its own writes.
Its rows live in the `layers` database under the fork's number, one per key of the filesystem's
databases (`LAYERED`) that differs from what lies below:

- an own row: what the fork wrote there (a value, or a whiteout: the key is gone in the fork),
  and whether the key had a value in the view the fork began from (`BASE`: what `diff` needs);
- a preserved row: the value the parent had there when the fork was made, written by the
  parent's first write to that key after the fork (as an LVM snapshot keeps its origin's old
  blocks), so the fork's view stays put while the parent goes on;
- a marker row (`CHANGED`): the parent changed that key after the fork (what `merge` refuses).

So making a fork writes a record and nothing else, whatever the tree's size; a fork's read looks
in its layer, then in its parent's, down to the state's own databases; a write of one 64 KiB
chunk of a large file copies that chunk, no more. A view's writes preserve for the forks made
of it (`children`); a fork of a fork reads through its parent's view, which holds still, so only
direct children need it. Which keys are a fork's own is all `diff` and `merge` need to know.

`LayeredTxn` is a `Txn` whose layered databases answer through this scheme; everything above
KState runs on it unchanged. `ForkState` is a fork's view in `KState`'s shape, for the VFS.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from kfs.kstate import quota
from kfs.kstate.schema import U64
from kfs.kstate.txn import Txn, ViewTxn

if TYPE_CHECKING:
    from kfs.kstate.env import KState

T = TypeVar("T")

# the filesystem's databases, each a code in a layer row's key (fork u64 + code u8 + key)
LAYERED: dict[str, int] = {"meta": 1, "inodes": 2, "dirents": 3, "parents": 4, "chunks": 5, "symlinks": 6,
                           "xattrs": 7, "opens": 8, "orphans": 9}
# LAYERED's chunks, symlinks and xattrs: the rows whose bytes a fork's owner is charged for
# (kstate.quota); and inodes, each row one of its files
CHARGED = frozenset(LAYERED[db] for db in ("chunks", "symlinks", "xattrs"))
INODES = LAYERED["inodes"]
LAYERED_META = frozenset({b"next_ino", b"data_bytes"})  # a fork's own counters (the rest of meta is shared)
CHANGED = 0x80  # code | CHANGED: a marker row
# a layer row's first byte
OWN = 0x01  # the fork's own write (else preserved: the parent's value at the fork)
HERE = 0x02  # a value follows (else a whiteout: absent in this view)
BASE = 0x04  # own rows: the key had a value in the view the fork began from
STATE = 0  # the state's own view, in the registry's keys


def prefix(fork: int, code: int) -> bytes:
    return U64.pack(fork) + bytes((code,))


def children_key(layer: int) -> bytes:
    return U64.pack(layer) + b"c"


def children(txn: Txn, layer: int) -> tuple[int, ...]:
    """The overlay forks whose snapshot `layer`'s writes must preserve (STATE: the state's)."""
    raw = txn.get("forks", children_key(layer))
    return () if not raw else tuple(U64.unpack_from(raw, i)[0] for i in range(0, len(raw), 8))


def set_children(txn: Txn, layer: int, forks: tuple[int, ...]) -> None:
    if forks:
        txn.put("forks", children_key(layer), b"".join(U64.pack(f) for f in forks))
    else:
        txn.delete("forks", children_key(layer))


def fork_record(txn: Txn, fork: int) -> dict[str, Any] | None:
    raw = txn.get("forks", U64.pack(fork))
    if raw is None:
        return None
    import json  # off the shell's start path: only a fork needs it

    return json.loads(raw)


def fork_owner(txn: Txn, fork: int) -> int:
    """The uid a fork's stored bytes are charged to: its agent's (0, root's, for a fork of no
    agent or of one made before forks recorded it)."""
    record = fork_record(txn, fork)
    return 0 if record is None else int(record.get("uid") or 0)


def layer_files(txn: Txn, fork: int) -> int:
    """The inode records a fork's layer holds (its own files and the parent's it keeps)."""
    return sum(1 for _, row in Txn.scan(txn, "layers", prefix(fork, INODES)) if row[0] & HERE)


def layer_bytes(txn: Txn, fork: int) -> int:
    """The bytes of file data a fork's layer holds (its own chunks, symlink targets and extended
    attributes, and the parent's it keeps)."""
    return sum(len(row) - 1 for code in CHARGED for _, row in Txn.scan(txn, "layers", prefix(fork, code))
               if row[0] & HERE)


class _LayeredRaw:
    """What `LayeredTxn.raw` hands out for a layered database: LMDB's `get` and `put` as the
    hot paths call them (the path walk, a handle's write), through the layers."""

    __slots__ = ("txn", "db")

    def __init__(self, txn: LayeredTxn, db: str) -> None:
        self.txn = txn
        self.db = db

    def get(self, key: bytes, default: Any = None, _db: Any = None) -> Any:
        found = self.txn.get_view(self.db, bytes(key))
        return default if found is None else found

    def put(self, key: bytes, value: Any, *_flags: Any, **_named: Any) -> bool:
        self.txn.put(self.db, bytes(key), bytes(value))
        return True


class LayeredTxn(Txn):
    """A transaction seen through a fork's layers (`chain`: the fork, its parent fork, ...,
    empty for the state's own view) whose writes preserve the snapshots of `forks` (module
    docstring)."""

    __slots__ = ("chain", "forks", "views", "_layers", "_owners")

    def __init__(self, base: Txn, chain: tuple[int, ...], forks: tuple[int, ...],
                 owners: dict[int, int] | None = None) -> None:
        Txn.__init__(self, base._t, base._dbs, base.write, base.seqs)
        self.chain = chain
        self.forks = forks
        self.views = getattr(base, "views", isinstance(base, ViewTxn))
        self._layers = base._dbs["layers"]
        self._owners: dict[int, int] = dict(owners) if owners else {}  # fork -> its owner's uid, known

    def _owner(self, fork: int) -> int:
        """`fork_owner`, read once per transaction (a large write charges chunk by chunk)."""
        owner = self._owners.get(fork)
        if owner is None:
            owner = self._owners[fork] = fork_owner(self, fork)
        return owner

    def _code(self, db: str, key: bytes) -> int | None:
        code = LAYERED.get(db)
        if code is None or (code == 1 and key not in LAYERED_META):
            return None
        return code

    def _below(self, db: str, code: int, key: bytes, start: int = 0) -> Any:
        """The value of `key` in the view of chain[start:] (a view into the map, in a ViewTxn)."""
        t, layers = self._t, self._layers
        for fork in self.chain[start:]:
            row = t.get(prefix(fork, code) + key, None, layers)
            if row is not None:
                return row[1:] if row[0] & HERE else None
        return t.get(key, None, self._dbs[db])

    # -- reads ---------------------------------------------------------------------------------

    def get(self, db: str, key: bytes) -> bytes | None:
        code = self._code(db, key)
        found = self._t.get(key, None, self._dbs[db]) if code is None or not self.chain else \
            self._below(db, code, key)
        return None if found is None else bytes(found) if self.views or type(found) is not bytes else found

    def get_view(self, db: str, key: bytes) -> Any:
        code = self._code(db, key)
        if code is None or not self.chain:
            return self._t.get(key, None, self._dbs[db])
        found = self._below(db, code, key)
        return found if self.views or found is None else bytes(found)

    def memo(self, name: str) -> dict[Any, Any] | None:
        """`Txn.memo`, one per view: a fork's facts are not its parent's."""
        return Txn.memo(self, (name, self.chain) if self.chain else name)  # type: ignore[arg-type]

    def raw(self, db: str) -> Any:
        if LAYERED.get(db) is None or not (self.chain or self.forks) or db == "meta":
            return Txn.raw(self, db)
        return _LayeredRaw(self, db), None  # (the handle: unused by it)

    def scan(self, db: str, prefix_: bytes = b"", start: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        for key, value in self.scan_views(db, prefix_, start):
            yield bytes(key), bytes(value)

    def scan_views(self, db: str, prefix_: bytes = b"", start: bytes | None = None) -> Iterator[tuple[Any, Any]]:
        code = LAYERED.get(db)
        if code is None or code == 1 or not self.chain:
            yield from Txn.scan(self, db, prefix_, start)
            return
        import heapq  # a fork's scans only: off the shell's start path

        origin = start if start is not None else prefix_
        sources = [self._layer_rows(depth, fork, code, prefix_, origin) for depth, fork in enumerate(self.chain)]
        sources.append(((bytes(k), len(self.chain), v) for k, v in Txn.scan(self, db, prefix_, origin)))
        last = None
        for key, _, value in heapq.merge(*sources, key=lambda row: (row[0], row[1])):
            if key == last:
                continue  # a lower layer's row of a key an upper one decided
            last = key
            if value is not None:
                yield key, value

    def _layer_rows(self, depth: int, fork: int, code: int, prefix_: bytes, origin: bytes) -> Iterator[tuple[bytes, int, Any]]:
        head = prefix(fork, code)
        cur = self._t.cursor(db=self._layers)
        if not cur.set_range(head + origin):
            return
        whole, n = head + prefix_, len(head)
        for key, row in cur:
            if key[:len(whole)] != whole:
                return
            yield bytes(key[n:]), depth, (row[1:] if row[0] & HERE else None)

    def scan_keys(self, db: str, prefix_: bytes = b"") -> list[bytes]:
        if LAYERED.get(db) is None or not self.chain:
            return Txn.scan_keys(self, db, prefix_)
        return [bytes(k) for k, _ in self.scan_views(db, prefix_)]

    def has_prefix(self, db: str, prefix_: bytes) -> bool:
        if LAYERED.get(db) is None or not self.chain:
            return Txn.has_prefix(self, db, prefix_)
        return next(iter(self.scan_views(db, prefix_)), None) is not None

    def last(self, db: str) -> bytes | None:
        if LAYERED.get(db) is None or not self.chain:
            return Txn.last(self, db)
        keys = self.scan_keys(db)
        return keys[-1] if keys else None

    def counter(self, name: bytes) -> int:
        raw = self.get_view("meta", name)
        return 0 if raw is None else U64.unpack_from(raw)[0]

    # -- writes --------------------------------------------------------------------------------

    def _write(self, db: str, code: int, key: bytes, value: bytes | None) -> None:
        """Put `value` at `key` (None: delete it) in this view, preserving for the forks."""
        t, layers = self._t, self._layers
        if self.forks:
            old: Any = False  # not read yet
            for fork in self.forks:
                where = prefix(fork, code) + key
                row = t.get(where, None, layers)
                if row is None:
                    if old is False:
                        found = self._below(db, code, key)
                        old = None if found is None else bytes(found)
                    t.put(where, bytes((HERE,)) + old if old is not None else b"\0", db=layers)
                    # kept for the fork: its owner's, never refused (the parent's write is not the fork's)
                    if old and code in CHARGED:
                        quota.charge(self, self._owner(fork), len(old), check=False)
                    elif old is not None and code == INODES:
                        quota.charge(self, self._owner(fork), 1, check=False, kind=quota.FILES)
                elif row[0] & OWN:
                    t.put(prefix(fork, code | CHANGED) + key, b"", db=layers)
        if not self.chain:
            if value is None:
                t.delete(key, b"", self._dbs[db])
            else:
                t.put(key, value, db=self._dbs[db])
            return
        fork = self.chain[0]
        where = prefix(fork, code) + key
        row = t.get(where, None, layers)
        if row is not None and row[0] & OWN:
            tag = row[0] & (OWN | BASE)
        else:
            if row is not None:  # preserved: the parent changed it since the fork
                t.put(prefix(fork, code | CHANGED) + key, b"", db=layers)
                had = bool(row[0] & HERE)
            else:
                had = self._below(db, code, key, 1) is not None
            tag = OWN | (BASE if had else 0)
            if value is None and not had and row is None:
                return  # nothing here, nothing below: nothing to hide
        if code in CHARGED:  # what the fork's layer gains or loses is its owner's
            delta = (0 if value is None else len(value)) - (len(row) - 1 if row is not None and row[0] & HERE else 0)
            if delta:
                quota.charge(self, self._owner(fork), delta)
        elif code == INODES:
            delta = (value is not None) - bool(row is not None and row[0] & HERE)
            if delta:
                quota.charge(self, self._owner(fork), delta, kind=quota.FILES)
        t.put(where, bytes((tag | HERE,)) + value if value is not None else bytes((tag,)), db=layers)

    def put(self, db: str, key: bytes, value: bytes) -> None:
        code = self._code(db, key)
        if code is None or not (self.chain or self.forks):
            Txn.put(self, db, key, value)
        else:
            self._write(db, code, key, bytes(value))

    def insert(self, db: str, key: bytes, value: bytes) -> bool:
        code = self._code(db, key)
        if code is None or not (self.chain or self.forks):
            return Txn.insert(self, db, key, value)
        if self.get_view(db, key) is not None:
            return False
        self._write(db, code, key, bytes(value))
        return True

    def delete(self, db: str, key: bytes) -> bool:
        code = self._code(db, key)
        if code is None or not (self.chain or self.forks):
            return Txn.delete(self, db, key)
        if self.get_view(db, key) is None:
            return False
        self._write(db, code, key, None)
        return True

    def incr(self, name: bytes, delta: int = 1) -> int:
        if self._code("meta", name) is None or not (self.chain or self.forks):
            return Txn.incr(self, name, delta)
        value = self.counter(name) + delta
        self._write("meta", 1, name, U64.pack(value))
        return value


def state_view(txn: Txn) -> Txn:
    """The state's own view for a write: layered when forks of it must be preserved."""
    forks = children(txn, STATE)
    return LayeredTxn(txn, (), forks) if forks else txn


class _ForkRead:
    __slots__ = ("_fork", "_views", "_read")

    def __init__(self, fork: ForkState, views: bool) -> None:
        self._fork = fork
        self._views = views

    def __enter__(self) -> LayeredTxn:
        self._read = self._fork.state.read(views=self._views)
        return LayeredTxn(self._read.__enter__(), self._fork.chain, ())

    def __exit__(self, *exc: object) -> None:
        self._read.__exit__(*exc)


class ForkState:
    """A fork's view in KState's shape (read, write and the rest): what a VFS runs on.
    `chain` is the fork's layer and its parent's, down to the state; `layer` is where its
    writes go (its own; a shared fork's is its parent's)."""

    def __init__(self, state: KState, fork: int) -> None:
        self.state = state
        self.fork = fork
        with state.read() as txn:
            record = fork_record(txn, fork)
        if record is None:
            raise LookupError(f"no fork {fork}")
        self.record = record
        self.chain = tuple(record["chain"])
        self.layer = self.chain[0] if self.chain else STATE
        # a fork's owner never changes: its writes charge it without reading its record again
        self.owners = {fork: int(record.get("uid") or 0)} if self.layer == fork else {}

    def read(self, *, views: bool = False) -> _ForkRead:
        return _ForkRead(self, views)

    def write(self, fn: Callable[..., T], *args: object, views: bool = False) -> T:
        def body(txn: Txn) -> T:
            if fork_record(txn, self.fork) is None:
                raise OSError(116, f"fork {self.fork} is gone (discarded or merged)")  # ESTALE
            return fn(LayeredTxn(txn, self.chain, children(txn, self.layer), self.owners), *args)

        return self.state.write(body, views=views)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.state, name)  # path, readonly, max_map_size, sync, fs_uuid, ...
