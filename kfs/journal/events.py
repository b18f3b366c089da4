"""The event log: append-only, ordered by a sequence number, followable from any point."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from kfs.journal.records import decode, encode, records_after
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


def last_event(state: KState) -> int:
    """The sequence number of the newest event (0 when there is none)."""
    with state.read() as txn:
        key = txn.last("events")
    return 0 if key is None else U64.unpack(bytes(key[:8]))[0]


def prune_events(state: KState, keep: int, batch: int = 50_000, *, before: int = 0) -> int:
    """Delete the oldest events until at most `keep` are left (0: no bound by count), and those
    older than `before` (ns since the epoch; 0: no bound by age); how many went. The newest
    event always stays, so sequence numbers never repeat. One transaction per `batch`, so
    writers never wait long behind retention."""
    removed = 0
    while True:

        def body(txn: Txn) -> int:
            entries = txn.stat("events")["entries"]
            excess = min(entries - max(keep, 1), batch) if keep > 0 else 0
            t, db = txn.raw("events")
            cur = t.cursor(db)
            cur.first()
            gone = 0
            while gone < batch and entries - gone > 1:
                if gone >= excess and not (before and decode(cur.value())["ts"] < before):
                    break
                cur.delete()
                gone += 1
            return gone

        done = state.write(body)
        removed += done
        if done < batch:
            return removed


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
