"""Approvals: an action a policy rule says to `ask` about waits, stored in KState, until someone
outside decides it (`komputer decide ID allow|reject`).

A record names the agent and session, what the action is (a command line, a write to a path,
a host reached) and what replaying it needs (argv, cwd, the command's exported environment).
Its life: `pending` -> `allowed` / `rejected` (a decision, with who and why) or `withdrawn` (the
agent gave up: Ctrl-C, or its ephemeral session ended) or `expired` (the timeout passed) ->
`applied` once the decision reached the agent. While the shell that asked still waits, `waiter`
names its process (pid + start time); a shell whose connection went away clears it, and a
resumed session (`K_SESSION`) applies what was decided meanwhile. A server that was killed
leaves waiters that are no longer alive: the same rule finds them.

Every step is one transaction with its event (`approval.ask`, `approval.decide`,
`approval.withdraw`, `approval.expire`, `approval.apply`), so the stream says who decided what.

An agent has at most `max_pending` approvals pending at once (the ask that would pass it is
refused, with an `approval.refuse` event): each one is a person's work, and a flood of them
(a loop of background jobs that each ask) would bury the others' in `komputer approvals`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from kfs.journal import append_event
from kfs.kstate import KState, Txn
from kfs.kstate.schema import U64
from kfs.runtime.procs import owner_alive, owner_id

# Who waits for a person's decision on a write an `ask` rule matches, for the task that makes
# the call (the thread doing it sees the task's value): `waiter(NeedsApproval) -> allowed`. None:
# nobody here can wait, and the write is refused at once (kshell.agent's file tools set one;
# kshell.sdk.fs's views read it).
WAITER: ContextVar[Callable[[Any], bool] | None] = ContextVar("kshell_fs_waiter", default=None)

PREFIX = b"approval/"
OPEN_PREFIX = b"approval-open/"  # + id -> b"": the approvals not yet applied or withdrawn (few: cheap to scan)
DECIDED = ("allowed", "rejected", "expired")
OPEN = ("pending",) + DECIDED
MAX_PENDING = 16  # an agent's pending approvals at once, by default (`[ssh] approvals_max_pending`)


_WAITING = re.compile(rb"K: waiting for approval (\d+): ")


def waiting_line(record: dict[str, Any]) -> str:
    """What the shell that asked tells the agent on its stderr while it waits (whoever runs its
    commands, an agent loop's tool included, learns the approval's id from it: `waiting_for`)."""
    why = f" ({record['why']})" if record.get("why") else ""
    return f"K: waiting for approval {record['id']}: {record['action']}{why}\n"


def waiting_for(data: bytes) -> int | None:
    """The approval a piece of stderr that opens with `waiting_line` says it waits for."""
    found = _WAITING.match(data)
    return int(found[1]) if found else None


class TooManyPending(Exception):
    """An ask refused: the agent already has `pending` approvals waiting for a decision."""

    def __init__(self, pending: int) -> None:
        super().__init__(f"too many pending approvals ({pending}); decide or withdraw some first")
        self.pending = pending


def _key(approval_id: int) -> bytes:
    return PREFIX + U64.pack(approval_id)


def _get(txn: Txn, approval_id: int) -> dict[str, Any] | None:
    raw = txn.get("keys", _key(approval_id))
    return None if raw is None else json.loads(raw)


def read(txn: Txn, approval_id: int) -> dict[str, Any] | None:
    """The approval as a transaction the caller holds sees it (a conversation's recovery
    decides on it in its own transaction)."""
    return _get(txn, approval_id)


def _put(txn: Txn, record: dict[str, Any]) -> None:
    txn.put("keys", _key(record["id"]), json.dumps(record, separators=(",", ":")).encode())
    if record["status"] in OPEN:
        txn.put("keys", OPEN_PREFIX + U64.pack(record["id"]), b"")
    else:
        txn.delete("keys", OPEN_PREFIX + U64.pack(record["id"]))


def _summary(record: dict[str, Any]) -> dict[str, Any]:
    """What an event says about an approval (never the replay's environment)."""
    return ({k: record[k] for k in ("agent", "session", "kind", "action", "rule")} | {"approval": record["id"]}
            | ({"why": record["why"]} if record.get("why") else {}))


def ask(state: KState, *, agent: str, session: str, kind: str, action: str, rule: int,
        replay: dict[str, Any], timeout: float = 0.0, front: str = "", resumable: bool = True,
        max_pending: int = MAX_PENDING, why: str = "") -> dict[str, Any]:
    """A new pending approval, its waiter the calling process. `why`: what the image hook that
    asked said (the operator reads it in `komputer approvals`). `resumable`: its session has a
    name an agent can resume (else the approval dies with its waiter: `abandon`). TooManyPending
    when `agent` has `max_pending` (> 0) pending already: the refusal is an event, no record."""
    now = time.time()

    def body(txn: Txn) -> dict[str, Any] | int:
        if max_pending > 0:
            waiting = _pending_count(txn, agent)
            if waiting >= max_pending:
                append_event(txn, "approval.refuse", agent=agent, session=session, kind=kind, action=action,
                             rule=rule, front=front, pending=waiting, reason="too many pending approvals")
                return waiting
        record = {"id": txn.incr(b"next_approval"), "agent": agent, "session": session, "kind": kind,
                  "action": action, "rule": rule, "front": front, "status": "pending", "asked": now,
                  "expires": now + timeout if timeout > 0 else None, "waiter": owner_id(),
                  "replay": replay, "by": None, "reason": "", "decided": None, "resumable": resumable,
                  "why": why}
        _put(txn, record)
        append_event(txn, "approval.ask", **_summary(record), front=front)
        return record

    made = state.write(body)
    if isinstance(made, int):
        raise TooManyPending(made)
    return made


def _pending_count(txn: Txn, agent: str) -> int:
    """`agent`'s approvals still pending (not past their timeout): the open ones are few, as
    this bound keeps them."""
    count = 0
    for key in txn.scan_keys("keys", OPEN_PREFIX):
        record = _get(txn, U64.unpack(key[len(OPEN_PREFIX):])[0])
        if record is not None and record["agent"] == agent and record["status"] == "pending" and not _expired(record):
            count += 1
    return count


def get(state: KState, approval_id: int) -> dict[str, Any] | None:
    with state.read() as txn:
        return _get(txn, approval_id)


def listing(state: KState, statuses: tuple[str, ...] = ("pending",)) -> list[dict[str, Any]]:
    """Approvals in one of `statuses`, oldest first (only the open ones are scanned unless a
    closed status is asked for)."""
    with state.read() as txn:
        if set(statuses) <= set(OPEN):
            found = [_get(txn, U64.unpack(bytes(k[len(OPEN_PREFIX):]))[0]) for k in txn.scan_keys("keys", OPEN_PREFIX)]
        else:
            found = [json.loads(v) for _, v in txn.scan("keys", PREFIX)]
    return [r for r in found if r is not None and r["status"] in statuses]


def decide(state: KState, approval_id: int, allow: bool, by: str, reason: str = "") -> dict[str, Any]:
    """Allow or reject a pending approval. LookupError: no such approval; ValueError: it was
    decided (or withdrawn) already, saying how."""

    def body(txn: Txn) -> dict[str, Any]:
        record = _get(txn, approval_id)
        if record is None:
            raise LookupError(f"no approval {approval_id}")
        if record["status"] == "pending" and _expired(record):
            _expire(txn, record)
        if record["status"] != "pending":
            raise ValueError(f"approval {approval_id} is {describe_status(record)}")
        record.update(status="allowed" if allow else "rejected", by=by, reason=reason, decided=time.time())
        _put(txn, record)
        append_event(txn, "approval.decide", **_summary(record), decision="allow" if allow else "reject",
                     by=by, reason=reason)
        return record

    return state.write(body)


def describe_status(record: dict[str, Any]) -> str:
    """`allowed by root`, `rejected by cli:0 (too risky)`, `withdrawn (interrupted)`, ..."""
    text = record["status"] + (f" by {record['by']}" if record.get("by") else "")
    return text + (f" ({record['reason']})" if record.get("reason") else "")


def decided(record: dict[str, Any]) -> bool:
    """Decided, or past its timeout (as good as rejected): what a claim would apply now."""
    return record["status"] in DECIDED or (record["status"] == "pending" and _expired(record))


def _expired(record: dict[str, Any]) -> bool:
    return record["expires"] is not None and time.time() >= record["expires"]


def _expire(txn: Txn, record: dict[str, Any]) -> None:
    timeout = record["expires"] - record["asked"]
    record.update(status="expired", by="timeout", reason=f"no decision within {timeout:g} s", decided=time.time())
    _put(txn, record)
    append_event(txn, "approval.expire", **_summary(record), by="timeout", reason=record["reason"])


def expire_due(state: KState) -> int:
    """Expire pending approvals whose timeout passed (the server's housekeeping; a waiting
    shell does it itself); how many."""
    due = [r["id"] for r in listing(state) if _expired(r)]
    if not due:
        return 0

    def body(txn: Txn) -> int:
        n = 0
        for approval_id in due:
            record = _get(txn, approval_id)
            if record is not None and record["status"] == "pending" and _expired(record):
                _expire(txn, record)
                n += 1
        return n

    return state.write(body)


def withdraw(state: KState, approval_id: int, why: str) -> None:
    """The agent stopped waiting for good (a still pending approval only)."""

    def body(txn: Txn) -> None:
        record = _get(txn, approval_id)
        if record is not None and record["status"] == "pending":
            record.update(status="withdrawn", reason=why, waiter=None)
            _put(txn, record)
            append_event(txn, "approval.withdraw", **_summary(record), reason=why)

    state.write(body)


def abandon(state: KState) -> int:
    """Withdraw the approvals of sessions nobody can resume (no `K_SESSION` name) whose waiter
    is gone: a server killed while they waited (the server's recovery); how many."""
    dead = [r["id"] for r in listing(state, ("pending",))
            if not r.get("resumable", True) and (r["waiter"] is None or not owner_alive(r["waiter"]))]
    for approval_id in dead:
        withdraw(state, approval_id, "the session ended")
    return len(dead)


def let_go(state: KState, approval_id: int) -> None:
    """The waiting shell's connection went away: the approval waits for the session's resume."""

    def body(txn: Txn) -> None:
        record = _get(txn, approval_id)
        if record is not None and record["waiter"] is not None:
            record["waiter"] = None
            _put(txn, record)

    state.write(body)


def claim(state: KState, approval_id: int, waiter: bool = True) -> dict[str, Any] | None:
    """Take a decided approval to apply its decision: the record as decided, now `applied`;
    None while it is pending or when someone else applied it. `waiter`: the asking shell
    itself (else a resumed session, which takes only approvals nobody waits for)."""

    def body(txn: Txn) -> dict[str, Any] | None:
        record = _get(txn, approval_id)
        if record is None:
            return None
        if record["status"] == "pending" and _expired(record):
            _expire(txn, record)
        if record["status"] not in DECIDED:
            return None
        if not waiter and record["waiter"] is not None and owner_alive(record["waiter"]):
            return None
        decided = dict(record)
        record.update(status="applied", waiter=None, outcome=record["status"])
        _put(txn, record)
        append_event(txn, "approval.apply", **_summary(record), decision=decided["status"],
                     resumed=not waiter)
        return decided

    return state.write(body)


def orphans(state: KState, agent: str, session: str) -> list[int]:
    """A session's approvals nobody waits for any more (pending or decided), oldest first;
    not those an agent loop's file tool asked (their replay names its call): the loop's
    conversation applies those when it runs again."""
    return [r["id"] for r in listing(state, OPEN) if r["agent"] == agent and r["session"] == session
            and (r["waiter"] is None or not owner_alive(r["waiter"])) and not (r.get("replay") or {}).get("call")]


def wait(state: KState, approval_id: int, stop: Callable[[], bool], poll: float = 0.1) -> dict[str, Any] | None:
    """Block until the approval is decided (the decided record, now applied by this caller) or
    `stop()` says to give up (None)."""
    while True:
        current = get(state, approval_id)
        if current is None or current["status"] in ("withdrawn", "applied"):
            return None
        if current["status"] in DECIDED or _expired(current):  # a read per poll; a write only to take it
            record = claim(state, approval_id)
            if record is not None:
                return record
        end = time.monotonic() + poll
        while time.monotonic() < end:
            if stop():
                return None
            time.sleep(0.02)
