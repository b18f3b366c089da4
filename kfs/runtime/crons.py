"""Crons: the image's `[[crons]]` (kfs.runtime.image), each a command an agent runs every
period. When one last started is kept here, so a server that restarts goes on with the schedule:
a run missed while nothing served is made once at the next start, not once per missed period.

Keys (database "keys"): `cron/<name>` -> {"last": start time (s since the epoch), "runs"}.
Starting a run is one transaction with its `cron.run` event, and it re-checks the period there:
two servers on one state never both start the same run. The run itself is a process of the
agent (kfs.runtime.procs: its row and proc.* events); `cron.done` says how it ended.
"""

from __future__ import annotations

import json
from typing import Any

from kfs.journal import append_event
from kfs.kstate import KState, Txn

PREFIX = b"cron/"


def _get(txn: Txn, name: str) -> dict[str, Any]:
    raw = txn.get("keys", PREFIX + name.encode())
    return json.loads(raw) if raw is not None else {"last": None, "runs": 0}


def start(state: KState, cron: dict[str, Any], now: float, version: int) -> int | None:
    """Record that `cron` starts now, if its period has passed since it last did; its run's
    number, or None when it is not due."""

    def body(txn: Txn) -> int | None:
        record = _get(txn, cron["name"])
        if record["last"] is not None and now - record["last"] < cron["every"]:
            return None
        record = {"last": now, "runs": record["runs"] + 1}
        txn.put("keys", PREFIX + cron["name"].encode(), json.dumps(record).encode())
        append_event(txn, "cron.run", cron=cron["name"], agent=cron["agent"], run=record["runs"], image=version)
        return record["runs"]

    return state.write(body)


def done(state: KState, cron: dict[str, Any], run: int, status: int | None, why: str = "") -> None:
    state.write(lambda txn: append_event(txn, "cron.done", cron=cron["name"], agent=cron["agent"], run=run,
                                         status=status, **({"error": why} if why else {})))


def next_due(state: KState, cron: dict[str, Any], now: float) -> float:
    """Seconds until `cron` is due (0: now)."""
    with state.read() as txn:
        last = _get(txn, cron["name"])["last"]
    return 0.0 if last is None else max(0.0, last + cron["every"] - now)
