"""The front end's side of session workers: the pool that asks the zygote for them, and the
proxy through which an SSH session runs commands in one.

Nothing of an agent's shell runs in the server process. A session channel gets a worker when
its first command starts (an interactive session that only sits at its prompt has none), sends
it command lines and relays bytes both ways; a worker that does not stop within
`interrupt_grace` of Ctrl-C, a hang-up or the wall-time bound is killed through its pidfd, and
an interactive session then goes on in a fresh worker restored from the shell state the last
finished command left. An interactive session idle for `park_idle` with no jobs gives its
worker back; the next command restores it the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from kshell.worker import wire
from kshell.worker.cgroups import CGroups
from kshell.worker.limits import WorkerLimits, size_text

log = logging.getLogger("kshell.server")

Writer = Callable[[bytes], Awaitable[None]]
INTERRUPTED = 130
IDLE_WORKER = 10.0  # seconds a reset worker waits for another session of its agent
ZYGOTE_START = 120.0  # seconds the zygote may take to load the shell (a loaded 2-core machine)
IDLE_PER_AGENT = 8  # reset workers kept per agent (as many as a client's usual parallel execs)


def retire(worker: WorkerProc, grace: float) -> None:
    """Ask a worker to exit (HANGUP); kill it if it has not within `grace`."""
    if worker.writer is not None and not worker.writer.is_closing():
        worker.writer.write(wire.encode(wire.HANGUP))
    worker.reason = worker.reason or "hangup"
    asyncio.get_running_loop().call_later(grace, worker.kill)


class WorkerGone(Exception):
    """The worker ended before it answered."""


class WorkerFailed(WorkerGone):
    """The worker refused a request (its message says why) and ended."""


class WorkerProc:
    """One forked worker as the front end holds it: its frame socket and its pidfd."""

    def __init__(self, pid: int, sock: socket.socket, pidfd: int) -> None:
        self.pid = pid
        self.sock = sock
        self.pidfd = pidfd
        self.died: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.killed = False
        self.reason = ""  # why the front end killed it (interrupt, wall, hangup)
        self.agent: str | None = None  # once bound, it only ever serves this agent again
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        # the answer to the RESET its last session sent: the next session reads the stream
        # only after it (the reset runs while the last session's client already has its status)
        self.reset: asyncio.Future[Any] | None = None

    def kill(self) -> None:
        """SIGKILL, through the pidfd (never a recycled pid)."""
        self.killed = True
        if self.died.done():
            return
        with contextlib.suppress(ProcessLookupError, OSError):
            if self.pidfd >= 0:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            else:
                os.kill(self.pid, signal.SIGKILL)

    def closed(self, report: dict[str, Any]) -> None:
        if not self.died.done():
            self.died.set_result(report)
        if self.pidfd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.pidfd)
            self.pidfd = -1


class FairWaiters:
    """Sessions waiting for a worker, handed one in turn by agent (round robin), each agent's
    in the order they came.

    One FIFO for all let an agent that opened 256 sessions at once put each of them ahead of
    another agent's next login: that login waited for 256 forks (1.9 s, 10 s at the p99 while
    both mixed). In turn, a waiting agent is served after at most one worker per other waiting
    agent, however many sessions those have queued."""

    def __init__(self) -> None:
        self._by_agent: dict[str, deque[asyncio.Future[WorkerProc]]] = {}
        self._turn: deque[str] = deque()  # agents with waiters, the next to serve first
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, agent: str, waiter: asyncio.Future[WorkerProc]) -> None:
        queue = self._by_agent.get(agent)
        if queue is None:
            queue = self._by_agent[agent] = deque()
            self._turn.append(agent)
        queue.append(waiter)
        self._count += 1

    def discard(self, agent: str, waiter: asyncio.Future[WorkerProc]) -> None:
        """A waiter that gave up (its session went away) no longer counts."""
        queue = self._by_agent.get(agent)
        if queue is not None and waiter in queue:
            queue.remove(waiter)
            self._count -= 1
            if not queue:
                del self._by_agent[agent]
                self._turn.remove(agent)

    def pop(self) -> asyncio.Future[WorkerProc] | None:
        """The next waiter still waiting, the agent whose turn it is first; None if none."""
        while self._turn:
            agent = self._turn.popleft()
            queue = self._by_agent[agent]
            waiter = queue.popleft()
            self._count -= 1
            if queue:
                self._turn.append(agent)
            else:
                del self._by_agent[agent]
            if not waiter.done():
                return waiter
        return None

    def drain(self) -> list[asyncio.Future[WorkerProc]]:
        """Every waiter, the queue emptied."""
        waiters = [w for queue in self._by_agent.values() for w in queue]
        self._by_agent.clear()
        self._turn.clear()
        self._count = 0
        return waiters


class WorkerPool:
    """The zygote and the workers it forked for this server."""

    def __init__(self, state_dir: Path, limits: WorkerLimits) -> None:
        self.state_dir = state_dir
        self.limits = limits
        self.cgroups: CGroups | None = None
        self.cgroup_note = ""
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._ids = itertools.count(1)
        self._requested: set[int] = set()
        self._spares: deque[WorkerProc] = deque()
        self._waiters = FairWaiters()
        self.alive: dict[int, WorkerProc] = {}
        # each agent's cgroup level, made once: the sessions that come while it is being made
        # wait for the same making (a worker joining before its agent's directory exists fails)
        self._agents: dict[str, asyncio.Future[None]] = {}
        self._idle: dict[str, deque[WorkerProc]] = {}  # reset workers kept for their agent's next session
        self._closed = False
        self.on_died: Callable[[int], None] = lambda pid: None  # a bound worker ended (its processes end too)
        self._starting: asyncio.Task[None] | None = None
        # the zygote starts at the first `acquire`, not at `start_soon`: a host of many
        # computers opens one for any login, and one that runs no command costs no process
        self.lazy = False

    def start_soon(self) -> None:
        """Start the zygote in the background: the first `acquire` waits for it (an SDK boot
        returns before the shell is loaded; the first command pays for it, if it comes that soon)."""
        if self._starting is None and not self.lazy:
            self._starting = asyncio.get_running_loop().create_task(self.start())

    async def start(self) -> None:
        """Start the zygote, wait until it has loaded the shell, and ask for spares."""
        self.cgroups, self.cgroup_note = CGroups.open(f"komputer-{os.getpid()}-{id(self):x}")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        args = [sys.executable, "-m", "kshell.worker.zygote", "--fd", str(theirs.fileno()),
                "--state", str(self.state_dir)]
        if self.cgroups is not None:
            args += ["--cgroups", json.dumps(self.cgroups.describe())]
        self._proc = subprocess.Popen(args, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
        theirs.close()
        ready = await asyncio.to_thread(_wait_ready, ours, ZYGOTE_START)
        if not ready:
            self._proc.kill()
            raise RuntimeError("the worker zygote did not start (see the server's error output)")
        ours.setblocking(False)
        self._sock = ours
        asyncio.get_running_loop().add_reader(ours.fileno(), self._readable)
        self._refill()

    def describe(self) -> str:
        return self.cgroup_note if self.cgroups is not None else f"rlimits only ({self.cgroup_note})"

    # -- the zygote's messages -------------------------------------------------------------------

    def _readable(self) -> None:
        assert self._sock is not None
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(self._sock, 65536, 4)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data, fds = b"", []
            if not data:
                self._zygote_lost()
                return
            message = json.loads(data)
            op = message.get("op")
            if op == "spawned":
                self._spawned(message, fds)
            elif op == "died":
                self._died(message)
            else:
                for fd in fds:
                    os.close(fd)

    def _spawned(self, message: dict[str, Any], fds: list[int]) -> None:
        self._requested.discard(int(message["id"]))
        sock = socket.socket(fileno=fds[0])
        worker = WorkerProc(int(message["pid"]), sock, fds[1] if len(fds) > 1 else -1)
        self.alive[worker.pid] = worker
        if self._closed:
            worker.kill()
            return
        waiter = self._waiters.pop()
        if waiter is not None:
            waiter.set_result(worker)
            self._refill()
            return
        self._spares.append(worker)

    def _died(self, message: dict[str, Any]) -> None:
        worker = self.alive.pop(int(message["pid"]), None)
        if worker is None:
            return
        if worker in self._spares:
            self._spares.remove(worker)
        idle = self._idle.get(worker.agent or "")
        if idle is not None and worker in idle:
            idle.remove(worker)
        worker.closed(message)
        if worker.agent is not None:
            self.on_died(worker.pid)
        with contextlib.suppress(OSError):
            if worker.writer is not None:
                worker.writer.close()
            else:
                worker.sock.close()
        self._refill()

    def _zygote_lost(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._sock.fileno())
        if not self._closed:
            log.error("the worker zygote exited; no new sessions can run commands")
        for worker in list(self.alive.values()):
            worker.kill()
            worker.closed({"op": "died", "pid": worker.pid, "code": -9, "oom": False})
        self.alive.clear()
        self._spares.clear()
        for waiter in self._waiters.drain():
            if not waiter.done():
                waiter.set_exception(WorkerGone("the worker zygote is gone"))

    # -- handing workers out -----------------------------------------------------------------------

    def _refill(self) -> None:
        if self._closed or self._sock is None:
            return
        want = self.limits.spare_workers + len(self._waiters) - len(self._spares) - len(self._requested)
        room = self.limits.max_workers - len(self.alive) - len(self._requested)
        for _ in range(max(0, min(want, room))):
            ident = next(self._ids)
            self._requested.add(ident)
            try:
                self._sock.send(json.dumps({"op": "spawn", "id": ident}).encode())
            except OSError:
                self._requested.discard(ident)
                return

    async def acquire(self, agent: str, *, reuse: bool = True) -> WorkerProc:
        """A worker for `agent`: one its last exec session left (with `reuse`), else a fresh one
        (waits while `max_workers` are alive)."""
        if self._starting is None and self._sock is None and not self._closed:  # lazy: now
            self._starting = asyncio.get_running_loop().create_task(self.start())
        if self._starting is not None and not self._starting.done():
            await asyncio.shield(self._starting)
        idle = self._idle.get(agent)
        while idle and reuse:
            worker = idle.pop()
            reset, worker.reset = worker.reset, None
            try:
                if reset is not None:
                    await reset
                return worker
            except WorkerGone:
                retire(worker, self.limits.interrupt_grace)
        if self.cgroups is not None:
            made = self._agents.get(agent)
            if made is None:
                made = self._agents[agent] = asyncio.ensure_future(
                    asyncio.to_thread(self.cgroups.ensure_agent, agent, self.limits.agent_bounds()))
            try:
                await asyncio.shield(made)
            except OSError:
                self._agents.pop(agent, None)  # the next session tries again
                raise
        if self._spares:
            worker = self._spares.popleft()
            self._refill()
            return worker
        if self._closed:
            raise WorkerGone("the server is stopping")
        waiter: asyncio.Future[WorkerProc] = asyncio.get_running_loop().create_future()
        self._waiters.add(agent, waiter)
        self._refill()
        try:
            return await waiter
        except asyncio.CancelledError:
            self._waiters.discard(agent, waiter)
            if waiter.done() and not waiter.cancelled():  # handed a worker as the session went away
                retire(waiter.result(), self.limits.interrupt_grace)
            raise

    def keep(self, worker: WorkerProc) -> None:
        """A reset worker waits for its agent's next session (a few per agent, for a while):
        a stream of short execs then costs no fork, no KState open and no cgroup set-up."""
        assert worker.agent is not None
        idle = self._idle.setdefault(worker.agent, deque())
        if self._closed or len(idle) >= IDLE_PER_AGENT or worker.died.done():
            retire(worker, self.limits.interrupt_grace)
            return
        idle.append(worker)
        loop = asyncio.get_running_loop()
        reset = worker.reset

        def expire() -> None:
            if worker in idle:
                idle.remove(worker)
                retire(worker, self.limits.interrupt_grace)

        def unanswered() -> None:  # a worker that does not finish its reset serves no one
            if not reset.done():
                reset.set_exception(WorkerGone("the worker did not reset"))
                expire()

        loop.call_later(IDLE_WORKER, expire)
        if reset is not None:
            reset.add_done_callback(lambda f: f.cancelled() or f.exception())  # retrieved, if no one waits
            loop.call_later(self.limits.interrupt_grace, unanswered)

    async def close(self) -> None:
        """Kill every worker and stop the zygote (it removes the cgroup tree)."""
        self._closed = True
        if self._starting is not None and not self._starting.done():
            await asyncio.gather(self._starting, return_exceptions=True)
        gone = []
        for worker in list(self.alive.values()):
            worker.kill()
            if worker.pidfd >= 0:
                with contextlib.suppress(OSError):
                    gone.append(os.dup(worker.pidfd))
        # closed means no worker of this state is left, not only told to go: a killed process
        # still in a system call could otherwise write to the state after another host opened it
        await asyncio.to_thread(_wait_exits, gone, ZYGOTE_START)
        for worker in list(self.alive.values()):  # gone: their death reports will not be read now
            self.alive.pop(worker.pid, None)
            worker.closed({"op": "died", "pid": worker.pid, "code": -9, "oom": False})
            with contextlib.suppress(OSError):
                if worker.writer is not None:
                    worker.writer.close()
                else:
                    worker.sock.close()
        if self._sock is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._sock.fileno())
            self._sock.close()
        if self._proc is not None:
            try:
                await asyncio.wait_for(asyncio.to_thread(self._proc.wait), 10)
            except TimeoutError:
                self._proc.kill()
                await asyncio.to_thread(self._proc.wait)
        if self.cgroups is not None:
            await asyncio.to_thread(self.cgroups.remove_all)


def _wait_exits(pidfds: list[int], timeout: float) -> None:
    """Wait until each process's pidfd says it has exited (its files and memory released, as
    the kernel does before it signals the exit), then close the pidfds."""
    poll = select.poll()
    for fd in pidfds:
        poll.register(fd, select.POLLIN)
    left, deadline = set(pidfds), time.monotonic() + timeout
    try:
        while left and time.monotonic() < deadline:
            for fd, _ in poll.poll(max(1, int((deadline - time.monotonic()) * 1000))):
                poll.unregister(fd)
                left.discard(fd)
    finally:
        for fd in pidfds:
            os.close(fd)


class WorkerShell:
    """One session channel's shell, in a worker: what `SessionHandler` calls.

    `spec` is what a worker is bound with (agent, uid, gid, home, cwd, env, functions, tty,
    job_control, limits); `cwd`, `exited` and `last_status` are the last a command reported,
    so the prompt never waits for a worker."""

    def __init__(self, pool: WorkerPool, spec: dict[str, Any],
                 admit: Callable[[], contextlib.AbstractAsyncContextManager[None]] = contextlib.nullcontext) -> None:
        self.pool = pool
        self.admit = admit  # held while waiting for a worker: one of the agent's start slots (limits.AgentStarts)
        self.spec = dict(spec, limits={**pool.limits.for_worker(), **spec.get("limits", {})})
        self.limits = pool.limits
        self.cwd: str = spec.get("cwd") or spec["home"]
        self.exited = False
        self.interrupted = False
        self.last_status = 0
        self.last_pid = 0  # the process row of the last exec line (komputer ps), 0 when unrecorded
        self.last_receipt = 0  # ... and that row's receipt
        self.snapshot: bytes | None = None  # the shell state after the last interactive command
        self.saved: dict[str, Any] | None = None  # cwd/exported/functions, for a named session
        self.cpu_used = 0.0  # CPU seconds the session used, as its worker last said: a new worker goes on from it
        self._worker: WorkerProc | None = None
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._frames: asyncio.Task[None] | None = None
        self._done: asyncio.Future[dict[str, Any]] | None = None
        self._replies: deque[asyncio.Future[Any]] = deque()
        self._out: Writer | None = None
        self._err: Writer | None = None
        self._credits = 0
        self._credit = asyncio.Event()
        self._deadline: asyncio.TimerHandle | None = None
        self._jobs = 0
        self._bound: asyncio.Future[Any] | None = None
        self._busy = asyncio.Lock()  # a command and a park never overlap
        self.term_size: tuple[int, int] | None = None
        self.on_raw: Callable[[bool], None] = lambda raw: None  # a delegated program takes the terminal
        self.running = False
        self._interrupt_pending = self._hangup_pending = False
        self._left: float | None = None  # wall time left while the command waits for an approval
        self.wall_time: float | None = None  # this shell's bound on one command (None: limits.wall_time)

    @property
    def alive(self) -> bool:
        return self._worker is not None

    @property
    def has_jobs(self) -> bool:
        return self._worker is not None and self._jobs > 0

    # -- the worker's lifetime ---------------------------------------------------------------------

    async def _ensure(self) -> WorkerProc:
        if self._worker is not None:
            return self._worker
        async with self.admit():
            worker = await self.pool.acquire(self.spec["agent"], reuse=not self.spec.get("tty"))
        if worker.reader is None:
            worker.reader, worker.writer = await asyncio.open_unix_connection(sock=worker.sock)
        reader, writer = worker.reader, worker.writer
        assert writer is not None
        worker.agent = self.spec["agent"]
        self._worker, self._reader, self._writer = worker, reader, writer
        spec = dict(self.spec, cwd=self.cwd, status=self.last_status, cpu_used=self.cpu_used)
        if self.snapshot is not None:
            writer.write(wire.encode(wire.RESTORE, self.snapshot))
        writer.write(wire.encode_json(wire.BIND, spec))
        loop = asyncio.get_running_loop()
        self._bound = loop.create_future()
        self._replies.append(self._bound)
        if self.term_size is not None:  # the window as it is now, over what a snapshot had
            self._replies.append(loop.create_future())
            writer.write(wire.encode_json(wire.CALL, {"method": "set_terminal_size", "args": list(self.term_size)}))
        self._frames = loop.create_task(self._read_frames(worker, reader))
        return worker

    async def _read_frames(self, worker: WorkerProc, reader: asyncio.StreamReader) -> None:
        """Every frame from the worker, in order; output is written (and drained) before the
        next frame is read, so a slow client slows the command and nothing piles up here. Ends
        after a RESET's answer, leaving the stream at a frame boundary for the next session."""
        released = False
        try:
            while True:
                header = await reader.readexactly(wire.HEADER.size)
                kind, length = wire.HEADER.unpack(header)
                payload = await reader.readexactly(length) if length else b""
                if kind == wire.OUT:
                    if self._out is not None:
                        await self._out(payload)
                elif kind == wire.ERR:
                    if self._err is not None:
                        await self._err(payload)
                elif kind == wire.WANT:
                    self._credits += int(json.loads(payload))
                    self._credit.set()
                elif kind == wire.SNAPSHOT:
                    self.snapshot = payload
                elif kind == wire.RAW:
                    self.on_raw(bool(json.loads(payload)))
                elif kind == wire.PAUSE:
                    self._pause(bool(json.loads(payload)), worker)
                elif kind == wire.DONE:
                    if self._done is not None and not self._done.done():
                        self._done.set_result(json.loads(payload))
                elif kind in (wire.REPLY, wire.FAILED):
                    value = json.loads(payload)
                    fut = self._replies.popleft() if self._replies else None
                    if fut is not None and not fut.done():
                        if kind == wire.FAILED:
                            fut.set_exception(WorkerFailed(value.get("message", "the worker failed")))
                        else:
                            fut.set_result(value)
                    if kind == wire.REPLY and isinstance(value, dict) and value.get("reset"):
                        released = True
                        return
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            if not released:
                self._lost(worker)

    def _lost(self, worker: WorkerProc) -> None:
        """The worker's stream ended: whatever waits on it is told."""
        if self._worker is worker:
            self._worker = None
            self._bound = None
            if self._writer is not None and worker.died.done():
                self._writer.close()
            self._writer = self._reader = None
        while self._replies:
            fut = self._replies.popleft()
            if not fut.done():
                fut.set_exception(WorkerGone("the session's worker ended"))
        self._credit.set()

    async def _request(self, kind: int, value: Any) -> Any:
        await self._ensure()
        assert self._writer is not None
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._replies.append(fut)
        self._writer.write(wire.encode_json(kind, value))
        return await fut

    def _send(self, kind: int, payload: bytes = b"") -> None:
        if self._writer is not None and not self._writer.is_closing():
            self._writer.write(wire.encode(kind, payload))

    # -- what a session does -------------------------------------------------------------------------

    async def run(self, source: str, out: Writer, err: Writer, *, interactive: bool = False,
                  stdin: bool = True, keep: bool = False) -> int:
        """Run one command line in the worker; its exit status. Output reaches `out`/`err` in
        order before this returns. Without `stdin` the command reads an empty input. `keep`: an
        exec whose shell state lives on (an SDK session's), snapshotted as an interactive line's."""
        async with self._busy:
            return await self._run(source, out, err, interactive, stdin, keep)

    async def _run(self, source: str, out: Writer, err: Writer, interactive: bool, stdin: bool,
                   keep: bool = False) -> int:
        self.interrupted = False
        try:
            worker = await self._ensure()
        except WorkerGone as e:
            await err(f"K: the session's shell could not start: {e}\n".encode())
            return 1
        bound = self._bound  # not awaited: the worker takes BIND, then RUN, in order
        loop = asyncio.get_running_loop()
        self._done = done = loop.create_future()
        self._out, self._err = out, err
        self._credits = 0
        self._credit.clear()
        self.running = True
        self._send(wire.RUN, json.dumps({"source": source, "interactive": interactive, "keep": keep}).encode())
        if not stdin:
            self._send(wire.STDIN_EOF)
        if self._interrupt_pending:
            self._interrupt_pending = False
            self.interrupt(self._hangup_pending)
        wall = self.wall_time or self.limits.wall_time
        self._deadline = loop.call_later(wall + max(self.limits.interrupt_grace, 1.0),
                                         self._escalate, worker, "wall", done)
        try:
            waiting = {done, worker.died}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if done.done():
                result = done.result()
                frames = self._frames
                self._jobs = int(result.get("jobs", 0))
                self.cwd = result.get("cwd", self.cwd)
                self.exited = bool(result.get("exited"))
                self.interrupted = bool(result.get("interrupted"))
                self.cpu_used = float(result.get("cpu", self.cpu_used))
                self.last_pid = int(result.get("pid") or 0)
                self.last_receipt = int(result.get("receipt") or 0)
                status = int(result["status"])
            else:
                frames = self._frames
                if frames is not None:
                    await asyncio.gather(frames, return_exceptions=True)
                failed = bound.exception() if bound is not None and bound.done() and not bound.cancelled() else None
                if isinstance(failed, WorkerFailed):
                    await err(f"K: the session's shell could not start: {failed}\n".encode())
                    status = 1
                else:
                    status = await self._worker_died(worker, err)
            if frames is not None and worker.died.done():
                await asyncio.gather(frames, return_exceptions=True)  # the last output is written
        finally:
            self.running = False
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            self._left = None
            self._done = None  # the writers stay: a background job's output reaches the terminal
        self.last_status = status
        return status

    async def _worker_died(self, worker: WorkerProc, err: Writer) -> int:
        """The worker ended in the middle of a command: why, in the words the agent reads."""
        report = worker.died.result()
        if self._frames is not None:
            await asyncio.gather(self._frames, return_exceptions=True)
        reason = worker.reason
        if report.get("oom"):
            await err(f"K: memory limit of {size_text(self.limits.session_memory)} reached\n".encode())
            return 137
        if reason == "interrupt":
            self.interrupted = True
            return INTERRUPTED
        if reason == "wall":
            await err(f"K: command exceeded the wall-time limit of {self.wall_time or self.limits.wall_time:g} s\n".encode())
            return 124
        code = int(report.get("code", 1))
        await err(f"K: the session's shell ended unexpectedly ({_describe(code)})\n".encode())
        return 128 - code if code < 0 else code or 1

    def _escalate(self, worker: WorkerProc, reason: str, done: asyncio.Future[dict[str, Any]] | None) -> None:
        """Cooperative cancellation did not end the command (`done`) in time: kill the worker.
        A command that ended meanwhile leaves the worker alone (it may serve the agent's next
        session by now)."""
        if worker.died.done() or done is None or done.done() or self._done is not done:
            return
        worker.reason = reason
        log.info("killing worker %d of %s (%s did not stop it)", worker.pid, self.spec["agent"], reason)
        worker.kill()

    def _pause(self, paused: bool, worker: WorkerProc) -> None:
        """A command waiting for an approval does not use up its wall time: the deadline
        stops while it waits and goes on with what was left."""
        loop = asyncio.get_running_loop()
        if paused and self._deadline is not None:
            self._left = max(self._deadline.when() - loop.time(), 0.0)
            self._deadline.cancel()
            self._deadline = None
        elif not paused and self._deadline is None and self._done is not None and self._left is not None:
            self._deadline = loop.call_later(self._left, self._escalate, worker, "wall", self._done)
            self._left = None

    def interrupt(self, hangup: bool = False) -> None:
        """Ctrl-C (or, `hangup`, the client went away) while a command runs: cancel it, and kill
        the worker if it has not stopped within `interrupt_grace`. A command waiting for an
        approval tells the two apart: Ctrl-C withdraws it, a hangup leaves it for the resume."""
        worker = self._worker
        if worker is None or not self.running:
            self._interrupt_pending = self._busy.locked()  # a line still waiting for its worker
            self._hangup_pending = hangup
            return
        self.interrupted = True
        self._send(wire.INTERRUPT, b"hangup" if hangup else b"")
        asyncio.get_running_loop().call_later(self.limits.interrupt_grace, self._escalate, worker, "interrupt",
                                              self._done)

    async def take_credit(self) -> bool:
        """Wait until the running command takes another chunk of stdin (the caller cancels this
        when the command ends); False once the worker is gone."""
        while self._credits <= 0:
            if self._worker is None and self._bound is not None:
                return False
            self._credit.clear()
            await self._credit.wait()
        self._credits -= 1
        return True

    def send_stdin(self, data: bytes) -> None:
        self._send(wire.STDIN, data)

    def send_eof(self) -> None:
        self._send(wire.STDIN_EOF)

    async def call(self, method: str, *args: Any) -> Any:
        """Ask the shell (job notices, Ctrl-Z, window size, ...); None when it has no worker."""
        if self._worker is None and method in ("notices", "refuse_exit", "suspend"):
            return "" if method != "suspend" else False
        if self._worker is None and method == "set_status":
            self.last_status = int(args[0])
            return None
        try:
            return await self._request(wire.CALL, {"method": method, "args": list(args)})
        except WorkerGone:
            return None

    async def state(self) -> dict[str, Any] | None:
        """cwd, exported variables and functions, for a named session's record."""
        if self._worker is not None:
            saved = await self.call("state")
            if isinstance(saved, dict):
                self.saved = saved
        return self.saved

    async def park(self) -> None:
        """Give the worker back while the session idles: the snapshot restores it later."""
        async with self._busy:
            if self._worker is None or self._jobs:
                return
            await self.state()
            await self.hangup()

    async def resize(self, columns: int, lines: int) -> None:
        """The window changed: COLUMNS and LINES for the next command (sent now if a worker
        runs, else when one starts)."""
        self.term_size = (columns, lines)
        if self._worker is not None:
            await self.call("set_terminal_size", columns, lines)

    async def hangup(self) -> None:
        """The session (or its idle period) ends. A worker whose session ended cleanly (no
        jobs, last command not interrupted, as when the client went away) is reset and kept
        for the agent's next exec; one with jobs is detached (they run on; a terminal session, or
        one whose last command was interrupted, hangs up all but `nohup` and disowned ones
        first) and exits when they end; any other
        exits, or is killed if it has not within `interrupt_grace`. The channel does not wait."""
        worker = self._worker
        if worker is None:
            return
        if (not self.running and not self._jobs and not self.interrupted and not worker.killed
                and not self.spec.get("tty")):
            worker.reset = asyncio.get_running_loop().create_future()
            self._replies.append(worker.reset)
            self._send(wire.RESET)  # this session's frame reader ends at its answer
            self._worker = self._reader = self._writer = self._bound = None
            self.pool.keep(worker)
            return
        if self._jobs and not self.running and not worker.killed:
            # its jobs outlive the channel, as under sshd: the worker exits when they end
            hangup = bool(self.spec.get("tty")) or self.interrupted  # Ctrl-C, or the client went away mid-command
            self._send(wire.DETACH, json.dumps({"hangup": hangup}).encode())
            self._worker = self._reader = self._writer = self._bound = None
            return
        self._lost(worker)
        retire(worker, self.limits.interrupt_grace)


def _wait_ready(sock: socket.socket, timeout: float) -> bool:
    """The zygote's first message says it has loaded the shell (a server that listens can run
    commands at once, instead of its first sessions waiting out the preload)."""
    sock.settimeout(timeout)
    try:
        return json.loads(sock.recv(65536) or b"{}").get("op") == "ready"
    except (TimeoutError, OSError, ValueError):
        return False


def _describe(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"signal {-code}"
    return f"exit status {code}"
