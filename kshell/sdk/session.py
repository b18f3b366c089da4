"""`AgentSession`: one logged-in session of an agent, as `Komputer.login` hands it out.

Its commands run in a session worker exactly as an SSH exec's do (kshell.server.workers): one
worker for the session, kept between commands, so variables, functions, the working directory
and background jobs live on from one `exec` to the next, as in a terminal; a worker that is
replaced (killed past its wall time, or past Ctrl-C) resumes the shell state the last command
left. Its lease is renewed by the computer's housekeeping until `detach` or `close`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from kfs.agents import Agent, SessionRecord
from kfs.agents.sessions import save_session
from kshell.sdk.commands import scoped
from kshell.sdk.types import ExecResult, KomputerClosed, LeaseHeld

if TYPE_CHECKING:
    from kshell.sdk.computer import Komputer
    from kshell.sdk.fs import AgentFS
    from kshell.server.workers import WorkerShell

__all__ = ["AgentSession", "CommandTimeout"]

FRONT = "sdk"
CHUNK = 65536


class CommandTimeout(TimeoutError):
    """`exec(timeout=...)` ran out: the command was interrupted as by Ctrl-C; `result` holds
    what it printed until then (status 130)."""

    def __init__(self, message: str, result: ExecResult) -> None:
        super().__init__(message)
        self.result = result


class AgentSession:
    """An agent's session, with the authority an SSH login of that agent has."""

    def __init__(self, computer: Komputer, agent: Agent, record: SessionRecord, holder: dict[str, Any], *,
                 mode: str = "full", fork: int | None = None, runner: WorkerShell | None = None) -> None:
        self.computer = computer
        self.record = record
        self.mode = mode
        self.fork_number = fork  # the fork this session works in (None: the state's own tree)
        self._agent = agent
        self._holder: dict[str, Any] | None = holder
        self._runner = runner
        self._fs: AgentFS | None = None
        self._forks: list[AgentSession] = []
        self._ended = False
        self._agent_loop: Any = None  # kshell.agent.Agent, made by loop()
        self.last_used = asyncio.get_running_loop().time()
        self.counters = {"execs": 0, "failed": 0}

    @property
    def agent(self) -> str:
        return self._agent.name

    @property
    def id(self) -> str:
        return self.record.name

    @property
    def home(self) -> str:
        return self._agent.home

    @property
    def attached(self) -> bool:
        """This program holds the session's lease."""
        return self._holder is not None

    @property
    def jobs(self) -> int:
        """Background jobs the session's worker runs (as its last command left them)."""
        return self._runner._jobs if self._runner is not None and self._runner.alive else 0  # noqa: SLF001

    @property
    def has_jobs(self) -> bool:
        return self._runner is not None and self._runner.has_jobs

    def _check(self) -> None:
        if self._ended or self.computer.closed:
            raise KomputerClosed(f"session {self.agent}/{self.id} is closed")
        if self._holder is None:
            raise KomputerClosed(f"session {self.agent}/{self.id} is detached: log in again to use it")
        if not self.computer.server.leases.holds(self.record, self._holder):
            self._holder = None
            raise LeaseHeld(f"the lease on session {self.agent}/{self.id} was lost (closed by an "
                            "administrator, or taken over after it expired)")

    def _env(self) -> dict[str, str]:
        env = {"HOME": self.home, "USER": self.agent, "LOGNAME": self.agent}
        if self.mode != "full":
            env["K_MODE"] = self.mode
        if self.fork_number is not None:
            env["K_FORK"] = str(self.fork_number)
        return env

    def _shell(self) -> WorkerShell:
        if self._runner is None:
            server = self.computer.server
            saved = self.record.shell or {}
            self._runner = server.make_shell(self._agent, self.record, self._env(), front=FRONT,
                                             hosts=self.computer._hosts)  # noqa: SLF001
            self._runner.saved = {"cwd": self.record.cwd, "exported": saved.get("exported", {}),
                                  "functions": saved.get("functions", "")}
        return self._runner

    def take_runner(self) -> WorkerShell | None:
        """The worker this detached session kept (its jobs), for the session that logs in again."""
        runner, self._runner = self._runner, None
        return runner

    # -- commands ------------------------------------------------------------------------------

    async def exec(self, command: str, *, stdin: bytes | str | AsyncIterable[bytes | str] | None = None,
                   env: dict[str, str] | None = None,
                   cwd: str | None = None, timeout: float | None = None,
                   on_output: Callable[[str, bytes], Any] | None = None) -> ExecResult:
        """Run a command line in the session's K shell, as `ssh agent@k CMD` would: the same
        worker, limits, delegation, rules, receipts and events (`process` events with
        `status: "output"` follow the output as it comes). `env`, `cwd`: for this command only.
        `on_output(stream, chunk)` ("stdout"/"stderr"), sync or async, as output arrives.
        `timeout`: the command is interrupted as by Ctrl-C and CommandTimeout is raised.
        `stdin`: bytes or text, or an async iterable of them sent as it yields (EOF at its end).
        An `on_output` that raises ends the command (as Ctrl-C) and exec raises what it raised."""
        self._check()
        runner = self._shell()
        source = scoped(command, env, cwd)
        out: list[bytes] = []
        err: list[bytes] = []

        failed: list[Exception] = []  # what on_output raised: the command is ended and exec raises it

        def writer(into: list[bytes], stream: str) -> Callable[[bytes], Any]:
            async def write(data: bytes) -> None:
                into.append(data)
                if on_output is not None and not failed:
                    try:
                        answer = on_output(stream, data)
                        if inspect.isawaitable(answer):
                            await answer
                    except Exception as e:  # noqa: BLE001 - never into the worker's frame reader
                        failed.append(e)
                        runner.interrupt()

            return write

        loop = asyncio.get_running_loop()  # the command is on record as its process row's proc.start
        run = loop.create_task(runner.run(source, writer(out, "stdout"), writer(err, "stderr"),
                                          stdin=stdin is not None, keep=True))
        pump = loop.create_task(_feed(runner, stdin)) if stdin is not None else None
        timed_out = False
        gone = self.computer.gone
        try:
            await asyncio.wait((run, gone), timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if not run.done() and gone.done():  # the computer was closed under the command
                run.cancel()
                await asyncio.gather(run, return_exceptions=True)
                raise KomputerClosed(f"the computer was closed while session {self.agent}/{self.id} ran a command")
            if not run.done():
                timed_out = True
                runner.interrupt()
                await asyncio.wait((run, gone), return_when=asyncio.FIRST_COMPLETED)
                if not run.done():
                    run.cancel()
                    await asyncio.gather(run, return_exceptions=True)
                    raise KomputerClosed(f"the computer was closed while session {self.agent}/{self.id} "
                                         "ran a command")
            status = run.result()
        except asyncio.CancelledError:
            runner.interrupt()
            with contextlib.suppress(Exception):
                await run
            raise
        finally:
            if pump is not None:
                pump.cancel()
                await asyncio.gather(pump, return_exceptions=True)
            self.last_used = loop.time()
        if runner.interrupted:
            status = 130
        if runner.cwd != self.record.cwd and not self.record.ephemeral:  # what a crash would lose
            self.record.cwd = runner.cwd
            await asyncio.to_thread(save_session, self.computer.state, self.record)
        self.counters["execs"] += 1
        self.counters["failed"] += status != 0
        self.computer.counters["execs"] += 1
        result = ExecResult(b"".join(out), b"".join(err), status, runner.last_pid, runner.last_receipt)
        if failed:
            raise failed[0]
        if timed_out:
            raise CommandTimeout(f"command timed out after {timeout:g} s", result)
        return result

    @property
    def fs(self) -> AgentFS:
        """The session's files, through the same view SFTP and the agent's mount use."""
        if self._fs is None:
            from kshell.sdk.fs import AgentFS

            self._fs = AgentFS(self)
        return self._fs

    @property
    def cwd(self) -> str:
        """The working directory the last command left."""
        return self._runner.cwd if self._runner is not None else self.record.cwd

    # -- events, forks, approvals --------------------------------------------------------------

    async def events(self, since: int | None = None, *, poll: float = 0.05) -> AsyncIterator[dict[str, Any]]:
        """The agent's events in order (its sessions', processes', denials', approvals'),
        following the log until the caller stops or the session is closed or detached, after
        what was written by then. `since`: the sequence number after which to start (None:
        from the oldest the computer keeps, as over SSH)."""
        from kfs.journal import events_since

        seq = since or 0
        state = self.computer.state
        while True:
            ended = self._ended or self._holder is None or self.computer.closed
            batch = await asyncio.to_thread(events_since, state, seq) if not self.computer.closed else []
            for event in batch:
                seq = event["seq"]
                if event.get("agent") == self.agent:
                    yield event
            if ended and not batch:
                return
            if not batch:
                await asyncio.sleep(poll)

    async def fork(self, *, mode: str = "full", hooks: bool = True, disk: str = "overlay",
                   scope: list[str] | None = None) -> AgentSession:
        """A session in a new fork of this session's tree (kfs.forks): `disk="overlay"` keeps
        what it writes in the fork (the image's drives are read-only there), `"shared"` writes
        through; its mode is never looser than this session's; `scope` bounds a limited fork's
        writes (`~/...` is the agent's home). Registered with the computer: closed with it."""
        from kfs import forks
        from kfs.vfs.policy import stricter

        self._check()
        mode = stricter(self.mode, mode)
        home = self.home
        bounds = tuple(home + p[1:] if p.startswith("~/") or p == "~" else p for p in (scope or ()))
        parent = self.fork_number if self.fork_number is not None else forks.STATE
        server = self.computer.server
        try:
            number = await asyncio.to_thread(forks.create, self.computer.state, parent=parent, mode=mode, disk=disk,
                                             hooks=hooks, scope=bounds, agent=self.agent,
                                             by=f"{FRONT} {self.agent}/{self.id}",
                                             limit=server.config.forks_max_per_agent)
        except forks.TooMany as e:
            raise PermissionError(str(e)) from None
        record, holder = await server.leases.hold(self._agent, f"fork-{number}")
        child = AgentSession(self.computer, self._agent, record, holder, mode=mode, fork=number)
        self.computer._sessions[(self.agent, record.name)] = child  # noqa: SLF001 - released with the computer
        self.computer.counters["forks"] += 1
        self._forks.append(child)
        return child

    async def decide(self, id: int, decision: str, reason: str | None = None) -> dict[str, Any]:
        """Allow or reject one of this agent's pending approvals (what `komputer decide` does);
        the waiting command goes on, or fails with the reason."""
        from kfs.runtime import approvals

        if decision not in ("allow", "reject"):
            raise ValueError(f"decision {decision!r}: expected 'allow' or 'reject'")
        state = self.computer.state
        record = await asyncio.to_thread(approvals.get, state, id)
        if record is None or record.get("agent") != self.agent:
            raise LookupError(f"no pending approval {id} of agent {self.agent}")
        return await asyncio.to_thread(approvals.decide, state, id, decision == "allow",
                                       f"{FRONT} {self.agent}/{self.id}", reason or "")

    async def approvals(self) -> list[dict[str, Any]]:
        """This agent's pending approvals (their ids for `decide`)."""
        from kfs.runtime import approvals

        rows = await asyncio.to_thread(approvals.listing, self.computer.state)
        return [r for r in rows if r.get("agent") == self.agent]

    # -- the agent loop (kshell.agent, docs/agent.md) ---------------------------------------------

    def loop(self, model: Any = None, **options: Any) -> Any:
        """The session's agent loop (kshell.agent.Agent) with `model` (a Model, or the name of
        one given to Komputer.boot(models=...)); options as Agent takes them."""
        from kshell.agent.front import session_loop

        return session_loop(self, model, **options)

    async def prompt(self, text: str, *, model: Any = None) -> Any:
        """Have the session's agent loop answer `text` (kshell.agent.RunResult)."""
        return await self.loop(model).prompt(text)

    async def send(self, message: str) -> None:
        """Queue a user message: the running loop answers it when its answer ends."""
        await self.loop().send(message)

    async def stop(self) -> None:
        """Stop the running loop (between steps, mid-stream or mid-tool)."""
        if getattr(self, "_agent_loop", None) is not None:
            await self._agent_loop.stop()

    async def _end_loop(self) -> None:
        """The agent loop stops, and the sessions its parallel shell calls ran in end."""
        if self._agent_loop is not None:
            with contextlib.suppress(Exception):
                await self._agent_loop.close()

    def stats(self) -> dict[str, Any]:
        """Local counters of this handle (no scan of durable history)."""
        return {"agent": self.agent, "id": self.id, "attached": self.attached, "mode": self.mode,
                "fork": self.fork_number, "jobs": self.jobs, "forks": len(self._forks),
                "worker": self._runner is not None and self._runner.alive, **self.counters}

    # -- ending ----------------------------------------------------------------------------------

    async def _saved(self) -> dict[str, Any] | None:
        if self._runner is None:
            return None
        with contextlib.suppress(Exception):
            return await self._runner.state()
        return None

    async def detach(self, *, keep: bool = True) -> None:
        """Release the lease only: the durable session stays (its cwd, variables, functions),
        and a later `login(agent, id)` takes it up again; running jobs go on in its worker and
        are back at that login when it is this computer's."""
        if self._holder is None:
            return
        await self._end_loop()
        holder, self._holder = self._holder, None
        saved = await self._saved()
        await self.computer.server.leases.let_go(self.record, holder, saved)
        keep = keep and self.has_jobs and not self.computer.closed
        if not keep and self._runner is not None:
            await self._runner.hangup()
            self._runner = None
        self.computer._forget(self, keep=keep)  # noqa: SLF001

    async def _jobs_ended(self, grace: float) -> None:
        """Wait (at most `grace` seconds) until the session's process rows have ended, so that
        their ends come before the session's in the event log."""
        from kfs.runtime import procs

        state = self.computer.state
        deadline = asyncio.get_running_loop().time() + grace
        while asyncio.get_running_loop().time() < deadline:
            rows = await asyncio.to_thread(procs.rows, state, agent=self.agent, live=True)
            if not any(r["session"] == self.id for r in rows):
                return
            await asyncio.sleep(0.02)

    async def close(self) -> None:
        """End the durable session: its jobs end (as at a hang-up), its record and lease go and
        a `session.closed` event says so; event tails finish after what was written."""
        from kfs.agents.sessions import end_session

        if self._ended:
            return
        await self._end_loop()
        for child in self._forks:
            with contextlib.suppress(Exception):
                await child.detach(keep=False)
        if self._runner is not None:
            await self._runner.call("end_jobs")
            await self._jobs_ended(self._runner.limits.interrupt_grace)
            await self._runner.hangup()
            self._runner = None
        holder, self._holder = self._holder, None
        if holder is not None:
            server = self.computer.server
            server.leases.drop(self.record, holder)  # its end below releases the lease
            await asyncio.to_thread(end_session, self.computer.state, self.record, holder,
                                    f"{FRONT} {self.agent}/{self.id}")
        self._ended = True
        self.computer._forget(self, keep=False)  # noqa: SLF001

    async def __aenter__(self) -> AgentSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.detach(keep=False)


async def _feed(runner: WorkerShell, stdin: bytes | str | AsyncIterable[bytes | str]) -> None:
    """The command's standard input, a chunk each time the worker asks for one, then EOF; an
    async iterable is sent as it yields (a pipe the caller writes to while the command runs)."""

    async def pieces() -> AsyncIterator[bytes | str]:
        if isinstance(stdin, (bytes, bytearray, memoryview, str)):
            yield stdin
        else:
            async for piece in stdin:
                yield piece

    async for piece in pieces():
        data = piece.encode("utf-8", "surrogateescape") if isinstance(piece, str) else bytes(piece)
        for start in range(0, len(data), CHUNK):
            if not await runner.take_credit():
                return
            runner.send_stdin(data[start:start + CHUNK])
    runner.send_eof()
