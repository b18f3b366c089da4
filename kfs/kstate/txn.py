"""The small transactional key-value interface that everything above KState uses."""

from __future__ import annotations

from collections.abc import Iterator

import lmdb

from kfs.kstate.schema import U64


class Txn:
    """One LMDB transaction over K's named databases (named by str, e.g. ``"inodes"``).

    A write `Txn` exists only inside `KState.write`, which commits it whole or not at all.
    """

    __slots__ = ("_t", "_dbs", "write")

    def __init__(self, t: lmdb.Transaction, dbs: dict[str, lmdb._Database], write: bool) -> None:
        self._t = t
        self._dbs = dbs
        self.write = write

    def get(self, db: str, key: bytes) -> bytes | None:
        return self._t.get(key, db=self._dbs[db])

    def put(self, db: str, key: bytes, value: bytes) -> None:
        self._t.put(key, value, db=self._dbs[db])

    def insert(self, db: str, key: bytes, value: bytes) -> bool:
        """Put only if the key is absent; returns whether it was written."""
        return self._t.put(key, value, db=self._dbs[db], overwrite=False)

    def delete(self, db: str, key: bytes) -> bool:
        return self._t.delete(key, db=self._dbs[db])

    def scan(self, db: str, prefix: bytes = b"", start: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        """Yield (key, value) in key order for keys with `prefix`, from `start` (>=) if given."""
        cur = self._t.cursor(db=self._dbs[db])
        if not cur.set_range(start if start is not None else prefix):
            return
        for key, value in cur:
            if not key.startswith(prefix):
                return
            yield key, value

    def scan_keys(self, db: str, prefix: bytes = b"") -> list[bytes]:
        """All keys with `prefix`, materialised (safe to delete while walking the result)."""
        return [k for k, _ in self.scan(db, prefix)]

    def last(self, db: str) -> bytes | None:
        """The greatest key in `db`, or None when it is empty."""
        cur = self._t.cursor(db=self._dbs[db])
        return cur.key() if cur.last() else None

    def next_seq(self, db: str) -> int:
        """The next sequence number for an append-only db keyed by a leading u64."""
        key = self.last(db)
        return 1 if key is None else U64.unpack_from(key)[0] + 1

    def counter(self, name: bytes) -> int:
        raw = self._t.get(name, db=self._dbs["meta"])
        return 0 if raw is None else U64.unpack(raw)[0]

    def incr(self, name: bytes, delta: int = 1) -> int:
        """Add `delta` to a meta counter and return the new value."""
        value = self.counter(name) + delta
        self._t.put(name, U64.pack(value), db=self._dbs["meta"])
        return value

    def stat(self, db: str) -> dict[str, int]:
        return self._t.stat(self._dbs[db])
