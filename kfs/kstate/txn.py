"""The small transactional key-value interface that everything above KState uses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import lmdb

from kfs.kstate.schema import U64
from native._knative import ffi as _ffi

_unpack_u64 = U64.unpack_from
# cffi's copy into a buffer Python sees as read-only (LMDB's view of a value), for
# ViewTxn.patch; the native core's ffi object, since cffi is loaded for it anyway
_from_buffer = _ffi.from_buffer
_memmove = _ffi.memmove


class Txn:
    """One LMDB transaction over K's named databases (named by str, e.g. ``"inodes"``).

    A write `Txn` exists only inside `KState.write`, which commits it whole or not at all.
    """

    __slots__ = ("_t", "_dbs", "write", "seqs", "appended")

    def __init__(
        self, t: lmdb.Transaction, dbs: dict[str, lmdb._Database], write: bool, seqs: dict[Any, Any] | None = None
    ) -> None:
        self._t = t
        self._dbs = dbs
        self.write = write
        # db -> the last sequence number `next_seq` handed out, known without a cursor seek: a
        # write's are KState's cache, which it empties when another writer committed since
        # this process's last append (see KState.write); None in a read (always seek). It
        # also holds the `memo`s, under names no database has.
        self.seqs = seqs
        self.appended = False  # whether `next_seq` handed out a number (then a row was written)

    def get(self, db: str, key: bytes) -> bytes | None:
        return self._t.get(key, None, self._dbs[db])  # positional: measurably cheaper than db=

    def memo(self, name: str) -> dict[Any, Any] | None:
        """A dict kept from one write transaction of this process to its next for as long as
        nothing but this process wrote the state, or None (in a read transaction).

        It lives beside the cached sequence numbers (`seqs`), which KState.write drops after
        an abort and whenever another writer committed since this process's last append:
        what it holds (facts read from the state) stays true until a write changes them, and
        the code that makes such a write in this process updates the memo in the same
        transaction. For facts that every operation would otherwise read again (the path of
        the directory its receipt names). `name` must be no database's name.
        """
        seqs = self.seqs
        if seqs is None:
            return None
        memo = seqs.get(name)
        if memo is None:
            memo = seqs[name] = {}
        return memo

    def put(self, db: str, key: bytes, value: bytes) -> None:
        self._t.put(key, value, True, True, False, self._dbs[db])  # positional, as `get`

    def raw(self, db: str) -> tuple[lmdb.Transaction, lmdb._Database]:
        """The LMDB transaction and handle of `db`, for hot loops in kfs (`t.get(key, None, h)`).

        In a `ViewTxn` its values are views: use them before the next write, keep none.
        Whoever takes the raw handle may delete the newest row, so `next_seq` forgets `db`.
        """
        seqs = self.seqs
        if seqs and db in seqs:
            del seqs[db]
        return self._t, self._dbs[db]

    def get_view(self, db: str, key: bytes) -> bytes | memoryview | None:
        """`get` for a caller that uses the value before its next write in this transaction
        and keeps none of it: a `ViewTxn` answers with a view into the map, not a copy."""
        return self._t.get(key, None, self._dbs[db])

    def scan_views(
        self, db: str, prefix: bytes = b"", start: bytes | None = None
    ) -> Iterator[tuple[bytes | memoryview, bytes | memoryview]]:
        """`scan` under `get_view`'s rule: each row is used before the next step or write."""
        return Txn.scan(self, db, prefix, start)

    def insert(self, db: str, key: bytes, value: bytes) -> bool:
        """Put only if the key is absent; returns whether it was written."""
        return self._t.put(key, value, db=self._dbs[db], overwrite=False)

    def delete(self, db: str, key: bytes) -> bool:
        if self.seqs and db in self.seqs:  # it may be the newest row: `next_seq` seeks again
            del self.seqs[db]
        return self._t.delete(key, b"", self._dbs[db])

    def scan(self, db: str, prefix: bytes = b"", start: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        """Yield (key, value) in key order for keys with `prefix`, from `start` (>=) if given."""
        cur = self._t.cursor(db=self._dbs[db])
        if not cur.set_range(start if start is not None else prefix):
            return
        n = len(prefix)
        for key, value in cur:
            if key[:n] != prefix:  # not startswith: a buffers=True read yields memoryviews
                return
            yield key, value

    def scan_keys(self, db: str, prefix: bytes = b"") -> list[bytes]:
        """All keys with `prefix`, materialised (safe to delete while walking the result)."""
        cur = self._t.cursor(self._dbs[db])
        if not cur.set_range(prefix):
            return []
        n = len(prefix)
        out = []
        for key in cur.iternext(keys=True, values=False):
            if key[:n] != prefix:
                break
            out.append(bytes(key))  # a copy only in a buffers=True read, whose views die with it
        return out

    def has_prefix(self, db: str, prefix: bytes) -> bool:
        """Whether any key in `db` starts with `prefix` (one cursor seek, no generator)."""
        cur = self._t.cursor(self._dbs[db])
        return cur.set_range(prefix) and cur.key()[: len(prefix)] == prefix

    def last(self, db: str) -> bytes | None:
        """The greatest key in `db`, or None when it is empty."""
        cur = self._t.cursor(self._dbs[db])
        return cur.key() if cur.last() else None

    def next_seq(self, db: str) -> int:
        """The next sequence number for an append-only db keyed by a leading u64.

        In a write transaction the caller writes the row with that number (every append does):
        the number is remembered as taken, so that the next append in this transaction, and in
        this process's next one when no other writer came between, skips the cursor seek (two
        per VFS write: receipts and changes).
        """
        seqs = self.seqs
        if seqs is not None:
            self.appended = True
            last = seqs.get(db)
            if last is not None:
                seqs[db] = last + 1
                return last + 1
        cur = self._t.cursor(self._dbs[db])
        seq = _unpack_u64(cur.key())[0] + 1 if cur.last() else 1
        if seqs is not None:
            seqs[db] = seq
        return seq

    def counter(self, name: bytes) -> int:
        raw = self._t.get(name, None, self._dbs["meta"])
        return 0 if raw is None else _unpack_u64(raw)[0]

    def incr(self, name: bytes, delta: int = 1) -> int:
        """Add `delta` to a meta counter and return the new value."""
        meta = self._dbs["meta"]
        raw = self._t.get(name, None, meta)
        value = (0 if raw is None else _unpack_u64(raw)[0]) + delta
        self._t.put(name, U64.pack(value), True, True, False, meta)  # positional, as `put`
        return value

    def tally(self, db: str, key: bytes, delta: int) -> int:
        """Add `delta` to a u64 count kept in `db` under `key`; a count that reaches 0 is
        deleted (a per-agent count leaves nothing behind when the agent's rows are gone)."""
        raw = self.get(db, key)
        value = (0 if raw is None else _unpack_u64(raw)[0]) + delta
        if value > 0:
            self.put(db, key, U64.pack(value))
        else:
            self.delete(db, key)
        return max(value, 0)

    def stat(self, db: str) -> dict[str, int]:
        return self._t.stat(self._dbs[db])


class ViewTxn(Txn):
    """A transaction whose LMDB side was begun with buffers=True, for the data hot paths.

    LMDB then answers with views into the map instead of copies, which spares copying a whole
    64 KiB chunk to read or rewrite 4 KiB of it. A view dies with the next write in the
    transaction and with the transaction, so only `get_view`, `scan_views` and `raw` hand
    views out; every other method copies, and code written for `Txn` stays safe here.
    """

    __slots__ = ()

    def get(self, db: str, key: bytes) -> bytes | None:
        value = self._t.get(key, None, self._dbs[db])
        return None if value is None else bytes(value)

    def scan(self, db: str, prefix: bytes = b"", start: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        for key, value in Txn.scan(self, db, prefix, start):
            yield bytes(key), bytes(value)

    def last(self, db: str) -> bytes | None:
        key = Txn.last(self, db)
        return None if key is None else bytes(key)

    def patch(self, db: str, key: bytes, stored: memoryview, offset: int, data: bytes | memoryview) -> None:
        """Store `stored` under `key` with `data` written over it at `offset`, copying it once.

        `stored` is `key`'s current value as `get_view` gave it in this transaction, and
        offset + len(data) <= len(stored). Rewriting 4 KiB of a 64 KiB chunk the plain way
        copies the chunk twice (into a bytearray, then into the map); here LMDB copies the
        stored value into the pages it allocates for the new version (copy on write: the
        committed version is not touched, so a crash or an abort loses nothing), and `data`
        goes straight into that new version, which belongs to this transaction alone until
        it commits -- what LMDB's MDB_RESERVE hands out, which py-lmdb does not expose.
        """
        t, h = self._t, self._dbs[db]
        t.put(key, stored, True, True, False, h)  # the old version's pages stay as they are until a later txn
        _memmove(_from_buffer(t.get(key, None, h)) + offset, data, len(data))
