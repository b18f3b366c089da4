"""The agent loop: per step, stream one model call (each chunk published as a `turn.chunk`
event), run the answer's tool calls in parallel, append their results and go on; when an answer
ends, take the user messages queued meanwhile and answer them too; stop on request between
steps, in the middle of a stream (the HTTP request is cancelled) or of tools (their K processes
end); keep every step in KState (kfs.runtime.conversations) before the next one starts.

There is no step limit: a loop ends when an answer calls no tool and nothing is queued, when it
is stopped, or on an error (StreamError, ContextOverflowError, PersistenceError,
ToolExecutionError), which ends the turn as failed first.

A run holds its conversation (kfs.runtime.conversations.claim): a second run on it, here or in
another process, is refused with ConversationBusy. A run first finishes the turn a crash paused
on an `ask` approval: the decision is applied in the session that asked, and what the approved
command gave is the paused call's result.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kfs.runtime import conversations as store
from kshell.agent.errors import (
    AgentError,
    ContextOverflowError,
    ConversationBusy,
    PersistenceError,
    StreamError,
    ToolExecutionError,
)
from kshell.agent.messages import Chunk, Message, Response, tool_calls
from kshell.agent.tools import CALL, Shells, Tool, ToolOutput, computer_tools, shell_output

if TYPE_CHECKING:
    from kshell.agent.models.base import Model
    from kshell.sdk import AgentSession

__all__ = ["STOPPED", "Agent", "Hooks", "RunResult"]

STOPPED = "Stopped by user"
STOP_POLL = 0.1  # how often a running loop looks for a stop asked by another process (komputer stop)
APPROVAL_POLL = 0.1  # how often a paused call looks for its approval's decision (as a waiting shell does)
REPLAYED = ("[K stopped while this call waited for approval {id}; its decision was applied once K was back: an "
            "allowed command ran again alone, without the rest of its command line]\n")
APPLIED_ELSEWHERE = ("Uncertain: K stopped while this call waited for approval {id}, which was then applied by "
                     "another command of session {session}: that command's output has what it gave.")


@dataclass
class Hooks:
    """Callables (sync or async) the loop calls: `step_start(step, messages)`,
    `step_finish(step, response)`, `tool_call(call)`, `tool_result(call, output)`,
    `chunk(chunk, response_id)`."""

    step_start: Callable[..., Any] | None = None
    step_finish: Callable[..., Any] | None = None
    tool_call: Callable[..., Any] | None = None
    tool_result: Callable[..., Any] | None = None
    chunk: Callable[..., Any] | None = None


@dataclass
class RunResult:
    """What one run gave: `status` done, stopped or tool_calls (calls handed back:
    `execute_tools=False`), the messages it added, and each answer's response id."""

    status: str
    messages: list[Message] = field(default_factory=list)
    response_ids: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The last answer's text."""
        for message in reversed(self.messages):
            if message.role == "assistant":
                return message.text
        return ""

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The tool calls handed back (execute_tools=False)."""
        return tool_calls(self.messages[-1]) if self.status == "tool_calls" and self.messages else []


class _Stopped(Exception):
    pass


async def _hook(fn: Callable[..., Any] | None, *args: Any) -> Any:
    if fn is None:
        return None
    answer = fn(*args)
    return await answer if inspect.isawaitable(answer) else answer


class Agent:
    """An agent loop on an AgentSession: its conversation `conversation` (made if new) with
    `model`, the computer's tools (`tools` adds to or, with `computer_tools=False`, replaces
    them). `prepare_step(step, messages)` may return {"messages", "tools", "settings"} for that
    step; `execute_tools`: True, False (hand the calls back), or `async fn(call) -> output`;
    `on_context_overflow(messages)` returns the messages to go on with after a length stop."""

    def __init__(self, session: AgentSession, model: Model, *, conversation: str | None = None,
                 tools: Iterable[Tool] = (), computer_tools: bool = True, system: str | None = None,
                 settings: Mapping[str, Any] | None = None, hooks: Hooks | None = None,
                 prepare_step: Callable[..., Any] | None = None,
                 execute_tools: bool | Callable[[dict[str, Any]], Awaitable[Any]] = True,
                 on_context_overflow: Callable[[list[Message]], Awaitable[list[Message]]] | None = None) -> None:
        self.session = session
        self.model = model
        self.state = session.computer.state
        self.conversation = conversation or f"c-{secrets.token_hex(6)}"
        self.shells = Shells(session)
        self.shells.on_approval = self._waiting
        own = computer_tools_of(session, self.shells) if computer_tools else []
        self.tools: dict[str, Tool] = {t.name: t for t in [*own, *tools]}
        self.system = system
        self.settings = dict(settings or {})
        self.hooks = hooks or Hooks()
        self.prepare_step = prepare_step
        self.execute_tools = execute_tools
        self.on_context_overflow = on_context_overflow
        self.messages: list[Message] = []
        self.context: list[Message] | None = None  # what an overflow hook left to go on with
        self._opened = False
        self._running: asyncio.Task[Any] | None = None
        self._current: asyncio.Task[Any] | None = None
        self._stop = False
        self._in_hook: dict[asyncio.Task[Any] | None, int] = {}  # the tasks in a hook now

    # -- the store, each call one transaction ----------------------------------------------------

    async def _store(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """One small transaction of the conversation's records, on the event loop's own thread:
        it takes tens of microseconds, where handing it to a thread costs a wake-up and the GIL's
        hand-over (a millisecond on a busy machine), several times per step."""
        try:
            return fn(self.state, self.conversation, *args, **kwargs)
        except (LookupError, FileExistsError, ValueError, PermissionError, store.Busy):
            raise
        except Exception as e:  # the disk is full, the state is closed: the step is not taken
            raise PersistenceError(f"conversation {self.conversation}: {type(e).__name__}: {e}") from e

    async def open(self) -> Agent:
        """Open (or make) the conversation and load its messages."""
        if not self._opened:
            await self._store(store.open_conversation, agent=self.session.agent, model=self.model.name)
            rows = await self._store(store.messages)
            self.messages = [Message.from_json(r) for r in rows]
            self._opened = True
        return self

    # -- the surface -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._running is not None and not self._running.done()

    async def prompt(self, message: str | Message) -> RunResult:
        """Answer `message` (and whatever is queued meanwhile): run until the answer calls no
        tool and nothing is queued, or a stop. ConversationBusy while another loop answers the
        conversation (send() queues a message for it)."""
        return await self._go([Message.user(message) if isinstance(message, str) else message])

    async def resume(self) -> RunResult:
        """Go on from where the conversation is: finish a turn a crash paused on an approval,
        answer what is queued (or the last messages, as after a recovery)."""
        return await self._go([])

    async def _go(self, user: list[Message]) -> RunResult:
        """A run: the conversation held for it (durably, against a loop in any process), then
        released, whatever ends it."""
        if self.running:
            raise ConversationBusy(f"conversation {self.conversation} is answering already: send() queues a message")
        await self.open()
        token = secrets.token_hex(8)
        try:
            record = await self._store(store.claim, token)
        except store.Busy as e:
            raise ConversationBusy(f"{e}: send() or `komputer send` queues a message") from None
        self._running = asyncio.current_task()
        self._stop = False
        watcher = asyncio.create_task(self._watch_stop())
        try:
            if record["messages"] != len(self.messages):  # another run (or a recovery) added to it
                self.messages = [Message.from_json(r) for r in await self._store(store.messages)]
            return await self._run(user, paused=record.get("paused") is not None)
        finally:
            watcher.cancel()
            self._running = None
            with contextlib.suppress(Exception):
                await asyncio.shield(self._store(store.release, token))

    async def send(self, message: str | Message) -> None:
        """Queue a user message: the running loop answers it when its current answer ends (an
        idle one at its next prompt or resume)."""
        await self.open()
        user = Message.user(message) if isinstance(message, str) else message
        await self._store(store.enqueue, user.to_json(), by=f"sdk {self.session.agent}/{self.session.id}")

    async def stop(self) -> None:
        """Stop the run: between steps, in the middle of the stream (its request cancelled) or of
        tools (their processes end; their results say "Stopped by user"). Returns when it has.
        From a hook: the run ends once the step it was called in has finished."""
        self._stop = True
        if asyncio.current_task() in self._in_hook:  # a hook of this run: the step finishes first
            return
        running = self._running
        if self._current is not None and not self._current.done():
            self._current.cancel()
        if running is not None and running is not asyncio.current_task():
            with contextlib.suppress(BaseException):
                await asyncio.wait({running})

    async def close(self) -> None:
        await self.stop()
        await self.shells.close()

    async def _watch_stop(self) -> None:
        while not self._stop:
            await asyncio.sleep(STOP_POLL)
            with contextlib.suppress(Exception):
                if store.stop_requested(self.state, self.conversation):  # a read: microseconds, no thread
                    self._stop = True
                    if self._current is not None and not self._current.done():
                        self._current.cancel()
                    return

    async def _hook(self, fn: Callable[..., Any] | None, *args: Any) -> Any:
        """A hook's call. A stop() from inside a hook ends the run at the next step boundary
        (the step it is called from finishes)."""
        if fn is None:  # most hooks of most loops: nothing to call, nothing to note
            return None
        task = asyncio.current_task()
        self._in_hook[task] = self._in_hook.get(task, 0) + 1
        try:
            return await _hook(fn, *args)
        finally:
            self._in_hook[task] -= 1
            if not self._in_hook[task]:
                del self._in_hook[task]

    async def _stoppable(self, coro: Awaitable[Any]) -> Any:
        """Run `coro` as the task stop() cancels: _Stopped when it did (or had, before)."""
        if self._stop:
            if inspect.iscoroutine(coro):
                coro.close()
            raise _Stopped
        self._current = task = asyncio.ensure_future(coro)
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # the caller itself was cancelled
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            raise
        finally:
            self._current = None
        if task.cancelled():
            raise _Stopped
        return task.result()

    # -- the loop --------------------------------------------------------------------------------

    async def _run(self, user: list[Message], *, paused: bool = False) -> RunResult:
        result = RunResult("done")
        first = True
        step = 0
        after: int | None = None  # a turn whose tools are done: ended with the next turn's start
        if paused:
            try:
                await self._finish_paused(result)
            except _Stopped:
                result.status = "stopped"
                return result
        while True:
            if self._stop:  # (a stop asked by another process: the watcher sets it)
                if after is not None:
                    await self._store(store.end_turn, after, "tool_calls")
                result.status = "stopped"
                return result
            response_id = f"r-{secrets.token_hex(8)}"
            try:
                turn, taken = await self._store(store.begin_turn, response_id=response_id, model=self.model.name,
                                                user=[m.to_json() for m in user] if first else [], after=after)
            except BaseException:
                if after is not None:  # no turn is left running by a live process
                    with contextlib.suppress(Exception):
                        await asyncio.shield(self._store(store.end_turn, after, "tool_calls"))
                raise
            first = False
            after = None
            added = [Message.from_json(m) for m in taken]
            self.messages += added
            if self.context is not None:
                self.context += added
            result.messages += added
            result.response_ids.append(response_id)
            try:
                outcome = await self._step(step, turn, response_id, result)
            except _Stopped:
                await self._store(store.end_turn, turn, "stopped")
                result.status = "stopped"
                return result
            except AgentError as e:
                status = "length" if isinstance(e, ContextOverflowError) else "failed"
                await self._store(store.end_turn, turn, status, error=str(e)[:2000])
                raise
            except BaseException as e:
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._store(store.end_turn, turn, "failed", error=type(e).__name__))
                raise
            step += 1
            if outcome == "tools":
                after = turn
                continue
            if outcome == "handed":
                result.status = "tool_calls"
                return result
            if outcome == "more":
                continue
            if self._stop:
                result.status = "stopped"
                return result
            if not store.queued(self.state, self.conversation):
                return result

    async def _step(self, step: int, turn: int, response_id: str, result: RunResult) -> str:
        """One step: the model's answer, then its tools. "more": go on; "tools": go on, the
        turn (its tools done) to end with the next; "end": the answer is final; "handed": its
        calls go back to the caller."""
        context = self.context if self.context is not None else self.messages
        messages = ([Message.system(self.system)] if self.system else []) + list(context)
        tools = [t.spec for t in self.tools.values()]
        settings = dict(self.settings)
        if self.prepare_step is not None:
            prepared = await self._hook(self.prepare_step, step, messages) or {}
            messages = prepared.get("messages", messages)
            tools = prepared.get("tools", tools)
            settings.update(prepared.get("settings", {}))
        await self._hook(self.hooks.step_start, step, messages)
        publisher = _Publisher(self, turn, response_id)
        try:
            response = await self._stoppable(self._stream(messages, tools, settings, publisher, response_id))
        except _Stopped:
            await publisher.close()
            partial = publisher.partial()
            if partial.content:  # what was said before the stop stays said
                partial.meta["stopped"] = True
                await self._commit(turn, partial, "stopped", result)
            raise
        last = await publisher.rest()  # written with the message: one transaction fewer per step
        message = response.message
        message.meta.setdefault("response_id", response_id)
        calls = tool_calls(message)
        # an answer that ends its turn ends it in the same transaction
        end = "done" if not calls and response.stop != "length" else "tool_calls" if calls and \
            self.execute_tools is False else ""
        await self._commit(turn, message, response.stop, result, response, last, end)
        await self._hook(self.hooks.step_finish, step, response)
        if response.stop == "length":
            if self.on_context_overflow is None:
                raise ContextOverflowError(f"{self.model.name}: the answer reached its length limit "
                                           f"(conversation {self.conversation}, turn {turn})")
            await self._store(store.end_turn, turn, "length")
            self.context = list(await self._hook(self.on_context_overflow, list(self.context or self.messages)))
            return "more"
        if not calls:
            return "end"
        if self.execute_tools is False:
            return "handed"
        await self._tools(turn, calls, result)
        return "tools"  # the turn ends (tool_calls) with the next one's start, one write fewer

    async def _commit(self, turn: int, message: Message, stop: str, result: RunResult,
                      response: Response | None = None, chunks: list[dict[str, Any]] = (), end: str = "") -> None:
        await self._store(store.commit_assistant, turn, message.to_json(), stop=stop, chunks=list(chunks), end=end,
                          provider_id=response.id if response else "", usage=response.usage if response else None)
        self.messages.append(message)
        if self.context is not None:
            self.context.append(message)
        result.messages.append(message)

    async def _stream(self, messages: Sequence[Message], tools: Any, settings: dict[str, Any],
                      publisher: _Publisher, response_id: str) -> Response:
        async with contextlib.aclosing(self.model.stream(messages, tools, settings)) as chunks:
            async for chunk in chunks:
                if chunk.kind == "done":
                    if chunk.response is None:
                        break
                    publisher.closing = True  # what is not written yet goes with the message
                    return chunk.response
                publisher.add(chunk)
                await self._hook(self.hooks.chunk, chunk, response_id)
        raise StreamError(f"{self.model.name}: the stream ended without an answer")

    # -- a turn paused on an approval -------------------------------------------------------------

    def _waiting(self, call_id: str, session: str, approval: int) -> None:
        """Shells.on_approval: the call's command waits for `approval` (kept: a crash meanwhile
        pauses the call, and the next run applies the decision as its result)."""
        store.link_approval(self.state, self.conversation, call_id, approval=approval, session=session)

    async def _finish_paused(self, result: RunResult) -> None:
        """The turn a crash paused on approvals: taken back, each paused call's result the
        output of its approved command, the turn ended; a stop, then, stops it as any tools."""
        taken = await self._store(store.resume_paused)
        if taken is None:
            return
        turn, calls = taken[0]["n"], taken[1]
        message = self.messages[taken[0]["message"]]
        by_id = {c["id"]: c for c in tool_calls(message)}
        waiting = [{**by_id[c["id"]], "approval": c["approval"], "session": c["session"]} for c in calls]
        try:
            await self._tools(turn, waiting, result)
        except _Stopped:
            await self._store(store.end_turn, turn, "stopped")
            raise
        except BaseException as e:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._store(store.end_turn, turn, "failed", error=type(e).__name__))
            raise
        await self._store(store.end_turn, turn, "tool_calls")

    async def _replay(self, call: dict[str, Any], failures: list[BaseException]) -> ToolOutput:
        """A paused call's result: wait for its approval's decision (as the shell that asked
        did), then apply it: a file tool's write (its approval names the call) is made now, by
        the call run again, or its rejection is the result; otherwise the session that asked
        applies it (kshell.worker.approvals: its next command line first runs the approved
        command again, or says it was rejected) and what that printed, with its status, is the
        result."""
        from kfs.runtime import approvals

        approval, name = call["approval"], call["session"]
        try:
            while True:
                record = approvals.get(self.state, approval)
                if record is None or record["status"] in ("withdrawn", "applied"):
                    return ToolOutput(APPLIED_ELSEWHERE.format(id=approval, session=name), "uncertain")
                if approvals.decided(record):
                    break
                await asyncio.sleep(APPROVAL_POLL)
        except asyncio.CancelledError:  # stopped while waiting: nobody wants the decision now
            approvals.withdraw(self.state, approval, "interrupted")
            raise
        if (record.get("replay") or {}).get("call") == call["id"]:
            return await self._replay_write(call, approval, failures)
        try:
            session = await self.shells.session(name)
        except ToolExecutionError as e:  # another program holds that session: the decision is applied there
            return ToolOutput(str(e), "error")
        output = shell_output(await session.exec("(exit $?)"))  # $?: the replay's status
        return ToolOutput(REPLAYED.format(id=approval) + output.text, output.status, output.pid, output.receipt)

    async def _replay_write(self, call: dict[str, Any], approval: int, failures: list[BaseException]) -> ToolOutput:
        """A paused file tool's call, its approval decided: taken (`applied`, once: a crash
        from here on leaves the call uncertain, never written twice); allowed, the path is
        granted to this loop's session and the call runs again, its output the result;
        rejected, the result is the refusal, nothing written."""
        from kfs.runtime import approvals
        from kshell.worker.approvals import verdict

        decided = await asyncio.to_thread(approvals.claim, self.state, approval, False)
        if decided is None:
            return ToolOutput(APPLIED_ELSEWHERE.format(id=approval, session=call["session"]), "uncertain")
        allowed, why = verdict(decided)
        if not allowed:
            path = call["arguments"].get("path", "")
            return ToolOutput(f"{call['name']}: {path}: Permission denied ({why})", "error")
        self.session.fs.grant(decided["replay"]["subject"])
        return await self._execute(call, failures)

    # -- tools -----------------------------------------------------------------------------------

    async def _tools(self, turn: int, calls: list[dict[str, Any]], result: RunResult) -> None:
        done: set[str] = set()
        failures: list[BaseException] = []
        together = [c for c in calls if not (self.tools.get(c["name"]) and self.tools[c["name"]].exclusive)]
        alone = [c for c in calls if c not in together]

        async def all_calls() -> None:
            if together:
                await asyncio.gather(*(self._call(c, done, result, failures) for c in together))
            for call in alone:
                await self._call(call, done, result, failures)

        try:
            await self._stoppable(all_calls())
        except _Stopped:
            for call in calls:
                if call["id"] not in done:
                    with contextlib.suppress(FileExistsError):  # its own result was being written
                        await self._result(call, ToolOutput(STOPPED, "stopped"), done, result)
            await self.shells.settle()  # their processes have ended when stop() returns
            raise
        if failures:
            raise ToolExecutionError(f"tool {failures[0]}") from failures[0]

    async def _call(self, call: dict[str, Any], done: set[str], result: RunResult,
                    failures: list[BaseException]) -> None:
        await self._hook(self.hooks.tool_call, call)
        token = CALL.set(call["id"])  # this task's tool call, for the shell's approval line
        try:
            output = await (self._replay(call, failures) if "approval" in call else self._execute(call, failures))
        finally:
            CALL.reset(token)
        await self._result(call, output, done, result)
        await self._hook(self.hooks.tool_result, call, output)

    async def _execute(self, call: dict[str, Any], failures: list[BaseException]) -> ToolOutput:
        arguments = call["arguments"]
        if "_invalid" in arguments:
            return ToolOutput(f"{call['name']}: the arguments are not a JSON object: {arguments['_invalid'][:500]}",
                              "error")
        try:
            if callable(self.execute_tools):
                answer = await self.execute_tools(call)
            else:
                found = self.tools.get(call["name"])
                if found is None:
                    return ToolOutput(f"{call['name']}: no such tool (tools: {', '.join(self.tools)})", "error")
                answer = await found.run(arguments)
        except ToolExecutionError as e:
            return ToolOutput(str(e), "error")
        except (OSError, TimeoutError) as e:
            return ToolOutput(f"{call['name']}: {e}", "error")
        except asyncio.CancelledError:
            raise
        except Exception as e:
            failures.append(e)
            return ToolOutput(f"{call['name']}: failed: {type(e).__name__}: {e}", "error")
        return answer if isinstance(answer, ToolOutput) else ToolOutput(str(answer))

    async def _result(self, call: dict[str, Any], output: ToolOutput, done: set[str], result: RunResult) -> None:
        message = Message.tool_result(call["id"], call["name"], output.text, output.status)
        await asyncio.shield(self._store(store.commit_result, call["id"], message.to_json(), output.status,
                                         pid=output.pid, receipt=output.receipt))
        done.add(call["id"])
        self.messages.append(message)
        if self.context is not None:
            self.context.append(message)
        result.messages.append(message)


def computer_tools_of(session: AgentSession, shells: Shells) -> list[Tool]:
    return computer_tools(session, shells)


class _Publisher:
    """A turn's chunks to the event log: added as they come, written by one task in batches
    (all that arrived while the last write ran, in one transaction), in order."""

    def __init__(self, agent: Agent, turn: int, response_id: str) -> None:
        self.agent = agent
        self.turn = turn
        self.response_id = response_id
        self.pending: list[dict[str, Any]] = []
        self.chunks: list[Chunk] = []
        self.task: asyncio.Task[None] | None = None
        self.error: BaseException | None = None
        self.closing = False  # the rest goes with the assistant message: a write not begun is left to it

    def add(self, chunk: Chunk) -> None:
        self.chunks.append(chunk)
        self.pending.append(chunk.to_json())
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        agent = self.agent
        while self.pending and not self.closing:
            batch, self.pending = self.pending, []
            try:
                store.publish(agent.state, agent.conversation, agent.session.agent, self.turn, self.response_id,
                              batch)  # on the loop's thread, as Agent._store writes
            except Exception as e:
                self.error = e
                return

    async def rest(self) -> list[dict[str, Any]]:
        """Wait for the write under way; the chunks not yet written (for the caller's own
        transaction, after which this publisher is done). A stream that ended before its first
        write began (a fast one) has all its chunks written with the message."""
        self.closing = True
        while self.task is not None and not self.task.done():
            await asyncio.shield(self.task)
        self._raise()
        rest, self.pending = self.pending, []
        return rest

    async def close(self) -> None:
        while self.task is not None and not self.task.done():
            await asyncio.shield(self.task)
        if self.pending and self.error is None:
            await self._flush()
        self._raise()

    def _raise(self) -> None:
        if self.error is not None:
            error = self.error
            raise PersistenceError(f"conversation {self.agent.conversation}: stream events: {error}") from error

    def partial(self) -> Message:
        """The text said before a stop (tool calls not yet whole are left out)."""
        text = "".join(c.text for c in self.chunks if c.kind == "text")
        return Message("assistant", [{"type": "text", "text": text}] if text else [],
                       meta={"response_id": self.response_id})
