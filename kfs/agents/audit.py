"""Audit events for the SSH front end (login, logout, auth failure, exec).

Callers pass facts, never secrets: key fingerprints, peer addresses, commands as typed.
"""

from __future__ import annotations

from typing import Any

from kfs.journal import append_event
from kfs.kstate import KState


def record_event(state: KState, type_: str, **data: Any) -> int:
    return state.write(lambda txn: append_event(txn, type_, **data))


def record_events(state: KState, events: list[tuple[str, dict[str, Any]]]) -> None:
    """Several events, in order, in one transaction (what a server queued meanwhile)."""

    def body(txn: Any) -> None:
        for type_, data in events:
            append_event(txn, type_, **data)

    state.write(body)
