"""Layers: a fork's copy-on-write view of the state, kept in the state's own keys.

A fork (kfs.forks) sees its parent's files as they were when it was made, plus its own writes.
Its rows live in the `layers` database under the fork's number, one per key of the filesystem's
databases (`LAYERED`) that differs from what lies below:

- an own row: what the fork wrote there (a value, or a whiteout: the key is gone in the fork),
  and whether the key had a value in the view the fork began from (`BASE`: what `diff` needs);
- a preserved row (older states only): the parent's value kept for this one fork;
- a marker row (`CHANGED`, older states only): the parent changed that key after the fork.

What the parent had before a write is kept once per version, not once per fork: a view (a fork's
layer, or the state's) has a generation, which each fork made of it takes (`gen` in its record)
and moves on by one; the view's first write to a key in a generation keeps the old value as a
version row (`VERSIONS`) under that generation, when a fork made since the key's last version
still needs it, as an LVM snapshot keeps its origin's old blocks. A fork made at generation g
reads the key's first version above g, else the view itself; 300 forks made before a 2 MiB
overwrite share one kept copy of it. A version row names the uid it is charged to (the newest
fork's owner, when it was kept: one charge, not one per fork); it goes, and the charge with it,
when no fork left needs it (`release`). A version above a fork's generation is also how `diff`
and `merge` know the parent changed the key since the fork.

So making a fork writes a record and nothing else, whatever the tree's size; a fork's read looks
in its layer, then at its parent's versions, then in its parent's layer, down to the state's own
databases; a write of one 64 KiB chunk of a large file copies that chunk, no more, however many
forks there are. A fork of a fork reads through its parent's view, which holds still, so only
direct children need a view's versions. Which keys are a fork's own is all `diff` and `merge`
need to know.

`LayeredTxn` is a `Txn` whose layered databases answer through this scheme; everything above
KState runs on it unchanged. `ForkState` is a fork's view in `KState`'s shape, for the VFS.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from kfs.kstate import quota
from kfs.kstate.schema import U64
from kfs.kstate.txn import Txn, ViewTxn

if TYPE_CHECKING:
    from kfs.kstate.env import KState

T = TypeVar("T")
_U32 = struct.Struct(">I")

# the filesystem's databases, each a code in a layer row's key (fork u64 + code u8 + key)
LAYERED: dict[str, int] = {"meta": 1, "inodes": 2, "dirents": 3, "parents": 4, "chunks": 5, "symlinks": 6,
                           "xattrs": 7, "opens": 8, "orphans": 9}
# LAYERED's chunks, symlinks and xattrs: the rows whose bytes a fork's owner is charged for
# (kstate.quota); and inodes, each row one of its files
CHARGED = frozenset(LAYERED[db] for db in ("chunks", "symlinks", "xattrs"))
INODES = LAYERED["inodes"]
LAYERED_META = frozenset({b"next_ino", b"data_bytes"})  # a fork's own counters (the rest of meta is shared)
CHANGED = 0x80  # code | CHANGED: a marker row
VERSIONS = 0x40  # code | VERSIONS: a view's kept versions, escaped key + 00 00 + generation u64
FIRST_GEN = 1  # a view's first generation (forks of older states, without one, read as 0)
# a layer row's first byte
OWN = 0x01  # the fork's own write (else preserved: the parent's value at the fork)
HERE = 0x02  # a value follows (else a whiteout: absent in this view)
BASE = 0x04  # own rows: the key had a value in the view the fork began from
STATE = 0  # the state's own view, in the registry's keys


def prefix(fork: int, code: int) -> bytes:
    return U64.pack(fork) + bytes((code,))


def children_key(layer: int) -> bytes:
    return U64.pack(layer) + b"c"


def gen_key(layer: int) -> bytes:
    return U64.pack(layer) + b"g"


def _escape(key: bytes) -> bytes:
    """`key` as a version row holds it: order kept, and no key a prefix of another's form."""
    return key.replace(b"\0", b"\0\xff")


def version_head(layer: int, code: int, key: bytes) -> bytes:
    """Where `key`'s versions in `layer` begin (a generation u64 follows)."""
    return prefix(layer, code | VERSIONS) + _escape(key) + b"\0\0"


def version_key(raw: bytes) -> tuple[bytes, int]:
    """A version row's (key, generation)."""
    return raw[9:-10].replace(b"\0\xff", b"\0"), U64.unpack_from(raw, len(raw) - 8)[0]


def generation(txn: Txn, layer: int) -> int:
    raw = txn.get("forks", gen_key(layer))
    return FIRST_GEN if raw is None else U64.unpack(raw)[0]


def next_generation(txn: Txn, layer: int) -> int:
    """A new fork's generation of `layer`: the current one, which moves on (writes after it are
    kept for the new fork)."""
    gen = generation(txn, layer)
    txn.put("forks", gen_key(layer), U64.pack(gen + 1))
    return gen


def chain_gens(txn: Txn, chain: tuple[int, ...]) -> tuple[int, ...]:
    """The generation of each fork of `chain` in the view below it."""
    out = []
    for fork in chain:
        record = fork_record(txn, fork)
        out.append(int(record.get("gen") or 0) if record is not None else 0)
    return tuple(out)


class Keep:
    """What a view's writes keep for the forks made of it: `layer`'s versions at generation `gen`,
    when the newest fork (made at `newest`, owned by `uid`) needs them."""

    __slots__ = ("layer", "gen", "newest", "uid")

    def __init__(self, layer: int, gen: int, newest: int, uid: int) -> None:
        self.layer, self.gen, self.newest, self.uid = layer, gen, newest, uid


def keeping(txn: Txn, layer: int) -> Keep | None:
    """`layer`'s Keep, None when no fork of it needs one."""
    forks = children(txn, layer)
    if not forks:
        return None
    gen, uid = _gen_and_uid(txn.get("forks", U64.pack(forks[-1])))  # oldest first: the last is the newest
    return Keep(layer, generation(txn, layer), gen, uid)


_GEN_UID: dict[bytes, tuple[int, int]] = {}  # a fork record -> its (gen, uid)


def _gen_and_uid(raw: bytes | None) -> tuple[int, int]:
    """A fork record's generation and owner, decoded once per distinct record: every write
    transaction to a view that has forks asks for its newest fork's (`keeping`), and decoding
    its JSON each time was a tenth of a small write's transaction. Keyed by the record's bytes,
    so a changed record is decoded afresh."""
    if raw is None:
        return 0, 0
    raw = bytes(raw)
    found = _GEN_UID.get(raw)
    if found is None:
        record = _json().loads(raw)
        found = (int(record.get("gen") or 0), int(record.get("uid") or 0))
        if len(_GEN_UID) >= 256:  # forks are few; a bound all the same
            _GEN_UID.clear()
        _GEN_UID[raw] = found
    return found


def _json() -> Any:
    import json  # off the shell's start path: only a fork needs it

    return json


def versions_bytes(txn: Txn) -> dict[int, tuple[int, int]]:
    """Every uid's kept versions: (bytes of file data, inode records), as `charge` counted them."""
    out: dict[int, tuple[int, int]] = {}
    for key, row in Txn.scan(txn, "layers"):
        code = key[8]
        if code & VERSIONS and not code & CHANGED and row[0] & HERE:
            uid = _U32.unpack_from(row, 1)[0]
            size, files = out.get(uid, (0, 0))
            out[uid] = (size + (len(row) - 5 if code & ~VERSIONS in CHARGED else 0),
                        files + (code & ~VERSIONS == INODES))
    return out


def release(txn: Txn, layer: int) -> None:
    """Drop `layer`'s versions that no fork of it still needs (a fork discarded or merged),
    giving their bytes back to whom they were charged: a version at generation G, after the
    key's one at P, serves the forks made at P..G-1."""
    gens = sorted(int((fork_record(txn, f) or {}).get("gen") or 0) for f in children(txn, layer))
    import bisect

    last: tuple[int, bytes] | None = None
    rows = (raw for c in LAYERED.values() for raw in Txn.scan_keys(txn, "layers", prefix(layer, c | VERSIONS)))
    for raw in rows:  # (not the layer's own rows: a fork's may be many)
        code = raw[8]
        key, gen = version_key(raw)
        since = last[0] if last is not None and last[1] == raw[:9] + key else 0
        last = (gen, raw[:9] + key)
        i = bisect.bisect_left(gens, since)
        if i < len(gens) and gens[i] < gen:
            continue  # a fork made at since..gen-1 reads it
        row = Txn.get(txn, "layers", raw)
        assert row is not None
        if row[0] & HERE:
            uid = _U32.unpack_from(row, 1)[0]
            if code & ~VERSIONS in CHARGED:
                quota.charge(txn, uid, -(len(row) - 5))
            elif code & ~VERSIONS == INODES:
                quota.charge(txn, uid, -1, kind=quota.FILES)
        Txn.delete(txn, "layers", raw)


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
    return _json().loads(raw)


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
    empty for the state's own view; `gens`: each one's generation in the view below it, read
    when not given) whose writes keep versions for the forks made of it (`forks`, a Keep:
    module docstring)."""

    __slots__ = ("chain", "gens", "forks", "views", "_layers", "_owners", "_cur", "_kept")

    def __init__(self, base: Txn, chain: tuple[int, ...], forks: Keep | None,
                 owners: dict[int, int] | None = None, gens: tuple[int, ...] | None = None) -> None:
        Txn.__init__(self, base._t, base._dbs, base.write, base.seqs)
        self.chain = chain
        self.gens = gens if gens is not None else chain_gens(base, chain)
        self.forks = forks
        self.views = getattr(base, "views", isinstance(base, ViewTxn))
        self._layers = base._dbs["layers"]
        self._owners: dict[int, int] = dict(owners) if owners else {}  # fork -> its owner's uid, known
        self._cur: Any = None
        self._kept: dict[tuple[int, int], bool] = {}  # (layer, code) -> whether it has versions at all

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

    def _cursor(self) -> Any:
        if self._cur is None:
            self._cur = self._t.cursor(db=self._layers)
        return self._cur

    def _version(self, layer: int, code: int, key: bytes, gen: int) -> Any:
        """`layer`'s version of `key` a fork made at `gen` reads (its row), or None: the first
        kept after it."""
        cur = self._cursor()
        kept = self._kept.get((layer, code))
        if kept is None:  # most reads are of views with no versions: one look per read transaction
            start = prefix(layer, code | VERSIONS)
            kept = bool(cur.set_range(start) and cur.key()[:9] == start)
            if kept or not self.write:  # (in a write, another view of it may keep one next)
                self._kept[(layer, code)] = kept
        if not kept:
            return None
        head = version_head(layer, code, key)
        if not cur.set_range(head + U64.pack(gen + 1)):
            return None
        found = cur.key()
        return cur.value() if len(found) == len(head) + 8 and found[:len(head)] == head else None

    def changed_since(self, code: int, key: bytes) -> bool:
        """Whether the view below the fork (chain[0]) changed `key` since the fork was made."""
        below = self.chain[1] if len(self.chain) > 1 else STATE
        return self._version(below, code, key, self.gens[0]) is not None

    def _below(self, db: str, code: int, key: bytes, start: int = 0, own: bool = True) -> Any:
        """The value of `key` in the view of chain[start:] (a view into the map, in a ViewTxn);
        own=False: below chain[start]'s own layer, as it was when that fork was made."""
        t, layers, chain, gens = self._t, self._layers, self.chain, self.gens
        for i in range(start, len(chain)):
            if own or i > start:
                row = t.get(prefix(chain[i], code) + key, None, layers)
                if row is not None:
                    return row[1:] if row[0] & HERE else None
            row = self._version(chain[i + 1] if i + 1 < len(chain) else STATE, code, key, gens[i])
            if row is not None:
                return row[5:] if row[0] & HERE else None
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
        sources = []
        for i, fork in enumerate(self.chain):
            below = self.chain[i + 1] if i + 1 < len(self.chain) else STATE
            sources.append(self._layer_rows(2 * i, fork, code, prefix_, origin))
            sources.append(self._version_rows(2 * i + 1, below, code, prefix_, origin, self.gens[i]))
        sources.append(((bytes(k), 2 * len(self.chain), v) for k, v in Txn.scan(self, db, prefix_, origin)))
        last = None
        for key, _, value in heapq.merge(*sources, key=lambda row: (row[0], row[1])):
            if key == last:
                continue  # a lower layer's row of a key an upper one decided
            last = key
            if value is not None:
                yield key, value

    def _layer_rows(self, depth: int, fork: int, code: int, prefix_: bytes,
                    origin: bytes) -> Iterator[tuple[bytes, int, Any]]:
        head = prefix(fork, code)
        cur = self._t.cursor(db=self._layers)
        if not cur.set_range(head + origin):
            return
        whole, n = head + prefix_, len(head)
        for key, row in cur:
            if key[:len(whole)] != whole:
                return
            yield bytes(key[n:]), depth, (row[1:] if row[0] & HERE else None)

    def _version_rows(self, depth: int, layer: int, code: int, prefix_: bytes, origin: bytes,
                      gen: int) -> Iterator[tuple[bytes, int, Any]]:
        """`layer`'s versions under `prefix_` from `origin` on, as a fork made at `gen` reads them."""
        head = prefix(layer, code | VERSIONS)
        cur = self._t.cursor(db=self._layers)
        if not cur.set_range(head + _escape(origin)):
            return
        whole = head + _escape(prefix_)
        done = None
        for raw, row in cur:
            if raw[:len(whole)] != whole:
                return
            key, at = version_key(bytes(raw))
            if key == done or at <= gen:
                continue  # a version it does not read, or one after the one it reads
            done = key
            yield key, depth, (row[5:] if row[0] & HERE else None)

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
        """Put `value` at `key` (None: delete it) in this view, keeping its old value for the forks."""
        t, layers = self._t, self._layers
        keep = self.forks
        if keep is not None:
            head = version_head(keep.layer, code, key)
            cur = self._cursor()
            here = head + U64.pack(keep.gen)
            if cur.set_range(here) and cur.key() == here:
                pass  # kept in this generation already
            else:
                last = cur.key() if cur.prev() else b""  # the key's last version, if any
                since = U64.unpack_from(last, len(head))[0] if len(last) == len(head) + 8 and \
                    last[:len(head)] == head else 0
                if keep.newest >= since:  # a fork made since then reads it: keep it, once
                    found = self._below(db, code, key)
                    old = None if found is None else bytes(found)
                    uid = _U32.pack(keep.uid)
                    t.put(here, bytes((HERE,)) + uid + old if old is not None else b"\0" + uid, db=layers)
                    self._kept[(keep.layer, code)] = True
                    # the forks' owner's, never refused (the parent's write is not the forks')
                    if old and code in CHARGED:
                        quota.charge(self, keep.uid, len(old), check=False)
                    elif old is not None and code == INODES:
                        quota.charge(self, keep.uid, 1, check=False, kind=quota.FILES)
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
            if row is not None:  # preserved (an older state's): the parent changed it since the fork
                t.put(prefix(fork, code | CHANGED) + key, b"", db=layers)
                had = bool(row[0] & HERE)
            else:
                had = self._below(db, code, key, 0, own=False) is not None
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
    keep = keeping(txn, STATE)
    return LayeredTxn(txn, (), keep, gens=()) if keep is not None else txn


class _ForkRead:
    __slots__ = ("_fork", "_views", "_read")

    def __init__(self, fork: ForkState, views: bool) -> None:
        self._fork = fork
        self._views = views

    def __enter__(self) -> LayeredTxn:
        self._read = self._fork.state.read(views=self._views)
        return LayeredTxn(self._read.__enter__(), self._fork.chain, None, gens=self._fork.gens)

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
        with state.read() as txn:
            self.gens = chain_gens(txn, self.chain)  # a chain never changes, nor its generations
        self.layer = self.chain[0] if self.chain else STATE
        # a fork's owner never changes: its writes charge it without reading its record again
        self.owners = {fork: int(record.get("uid") or 0)} if self.layer == fork else {}

    def read(self, *, views: bool = False) -> _ForkRead:
        return _ForkRead(self, views)

    def write(self, fn: Callable[..., T], *args: object, views: bool = False) -> T:
        def body(txn: Txn) -> T:
            if txn.get("forks", U64.pack(self.fork)) is None:  # (its record's JSON not decoded)
                raise OSError(116, f"fork {self.fork} is gone (discarded or merged)")  # ESTALE
            return fn(LayeredTxn(txn, self.chain, keeping(txn, self.layer), self.owners, self.gens), *args)

        return self.state.write(body, views=views)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.state, name)  # path, readonly, max_map_size, sync, fs_uuid, ...
