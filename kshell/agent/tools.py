"""Tools: what a model may call, and the tools of the agent's own computer.

The computer's tools work through the agent's AgentSession (kshell.sdk): a shell command runs
as `agent.exec` runs it, files are read and written through `agent.fs`, so the session's mode,
path rules, the image's hooks and `ask` approvals apply to the model exactly as to a person at
the agent's shell. A session runs one command line at a time; shell tools the model calls in
parallel run in further sessions of the same agent and mode (made when first needed, started in
the main session's working directory, closed with the agent's loop).

A file tool's write that an `ask` rule (or an image hook answering `ask`) matches waits for a
person's decision as the shell does: the same approval record (kind `write`, its replay naming
the tool call), linked to the call (`Shells.on_approval`), so that a crash meanwhile pauses the
call and the conversation's next run applies the decision (kshell.agent.loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import posixpath
import shlex
import threading
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kfs.agents import LeaseHeld
from kfs.runtime.approvals import WAITER
from kshell.agent.errors import ToolExecutionError
from kshell.agent.messages import ToolSpec

if TYPE_CHECKING:
    from kshell.sdk import AgentSession, ExecResult

__all__ = ["CALL", "FRONT", "Shells", "Tool", "ToolOutput", "computer_tools", "shell_output", "tool"]

log = logging.getLogger(__name__)
CALL: ContextVar[str | None] = ContextVar("kshell_agent_call", default=None)  # the tool call this task runs
MAX_OUTPUT = 64 << 10  # what one result gives the model: the end of longer output, and how much was left out
FRONT = "agent loop"  # the front an approval a file tool asks names (`komputer approvals`)


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A tool's result: its text for the model, `status` ok or error, and the K process row and
    receipt that did it (0: none), for the event that records the result."""

    text: str
    status: str = "ok"
    pid: int = 0
    receipt: int = 0


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool: `run(arguments)` gives its output (str or ToolOutput). `exclusive`: it runs
    alone, after the other calls of the same answer (a tool that changes what others read)."""

    name: str
    description: str
    parameters: dict[str, Any]
    run: Callable[[dict[str, Any]], Awaitable[ToolOutput | str]]
    exclusive: bool = False

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)


def tool(name: str, description: str, properties: dict[str, Any], required: list[str] | None = None, *,
         exclusive: bool = False) -> Callable[[Callable[..., Awaitable[Any]]], Tool]:
    """A decorator making a Tool of `async def f(**arguments)`."""
    schema = {"type": "object", "properties": properties, "required": required or list(properties)}

    def make(fn: Callable[..., Awaitable[Any]]) -> Tool:
        async def run(arguments: dict[str, Any]) -> Any:
            try:
                return await fn(**arguments)
            except TypeError as e:
                raise ToolExecutionError(f"{name}: {e}") from None

        return Tool(name, description, schema, run, exclusive)

    return make


class Shells:
    """The agent's main session and the extra sessions parallel shell calls run in.
    `on_approval(call_id, session, approval)`: a command a tool call runs (`CALL`) waits for an
    `ask` approval, as the shell's "K: waiting for approval N" line says."""

    def __init__(self, session: AgentSession) -> None:
        self.main = session
        self._idle: list[AgentSession] = []
        self._extra: list[AgentSession] = []
        self._main_busy = False
        self.on_approval: Callable[[str, str, int], None] | None = None

    async def exec(self, command: str, *, timeout: float | None = None) -> ExecResult:
        if not self._main_busy:
            self._main_busy = True
            try:
                return await self.main.exec(command, timeout=timeout, on_output=self._watch(self.main))
            finally:
                self._main_busy = False
        session = self._idle.pop() if self._idle else await self._spare()
        try:
            return await session.exec(command, timeout=timeout, cwd=self.main.cwd, on_output=self._watch(session))
        finally:
            self._idle.append(session)

    def _watch(self, session: AgentSession) -> Callable[[str, bytes], None] | None:
        """What looks at a tool call's stderr for the line saying it waits for an approval."""
        call = CALL.get()
        if call is None or self.on_approval is None:
            return None
        from kfs.runtime.approvals import waiting_for

        def seen(stream: str, data: bytes) -> None:
            approval = waiting_for(data) if stream == "stderr" else None
            if approval is not None and self.on_approval is not None:
                try:
                    self.on_approval(call, session.id, approval)
                except Exception as e:  # the command waits on: only a crash meanwhile loses the link
                    log.warning("tool call %s waits for approval %s, not recorded: %s", call, approval, e)

        return seen

    async def session(self, name: str) -> AgentSession:
        """The agent's session `name`: the main one, one of these, or the computer's (logged in
        here when it holds none: a session a crashed loop's parallel call ran in)."""
        main = self.main
        for session in (main, *self._extra, *main.computer.sessions()):
            if session.agent == main.agent and session.id == name:
                return session
        try:
            session = await main.computer.login(main.agent, name, mode=main.mode)
        except LeaseHeld as e:
            raise ToolExecutionError(f"session {main.agent}/{name}: {e}") from None
        self._extra.append(session)
        return session

    async def _spare(self) -> AgentSession:
        main = self.main
        if main.fork_number is not None:  # a fork's sessions are its own: wait for the main one
            while self._main_busy:
                await asyncio.sleep(0.01)
            return main
        session = await main.computer.login(main.agent, mode=main.mode)
        self._extra.append(session)
        return session

    async def settle(self, grace: float = 2.0) -> None:
        """Wait (at most `grace` seconds) until the process rows of these sessions' commands
        have ended: an interrupted command's row is sealed just after its line returns."""
        from kfs.runtime import procs

        names = {self.main.id, *(s.id for s in self._extra)}
        state = self.main.computer.state
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while loop.time() < deadline:
            rows = await asyncio.to_thread(procs.rows, state, agent=self.main.agent, live=True)
            if not any(r["session"] in names for r in rows):
                return
            await asyncio.sleep(0.02)

    async def close(self) -> None:
        for session in self._extra:
            with contextlib.suppress(Exception):
                await session.close()
        self._extra.clear()
        self._idle.clear()


def wait_for_write(session: AgentSession, call: str, e: Any, stop: Callable[[], bool],
                   on_approval: Callable[[str, str, int], None] | None) -> bool:
    """WAITER of a file tool's call (in its agent.fs thread): ask for the write `e`
    (NeedsApproval) as a shell session asks (the same record; its replay names the call, for
    the conversation's next run to apply it after a crash), link it to the call, and wait.
    Allowed: True (the write goes on); rejected or expired: PolicyDenial saying so; stopped: the
    approval is withdrawn and the write refused."""
    from kfs.runtime import approvals
    from kfs.vfs.policy import PolicyDenial
    from kshell.worker.approvals import verdict

    state, config = session.computer.state, session.computer.server.config
    try:
        record = approvals.ask(state, agent=session.agent, session=session.id, kind="write",
                               action=f"write {e.physical}"[:4096], rule=e.rule.id,
                               replay={"argv": None, "cwd": session.cwd, "subject": e.physical, "call": call},
                               timeout=config.approval_timeout, front=FRONT, resumable=True,
                               max_pending=config.approvals_max_pending, why=getattr(e.rule, "reason", "") or "")
    except approvals.TooManyPending as refused:
        raise PolicyDenial(e.filename, str(refused)) from None
    if on_approval is not None:
        try:
            on_approval(call, session.id, record["id"])
        except Exception as err:  # the write waits on: only a crash meanwhile loses the link
            log.warning("tool call %s waits for approval %s, not recorded: %s", call, record["id"], err)
    decided = approvals.wait(state, record["id"], stop)
    if decided is None:
        approvals.withdraw(state, record["id"], "interrupted")
        raise PolicyDenial(e.filename, f"approval {record['id']} withdrawn (interrupted)")
    allowed, why = verdict(decided)
    if stop():  # decided just as the call was stopped: nothing is written after a stop
        raise PolicyDenial(e.filename, f"approval {record['id']} decided after the call was stopped")
    if not allowed:
        raise PolicyDenial(e.filename, why)
    return True


def _clip(text: str) -> str:
    if len(text) <= MAX_OUTPUT:
        return text
    return f"[{len(text) - MAX_OUTPUT} characters before this left out]\n" + text[-MAX_OUTPUT:]


def shell_output(result: ExecResult) -> ToolOutput:
    """A command line's result as the model gets it: stdout, then stderr, then a non-zero
    `[exit status N]`; its process row and receipt kept for the result's event."""
    text = result.text
    err = result.stderr.decode("utf-8", "surrogateescape")
    if err:
        text += ("" if not text or text.endswith("\n") else "\n") + err
    if result.status != 0:
        text += f"[exit status {result.status}]"
    return ToolOutput(_clip(text) or "(no output)", "ok" if result.status == 0 else "error", result.pid, result.receipt)


def computer_tools(session: AgentSession, shells: Shells | None = None, *, commands: bool = True) -> list[Tool]:
    """The tools of the agent's own computer, through `session`: shell, read_file, write_file,
    edit_file, list_files, search, and (with `commands`) one tool per command of the image."""
    shells = shells or Shells(session)
    fs = session.fs

    def where(path: str) -> str:
        """A path as the agent's shell would take it: relative to its working directory."""
        if path.startswith("/") or path == "~" or path.startswith("~/"):
            return path
        return posixpath.join(session.cwd, path)

    async def files(call: Callable[[], Awaitable[Any]], name: str, path: str) -> Any:
        """An agent.fs call of a tool call: a write an `ask` rule matches waits for its decision
        (in the call's thread); a stop ends that wait (the approval withdrawn) and returns once
        the call's thread is done, so nothing is written after it."""
        call_id = CALL.get()
        stop = threading.Event()
        token = WAITER.set(None if call_id is None else
                           lambda e: wait_for_write(session, call_id, e, stop.is_set, shells.on_approval))
        try:
            running = asyncio.ensure_future(call())  # (its context, WAITER included, copied now)
        finally:
            WAITER.reset(token)
        try:
            return await asyncio.shield(running)
        except asyncio.CancelledError:
            stop.set()
            with contextlib.suppress(BaseException):
                await running
            raise
        except OSError as e:  # a path rule's refusal says which rule, a rejected approval why
            why = f" ({e.why})" if isinstance(getattr(e, "why", None), str) else ""
            raise ToolExecutionError(f"{name}: {path}: {e.strerror or e}{why}") from None

    @tool("shell", "Run a command line in the agent's K shell (bash syntax; cwd, variables and functions persist "
          "between calls). Gives stdout, stderr and a non-zero exit status.",
          {"command": {"type": "string"}, "timeout": {"type": "number", "description": "seconds (optional)"}},
          ["command"])
    async def shell(command: str, timeout: float | None = None) -> ToolOutput:
        return shell_output(await shells.exec(command, timeout=timeout))

    @tool("read_file", "Read a text file (optionally lines offset.. offset+limit, counted from 1).",
          {"path": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}}, ["path"])
    async def read_file(path: str, offset: int = 1, limit: int | None = None) -> str:
        text = await files(lambda: fs.read_text(where(path)), "read_file", path)
        if offset > 1 or limit is not None:
            lines = text.splitlines(keepends=True)
            text = "".join(lines[max(offset, 1) - 1:None if limit is None else max(offset, 1) - 1 + limit])
        return _clip(text)

    @tool("write_file", "Create or replace a file with the given content (its folders are made).",
          {"path": {"type": "string"}, "content": {"type": "string"}})
    async def write_file(path: str, content: str) -> str:
        target = where(path)
        parent = posixpath.dirname(target)
        if parent and parent not in ("~", "/"):
            await files(lambda: fs.mkdir(parent, parents=True), "write_file", path)
        written = await files(lambda: fs.write_file(target, content), "write_file", path)
        return f"wrote {written} bytes to {path}"

    @tool("edit_file", "Replace old_text by new_text in a file: old_text must occur exactly once (or set all).",
          {"path": {"type": "string"}, "old_text": {"type": "string"}, "new_text": {"type": "string"},
           "all": {"type": "boolean"}}, ["path", "old_text", "new_text"])
    async def edit_file(path: str, old_text: str, new_text: str, all: bool = False) -> str:  # noqa: A002
        target = where(path)
        text = await files(lambda: fs.read_text(target), "edit_file", path)
        count = text.count(old_text) if old_text else 0
        if count == 0:
            raise ToolExecutionError(f"edit_file: {path}: old_text not found")
        if count > 1 and not all:
            raise ToolExecutionError(f"edit_file: {path}: old_text occurs {count} times; give more context or all")
        await files(lambda: fs.write_file(target, text.replace(old_text, new_text)), "edit_file", path)
        return f"replaced {count if all else 1} occurrence(s) in {path}"

    @tool("list_files", "List a directory (ls -la).", {"path": {"type": "string"}}, [])
    async def list_files(path: str = ".") -> ToolOutput:
        return shell_output(await shells.exec(f"ls -la -- {shlex.quote(path)}"))

    @tool("search", "Search files for a regular expression (grep -rn), under path (default: the working directory).",
          {"pattern": {"type": "string"}, "path": {"type": "string"}}, ["pattern"])
    async def search(pattern: str, path: str = ".") -> ToolOutput:
        result = await shells.exec(f"grep -rn -e {shlex.quote(pattern)} -- {shlex.quote(path)}")
        if result.status == 1 and not result.stderr:
            return ToolOutput("no matches")
        return shell_output(result)

    tools = [shell, read_file, write_file, edit_file, list_files, search]
    if commands:
        tools += image_command_tools(session, shells)
    return tools


def image_command_tools(session: AgentSession, shells: Shells) -> list[Tool]:
    """One tool per command the image in force declares (run by name in the agent's shell)."""
    from kfs.runtime import image

    record = image.current(session.computer.state)
    declared = (record or {}).get("spec", {}).get("commands", {})
    tools = []
    for name, command in sorted(declared.items()):
        async def run(arguments: dict[str, Any], name: str = name) -> ToolOutput:
            args = arguments.get("args", "")
            line = name + (" " + " ".join(shlex.quote(a) for a in args) if isinstance(args, list) else f" {args}")
            return shell_output(await shells.exec(line.strip()))

        tools.append(Tool(name, command.get("description") or f"the image's command {name}",
                          {"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}}},
                           "required": []}, run))
    return tools
