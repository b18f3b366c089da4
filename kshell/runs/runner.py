"""A run's worker: the agent loop (kshell.agent) on the run's conversation, in a session of the
run's agent limited to the run's sandbox, with the run's record kept as it goes.

Per step: `running` while the model answers, `waiting_for_tool` while its tool calls run; the
answer and each tool result appended to transcript.md; the calls, results and every file
operation K's receipts show in the sandbox appended to events.jsonl. At the end: the manifests,
then `completed`, or `review_required` (a required deliverable missing, or files deleted with
`delete: false`), `cancelled` (stopped: `komputer runs cancel`), `failed` (the loop's error).

The worker is recorded in run.json (`worker`: its pid and start time). A worker killed leaves
the run active with a dead worker: `recover_runs` (every `komputer run` and `runs` command runs
it) makes it `failed`, saying so; `resume` takes a failed run back (its conversation, sealed by
K's own recovery, goes on with the next model call), with transcript.md and events.jsonl
continuing where they were.
"""

from __future__ import annotations

import contextlib
import json
import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kfs.runtime.runs import agent_run, set_agent_run
from kshell.runs.context import (
    ACTIVE,
    RunContext,
    RunError,
    append_event,
    find_run,
    list_runs,
    now_iso,
    open_run,
    read_record,
    update_run_state,
)
from kshell.runs.guards import apply_scope, check_deliverables, deletions, record_file_events, write_manifests

if TYPE_CHECKING:
    from kfs.kstate import KState
    from kshell.agent.models.base import Model
    from kshell.sdk import Komputer

__all__ = ["cancel_run", "recover_runs", "resume_run", "run"]

TRANSCRIPT_CLIP = 8000  # characters of one tool result kept in transcript.md (the conversation has all)
Progress = Callable[[str], Any]


def _worker_alive(record: dict[str, Any]) -> bool:
    from kfs.runtime.procs import owner_alive

    worker = record.get("worker")
    return bool(worker) and owner_alive(worker)


def recover_runs(state: KState) -> list[str]:
    """Runs left active (or pending with a worker) by a worker that is gone: `failed`, the
    reason saying so. Returns their ids."""
    failed = []
    for record in list_runs(state):
        if record.get("status") in ACTIVE and not _worker_alive(record):
            try:
                ctx = open_run(state, record["run_id"])
            except RunError:
                continue
            worker = record.get("worker") or {}
            update_run_state(ctx, "failed", f"its worker (pid {worker.get('pid', '?')}) ended while the run was "
                                            f"{record['status']} (killed, or K stopped): komputer runs resume "
                                            f"{record['run_id']} goes on")
            failed.append(record["run_id"])
    return failed


def _model(computer: Komputer, session: Any, ctx: RunContext, model: Model | str | None) -> Model:
    from kshell.agent.front import resolve_model
    from kshell.agent.models.config import from_spec

    if model is None and isinstance(ctx.config.get("model"), dict):
        return from_spec(ctx.config["profile"], ctx.config["model"]).bind(computer.state)
    return resolve_model(session, model if model is not None else ctx.config.get("model"))


def _clip(text: str) -> str:
    return text if len(text) <= TRANSCRIPT_CLIP else text[:TRANSCRIPT_CLIP] + f"\n[{len(text) - TRANSCRIPT_CLIP} " \
                                                                              "more characters in the conversation]"


class _Recorder:
    """The loop's hooks: the run's state, transcript and events as each step goes."""

    def __init__(self, ctx: RunContext, progress: Progress | None) -> None:
        self.ctx = ctx
        self.shown = progress or (lambda line: None)
        self.step = 0

    def progress(self, line: str) -> None:
        """A progress line: to the caller, and to logs/worker.log (the worker's own log)."""
        self.ctx.fs().append_file(self.ctx.path("logs/worker.log"), f"{now_iso()} {line}\n")
        self.shown(line)

    def _to(self, status: str) -> None:
        if self.ctx.status != status:
            update_run_state(self.ctx, status)

    def _transcript(self, text: str) -> None:
        self.ctx.fs().append_file(self.ctx.path("transcript.md"), text)

    def step_start(self, step: int, messages: Any) -> None:
        self.step += 1
        self._to("running")
        self.progress(f"step {self.step}: asking the model")

    def step_finish(self, step: int, response: Any) -> None:
        from kshell.agent.messages import tool_calls

        message = response.message
        calls = tool_calls(message)
        parts = [f"## assistant (step {self.step})\n\n"]
        if message.text:
            parts.append(message.text.rstrip() + "\n\n")
        for call in calls:
            parts.append(f"- calls `{call['name']}` {json.dumps(call['arguments'], ensure_ascii=False)[:2000]}\n")
        self._transcript("".join(parts) + ("\n" if calls else ""))
        append_event(self.ctx, {"at": now_iso(), "type": "model.answer", "step": self.step, "stop": response.stop,
                                "calls": [c["name"] for c in calls], "usage": response.usage})
        if calls:
            self._to("waiting_for_tool")
            self.progress(f"step {self.step}: running {', '.join(c['name'] for c in calls)}")
        elif message.text:
            self.progress(f"step {self.step}: answered")

    def tool_call(self, call: dict[str, Any]) -> None:
        append_event(self.ctx, {"at": now_iso(), "type": "tool.call", "step": self.step, "call_id": call["id"],
                                "name": call["name"], "arguments": call["arguments"]})

    def tool_result(self, call: dict[str, Any], output: Any) -> None:
        self._transcript(f"## tool `{call['name']}` ({output.status})\n\n```\n{_clip(output.text).rstrip()}\n```\n\n")
        append_event(self.ctx, {"at": now_iso(), "type": "tool.result", "step": self.step, "call_id": call["id"],
                                "name": call["name"], "status": output.status, "pid": output.pid,
                                "receipt": output.receipt})
        record_file_events(self.ctx)
        self.progress(f"step {self.step}: {call['name']} {output.status}")


def _busy_agent(ctx: RunContext) -> str | None:
    """Another run of the agent with a live worker (an agent runs one run at a time: its
    scope is its current run's sandbox): the last run the agent's workers started, if it is
    another one and still runs."""
    with ctx.state.read() as txn:
        other = agent_run(txn, ctx.agent)
    if other is None or other == ctx.run_id:
        return None
    try:
        record = read_record(ctx.state, find_run(ctx.state, other)["sandbox"])
    except (RunError, OSError):
        return None
    return other if record.get("status") in ACTIVE and _worker_alive(record) else None


def _archive(ctx: RunContext) -> None:
    """A resumed run's earlier manifests, kept in archive/attempt-N/."""
    fs = ctx.fs()
    folder = ctx.path(f"archive/attempt-{ctx.record.get('attempt', 0)}")
    with contextlib.suppress(FileExistsError):
        fs.mkdir(folder, 0o755)
    for name in ("sandbox-manifest.json", "artifact-manifest.json"):
        fs.write_file(posixpath.join(folder, name), fs.read_file(ctx.path(name)))


async def run(computer: Komputer, ctx: RunContext, model: Model | str | None = None, *,
              progress: Progress | None = None, message: str | None = None) -> dict[str, Any]:
    """Run (or, for a failed or revision_required run, resume) `ctx` on `computer` with
    `model` (None: the configuration's). `message`: on a resume, a user message to answer (a
    revision's instructions); without one the conversation goes on as stored. Returns run.json
    as it ends. RunError when the run cannot start (its state, or another run of the agent
    running)."""
    from kfs.runtime import conversations
    from kfs.runtime.procs import owner_id
    from kshell.agent import AgentError, Hooks

    if ctx.status not in ("pending", "failed", "revision_required"):
        raise RunError(f"run {ctx.run_id} is {ctx.status}: only a pending, failed or revision_required run runs")
    other = _busy_agent(ctx)
    if other is not None:
        raise RunError(f"agent {ctx.agent} is running run {other}: an agent runs one run at a time")
    resuming = ctx.status != "pending"
    if resuming:
        _archive(ctx)
    apply_scope(ctx)
    set_agent_run(ctx.state, ctx.agent, ctx.run_id)
    attempt = ctx.record.get("attempt", 0) + 1
    update_run_state(ctx, "running", worker=owner_id(), attempt=attempt)
    recorder = _Recorder(ctx, progress)
    session = None
    outcome: tuple[str, str | None] = ("failed", "the worker stopped")
    try:
        session = await computer.login(ctx.agent, f"{ctx.run_id}.{attempt}", mode="limited")
        # the new session starts in the workspace: its shell, made at the first command, starts
        # where its record says (no `cd` command: that would start the shell before the model
        # is even asked, two thirds of the time to the first call); the file tools go from it
        session.record.cwd = ctx.workspace
        system = ctx.fs().read_file(ctx.path("effective-system-prompt.md")).decode("utf-8", "surrogateescape")
        hooks = Hooks(step_start=recorder.step_start, step_finish=recorder.step_finish,
                      tool_call=recorder.tool_call, tool_result=recorder.tool_result)
        loop = session.loop(_model(computer, session, ctx, model), conversation=ctx.conversation, system=system,
                            hooks=hooks)
        began = bool(conversations.messages(computer.state, ctx.conversation)) if resuming else False
        if resuming:
            recorder.progress(f"resuming (attempt {attempt})")
        if began and message:
            ctx.fs().append_file(ctx.path("transcript.md"), f"## user (attempt {attempt})\n\n{message.rstrip()}\n\n")
            append_event(ctx, {"at": now_iso(), "type": "run.message", "attempt": attempt, "text": message})
        result = await (loop.prompt(message) if began and message else loop.resume() if began else
                        loop.prompt(ctx.prompt))
        outcome = ("cancelled", "stopped: komputer runs cancel") if result.status == "stopped" else ("completed", None)
    except AgentError as e:
        outcome = ("failed", f"{type(e).__name__}: {e}")
    except RunError:
        raise
    except Exception as e:
        outcome = ("failed", f"{type(e).__name__}: {e}")
    except BaseException:  # cancelled, Ctrl-C: the worker ends; recovery says so
        outcome = ("failed", "the worker was interrupted")
        raise
    finally:
        if session is not None:
            with contextlib.suppress(Exception):
                await session.loop().close()
            with contextlib.suppress(Exception):
                await session.close()
        _finish(ctx, *outcome)
    return ctx.record


def _finish(ctx: RunContext, status: str, reason: str | None) -> None:
    """The end of an attempt: the receipts since the last look, the manifests, the checks."""
    record_file_events(ctx)
    write_manifests(ctx)
    if status == "completed":
        missing = check_deliverables(ctx)
        gone = [] if ctx.config.get("delete") else deletions(ctx)
        if missing:
            status, reason = "review_required", "missing deliverables: " + ", ".join(missing)
        elif gone:
            status, reason = "review_required", "deleted with delete off: " + ", ".join(sorted(set(gone))[:50])
    review = {"review_reason": reason} if status == "review_required" else {}
    update_run_state(ctx, status, reason, worker=None, **review)


async def resume_run(computer: Komputer, run_id: str, model: Model | str | None = None, *,
                     progress: Progress | None = None, message: str | None = None) -> dict[str, Any]:
    """`komputer runs resume ID`: a failed (or revision_required) run goes on."""
    recover_runs(computer.state)
    return await run(computer, open_run(computer.state, run_id), model, progress=progress, message=message)


def cancel_run(state: KState, run_id: str, by: str = "cli") -> str:
    """Cancel a run: a running one is stopped (its worker ends the loop and records
    `cancelled`); one no worker runs is `cancelled` here. Returns what was done."""
    from kfs.runtime import conversations

    recover_runs(state)
    ctx = open_run(state, run_id)
    if ctx.status in ACTIVE and _worker_alive(ctx.record):
        conversations.request_stop(state, ctx.conversation, by=by)
        return "stop requested"
    update_run_state(ctx, "cancelled", f"cancelled by {by}")
    return "cancelled"
