"""Virtual processes: one row per background job and per SSH exec command, in KState.

A row names its agent, session and front end, the command line and cwd, when it started, its
state (running, stopped, exited, killed, lost) and its owner: the process (pid + start time,
pid-reuse safe, as leases name theirs) whose threads or children do the work. Starting a row
appends an *uncertain* receipt and a `proc.start` event in the same transaction; its end
continues the receipt as committed (status 0) or failed, with a `proc.exit` event. So a crash
never leaves work unaccounted for: `recover` finds rows whose owner is gone and either resumes
them (a plain `sleep`, which only needs its deadline: it ends at the original time) or seals
them `lost`, their receipt left uncertain for reconciliation and a `proc.lost` event saying so.

Ended rows are compacted per agent (`compact`, the server's, once a minute): each agent keeps its
most recently ended ones up to a bound, so one agent's flood of jobs drops its own old rows,
never another's; the indexes that make that and `rows(agent=...)` cheap are written with the rows.

Signals between sessions go through the row: `request_signal` queues one for the owner (which
`take_signals` hands it) and names the owner's pid for the caller to wake; a resumed sleep has
no computation behind it and is ended in that same transaction.
"""

from __future__ import annotations

import json
import os
import re
import time
from itertools import islice
from typing import Any

from kfs.journal import append_event, append_receipt, drop_receipt
from kfs.kstate import KState, Txn
from kfs.kstate.schema import U64
from kfs.vfs.handles import process_start_time

PID_BASE = 100_000  # virtual pids of durable processes: above the shell's own (5000 + subshells)
LIVE = ("running", "stopped")
_SLEEP = re.compile(r"^sleep((?:\s+[0-9]*\.?[0-9]+[smhd]?)+)\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def owner_id(pid: int | None = None) -> dict[str, int]:
    pid = os.getpid() if pid is None else pid
    return {"pid": pid, "start": process_start_time(pid) or 0}


def owner_alive(owner: dict[str, int]) -> bool:
    return process_start_time(owner["pid"]) == owner["start"]


def sleep_seconds(command: str) -> float | None:
    """GNU sleep's total for a command that is nothing but `sleep N[smhd]...`, else None."""
    m = _SLEEP.match(command.strip())
    if m is None:
        return None
    total = 0.0
    for arg in m.group(1).split():
        unit = _UNITS.get(arg[-1])
        total += float(arg[:-1] if unit else arg) * (unit or 1)
    return total


# Keys of the procs db: b"p" + pid -> the row (JSON); b"l" + pid -> b"" while the row is live
# (what recovery scans); b"q" + owner pid + pid -> signals queued for that owner (JSON list);
# b"a" + agent + b"\0" + pid -> b"": each agent's rows (`ps --agent`); b"e" + agent + b"\0" +
# ended + pid -> b"": its ended rows in the order they ended, b"n" + agent -> how many (u64), for
# `compact`; b"i" -> b"": those indexes cover every row (a state from before them is indexed
# by its first `compact`). An agent name holds no NUL.
_ROW, _LIVE, _QUEUE = b"p", b"l", b"q"
_AGENT, _ENDED, _COUNT, _INDEXED = b"a", b"e", b"n", b"i"
KEEP_ENDED = 1000  # an agent's ended rows kept, by default (`[ssh] procs_keep_ended`)


def _get(txn: Txn, pid: int) -> dict[str, Any] | None:
    raw = txn.get("procs", _ROW + U64.pack(pid))
    return None if raw is None else json.loads(raw)


def _name(row: dict[str, Any]) -> bytes:
    return str(row["agent"]).encode("utf-8", "surrogatepass") + b"\0"


def _ended_key(row: dict[str, Any]) -> bytes:
    return _ENDED + _name(row) + U64.pack(row["ended"] or row["started"] or 0) + U64.pack(row["pid"])


def _put(txn: Txn, row: dict[str, Any], new: bool = False) -> None:
    pid = U64.pack(row["pid"])
    txn.put("procs", _ROW + pid, json.dumps(row, separators=(",", ":")).encode())
    if new:
        txn.put("procs", _AGENT + _name(row) + pid, b"")
    if row["state"] in LIVE:
        txn.put("procs", _LIVE + pid, b"")
    elif txn.delete("procs", _LIVE + pid):  # it ended now
        txn.put("procs", _ended_key(row), b"")
        txn.tally("procs", _COUNT + _name(row), 1)


def _live(txn: Txn) -> list[dict[str, Any]]:
    return [r for r in (_get(txn, U64.unpack(k[1:])[0]) for k in txn.scan_keys("procs", _LIVE)) if r is not None]


def _provenance(row: dict[str, Any]) -> dict[str, Any]:
    return {"agent": row["agent"], "session": row["session"], "front": row["front"], "pid": row["pid"]}


def start(state: KState, *, agent: str, session: str, front: str, cmd: str, cwd: str, kind: str = "local",
          owner: dict[str, int] | None = None, nohup: bool = False) -> int:
    """A new running row (with its uncertain receipt and start event); its pid."""

    def body(txn: Txn) -> int:
        if txn.get("procs", _INDEXED) is None and not txn.has_prefix("procs", _ROW):
            txn.put("procs", _INDEXED, b"")  # a new table: indexed from its first row on
        pid = PID_BASE + txn.incr(b"next_proc")
        now = time.time_ns()
        row: dict[str, Any] = {
            "pid": pid, "agent": agent, "session": session, "front": front, "cmd": cmd, "cwd": cwd,
            "kind": kind, "started": now, "state": "running", "status": None, "signal": 0, "ended": None,
            "owner": owner or owner_id(), "nohup": nohup,
        }
        seconds = sleep_seconds(cmd) if kind == "local" else None
        if seconds is not None:
            row["until"] = now + int(seconds * 1e9)
        row["receipt"] = append_receipt(txn, "proc", f"{front} {agent}/{session}", path=cwd, status="uncertain",
                                        cmd=cmd, session=session, proc=pid)
        _put(txn, row, new=True)
        append_event(txn, "proc.start", **_provenance(row), cmd=cmd, cwd=cwd, kind=kind)
        return pid

    return state.write(body)


def _end_in(txn: Txn, row: dict[str, Any], status: int, signal: int, ended: int | None = None) -> None:
    row.update(state="killed" if signal else "exited", status=status, signal=signal, ended=ended or time.time_ns())
    append_receipt(txn, "proc", f"{row['front']} {row['agent']}/{row['session']}", path=row["cwd"], receipt_id=row["receipt"],
                   status="committed" if status == 0 and not signal else "failed", exit=status, signal=signal,
                   proc=row["pid"])
    _put(txn, row)
    append_event(txn, "proc.exit", **_provenance(row), status=status, signal=signal)


def output_events(txn: Txn, pid: int, chunks: list[tuple[str, str]]) -> None:
    """What a running process printed since the last of these: `process` events with
    `status: "output"`, one per stream and chunk, while it runs (a follower of the event log
    sees output as it comes, not only the summary at its end)."""
    row = _get(txn, pid)
    if row is None:
        return
    for stream, data in chunks:
        append_event(txn, "process", **_provenance(row), status="output", stream=stream, data=data)


def end(state: KState, pid: int, status: int, signal: int = 0, output: dict[str, Any] | None = None,
        chunks: list[tuple[str, str]] | None = None) -> None:
    """The process ended with `status` (`signal`: the one that killed it, 0 when it exited);
    `output`: what it printed, per stream (head, tail, bytes, omitted), as `proc.output`
    events before its `proc.exit`; `chunks`: live output not published yet (output_events)."""

    def body(txn: Txn) -> None:
        if chunks:
            output_events(txn, pid, chunks)
        row = _get(txn, pid)
        if row is not None and row["state"] in LIVE:
            for stream, shown in (output or {}).items():
                append_event(txn, "proc.output", **_provenance(row), stream=stream, **shown)
            _end_in(txn, row, status, signal)

    state.write(body)


def set_stopped(state: KState, pid: int, stopped: bool) -> None:
    def body(txn: Txn) -> None:
        row = _get(txn, pid)
        if row is not None and row["state"] in LIVE:
            row["state"] = "stopped" if stopped else "running"
            _put(txn, row)
            append_event(txn, "proc.stop" if stopped else "proc.continue", **_provenance(row))

    state.write(body)


def set_nohup(state: KState, pid: int) -> None:
    def body(txn: Txn) -> None:
        row = _get(txn, pid)
        if row is not None and not row["nohup"]:
            row["nohup"] = True
            _put(txn, row)

    state.write(body)


def get(state: KState, pid: int) -> dict[str, Any] | None:
    with state.read() as txn:
        return _get(txn, pid)


def rows(state: KState, *, agent: str | None = None, live: bool = False) -> list[dict[str, Any]]:
    """Rows in pid order (an agent's, live ones only when asked). An agent's are read through
    its index: another agent's flood of ended rows costs nothing here."""
    with state.read() as txn:
        if live:
            found = _live(txn)
        elif agent is not None and txn.get("procs", _INDEXED) is not None:
            prefix = _AGENT + agent.encode("utf-8", "surrogatepass") + b"\0"
            found = [r for r in (_get(txn, U64.unpack(k[len(prefix):])[0]) for k in txn.scan_keys("procs", prefix))
                     if r is not None]
        else:
            found = [json.loads(v) for _, v in txn.scan("procs", _ROW)]
    return [r for r in found if agent is None or r["agent"] == agent]


def compact(state: KState, keep: int = KEEP_ENDED, batch: int = 10_000) -> int:
    """Drop each agent's ended rows past its `keep` most recently ended (0: keep all), the
    longest ended first, with their receipts (a lost one's, uncertain, stays); how many rows
    went. Live rows always stay, and so does what the others have: one agent's flood of jobs
    costs its own history only. One transaction per `batch`."""
    with state.read() as txn:
        indexed = txn.get("procs", _INDEXED) is not None
    if not indexed:
        state.write(_index)
    removed = 0
    while keep > 0:
        done = state.write(_compact, keep, batch)
        removed += done
        if done < batch:
            return removed
    return removed


def _index(txn: Txn) -> None:
    """Index the rows of a state from before the indexes (once)."""
    if txn.get("procs", _INDEXED) is not None:
        return
    for prefix in (_ENDED, _COUNT):  # what rows ended since this code ran: made again whole
        for key in txn.scan_keys("procs", prefix):
            txn.delete("procs", key)
    counts: dict[bytes, int] = {}
    for key, raw in list(txn.scan("procs", _ROW)):
        row = json.loads(raw)
        agent = _name(row)
        txn.put("procs", _AGENT + agent + key[1:], b"")
        if row["state"] not in LIVE:
            txn.put("procs", _ended_key(row), b"")
            counts[agent] = counts.get(agent, 0) + 1
    for agent, count in counts.items():
        txn.put("procs", _COUNT + agent, U64.pack(count))
    txn.put("procs", _INDEXED, b"")


def _compact(txn: Txn, keep: int, batch: int) -> int:
    """Up to `batch` ended rows of the agents over `keep`, each agent's longest ended first."""
    gone = 0
    for key, raw in list(txn.scan("procs", _COUNT)):
        count = U64.unpack(raw)[0]
        if count <= keep:
            continue
        agent = key[1:]
        prefix = _ENDED + agent
        oldest = [bytes(k) for k, _ in islice(txn.scan("procs", prefix), min(count - keep, batch - gone))]
        for ended in oldest:
            pid = ended[-8:]
            raw = txn.get("procs", _ROW + pid)
            if raw is not None:
                row = json.loads(raw)
                if row["state"] != "lost":  # a lost one's uncertain receipt waits for reconciliation
                    drop_receipt(txn, row["receipt"])
            txn.delete("procs", ended)
            txn.delete("procs", _ROW + pid)
            txn.delete("procs", _AGENT + agent + pid)
        txn.tally("procs", _COUNT + agent, -len(oldest))
        gone += len(oldest)
        if gone >= batch:
            break
    return gone


def request_signal(state: KState, pid: int, sig: int, agent: str) -> tuple[bool, int | None]:
    """Queue `sig` for `agent`'s live process `pid`: (found, the owner's pid to wake). A resumed
    sleep ends here (a terminating signal) with no owner to wake."""

    def body(txn: Txn) -> tuple[bool, int | None]:
        row = _get(txn, pid)
        if row is None or row["agent"] != agent or row["state"] not in LIVE:
            return False, None
        if sig == 0:
            return True, None
        if row.get("resumed"):
            if sig not in (17, 18, 19, 20, 21, 22, 23, 28):  # CHLD CONT STOP TSTP TTIN TTOU URG WINCH
                _end_in(txn, row, 128 + sig, sig)
            return True, None
        owner = row["owner"]["pid"]
        key = _QUEUE + U64.pack(owner) + U64.pack(pid)
        queued = txn.get("procs", key)
        txn.put("procs", key, json.dumps([*(json.loads(queued) if queued else []), sig]).encode())
        return True, owner if owner_alive(row["owner"]) else None

    return state.write(body)


def take_signals(state: KState, owner: dict[str, int]) -> list[tuple[int, int]]:
    """The (pid, signal) pairs queued for `owner`'s processes, taken off their rows."""

    prefix = _QUEUE + U64.pack(owner["pid"])

    def body(txn: Txn) -> list[tuple[int, int]]:
        taken = []
        for key, raw in list(txn.scan("procs", prefix)):
            taken += [(U64.unpack(key[9:])[0], sig) for sig in json.loads(raw)]
            txn.delete("procs", key)
        return taken

    with state.read() as txn:  # the common case, nothing queued, writes nothing
        if not txn.has_prefix("procs", prefix):
            return []
    return state.write(body)


def recover(state: KState, *, owner: dict[str, int] | None = None, gone: int | None = None) -> list[dict[str, Any]]:
    """Rows left live by an owner that is gone (every dead owner, or only the process `gone`):
    a plain `sleep` is resumed under `owner` (this process) and returned, to be ended at its
    `until`; the others are sealed lost (receipt left uncertain, a `proc.lost` event)."""
    me = owner or owner_id()

    def body(txn: Txn) -> list[dict[str, Any]]:
        resumed = []
        for row in _live(txn):
            if gone is not None and row["owner"]["pid"] != gone:
                continue
            if gone is None and owner_alive(row["owner"]):
                continue
            if "until" in row and row["state"] == "running":
                _drop_queue(txn, row)
                row.update(owner=me, resumed=time.time_ns())
                _put(txn, row)
                append_event(txn, "proc.resume", **_provenance(row), until=row["until"])
                resumed.append(row)
                continue
            _drop_queue(txn, row)
            row.update(state="lost", ended=time.time_ns())
            _put(txn, row)
            append_event(txn, "proc.lost", **_provenance(row), receipt=row["receipt"],
                         why="its owner process ended before it did")
        return resumed

    return state.write(body)


def _drop_queue(txn: Txn, row: dict[str, Any]) -> None:
    txn.delete("procs", _QUEUE + U64.pack(row["owner"]["pid"]) + U64.pack(row["pid"]))


def finish_resumed(state: KState, pid: int, owner: dict[str, int]) -> None:
    """A resumed sleep's deadline came: it exits 0, unless something else ended it first. It
    ended at its deadline (or at its recovery, when that passed while no server ran): a sleep
    is nothing but its deadline, whenever this transaction gets to record it."""

    def body(txn: Txn) -> None:
        row = _get(txn, pid)
        if row is not None and row["state"] in LIVE and row["owner"] == owner:
            _end_in(txn, row, 0, 0, ended=max(row["until"], row["resumed"]))

    state.write(body)
