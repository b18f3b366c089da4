"""Agent sessions: a record per session (cwd and shell state to resume) and a lease on it.

A session is named per agent. `acquire_session` takes the lease (refusing with `LeaseHeld`
while another live holder has it), and returns what the last holder saved. The holder renews
the lease while connected and releases it at the end; a holder that died (its pid gone from
this host) or stopped renewing past `expires` loses it, so a crash never locks a session out.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

from kfs.journal import append_event
from kfs.kstate import KState, Txn
from kfs.terminal import printable
from kfs.vfs.handles import process_start_time

# A session name is a key in KState, a word in `komputer sessions` and part of events: letters,
# digits and `_.@+-`, starting with a letter, digit or `_`, as tmux and screen take them.
_SESSION_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,63}\Z")


# What each channel sets for itself: a resumed session does not carry them over
CHANNEL_ENV = frozenset({"SSH_ORIGINAL_COMMAND", "SSH_CONNECTION", "SSH_CLIENT", "TERM", "COLUMNS", "LINES"})


class BadSessionName(ValueError):
    """A session name (K_SESSION) that is not one."""


def shown_value(value: str, limit: int = 40) -> str:
    """A client-chosen value as a message may quote it: escaped, and cut where it is long."""
    return printable(value[:limit]) + ("..." if len(value) > limit else "")


def check_session_name(name: str) -> None:
    if not _SESSION_NAME.match(name):
        raise BadSessionName(
            f"K_SESSION={shown_value(name)}: invalid session name: use a letter, digit or '_' "
            "followed by up to 63 of [A-Za-z0-9_.@+-]"
        )


class LeaseHeld(Exception):
    """The session is in use by another live connection."""


@dataclass(slots=True)
class SessionRecord:
    agent: str
    name: str
    cwd: str
    shell: dict[str, Any] = field(default_factory=dict)  # what the K shell exports to resume
    created: int = 0
    updated: int = 0
    ephemeral: bool = False


def _key(agent: str, name: str) -> bytes:
    return f"{agent}/{name}".encode()


def _encode(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def holder_id(serial: int) -> dict[str, Any]:
    """This process (pid + start time, pid-reuse safe) and one connection serial in it."""
    pid = os.getpid()
    return {"pid": pid, "start": process_start_time(pid) or 0, "serial": serial}


def lease_alive(lease: dict[str, Any], now: int) -> bool:
    if lease["expires"] < now:
        return False
    return process_start_time(lease["pid"]) == lease["start"]


def acquire_session(
    state: KState, agent: str, name: str | None, home: str, holder: dict[str, Any], ttl: float, front: str = "ssh"
) -> SessionRecord:
    """Take the lease on `agent`'s session `name` (created if new; a fresh ephemeral one if None).
    A name that is not one raises BadSessionName before anything is written. `front`: who
    takes it, as events name it."""
    if name is not None:
        check_session_name(name)

    def body(txn: Txn) -> SessionRecord:
        now = time.time_ns()
        if name is None:
            seq = txn.incr(b"next_session")
            chosen, ephemeral = f"ssh-{seq}", True
        else:
            chosen, ephemeral = name, False
        key = _key(agent, chosen)
        raw_lease = txn.get("leases", key)
        if raw_lease is not None:
            lease = json.loads(raw_lease)
            mine = (lease["pid"], lease["start"], lease["serial"]) == (holder["pid"], holder["start"], holder["serial"])
            if lease_alive(lease, now) and not mine:
                raise LeaseHeld(
                    f"session {chosen!r} is in use by another connection; "
                    "it is free again when that connection ends or its lease expires"
                )
            if not mine:  # its holder died or stopped renewing: this one takes it over
                append_event(txn, "lease.takeover", agent=agent, session=chosen, front=front, previous=lease["pid"],
                             expired=lease["expires"] < now)
        raw = txn.get("sessions", key)
        if raw is None:
            record = SessionRecord(agent, chosen, home, {}, now, now, ephemeral)
            append_event(txn, "session.create", agent=agent, session=chosen, front=front)
        else:
            record = SessionRecord(**json.loads(raw))
            append_event(txn, "session.resume", agent=agent, session=chosen, front=front)
        txn.put("sessions", key, _encode(_record_dict(record)))
        txn.put("leases", key, _encode({**holder, "expires": now + int(ttl * 1e9)}))
        append_event(txn, "lease.take", agent=agent, session=chosen, front=front, holder=holder["pid"])
        return record

    return state.write(body)


def _record_dict(record: SessionRecord) -> dict[str, Any]:
    return {
        "agent": record.agent, "name": record.name, "cwd": record.cwd, "shell": record.shell,
        "created": record.created, "updated": record.updated, "ephemeral": record.ephemeral,
    }


def renew_lease(state: KState, agent: str, name: str, holder: dict[str, Any], ttl: float) -> bool:
    """Extend the lease if `holder` still has it; returns whether it does."""
    return renew_leases(state, [(agent, name, holder)], ttl)[0]


def renew_leases(state: KState, leases: list[tuple[str, str, dict[str, Any]]], ttl: float,
                 active: list[int] | None = None) -> list[bool]:
    """Extend every (agent, session, holder) lease its holder still has, in one transaction (a
    server holding hundreds of connections renews them all at once, not one commit each).
    `active`: when each connection last saw input or output (ns), kept in its lease for
    `detach_idle`."""

    def body(txn: Txn) -> list[bool]:
        expires = time.time_ns() + int(ttl * 1e9)
        kept = []
        for i, (agent, name, holder) in enumerate(leases):
            key = _key(agent, name)
            raw = txn.get("leases", key)
            lease = json.loads(raw) if raw is not None else None
            mine = lease is not None and (lease["pid"], lease["start"], lease["serial"]) == (
                holder["pid"], holder["start"], holder["serial"]
            )
            if mine:
                extra = {"active": active[i]} if active is not None else {}
                txn.put("leases", key, _encode({**holder, "expires": expires, **extra}))
            kept.append(mine)
        renewed = [f"{agent}/{name}" for (agent, name, _), ok in zip(leases, kept, strict=True) if ok]
        lost = [f"{agent}/{name}" for (agent, name, _), ok in zip(leases, kept, strict=True) if not ok]
        if renewed:  # one event per renewal round, not one per session
            append_event(txn, "lease.renew", front="ssh", sessions=renewed, expires=expires)
        if lost:
            append_event(txn, "lease.lost", front="ssh", sessions=lost)
        return kept

    return state.write(body)


def resumed_env(record: SessionRecord) -> dict[str, str]:
    """The variables a resumed session starts with: what it exported, less what each channel
    sets for itself and PWD (the shell sets it from the saved cwd)."""
    exported = (record.shell or {}).get("exported", {})
    return {k: v for k, v in exported.items() if k not in CHANNEL_ENV and k != "PWD"}


def keep_session(state: KState, record: SessionRecord, saved: dict[str, Any]) -> None:
    """A named session keeps what its shell leaves (kshell.view.resumable: cwd, exported
    variables, functions) for the next `K_SESSION` resume; an ephemeral one keeps nothing."""
    if record.ephemeral:
        return
    record.cwd = saved["cwd"]
    record.shell = {"exported": saved["exported"], "functions": saved["functions"]}
    save_session(state, record)


def save_session(state: KState, record: SessionRecord) -> None:
    """Store the session's cwd and shell state (what the next `K_SESSION=name` resumes)."""
    record.updated = time.time_ns()
    state.write(lambda txn: txn.put("sessions", _key(record.agent, record.name), _encode(_record_dict(record))))


def release_session(state: KState, record: SessionRecord, holder: dict[str, Any], front: str = "ssh") -> None:
    """Drop the lease if `holder` has it; an ephemeral session's record goes with it."""

    def body(txn: Txn) -> None:
        key = _key(record.agent, record.name)
        raw = txn.get("leases", key)
        if raw is not None:
            lease = json.loads(raw)
            if (lease["pid"], lease["start"], lease["serial"]) == (holder["pid"], holder["start"], holder["serial"]):
                txn.delete("leases", key)
                append_event(txn, "session.close", agent=record.agent, session=record.name, front=front)
        if record.ephemeral:
            txn.delete("sessions", key)

    state.write(body)


def end_session(state: KState, record: SessionRecord, holder: dict[str, Any], by: str) -> None:
    """The session's own holder ends it for good (the SDK's `agent.close()`): its record and
    lease go, and a `session.closed` event says so; a later login of that name starts afresh."""

    def body(txn: Txn) -> None:
        key = _key(record.agent, record.name)
        raw = txn.get("leases", key)
        if raw is not None:
            lease = json.loads(raw)
            if (lease["pid"], lease["start"], lease["serial"]) != (holder["pid"], holder["start"], holder["serial"]):
                raise LeaseHeld(f"session {record.name!r} is held by another holder now")
            txn.delete("leases", key)
        txn.delete("sessions", key)
        append_event(txn, "session.closed", agent=record.agent, session=record.name, by=by)

    state.write(body)


def close_session(state: KState, agent: str, name: str, by: str) -> bool:
    """An administrator ends a session: its lease goes (its connection is told at the holder's
    next renewal) and a `session.close` event says who did it; False when there is none."""

    def body(txn: Txn) -> bool:
        key = _key(agent, name)
        if txn.get("sessions", key) is None and txn.get("leases", key) is None:
            return False
        txn.delete("leases", key)
        append_event(txn, "session.close", agent=agent, session=name, by=by)
        return True

    return state.write(body)


def detach_idle(state: KState, idle: float, busy: set[tuple[str, str]], by: str) -> list[tuple[str, str]]:
    """Take the lease from every session whose connection has been idle `idle` seconds, except
    those in `busy` (with live processes): the server closes the connection at its next
    renewal and a named session waits to be resumed. The sessions detached."""

    def body(txn: Txn) -> list[tuple[str, str]]:
        now = time.time_ns()
        done = []
        for key, raw in list(txn.scan("leases")):
            lease = json.loads(raw)
            agent, _, name = bytes(key).decode().partition("/")
            if (agent, name) in busy or not lease_alive(lease, now):
                continue
            if now - lease.get("active", now) >= idle * 1e9:
                _detach(txn, agent, name, by, idle=round(idle, 3))
                done.append((agent, name))
        return done

    return state.write(body)


def detach_session(state: KState, agent: str, name: str, by: str) -> bool:
    """An administrator detaches `agent`'s session `name`: its lease goes (the server closes
    the connection holding it at its next renewal) and the session stays, its cwd and shell
    state kept, to be resumed (`K_SESSION=name`); False when there is no such session."""

    def body(txn: Txn) -> bool:
        key = _key(agent, name)
        if txn.get("sessions", key) is None:
            return False
        if txn.get("leases", key) is not None:
            _detach(txn, agent, name, by)
        return True

    return state.write(body)


def _detach(txn: Txn, agent: str, name: str, by: str, **more: Any) -> None:
    txn.delete("leases", _key(agent, name))
    append_event(txn, "session.detach", agent=agent, session=name, by=by, **more)


def list_sessions(state: KState) -> list[tuple[SessionRecord, dict[str, Any] | None]]:
    """Every stored session with its lease (None when free)."""
    with state.read() as txn:
        out = []
        for key, value in txn.scan("sessions"):
            lease = txn.get("leases", key)
            out.append((SessionRecord(**json.loads(value)), json.loads(lease) if lease else None))
        return out
