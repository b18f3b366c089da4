"""The state's index of runs (kshell.runs): which runs exist, where their folders are, and the
run each agent's worker last started. The run's record of truth is its folder's run.json (files
in the agent's tree); these keys only find runs without walking every tree."""

from __future__ import annotations

import json
from typing import Any

from kfs.kstate import KState, Txn

__all__ = ["agent_run", "index_run", "indexed", "run_entry", "set_agent_run"]

INDEX = b"runs/"  # keys db, RUN_ID -> {agent, sandbox, created_at}
AGENT_RUN = b"runs-agent/"  # keys db, AGENT -> the id of the run its worker last started


def run_entry(txn: Txn, run_id: str) -> dict[str, Any] | None:
    """The index entry of a run (None: no such run)."""
    raw = txn.get("keys", INDEX + run_id.encode())
    return None if raw is None else json.loads(raw)


def index_run(state: KState, run_id: str, entry: dict[str, Any]) -> None:
    """A run made whole is in the index (runs list shows it)."""
    data = json.dumps(entry).encode()
    state.write(lambda txn: txn.put("keys", INDEX + run_id.encode(), data))


def indexed(txn: Txn) -> list[tuple[str, dict[str, Any]]]:
    """(run id, entry) of every run in the index, by id (ids sort by time)."""
    return [(bytes(k[len(INDEX):]).decode(), json.loads(v)) for k, v in txn.scan("keys", INDEX)]


def agent_run(txn: Txn, agent: str) -> str | None:
    """The run the agent's worker last started."""
    raw = txn.get("keys", AGENT_RUN + agent.encode())
    return None if raw is None else bytes(raw).decode()


def set_agent_run(state: KState, agent: str, run_id: str) -> None:
    state.write(lambda txn: txn.put("keys", AGENT_RUN + agent.encode(), run_id.encode()))
