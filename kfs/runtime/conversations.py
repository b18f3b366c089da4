"""Conversations: an agent loop's messages, turns, tool calls and queued user messages, kept in
KState as runtime truth, so that a crash loses no step a user saw and recovery can say what
became of each.

Every user-visible step is one write transaction with its event: a turn begins (with the user
messages it answers, taken off the queue) -> `turn.start`; its streamed chunks -> `turn.chunk`
events (a monotonic `chunk_seq` per conversation); the assistant message -> `turn.message`
(its tool calls recorded as `running`); each tool result -> `turn.tool`; the turn ends ->
`turn.end` (status done, tool_calls, length, stopped, failed or uncertain). A turn records its
owner (pid and start time): `recover` seals only turns whose owner is gone. It appends an
uncertain tool result for every recorded call that has none (never runs it again: what it did
may have committed), a `turn.tool` event marked uncertain for a call that only the stream
events saw (never an invented provider message), and a terminal `turn.end`.

A call whose command waits for an `ask` approval is linked to it (`link_approval`,
`turn.approval`). When its owner is gone while that approval is still open (pending, or decided
and not yet applied), recovery does not guess: the call is `paused`, and so is its turn
(`turn.pause`, no `turn.end` yet); the next run of the conversation takes the turn back
(`resume_paused`, `turn.resume`), has the decision applied, commits what the approved command
gave as that call's result and ends the turn.

One run at a time: a run holds the conversation (`claim`, `release`): its token and owner in
the record, durable, so a second loop on it, in this process or another, is refused (`Busy`)
while the holder lives; a holder that died holds nothing (its open turns are sealed when the
next run claims, or at recovery).

Keys (database "keys"), ID a conversation id ([A-Za-z0-9_.-]):
`conv/ID` -> {"id", "agent", "model", "created", "messages", "turns", "chunks", "queue", "stop",
"run" (the run holding it: {"run", "owner", "since"} or None), "paused" (a paused turn's number)};
`conv-m/ID/` + n -> a message (kshell.agent.messages.Message.to_json);
`conv-t/ID/` + n -> a turn {"n", "response_id", "status", "owner", "event", "message", "calls"};
`conv-c/ID/` + call id -> {"id", "name", "turn", "status", "message", "response_id"} (and "approval", "session"
while it waits for one); `conv-q/ID/` + n -> a queued user message; `conv-open/ID/` + n -> b""
while turn n runs; `conv-run/ID` -> b"" while a run holds the conversation.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from kfs.journal import append_event
from kfs.journal.records import decode, encode
from kfs.kstate import KState, Txn
from kfs.kstate.schema import U64
from kfs.runtime import approvals
from kfs.runtime.procs import owner_alive, owner_id

__all__ = ["UNCERTAIN", "Busy", "begin_turn", "claim", "commit_assistant", "commit_result", "end_turn", "enqueue",
           "get", "link_approval", "messages", "open_conversation", "publish", "queued", "recover", "release",
           "request_stop", "resume_paused", "stop_requested", "turns"]

UNCERTAIN = ("Uncertain: K stopped (a crash or a kill) while this tool ran; whether it finished, and what it "
             "changed, is not known. Check before running it again.")
_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}\Z")
_TURN = U64.size + 1  # a per-turn key ends with "/" and the turn's number


class Busy(RuntimeError):
    """A live run holds the conversation: its loop answers it now (`owner`: the process)."""

    def __init__(self, conv: str, owner: dict[str, int]) -> None:
        super().__init__(f"conversation {conv} is answering already (its loop runs in process {owner['pid']})")
        self.owner = owner


_OWNER: dict[str, int] | None = None


def _owner() -> dict[str, int]:
    """This process (pid and start time), read once: a turn's owner, for recovery to judge."""
    global _OWNER
    if _OWNER is None or _OWNER["pid"] != os.getpid():
        _OWNER = owner_id()
    return _OWNER


@lru_cache(maxsize=256)
def _check(conv: str) -> bytes:
    """The id as a key's bytes, once checked (a step builds a score of keys of one conversation)."""
    if not _ID.match(conv):
        raise ValueError(f"conversation id {conv!r}: letters, digits, '_', '.', '-' (up to 128)")
    return conv.encode()


def _k(kind: str, conv: str, n: int | str | None = None) -> bytes:
    base = f"conv{kind}/".encode() + _check(conv)
    if n is None:
        return base
    return base + b"/" + (U64.pack(n) if isinstance(n, int) else n.encode())


def _get(txn: Txn, key: bytes) -> Any:
    raw = txn.get("keys", key)
    return None if raw is None else decode(raw)


def _put(txn: Txn, key: bytes, record: Any) -> None:
    txn.put("keys", key, encode(record).encode())


def _record(txn: Txn, conv: str) -> dict[str, Any]:
    record = _get(txn, _k("", conv))
    if record is None:
        raise LookupError(f"no conversation {conv}")
    return record


def open_conversation(state: KState, conv: str, *, agent: str, model: str = "") -> dict[str, Any]:
    """The conversation `conv` of `agent`, made if new (another agent's: PermissionError)."""

    def body(txn: Txn) -> dict[str, Any]:
        record = _get(txn, _k("", conv))
        if record is not None:
            if record["agent"] != agent:
                raise PermissionError(f"conversation {conv} belongs to agent {record['agent']}")
            return record
        record = {"id": conv, "agent": agent, "model": model, "created": time.time(), "messages": 0, "turns": 0,
                  "chunks": 0, "queue": 0, "stop": False}
        _put(txn, _k("", conv), record)
        append_event(txn, "turn.conversation", agent=agent, conversation_id=conv, model=model)
        return record

    return state.write(body)


def get(state: KState, conv: str) -> dict[str, Any] | None:
    with state.read() as txn:
        return _get(txn, _k("", conv))


def _scan(state: KState, kind: str, conv: str) -> list[Any]:
    with state.read() as txn:
        return [decode(v) for _, v in txn.scan("keys", _k(kind, conv) + b"/")]


def messages(state: KState, conv: str) -> list[dict[str, Any]]:
    """The conversation's messages, oldest first."""
    return _scan(state, "-m", conv)


def turns(state: KState, conv: str) -> list[dict[str, Any]]:
    return _scan(state, "-t", conv)


def calls(state: KState, conv: str) -> list[dict[str, Any]]:
    return _scan(state, "-c", conv)


def queued(state: KState, conv: str) -> list[dict[str, Any]]:
    return _scan(state, "-q", conv)


def _append_message(txn: Txn, record: dict[str, Any], conv: str, message: dict[str, Any]) -> int:
    n = record["messages"]
    _put(txn, _k("-m", conv, n), message)
    record["messages"] = n + 1
    return n


def begin_turn(state: KState, conv: str, *, response_id: str, model: str = "",
               user: Iterable[dict[str, Any]] = (), drain: bool = True,
               after: int | None = None) -> tuple[int, list[dict[str, Any]]]:
    """A turn begins: `user` messages, then (with `drain`) every queued one, appended to the
    conversation; the turn recorded as running, owned by this process. `after`: the turn before
    it, whose tool calls all have their results, ends first (`tool_calls`) in the same
    transaction (a step's write fewer). Returns its number and the user messages it appended."""

    def body(txn: Txn) -> tuple[int, list[dict[str, Any]]]:
        record = _record(txn, conv)
        if after is not None:
            _end(txn, conv, after, "tool_calls", record=record)
        taken = list(user)
        if drain:
            for key, value in list(txn.scan("keys", _k("-q", conv) + b"/")):
                taken.append(decode(value))
                txn.delete("keys", bytes(key))
        for message in taken:
            _append_message(txn, record, conv, message)
        n = record["turns"]
        record["turns"] = n + 1
        seq = append_event(txn, "turn.start", agent=record["agent"], conversation_id=conv, response_id=response_id,
                           turn=n, model=model, user=len(taken))
        _put(txn, _k("-t", conv, n), {"n": n, "response_id": response_id, "status": "running", "owner": _owner(),
                                      "event": seq, "started": time.time(), "message": None, "calls": []})
        txn.put("keys", _k("-open", conv, n), b"")
        _put(txn, _k("", conv), record)
        return n, taken

    return state.write(body)


def publish(state: KState, conv: str, agent: str, turn: int, response_id: str,
            chunks: list[dict[str, Any]]) -> int:
    """Stream events for `chunks` of the turn, each with the next `chunk_seq`, in one
    transaction; the last chunk_seq."""

    def body(txn: Txn) -> int:
        record = _record(txn, conv)
        seq = _publish(txn, record, conv, turn, chunks, agent, response_id)
        _put(txn, _k("", conv), record)
        return seq

    return state.write(body)


def _publish(txn: Txn, record: dict[str, Any], conv: str, turn: int, chunks: list[dict[str, Any]], agent: str = "",
             response_id: str = "") -> int:
    """The chunks' events; `record`, the conversation's, counts them (the caller puts it)."""
    if not response_id:
        response_id = _get(txn, _k("-t", conv, turn))["response_id"]
    seq = record["chunks"]
    for chunk in chunks:
        seq += 1
        append_event(txn, "turn.chunk", agent=agent or record["agent"], conversation_id=conv,
                     response_id=response_id, turn=turn, chunk_seq=seq, chunk=chunk)
    record["chunks"] = seq
    return seq


def commit_assistant(state: KState, conv: str, turn: int, message: dict[str, Any], *, stop: str,
                     provider_id: str = "", usage: dict[str, Any] | None = None,
                     chunks: list[dict[str, Any]] = (), end: str = "") -> int:
    """The turn's assistant message; its tool calls recorded as running (a crash from here on
    leaves each an uncertain result). `chunks`: the stream's last chunks not yet published,
    published first in the same transaction; `end`: the turn ends with it (that status)."""

    def body(txn: Txn) -> int:
        record = _record(txn, conv)
        tr = _get(txn, _k("-t", conv, turn))
        if chunks:
            _publish(txn, record, conv, turn, chunks, response_id=tr["response_id"])
        n = _append_message(txn, record, conv, message)
        call_ids = [b["id"] for b in message["content"] if b["type"] == "tool_call"]
        for block in message["content"]:
            if block["type"] == "tool_call":
                _put(txn, _k("-c", conv, block["id"]), {"id": block["id"], "name": block["name"], "turn": turn,
                                                        "status": "running", "message": None,
                                                        "response_id": tr["response_id"]})
        tr.update(message=n, calls=call_ids, provider_id=provider_id)
        if not end:  # (else _end puts it, ended)
            _put(txn, _k("-t", conv, turn), tr)
        _put(txn, _k("", conv), record)
        append_event(txn, "turn.message", agent=record["agent"], conversation_id=conv, response_id=tr["response_id"],
                     turn=turn, message=n, stop=stop, provider_id=provider_id, calls=call_ids, usage=usage or {})
        if end:
            _end(txn, conv, turn, end, record=record, tr=tr)
        return n

    return state.write(body)


def _result(txn: Txn, record: dict[str, Any], conv: str, call: dict[str, Any], message: dict[str, Any],
            status: str, response_id: str, extra: dict[str, Any] | None = None) -> int:
    n = _append_message(txn, record, conv, message)
    _put(txn, _k("", conv), record)
    call.update(status=status, message=n)
    _put(txn, _k("-c", conv, call["id"]), call)
    append_event(txn, "turn.tool", agent=record["agent"], conversation_id=conv, response_id=response_id,
                 turn=call["turn"], call_id=call["id"], name=call["name"], status=status, message=n, **(extra or {}))
    return n


def commit_result(state: KState, conv: str, call_id: str, message: dict[str, Any], status: str, *,
                  pid: int = 0, receipt: int = 0) -> int:
    """A tool call's result message (status ok, error, stopped); a call that has one already
    keeps it (FileExistsError: a tool's result is written once)."""

    def body(txn: Txn) -> int:
        record = _record(txn, conv)
        call = _get(txn, _k("-c", conv, call_id))
        if call is None:
            raise LookupError(f"conversation {conv}: no tool call {call_id}")
        if call["status"] != "running":
            raise FileExistsError(f"conversation {conv}: tool call {call_id} has its result already")
        response_id = call.get("response_id") or _get(txn, _k("-t", conv, call["turn"]))["response_id"]
        extra = {k: v for k, v in (("pid", pid), ("receipt", receipt)) if v}
        return _result(txn, record, conv, call, message, status, response_id, extra)

    return state.write(body)


def end_turn(state: KState, conv: str, turn: int, status: str, *, error: str = "") -> None:
    """The turn's terminal event (done, tool_calls, length, stopped, failed)."""

    state.write(_end, conv, turn, status, error)


def _end(txn: Txn, conv: str, turn: int, status: str, error: str = "", *, record: dict[str, Any] | None = None,
         tr: dict[str, Any] | None = None) -> None:
    """The turn ends; `record` and `tr`: the conversation's and the turn's records when the
    caller has them already (each read is a JSON decode)."""
    record = record if record is not None else _record(txn, conv)
    tr = tr if tr is not None else _get(txn, _k("-t", conv, turn))
    tr.update(status=status, ended=time.time(), **({"error": error} if error else {}))
    _put(txn, _k("-t", conv, turn), tr)
    txn.delete("keys", _k("-open", conv, turn))
    append_event(txn, "turn.end", agent=record["agent"], conversation_id=conv, response_id=tr["response_id"],
                 turn=turn, status=status, **({"error": error} if error else {}))


def enqueue(state: KState, conv: str, message: dict[str, Any], *, by: str = "") -> int:
    """A user message for the loop to take when its answer stops (`komputer send`, agent.send)."""

    def body(txn: Txn) -> int:
        record = _record(txn, conv)
        n = record["queue"]
        record["queue"] = n + 1
        _put(txn, _k("-q", conv, n), message)
        _put(txn, _k("", conv), record)
        append_event(txn, "turn.queue", agent=record["agent"], conversation_id=conv, queued=n, by=by)
        return n

    return state.write(body)


def request_stop(state: KState, conv: str, *, by: str = "") -> None:
    """Ask the loop running `conv` (in this process or another) to stop."""

    def body(txn: Txn) -> None:
        record = _record(txn, conv)
        record["stop"] = True
        _put(txn, _k("", conv), record)
        append_event(txn, "turn.stop", agent=record["agent"], conversation_id=conv, by=by)

    state.write(body)


def stop_requested(state: KState, conv: str) -> bool:
    record = get(state, conv)
    return bool(record and record.get("stop"))


def claim(state: KState, conv: str, run: str) -> dict[str, Any]:
    """Take the conversation for the run `run` (its token): one loop answers a conversation at
    a time, in this process or any other. Busy while another run's owner lives; the run of an
    owner that died holds nothing: its open turns are sealed here (as `recover` seals them)
    before this run goes on. Returns the conversation's record (its `paused` turn, if any, is
    the run's to finish first)."""

    def body(txn: Txn) -> dict[str, Any]:
        record = _record(txn, conv)
        held = record.get("run")
        if held and held["run"] != run:
            if owner_alive(held["owner"]):
                raise Busy(conv, held["owner"])
            for key in list(txn.scan_keys("keys", _k("-open", conv) + b"/")):
                _seal(txn, conv, U64.unpack(bytes(key[-U64.size:]))[0], False)
            record = _record(txn, conv)
        record["run"] = {"run": run, "owner": _owner(), "since": time.time()}
        record["stop"] = False  # a stop asked before this run does not concern it
        _put(txn, _k("", conv), record)
        txn.put("keys", _k("-run", conv), b"")
        return record

    return state.write(body)


def release(state: KState, conv: str, run: str) -> None:
    """The run `run` is over: the conversation is free for the next one."""

    def body(txn: Txn) -> None:
        record = _get(txn, _k("", conv))
        if record is not None and (record.get("run") or {}).get("run") == run:
            record["run"] = None
            _put(txn, _k("", conv), record)
            txn.delete("keys", _k("-run", conv))

    state.write(body)


def link_approval(state: KState, conv: str, call_id: str, *, approval: int, session: str) -> None:
    """The running call `call_id` waits for approval `approval`, asked in session `session`:
    recorded, so that a crash meanwhile pauses the call instead of sealing it uncertain."""

    def body(txn: Txn) -> None:
        record = _record(txn, conv)
        call = _get(txn, _k("-c", conv, call_id))
        if call is None or call["status"] != "running":
            return
        call.update(approval=approval, session=session)
        _put(txn, _k("-c", conv, call_id), call)
        tr = _get(txn, _k("-t", conv, call["turn"]))
        append_event(txn, "turn.approval", agent=record["agent"], conversation_id=conv, response_id=tr["response_id"],
                     turn=call["turn"], call_id=call_id, name=call["name"], approval=approval, session=session)

    state.write(body)


def resume_paused(state: KState, conv: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """Take back the conversation's paused turn, if any, for this process to finish: it runs
    again (owned here; a crash seals it as any running turn), its paused calls running again.
    Returns the turn and those calls (each with its "approval" and "session")."""

    def body(txn: Txn) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        record = _record(txn, conv)
        turn = record.get("paused")
        if turn is None:
            return None
        tr = _get(txn, _k("-t", conv, turn))
        waiting = []
        for call_id in tr["calls"]:
            call = _get(txn, _k("-c", conv, call_id))
            if call is not None and call["status"] == "paused":
                call["status"] = "running"
                _put(txn, _k("-c", conv, call_id), call)
                waiting.append(call)
        tr.update(status="running", owner=_owner())
        _put(txn, _k("-t", conv, turn), tr)
        txn.put("keys", _k("-open", conv, turn), b"")
        record["paused"] = None
        _put(txn, _k("", conv), record)
        append_event(txn, "turn.resume", agent=record["agent"], conversation_id=conv, response_id=tr["response_id"],
                     turn=turn, calls=[c["id"] for c in waiting])
        return tr, waiting

    return state.write(body)


def recover(state: KState, *, everyone: bool = False) -> list[dict[str, Any]]:
    """Seal the turns whose owner is gone (all running turns with `everyone`): an uncertain
    result for each recorded tool call without one (a call waiting for an approval still open
    is paused instead, and its turn), an uncertain `turn.tool` event for a call only the stream
    saw, and a `turn.end` (status uncertain); and free the conversations whose run's owner is
    gone. Returns what it sealed."""
    with state.read() as txn:
        open_turns = [bytes(k) for k in txn.scan_keys("keys", b"conv-open/")]
        held = [bytes(k) for k in txn.scan_keys("keys", b"conv-run/")]
    sealed = []
    for key in open_turns:
        conv, turn = key[len(b"conv-open/"):-_TURN].decode(), U64.unpack(key[-U64.size:])[0]
        done = state.write(_seal, conv, turn, everyone)
        if done is not None:
            sealed.append(done)
    for key in held:
        state.write(_free, key[len(b"conv-run/"):].decode(), everyone)
    return sealed


def _free(txn: Txn, conv: str, everyone: bool) -> None:
    record = _get(txn, _k("", conv))
    run = record.get("run") if record is not None else None
    if run is None or everyone or not owner_alive(run["owner"]):
        if record is not None and run is not None:
            record["run"] = None
            _put(txn, _k("", conv), record)
        txn.delete("keys", _k("-run", conv))


def _open_approval(txn: Txn, call: dict[str, Any]) -> bool:
    """The call waits for an approval that can still be applied (pending, or decided and not
    yet applied): the next run applies it, and what it gives is the call's result."""
    if not call.get("approval"):
        return False
    record = approvals.read(txn, call["approval"])
    return record is not None and record["status"] in approvals.OPEN and record.get("resumable", True)


def _seal(txn: Txn, conv: str, turn: int, everyone: bool) -> dict[str, Any] | None:
    tr = _get(txn, _k("-t", conv, turn))
    if tr is None or tr["status"] != "running" or (not everyone and owner_alive(tr["owner"])):
        return None
    record = _record(txn, conv)
    results, paused = [], []
    for call_id in tr["calls"]:
        call = _get(txn, _k("-c", conv, call_id))
        if call is None or call["status"] != "running":
            continue
        if _open_approval(txn, call):
            call["status"] = "paused"
            _put(txn, _k("-c", conv, call_id), call)
            paused.append(call)
            continue
        message = {"role": "tool", "content": [{"type": "tool_result", "call_id": call_id, "name": call["name"],
                                                "output": UNCERTAIN, "status": "uncertain"}]}
        _result(txn, record, conv, call, message, "uncertain", tr["response_id"])
        results.append(call_id)
    streamed = []
    if tr["message"] is None:  # only the stream events were durable: say so, invent no message
        seen = [event["chunk"] for event in (decode(v) for _, v in txn.scan("events", start=U64.pack(tr["event"])))
                if event.get("type") == "turn.chunk" and event.get("conversation_id") == conv
                and event.get("turn") == turn and event["chunk"].get("kind") == "tool_call"]
        for chunk in seen:
            streamed.append(chunk.get("id", ""))
            append_event(txn, "turn.tool", agent=record["agent"], conversation_id=conv,
                         response_id=tr["response_id"], turn=turn, call_id=chunk.get("id", ""),
                         name=chunk.get("name", ""), status="uncertain", message=None)
    txn.delete("keys", _k("-open", conv, turn))
    done = {"conversation_id": conv, "turn": turn, "results": results, "streamed": streamed,
            "paused": [c["id"] for c in paused]}
    if paused:  # the turn waits with its calls: the next run of the conversation finishes it
        tr.update(status="paused", owner=None)
        record["paused"] = turn
        _put(txn, _k("-t", conv, turn), tr)
        _put(txn, _k("", conv), record)
        append_event(txn, "turn.pause", agent=record["agent"], conversation_id=conv, response_id=tr["response_id"],
                     turn=turn, calls=[c["id"] for c in paused], approvals=[c["approval"] for c in paused],
                     recovered=True)
        return done
    tr.update(status="uncertain", ended=time.time())
    _put(txn, _k("-t", conv, turn), tr)
    _put(txn, _k("", conv), record)
    append_event(txn, "turn.end", agent=record["agent"], conversation_id=conv, response_id=tr["response_id"],
                 turn=turn, status="uncertain", recovered=True)
    return done
