"""JSON records in the append-only journal databases (receipts, events)."""

from __future__ import annotations

import json
from itertools import islice
from typing import Any

from kfs.kstate import KState
from kfs.kstate.schema import U64

encode = json.JSONEncoder(separators=(",", ":")).encode  # one encoder, not one per call


def records_after(state: KState, db: str, seq: int, limit: int) -> list[dict[str, Any]]:
    """Up to `limit` records keyed by a leading u64 greater than `seq`, oldest first."""
    with state.read() as txn:
        return [json.loads(value) for _, value in islice(txn.scan(db, start=U64.pack(seq + 1)), limit)]
