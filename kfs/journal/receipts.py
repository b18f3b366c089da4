"""Receipts: what was done, by whom, to which path, how many bytes. Never file contents.

A receipt is a list of state rows under one id (uncertain -> committed or failed). VFS
mutations commit in the same transaction as their receipt, so they write one committed row.

A row is stored in a compact binary form, or as JSON when it holds something that form does
not cover; readers accept both, so a state written before the binary form stays readable and
needs no migration. Both decode to the same dict: id, op, status, by, ts, then path and bytes
when given, then the extra fields in the order they were passed.

Binary row: b"\x01", then ts (i64), bytes (i64, 0 when absent), a flags byte (1: has path,
2: has bytes), then UTF-8 text (lone surrogates kept, as JSON keeps them) of NUL-separated
fields: op, status, by, [path,] then per extra field its key and a tagged value -- "s" + a
string, "T" or "F" for a bool, "i" + decimal digits for an int. A row whose strings hold a
NUL, or whose extras are of other types, is written as JSON instead. Encoding a receipt this
way costs a seventh of json's encoder, and every VFS mutation writes one.
"""

from __future__ import annotations

import struct
import time
from itertools import islice
from typing import Any

from kfs.journal.records import decode, encode
from kfs.kstate import KState, Txn
from kfs.kstate.schema import U64

_KEY = struct.Struct(">QI")
_BINARY = b"\x01"
_HEAD = struct.Struct(">qqB")  # ts, bytes, flags; after the one-byte format tag
_HAS_PATH = 1
_HAS_BYTES = 2
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_now = time.time_ns


def append_receipt(
    txn: Txn,
    op: str,
    by: str,
    *,
    path: str | None = None,
    nbytes: int | None = None,
    status: str = "committed",
    receipt_id: int | None = None,
    **extra: Any,
) -> int:
    """Append a state row; a new receipt id is allocated unless `receipt_id` continues one."""
    if receipt_id is None:
        receipt_id = txn.next_seq("receipts")
        row = 0
    else:
        rows = [k for k, _ in txn.scan("receipts", U64.pack(receipt_id))]
        row = len(rows)
    ts = _now()
    value = _encode_binary(op, by, status, ts, path, nbytes, extra)
    if value is None:
        record: dict[str, Any] = {"id": receipt_id, "op": op, "status": status, "by": by, "ts": ts}
        if path is not None:
            record["path"] = path
        if nbytes is not None:
            record["bytes"] = nbytes
        record.update(extra)
        value = encode(record).encode()
    txn.put("receipts", _KEY.pack(receipt_id, row), value)
    return receipt_id


# (op, by) -> the start of a committed row's text, "op\0committed\0by", encoded (None: such rows
# need JSON). A pure function of the key, so the memo holds across transactions and processes;
# bounded, since `by` names the caller's pid.
_HEADS: dict[tuple[str, str], bytes | None] = {}
_HEADS_MAX = 1024
_UNKNOWN = b""


def append_committed(
    txn: Txn, op: str, by: str, path: str | None, nbytes: int | None = None, extra: dict[str, Any] | None = None
) -> int:
    """`append_receipt(txn, op, by, path=path, nbytes=nbytes, **extra)`, the same row byte for
    byte, for the receipt every mutation writes: the text before the path is encoded once per
    (op, by), and nothing is passed on as keyword arguments."""
    if type(op) is str and type(by) is str:
        head = _HEADS.get((op, by), _UNKNOWN)
        if head is _UNKNOWN:
            if len(_HEADS) >= _HEADS_MAX:
                _HEADS.clear()
            head = _HEADS[(op, by)] = _encode_text([op, "committed", by])
    else:
        head = None  # append_receipt's way
    if head is None:
        rest = None
    elif not extra and nbytes is None and type(path) is str and "\0" not in path:
        rest = b"\0" + path.encode("utf-8", "surrogatepass")  # most rows: the path alone
    else:
        rest = _encode_rest(path, nbytes, extra)
    if rest is None:
        return append_receipt(txn, op, by, path=path, nbytes=nbytes, **(extra or {}))
    receipt_id = txn.next_seq("receipts")
    row = _BINARY + _HEAD.pack(_now(), nbytes or 0, _flags(path, nbytes)) + head + rest
    txn.put("receipts", _KEY.pack(receipt_id, 0), row)
    return receipt_id


def _encode_binary(
    op: str, by: str, status: str, ts: int, path: str | None, nbytes: int | None, extra: dict[str, Any]
) -> bytes | None:
    """The binary row, or None when the row needs JSON."""
    if type(ts) is not int or not _I64_MIN <= ts <= _I64_MAX:
        return None
    head = _encode_text([op, status, by])
    rest = None if head is None else _encode_rest(path, nbytes, extra)
    if rest is None:
        return None
    return _BINARY + _HEAD.pack(ts, nbytes or 0, _flags(path, nbytes)) + head + rest


def _flags(path: str | None, nbytes: int | None) -> int:
    return (0 if path is None else _HAS_PATH) | (0 if nbytes is None else _HAS_BYTES)


def _encode_rest(path: str | None, nbytes: int | None, extra: dict[str, Any] | None) -> bytes | None:
    """What follows `by` in a binary row's text: the path and the extra fields, each after a NUL
    (b"" when there are none); None when the row needs JSON."""
    if nbytes is not None and (type(nbytes) is not int or not _I64_MIN <= nbytes <= _I64_MAX):
        return None
    fields = [] if path is None else [path]
    for key, value in (extra or {}).items():
        kind = type(value)
        if kind is str:
            fields += (key, "s" + value)
        elif kind is bool:
            fields += (key, "T" if value else "F")
        elif kind is int:
            fields += (key, "i" + str(value))
        else:
            return None
    if not fields:
        return b""
    text = _encode_text(fields)
    return None if text is None else b"\0" + text


def _encode_text(fields: list[str]) -> bytes | None:
    """The NUL-separated fields in UTF-8 (lone surrogates kept); None when one holds a NUL or
    is no str."""
    try:
        text = "\0".join(fields)
        if text.count("\0") != len(fields) - 1:
            return None  # a NUL inside a field
        return text.encode("utf-8", "surrogatepass")
    except (TypeError, UnicodeError):
        return None


class FixedReceipt:
    """The committed receipt of an operation repeated with the same op, by and path (a handle's
    writes): its text is encoded once, and each `append` packs only the time and byte count.
    The row is what `append_receipt(txn, op, by, path=path, nbytes=n)` writes, byte for byte;
    it is the one receipt every 4 KiB write pays for."""

    __slots__ = ("op", "by", "path", "_tail")

    def __init__(self, op: str, by: str, path: str) -> None:
        self.op, self.by, self.path = op, by, path
        row = _encode_binary(op, by, "committed", 0, path, 0, {})
        self._tail = None if row is None else row[1 + _HEAD.size :]  # None: the row needs JSON

    def append(self, txn: Txn, nbytes: int) -> int:
        """Append the receipt of one such operation that moved `nbytes`; returns its id."""
        tail = self._tail
        if tail is None or type(nbytes) is not int or not _I64_MIN <= nbytes <= _I64_MAX:
            return append_receipt(txn, self.op, self.by, path=self.path, nbytes=nbytes)
        receipt_id = txn.next_seq("receipts")
        txn.put("receipts", _KEY.pack(receipt_id, 0), _BINARY + _HEAD.pack(_now(), nbytes, _HAS_PATH | _HAS_BYTES) + tail)
        return receipt_id


_TAGS = {"T": True, "F": False}


def decode_receipt(key: bytes, value: bytes) -> dict[str, Any]:
    """One stored row as the dict every reader sees, from either encoding."""
    if value[:1] != _BINARY:
        return decode(value)
    ts, nbytes, flags = _HEAD.unpack_from(value, 1)
    fields = value[1 + _HEAD.size :].decode("utf-8", "surrogatepass").split("\0")
    record: dict[str, Any] = {
        "id": _KEY.unpack_from(key)[0], "op": fields[0], "status": fields[1], "by": fields[2], "ts": ts,
    }
    i = 3
    if flags & _HAS_PATH:
        record["path"] = fields[3]
        i = 4
    if flags & _HAS_BYTES:
        record["bytes"] = nbytes
    for j in range(i, len(fields) - 1, 2):
        tagged = fields[j + 1]
        tag = tagged[:1]
        record[fields[j]] = tagged[1:] if tag == "s" else int(tagged[1:]) if tag == "i" else _TAGS[tag]
    return record


def drop_receipt(txn: Txn, receipt_id: int) -> int:
    """Delete every row of one receipt (a compacted process's: kfs.runtime.procs.compact); how
    many. The newest receipt stays, so an id is never given twice."""
    newest = txn.last("receipts")
    if newest is not None and _KEY.unpack_from(newest)[0] == receipt_id:
        return 0
    keys = txn.scan_keys("receipts", U64.pack(receipt_id))
    for key in keys:
        txn.delete("receipts", key)
    return len(keys)


def prune_receipts(state: KState, keep: int, batch: int = 50_000, *, before: int = 0) -> int:
    """Delete the oldest receipt rows until at most `keep` are left (0: no bound by count), and
    those older than `before` (ns since the epoch; 0: no bound by age); how many went. The
    newest row always stays, so ids never repeat. One transaction per `batch`."""
    removed = 0
    while keep > 0 or before:

        def body(txn: Txn) -> int:
            entries = txn.stat("receipts")["entries"]
            excess = entries - keep if keep > 0 else 0
            t, db = txn.raw("receipts")
            cur = t.cursor(db)
            cur.first()
            gone = 0
            while gone < batch and entries - gone > 1:
                if gone >= excess and not (before and decode_receipt(cur.key(), cur.value())["ts"] < before):
                    break
                cur.delete()
                gone += 1
            return gone

        done = state.write(body)
        removed += done
        if done < batch:
            break
    return removed


def receipt_rows(state: KState, receipt_id: int) -> list[dict[str, Any]]:
    with state.read() as txn:
        return [decode_receipt(k, v) for k, v in txn.scan("receipts", U64.pack(receipt_id))]


def receipts_since(state: KState, receipt_id: int = 0, limit: int = 10_000) -> list[dict[str, Any]]:
    """Every state row of receipts with an id greater than `receipt_id`, in order."""
    with state.read() as txn:
        rows = islice(txn.scan("receipts", start=U64.pack(receipt_id + 1)), limit)
        return [decode_receipt(k, v) for k, v in rows]
