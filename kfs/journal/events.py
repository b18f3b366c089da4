"""The event log: append-only, ordered by a sequence number, followable from any point."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from kfs.journal.records import encode, records_after
from kfs.kstate import KState, Txn
from kfs.kstate.schema import U64


def append_event(txn: Txn, type_: str, **data: Any) -> int:
    seq = txn.next_seq("events")
    record = {"seq": seq, "type": type_, "ts": time.time_ns(), **data}
    txn.put("events", U64.pack(seq), encode(record).encode())
    return seq


def events_since(state: KState, seq: int = 0, limit: int = 10_000) -> list[dict[str, Any]]:
    """Events with a sequence number greater than `seq`, oldest first."""
    return records_after(state, "events", seq, limit)


def follow_events(
    state: KState, seq: int = 0, *, poll: float = 0.05, stop: Callable[[], bool] = lambda: False
) -> Iterator[dict[str, Any]]:
    """Yield events after `seq` as they are appended, until `stop()` is true.

    LMDB has no notification across processes, so followers poll; a read transaction per
    poll is cheap (microseconds).
    """
    while True:
        batch = events_since(state, seq)
        for event in batch:
            seq = event["seq"]
            yield event
        if stop():
            return
        if not batch:
            time.sleep(poll)
