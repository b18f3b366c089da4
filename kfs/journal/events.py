"""The event log: append-only, ordered by a sequence number, followable from any point.

Retention is by agent: each event is counted under its `agent` (events without one, the
appliance's own, under ""), in the same transaction as the append, with an index of the
agent's events in order (the `byagent` database). So pruning can drop one agent's oldest
events and nobody else's: an agent that floods the log loses its own history past its bound,
and when the whole log is over its bound it is shared out equally (the biggest lose first).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from kfs.journal.records import decode, encode, records_after
from kfs.kstate import KState, Txn
from kfs.kstate.schema import U64

# Keys of the byagent database: b"e" + agent + b"\0" + seq u64 -> b"" (the agent's events in
# order); b"n" + agent -> u64 (how many). An agent name holds no NUL (kfs.agents.records).
_INDEX, _COUNT = b"e", b"n"
_pack, _unpack = U64.pack, U64.unpack


def _agent(data: dict[str, Any]) -> bytes:
    """The bucket an event is kept under: its agent, or b"" (none, or not a name)."""
    agent = data.get("agent")
    if type(agent) is not str or "\0" in agent:
        return b""
    return agent.encode("utf-8", "surrogatepass")


def append_event(txn: Txn, type_: str, **data: Any) -> int:
    seq = txn.next_seq("events")
    key = _pack(seq)
    txn.put("events", key, encode({"seq": seq, "type": type_, "ts": time.time_ns(), **data}).encode())
    agent = _agent(data)
    t, db = txn.raw("byagent")  # LMDB's own calls: this runs with every event
    t.put(_INDEX + agent + b"\0" + key, b"", True, True, False, db)
    count = _COUNT + agent
    raw = t.get(count, None, db)
    t.put(count, _pack(1 if raw is None else _unpack(raw)[0] + 1), True, True, False, db)
    return seq


def events_since(state: KState, seq: int = 0, limit: int = 10_000) -> list[dict[str, Any]]:
    """Events with a sequence number greater than `seq`, oldest first."""
    return records_after(state, "events", seq, limit)


def last_event(state: KState) -> int:
    """The sequence number of the newest event (0 when there is none)."""
    with state.read() as txn:
        key = txn.last("events")
    return 0 if key is None else U64.unpack(bytes(key[:8]))[0]


def agent_counts(state: KState) -> dict[str, int]:
    """How many events each agent has in the log ("": the appliance's own)."""
    with state.read() as txn:
        return {key[1:].decode("utf-8", "surrogatepass"): U64.unpack(value)[0]
                for key, value in txn.scan("byagent", _COUNT)}


def _level(counts: list[int], budget: int) -> int:
    """The most events any one agent may keep so that all of them together keep at most
    `budget`, each keeping all of its own when it has fewer (water-filling)."""
    left = budget
    ordered = sorted(counts)
    for i, count in enumerate(ordered):
        share = left // (len(ordered) - i)
        if count > share:
            return share
        left -= count
    return ordered[-1] if ordered else 0


def prune_events(state: KState, keep: int, batch: int = 50_000, *, before: int = 0, per_agent: int = 0) -> int:
    """Delete events past their bounds; how many went. `before` (ns since the epoch; 0: no
    bound by age): every agent's older events. `per_agent` (0: no bound): each agent's oldest
    past its newest `per_agent`. `keep` (0: no bound by count): the whole log's, taken from the
    agents with the most (each keeps min(its count, an equal share of what the others leave));
    events from before the index, counted under nobody, go oldest first. The newest event
    always stays, so sequence numbers never repeat. One transaction per `batch`, so writers
    never wait long behind retention."""
    removed = 0
    while before:  # by age: the oldest first, whoever's
        done = state.write(_prune_oldest, batch, 0, before)
        removed += done
        if done < batch:
            break
    while True:
        done = state.write(_prune_agents, batch, keep, per_agent)
        removed += done
        if done < batch:
            return removed


def _prune_oldest(txn: Txn, batch: int, excess: int, before: int) -> int:
    """Up to `batch` of the oldest events: the first `excess`, then those older than `before`."""
    entries = txn.stat("events")["entries"]
    t, db = txn.raw("events")
    cur = t.cursor(db)
    cur.first()
    gone = 0
    dropped: dict[bytes, int] = {}
    while gone < batch and entries - gone > 1:
        record = decode(cur.value())
        if gone >= excess and not (before and record["ts"] < before):
            break
        agent = _agent(record)
        if txn.delete("byagent", _INDEX + agent + b"\0" + bytes(cur.key())):
            dropped[agent] = dropped.get(agent, 0) + 1
        cur.delete()  # and on to the next
        gone += 1
    for agent, n in dropped.items():
        txn.tally("byagent", _COUNT + agent, -n)
    return gone


def _prune_agents(txn: Txn, batch: int, keep: int, per_agent: int) -> int:
    """Up to `batch` events of the agents over their bound (`per_agent`, or their share of
    `keep`), each agent's oldest first."""
    counts = {bytes(k[1:]): U64.unpack(v)[0] for k, v in txn.scan("byagent", _COUNT)}
    entries = txn.stat("events")["entries"]
    unindexed = entries - sum(counts.values())
    gone = 0
    if keep > 0 and entries > keep and unindexed > 0:  # a log from before the index
        gone = _prune_oldest(txn, batch, min(entries - keep, unindexed), 0)
        if gone >= batch:
            return gone
        counts = {bytes(k[1:]): U64.unpack(v)[0] for k, v in txn.scan("byagent", _COUNT)}
        entries = txn.stat("events")["entries"]
    bound = per_agent if per_agent > 0 else None
    if keep > 0 and entries > keep:
        share = _level(list(counts.values()), keep)
        bound = share if bound is None else min(bound, share)
    if bound is None:
        return gone
    newest = txn.last("events")
    t, index = txn.raw("byagent")
    _, events = txn.raw("events")
    cur = t.cursor(index)
    for agent, count in counts.items():
        if count <= bound:
            continue
        prefix = _INDEX + agent + b"\0"
        n = len(prefix)
        over = min(count - bound, batch - gone)
        dropped = 0
        found = cur.set_range(prefix)
        while found and dropped < over:
            key = cur.key()
            if key[:n] != prefix:
                break
            seq = key[n:]
            if seq == newest:
                found = cur.next()
                continue
            t.delete(seq, b"", events)
            found = cur.delete()  # and on to the next
            dropped += 1
        txn.tally("byagent", _COUNT + agent, -dropped)
        gone += dropped
        if gone >= batch:
            break
    return gone


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
