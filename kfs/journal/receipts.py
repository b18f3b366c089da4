"""Receipts: what was done, by whom, to which path, how many bytes. Never file contents.

A receipt is a list of state rows under one id (uncertain -> committed or failed). VFS
mutations commit in the same transaction as their receipt, so they write one committed row.
"""

from __future__ import annotations

import json
import struct
import time
from typing import Any

from kfs.journal.records import encode, records_after
from kfs.kstate import KState, Txn
from kfs.kstate.schema import U64

_KEY = struct.Struct(">QI")


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
    record: dict[str, Any] = {"id": receipt_id, "op": op, "status": status, "by": by, "ts": time.time_ns()}
    if path is not None:
        record["path"] = path
    if nbytes is not None:
        record["bytes"] = nbytes
    record.update(extra)
    txn.put("receipts", _KEY.pack(receipt_id, row), encode(record).encode())
    return receipt_id


def receipt_rows(state: KState, receipt_id: int) -> list[dict[str, Any]]:
    with state.read() as txn:
        return [json.loads(v) for _, v in txn.scan("receipts", U64.pack(receipt_id))]


def receipts_since(state: KState, receipt_id: int = 0, limit: int = 10_000) -> list[dict[str, Any]]:
    """Every state row of receipts with an id greater than `receipt_id`, in order."""
    return records_after(state, "receipts", receipt_id, limit)
