"""The change feed: one row per namespace or inode change, for cache invalidation.

The FUSE daemon follows it to invalidate the kernel's caches for what other processes
changed; `origin` names the process that wrote the row so a follower can skip its own.
"""

from __future__ import annotations

import enum
import struct
from itertools import islice

from kfs.kstate import KState, Txn
from kfs.kstate.schema import U64
from kfs.values import value_class

_ROW = struct.Struct(">QQBQ")


class ChangeKind(enum.IntEnum):
    ATTR = 1  # attributes of `ino` changed
    DATA = 2  # contents (and attributes) of `ino` changed
    ENTRY_ADD = 3  # `name` now exists in directory `parent`
    ENTRY_DEL = 4  # `name` no longer exists in directory `parent`


@value_class(frozen=True, slots=True)
class Change:
    seq: int
    ino: int
    parent: int
    kind: ChangeKind
    origin: int
    name: bytes


KEEP = 1_000_000  # rows kept for followers; one that falls further behind must reread everything
_TRIM_EVERY = 1024


def append_change(txn: Txn, origin: int, kind: ChangeKind, ino: int, parent: int = 0, name: bytes = b"") -> int:
    seq = txn.next_seq("changes")
    txn.put("changes", U64.pack(seq), _ROW.pack(ino, parent, kind, origin) + name)
    if seq % _TRIM_EVERY == 0 and seq > KEEP:
        _trim(txn, seq)
    return seq


def change_row(origin: int, kind: ChangeKind, ino: int, parent: int = 0, name: bytes = b"") -> bytes:
    """The stored form of one change, for a caller that appends the same one again and again
    (a handle's writes: `append_change_row`)."""
    return _ROW.pack(ino, parent, kind, origin) + name


def append_change_row(txn: Txn, row: bytes) -> int:
    """`append_change` of a row `change_row` made; returns its sequence number."""
    seq = txn.next_seq("changes")
    txn.put("changes", U64.pack(seq), row)
    if seq % _TRIM_EVERY == 0 and seq > KEEP:
        _trim(txn, seq)
    return seq


def _trim(txn: Txn, seq: int) -> None:
    """Drop the rows older than the newest KEEP; amortised: at most _TRIM_EVERY at a time."""
    for key, _ in islice(txn.scan("changes"), _TRIM_EVERY):
        if U64.unpack(key)[0] > seq - KEEP:
            break
        txn.delete("changes", key)


def oldest_change(state: KState) -> int:
    """The oldest sequence number still kept (0 when empty): a follower behind it lost rows."""
    with state.read() as txn:
        for key, _ in txn.scan("changes"):
            return U64.unpack(key)[0]
    return 0


def _decode(key: bytes, value: bytes) -> Change:
    ino, parent, kind, origin = _ROW.unpack_from(value)
    return Change(U64.unpack(key)[0], ino, parent, ChangeKind(kind), origin, value[_ROW.size :])


def changes_since(state: KState, seq: int, limit: int = 10_000) -> list[Change]:
    """Changes with a sequence number greater than `seq`, oldest first."""
    out: list[Change] = []
    with state.read() as txn:
        for key, value in txn.scan("changes", start=U64.pack(seq + 1)):
            out.append(_decode(key, value))
            if len(out) >= limit:
                break
    return out


def last_change(state: KState) -> int:
    """The newest change sequence number (0 when there is none): where a new follower starts."""
    with state.read() as txn:
        return txn.next_seq("changes") - 1
