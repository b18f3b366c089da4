"""Persistent terminals: a session's terminal that outlives the connection that started it.

A persistent terminal runs the K prompt itself (kshell.server.prompt: prompt, edited line, run,
repeat, until `exit`), or one command line (a REPL, an agent's CLI, `komputer chat`), in a
session worker of its own, as an interactive line of a PTY session runs: a delegated program
gets a pty of its own (kshell.delegate.terminal), sized as the terminal and resized with it, so
a window change reaches it as SIGWINCH and Ctrl-C, passed through as a byte, reaches its
foreground process group through the pty's line discipline, never the worker. The terminal
keeps the line editor an SSH login has (asyncssh's), so what was typed at the prompt survives
the connection too. What it prints
feeds a VT emulator (kshell.screen) that keeps the screen and a bounded scrollback while no one
is attached, and goes to every attached viewer. The terminal holds its session's lease from
its start until its command ends or it is destroyed; the command's wall time is
`terminal_wall_time`, not `wall_time`.

Front ends are translators: an SSH PTY channel with `K_SESSION` naming a session that has one
attaches to it (kshell.server.session), the `komputer` runtime makes one (kshell.runtimes).
Several viewers may be attached; the latest to attach writes and sets the size, the others
watch.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kshell.screen import VTScreen
from kshell.server.prompt import INTERRUPTED, Interrupted, LineEditor, prompt_loop, prompt_text, suspend_line

if TYPE_CHECKING:
    from kfs.agents import Agent, SessionRecord
    from kshell.server.config import ServerConfig
    from kshell.server.leases import SessionLeases
    from kshell.server.workers import WorkerPool, WorkerProc, WorkerShell

Writer = Callable[[bytes], Awaitable[None]]


class TerminalHost(Protocol):
    """What the terminals use of their server (kshell.server.app.KServer wires it): its settings
    and name, the leases their sessions hold, the worker pool's cgroups, the audit, the shell
    maker."""

    config: ServerConfig
    hostname: str
    leases: SessionLeases
    pool: WorkerPool

    async def audit(self, type_: str, **data: Any) -> None:
        """Append an event and wait until it is written (kshell.server.audit)."""

    def make_shell(self, agent: Agent, record: SessionRecord, env: dict[str, str], *, tty: bool = False,
                   front: str | None = None, hosts: dict[str, Any] | None = None) -> WorkerShell: ...

HUNG_UP = 128 + signal.SIGHUP  # the status of a prompt that `destroy` ended
FEED_SLICE = 4096  # bytes of output fed to the emulator between turns of the event loop
VIEWER_BACKLOG = 1 << 20  # bytes queued for a viewer that does not read before it is repainted instead
END_WAIT = 10.0  # seconds destroy waits for the command to end after the hang-up before killing


class TerminalError(Exception):
    """A terminal that does not exist, or one that cannot be made (the message says why)."""


class Key(enum.Enum):
    """What reaches the input queue besides typed bytes."""

    INTERRUPT = "Ctrl-C at the prompt"
    HANGUP = "the terminal is destroyed"


class _HungUp(Exception):  # noqa: N818 - it is what happened
    """`destroy` ends the prompt at once, stopped jobs or not."""


@dataclass(eq=False)
class Viewer:
    """One attached front end: where the terminal's bytes go, through a queue of its own, so a
    viewer that stops reading (a stopped client, a full network window) never stalls the
    program: past VIEWER_BACKLOG bytes queued, its backlog is dropped and it gets the screen
    painted anew when it reads again, as tmux repaints a client that fell behind."""

    write: Writer
    size: tuple[int, int] | None = None
    can_write: bool = True  # False: it watches only (a login in a stricter mode than the terminal's)
    attached_at: float = field(default_factory=time.time)
    chunks: deque[bytes] = field(default_factory=deque)
    queued: int = 0
    stale: bool = True  # the next thing it gets is the whole screen (at first, and after falling behind)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    idle: asyncio.Event = field(default_factory=asyncio.Event)  # set when all it was given is written
    task: asyncio.Task[None] | None = None

    def push(self, data: bytes) -> None:
        self.idle.clear()
        if self.stale:
            return  # the repaint to come shows it
        if self.queued + len(data) > VIEWER_BACKLOG:
            self.chunks.clear()
            self.queued = 0
            self.stale = True
        else:
            self.chunks.append(data)
            self.queued += len(data)
        self.wake.set()

    async def run(self, screen: VTScreen) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            while self.stale or self.chunks:
                if self.stale:
                    self.stale = False
                    self.chunks.clear()
                    self.queued = 0
                    data = screen.redraw()
                else:
                    data = self.chunks.popleft()
                    self.queued -= len(data)
                await self.write(data)
            self.idle.set()


class PersistentTerminal:
    """One session's terminal, kept by the server while its prompt (or its one command) runs."""

    def __init__(self, server: TerminalHost, agent: Agent, record: SessionRecord, holder: dict[str, Any],
                 runner: WorkerShell, command: str | None, size: tuple[int, int], scrollback: int) -> None:
        self.server = server
        self.agent = agent
        self.record = record
        self.command = command  # None: the K prompt, running the lines typed into it
        self.line: str | None = None  # the command line running now
        self.lines_ended = 0  # command lines run to their end
        self.prompted = asyncio.Event()  # set while the prompt waits for a line
        self.mode = runner.spec["env"].get("K_MODE") or "full"  # a login in a stricter mode only watches
        self.runner = runner
        self.screen = VTScreen(size[0], size[1], scrollback)
        self.size = size
        self.started = time.time()
        self.status: int | None = None  # the command's exit status once it ended
        self.ended = asyncio.Event()
        self.viewers: list[Viewer] = []
        self._holder: dict[str, Any] | None = holder
        self._raw = False
        # typed bytes: edited lines (b"": the end of input), or as typed while a program has its pty
        self._input: asyncio.Queue[bytes | Key] = asyncio.Queue()
        self._typed = b""  # typed past the last line the prompt read: the next reader's
        self._hung_up = False
        self._editor = LineEditor(self._feed, self._input.put_nowait, lambda: self._input.put_nowait(b""),
                                  self._interrupt, self._suspend, runner.spec["env"].get("TERM") or "dumb", size[0])
        self._stopping: asyncio.Task[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._worker: WorkerProc | None = None  # the worker the command ended in
        runner.on_raw = self._set_raw

    # -- what it is ----------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """AGENT/SESSION, as `komputer attach` and `komputer sessions` write it."""
        return f"{self.agent.name}/{self.record.name}"

    @property
    def alive(self) -> bool:
        """The command still runs (False once it ended; never an exception)."""
        return not self.ended.is_set()

    @property
    def detached(self) -> bool:
        return not self.viewers

    @property
    def doing(self) -> str:
        """What runs in it, as `komputer sessions` shows it: its command, or at a K prompt the
        line running (`K prompt` while it waits for one)."""
        if self.command is not None:
            return self.command
        return f"K prompt: {self.line}" if self.line else "K prompt"

    @property
    def worker_pid(self) -> int:
        """The pid of the session's worker (its cgroup leaf holds every process of the terminal); 0 when none."""
        worker = self.runner._worker  # noqa: SLF001 - the terminal owns its runner
        return worker.pid if worker is not None else 0

    def cgroup_dirs(self) -> dict[str, Path]:
        """The cgroup leaf of the terminal's worker, by controller (empty without cgroups)."""
        return self.cgroup_dirs_of(self.worker_pid)

    def cgroup_dirs_of(self, pid: int) -> dict[str, Path]:
        cgroups = self.server.pool.cgroups
        if cgroups is None or not pid:
            return {}
        leaf = (cgroups.agent_dir(self.agent.name), f"w{pid}")
        return {c: base.joinpath(*leaf) for c, base in cgroups.bases.items()}

    def metrics(self) -> dict[str, Any]:
        """Uptime, and what the kernel counts for the terminal's cgroup leaf (its worker and
        every program it runs): memory in use, CPU seconds, tasks."""
        out: dict[str, Any] = {"uptime": time.time() - self.started, "alive": self.alive}
        cgroups, dirs = self.server.pool.cgroups, self.cgroup_dirs()
        if cgroups is None or not dirs:
            return out
        if cgroups.version == 2:
            leaf = next(iter(dirs.values()))
            files = {"memory_bytes": leaf / "memory.current", "tasks": leaf / "pids.current",
                     "cpu_seconds": leaf / "cpu.stat"}
        else:
            files = {"memory_bytes": dirs["memory"] / "memory.usage_in_bytes", "tasks": dirs["pids"] / "pids.current",
                     "cpu_seconds": (dirs.get("cpuacct") or dirs["cpu"]) / "cpuacct.usage"}
        for key, path in files.items():
            out[f"{key}_file"] = str(path)
            with contextlib.suppress(OSError, ValueError, KeyError):
                text = path.read_text()
                if path.name == "cpu.stat":
                    out[key] = int(dict(line.split() for line in text.splitlines() if line.strip())["usage_usec"]) / 1e6
                elif path.name == "cpuacct.usage":
                    out[key] = int(text) / 1e9
                else:
                    out[key] = int(text)
        return out

    # -- its life ------------------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._main())

    async def _main(self) -> None:
        runner = self.runner
        await runner.resize(*self.size)
        status = 1
        try:
            if self.command is None:
                status = await prompt_loop(self, runner)
            else:
                status = await self.run_line(self.command)
        except _HungUp:
            status = HUNG_UP
        finally:
            self.status = status
            self._worker = runner._worker  # noqa: SLF001 - its background jobs may keep it after the hang-up
            self.ended.set()
            await self._let_go()

    async def _let_go(self) -> None:
        """The command ended: the worker is hung up on as a closing terminal's (its jobs get
        SIGHUP; `nohup` and disowned ones go on until `destroy`), and the session's lease is
        released (cwd, variables and functions saved)."""
        holder, self._holder = self._holder, None
        saved = None
        with contextlib.suppress(Exception):
            if not self.record.ephemeral and self.runner.alive:
                saved = await asyncio.wait_for(self.runner.state(), END_WAIT)
        await self.runner.hangup()
        if holder is not None:
            with contextlib.suppress(Exception):  # a lease taken over meanwhile is not ours to save
                await self.server.leases.let_go(self.record, holder, saved)

    def _feed(self, data: bytes) -> None:
        self.screen.feed(data)
        for viewer in self.viewers:
            viewer.push(data)

    async def _output(self, data: bytes) -> None:
        for start in range(0, len(data), FEED_SLICE):
            if start:
                await asyncio.sleep(0)  # the emulator is Python: other sessions go on between slices
            piece = data[start:start + FEED_SLICE]
            if self._raw:  # a program's pty made its output what a terminal takes
                self._feed(piece)
            else:  # a K command's, on no pty: through the editor (a half-typed line is drawn again below)
                self._editor.output(piece)

    async def _pump(self) -> None:
        """Typed bytes to the running line, a chunk each time it asks for one (b"": end of input)."""
        runner = self.runner
        while await runner.take_credit():
            if self._typed:
                data: bytes | Key = self._typed
                self._typed = b""
            else:
                data = await self._input.get()
            if isinstance(data, Key):
                continue  # a hang-up interrupts the line itself
            if data:
                runner.send_stdin(data)
            else:
                runner.send_eof()

    def _set_raw(self, raw: bool) -> None:
        self._raw = raw
        self._editor.set_raw(raw)
        if not raw:
            self._editor.set_width(self.size[0])

    def _interrupt(self) -> None:
        """Ctrl-C, not to a program with a pty of its own: at the prompt it drops the line
        being typed; while a K command runs it interrupts it, as at an SSH login."""
        self._editor.clear()
        if self.prompted.is_set():
            self._input.put_nowait(Key.INTERRUPT)
        else:
            self._editor.output(b"^C")
            self.runner.interrupt()

    def _suspend(self) -> None:
        """Ctrl-Z, not to a program with a pty of its own: while a K command line runs at the
        prompt, it stops it into a job (`^Z`, the `Stopped` notice, the prompt), as at an SSH
        login; otherwise nothing, as in bash."""
        if self.command is None and self.line is not None and self._stopping is None:
            self._stopping = asyncio.get_running_loop().create_task(self._stop_line())

    async def _stop_line(self) -> None:
        try:
            if await suspend_line(self.runner, lambda: self.line is not None):
                self._editor.output(b"^Z")
        finally:
            self._stopping = None

    # -- the prompt's front end (kshell.server.prompt) ----------------------------------------------------

    def write(self, text: str) -> None:
        self._editor.output(text.encode())

    def prompt(self) -> str:
        return prompt_text(self.agent.name, self.agent.home, self.server.hostname, self.runner.cwd)

    def idle(self) -> None:
        """A terminal's worker stays: its jobs and its screen are what it is kept for."""

    async def readline(self) -> str:
        while b"\n" not in self._typed:
            if self._hung_up:
                raise _HungUp
            self.prompted.set()
            try:
                item = await self._input.get()
            finally:
                self.prompted.clear()
            if item is Key.HANGUP:
                raise _HungUp
            if item is Key.INTERRUPT:
                self._typed = b""
                raise Interrupted
            assert isinstance(item, bytes)
            if not item:  # the end of input
                line, self._typed = self._typed, b""
                return line.decode("utf-8", "replace")
            self._typed += item
        line, _, self._typed = self._typed.partition(b"\n")
        return line.decode("utf-8", "replace") + "\n"

    async def run_line(self, line: str) -> int:
        """Run one command line, typed keys relayed to it while it runs."""
        self.line = line.strip()
        await self.server.audit("terminal.exec", agent=self.agent.name, session=self.record.name, command=self.line)
        pump = asyncio.get_running_loop().create_task(self._pump())
        try:
            status = await self.runner.run(line, self._output, self._output, interactive=True)
        finally:
            pump.cancel()
            await asyncio.gather(pump, return_exceptions=True)
            self.line = None
            self.lines_ended += 1
        return INTERRUPTED if self.runner.interrupted else status

    # -- what front ends do ----------------------------------------------------------------------------

    async def type(self, data: bytes) -> None:
        """Keys, as a terminal sends them. A program with a pty of its own gets them as they
        are (its line discipline echoes, edits and turns Ctrl-C into SIGINT for its foreground
        group); the prompt, and a K command reading the terminal, get lines edited by the line
        editor an SSH login has: echoed, Backspace erasing, arrows and history, Return ending
        the line, Ctrl-D on an empty line the end of input, Ctrl-C interrupting."""
        if not self.alive or not data:
            return
        if self._raw:
            self._input.put_nowait(data)
            return
        self._editor.keys(data)

    async def resize(self, columns: int, lines: int) -> None:
        """The writer's window changed: the screen and the program's pty follow (SIGWINCH)."""
        if columns <= 0 or lines <= 0 or (columns, lines) == self.size:
            return
        self.size = (columns, lines)
        self.screen.resize(columns, lines)
        if not self._raw:
            self._editor.set_width(columns)
        if self.alive:
            await self.runner.resize(columns, lines)

    async def attach(self, write: Writer, size: tuple[int, int] | None, *, can_write: bool = True) -> Viewer:
        """A new viewer: one that may write becomes the writer and the terminal takes its
        size; every one gets the screen painted (the program redraws itself too when the size
        changed)."""
        viewer = Viewer(write, size, can_write)
        if size is not None and can_write:
            await self.resize(*size)
        self.viewers.append(viewer)
        viewer.wake.set()  # stale: the screen is painted first
        viewer.task = asyncio.get_running_loop().create_task(viewer.run(self.screen))
        return viewer

    def detach(self, viewer: Viewer) -> None:
        with contextlib.suppress(ValueError):
            self.viewers.remove(viewer)
        if viewer.task is not None:
            viewer.task.cancel()

    async def flushed(self, viewer: Viewer) -> None:
        """Wait until what was queued for `viewer` is written (before its channel ends with
        the command's status), at most END_WAIT for a client that does not read."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(viewer.idle.wait(), END_WAIT)

    def is_writer(self, viewer: Viewer) -> bool:
        """The latest attached viewer that may write types and sets the size."""
        writers = [v for v in self.viewers if v.can_write]
        return bool(writers) and writers[-1] is viewer

    async def destroy(self) -> None:
        """End every process of the terminal: the command is hung up on (as when a terminal
        closes), then its worker, with everything left in its cgroup leaf (background jobs
        too), is killed. The worker is the terminal's alone: a tty session's is never reused."""
        task = self._task
        if self.alive:
            self._hung_up = True
            self._input.put_nowait(Key.HANGUP)  # the prompt ends (a line running is hung up on first)
            self.runner.interrupt(hangup=True)
            if task is not None:
                with contextlib.suppress(asyncio.TimeoutError, Exception):
                    await asyncio.wait_for(asyncio.shield(task), END_WAIT)
            if not self.ended.is_set():
                worker = self.runner._worker  # noqa: SLF001
                if worker is not None:
                    worker.kill()
        if task is not None:
            with contextlib.suppress(Exception):
                await task
        elif self._holder is not None:
            await self._let_go()
        worker = self._worker
        if worker is not None and not worker.died.done():
            worker.kill()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(worker.died), END_WAIT)


class Terminals:
    """The server's persistent terminals, by (agent, session)."""

    def __init__(self, server: TerminalHost) -> None:
        self.server = server
        self._by_name: dict[tuple[str, str], PersistentTerminal] = {}

    def get(self, agent: str, session: str) -> PersistentTerminal | None:
        return self._by_name.get((agent, session))

    def all(self) -> list[PersistentTerminal]:
        return list(self._by_name.values())

    async def create(self, agent: Agent, session: str | None, command: str | None, *,
                     env: dict[str, str] | None = None,
                     cwd: str | None = None, size: tuple[int, int] = (80, 24), front: str = "terminal",
                     term: str = "xterm-256color") -> PersistentTerminal:
        """A persistent terminal in `agent`'s session `session` (None: a fresh name) running
        `command` (None: the K prompt); the session's lease is taken (LeaseHeld when another
        holds it)."""
        if session is not None and (agent.name, session) in self._by_name:
            existing = self._by_name[(agent.name, session)]
            if existing.alive:
                raise TerminalError(f"session {agent.name}/{session} already has a terminal "
                                    f"(komputer attach {existing.name})")
            await self.destroy(agent.name, session)
        server = self.server
        limits = server.config.limits
        record, holder = await server.leases.hold(agent, session)
        try:
            if cwd is not None:
                record.cwd = cwd
            base = {"HOME": agent.home, "USER": agent.name, "LOGNAME": agent.name, "TERM": term,
                    "COLUMNS": str(size[0]), "LINES": str(size[1])}
            runner = server.make_shell(agent, record, {**base, **(env or {})}, tty=True, front=front)
            runner.wall_time = limits.terminal_wall_time
            runner.spec["limits"] = {**runner.spec["limits"], "wall_time": limits.terminal_wall_time}
        except BaseException:
            await server.leases.let_go(record, holder, None)
            raise
        terminal = PersistentTerminal(server, agent, record, holder, runner, command, size,
                                      limits.terminal_scrollback)
        self._by_name[(agent.name, record.name)] = terminal
        terminal.start()
        await server.audit("terminal.create", agent=agent.name, session=record.name, command=terminal.doing,
                           front=front)
        return terminal

    async def destroy(self, agent: str, session: str) -> bool:
        """End the terminal and forget it; False when there is none."""
        terminal = self._by_name.pop((agent, session), None)
        if terminal is None:
            return False
        await terminal.destroy()
        await self.server.audit("terminal.destroy", agent=agent, session=session)
        return True

    async def close(self) -> None:
        """The server stops: every terminal ends with it."""
        for agent, session in list(self._by_name):
            with contextlib.suppress(Exception):
                await self.destroy(agent, session)


__all__ = ["PersistentTerminal", "TerminalError", "Terminals", "Viewer"]
