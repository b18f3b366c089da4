"""The agents' keys in KState, and K's user database read from them: the one owner of the
`agent/`, `agentset/` and `authorized/` key families and of the agents' generation counter.

- `agent/NAME`: an agent's record (JSON, kfs.agents.records makes and reads it);
- `agentset/NAME`: its own settings (`komputer agent set`: delegation, restricted mode), which
  kshell.delegate.config checks and changes through `change_agent_settings`;
- `authorized/NAME/SEQ`: its authorized keys (kfs.agents.authorized parses and stores them);
- `agents_generation` (meta counter): bumped when an agent is made or removed, so that a reader
  of names (`accounts`) re-reads the records only when they changed.

Owner and group names come from K's own user database, never the host's: root is uid/gid 0, and
each agent record names its uid and a group of its own name at its gid. An id nobody has is
shown as GNU shows it (ls the number, stat UNKNOWN): callers get None.

This module imports no asyncssh (kfs.agents' package does): the shell's tools read names here
without loading the SSH side.
"""

from __future__ import annotations

import json
import re
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kfs.kstate import KState, Txn

AGENT_RECORDS = b"agent/"
AGENTS_GENERATION = b"agents_generation"
AGENT_SETTINGS = b"agentset/"
AUTHORIZED = b"authorized/"
ROOT_ACCOUNT = ("root", 0, 0, "/root")
AGENT_NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}\Z")  # as useradd takes them (kfs.agents.records)


# -- the key families ---------------------------------------------------------------------------


def agent_record(txn: Txn, name: str) -> bytes | None:
    """The stored record of agent `name` (None: none, or no agent could have that name)."""
    return txn.get("keys", AGENT_RECORDS + name.encode()) if AGENT_NAME.match(name) else None


def agent_records(txn: Txn) -> list[bytes]:
    """Every agent's stored record, by name."""
    return [raw for _, raw in txn.scan("keys", AGENT_RECORDS)]


def put_agent_record(txn: Txn, name: str, raw: bytes) -> None:
    txn.put("keys", AGENT_RECORDS + name.encode(), raw)


def agents_changed(txn: Txn) -> None:
    """An agent was made or removed in `txn`: readers of names read the records again."""
    txn.incr(AGENTS_GENERATION)


def forget_agent(txn: Txn, name: str) -> None:
    """Remove agent `name`'s record with its authorized keys (nobody logs in as a name that is
    gone) and its settings (a new agent of that name starts afresh)."""
    txn.delete("keys", AGENT_RECORDS + name.encode())
    for key in txn.scan_keys("keys", authorized_prefix(name)):
        txn.delete("keys", key)
    txn.delete("keys", AGENT_SETTINGS + name.encode())


def authorized_prefix(name: str) -> bytes:
    """The key range of agent `name`'s authorized keys (each one's sequence number follows)."""
    return AUTHORIZED + name.encode() + b"/"


def agent_settings(state: KState, name: str) -> dict:
    """The agent's own settings (`komputer agent set`: delegation, restricted mode), {} when
    it has none."""
    with state.read() as txn:
        raw = txn.get("keys", AGENT_SETTINGS + name.encode())
    return {} if raw is None else json.loads(raw)


def change_agent_settings(state: KState, name: str, changes: dict[str, Any],
                          check: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Change some of agent `name`'s settings in one transaction (a None value leaves a setting
    as it is); `check` refuses a bad result (ValueError) before it is stored. LookupError: no
    such agent. Returns the settings now stored."""

    def change(txn: Txn) -> dict[str, Any]:
        if agent_record(txn, name) is None:
            raise LookupError(f"no agent {name}")
        raw = txn.get("keys", AGENT_SETTINGS + name.encode())
        current = {} if raw is None else json.loads(raw)
        current.update({k: v for k, v in changes.items() if v is not None})
        check(current)
        txn.put("keys", AGENT_SETTINGS + name.encode(), json.dumps(current, sort_keys=True).encode())
        return current

    return state.write(change)


# -- the user database --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Accounts:
    """Names and ids as K knows them: root, then each agent and its own group."""

    users: dict[int, str] = field(default_factory=dict)
    groups: dict[int, str] = field(default_factory=dict)
    uids: dict[str, int] = field(default_factory=dict)
    gids: dict[str, int] = field(default_factory=dict)
    primary: dict[str, int] = field(default_factory=dict)  # user name -> its primary gid

    @classmethod
    def of(cls, people: Iterable[tuple[str, int, int, str]]) -> Accounts:
        """From (name, uid, gid, home) rows, root first; the first row to claim an id names it."""
        made = cls()
        for name, uid, gid, _home in [ROOT_ACCOUNT, *people]:
            made.users.setdefault(uid, name)
            made.groups.setdefault(gid, name)
            made.uids.setdefault(name, uid)
            made.gids.setdefault(name, gid)
            made.primary.setdefault(name, gid)
        return made


ROOT_ONLY = Accounts.of([])
# per state: (generation, accounts). Re-read when the generation moved: an agent was created or
# removed, by this process or another one.
_cache: weakref.WeakKeyDictionary[KState, tuple[int, Accounts]] = weakref.WeakKeyDictionary()
_cache_lock = threading.Lock()


def accounts(state: KState | None) -> Accounts:
    """K's user database for `state` (root alone for None); one meta read when nothing changed."""
    if state is None:
        return ROOT_ONLY
    with state.read() as txn:
        generation = txn.counter(AGENTS_GENERATION)
        with _cache_lock:
            cached = _cache.get(state)
        if cached is not None and cached[0] == generation:
            return cached[1]
        rows = []
        for raw in agent_records(txn):
            rec = json.loads(raw)
            rows.append((rec["name"], rec["uid"], rec["gid"], rec["home"]))
    made = Accounts.of(rows)
    with _cache_lock:
        _cache[state] = (generation, made)
    return made


def user_name(state: KState | None, uid: int) -> str | None:
    """The name of `uid` in K (root, an agent), or None when no one has it."""
    return accounts(state).users.get(uid)


def group_name(state: KState | None, gid: int) -> str | None:
    """The name of group `gid` in K (root, an agent's own group), or None."""
    return accounts(state).groups.get(gid)
