"""JSON records in the append-only journal databases (receipts, events). The json module is
loaded by the first record encoded or decoded: most receipts are binary, and a `komputer sh`
may read or write none."""

from __future__ import annotations

from functools import cache
from itertools import islice
from typing import TYPE_CHECKING, Any

from kfs.kstate import KState
from kfs.kstate.schema import U64

if TYPE_CHECKING:
    from json import JSONEncoder


def encode(record: Any) -> str:
    """Compact JSON."""
    return _encoder().encode(record)


def decode(raw: bytes) -> Any:
    """A record as `encode` made it."""
    import json

    return json.loads(raw)


@cache
def _encoder() -> JSONEncoder:
    from json import JSONEncoder

    return JSONEncoder(separators=(",", ":"))  # one encoder, not one per call


def records_after(state: KState, db: str, seq: int, limit: int) -> list[dict[str, Any]]:
    """Up to `limit` records keyed by a leading u64 greater than `seq`, oldest first."""
    with state.read() as txn:
        return [decode(value) for _, value in islice(txn.scan(db, start=U64.pack(seq + 1)), limit)]
