"""Audit events for the SSH front end (login, logout, auth failure, exec), one transaction each.

Callers pass facts, never secrets: key fingerprints, peer addresses, commands as typed.
"""

from __future__ import annotations

from typing import Any

from kfs.journal import append_event
from kfs.kstate import KState


def record_event(state: KState, type_: str, **data: Any) -> int:
    return state.write(lambda txn: append_event(txn, type_, **data))
