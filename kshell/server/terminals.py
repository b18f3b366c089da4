"""Persistent terminals: a session's terminal that outlives the connection that started it.

A persistent terminal runs one command line (a REPL, an agent's CLI, `komputer chat`) in a
session worker of its own, as an interactive line of a PTY session runs: a delegated program
gets a pty of its own (kshell.delegate.terminal), sized as the terminal and resized with it, so
a window change reaches it as SIGWINCH and Ctrl-C, passed through as a byte, reaches its
foreground process group through the pty's line discipline, never the worker. What it prints
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
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kshell.screen import VTScreen

if TYPE_CHECKING:
    from kfs.agents import Agent, SessionRecord
    from kshell.server.app import KServer
    from kshell.server.workers import WorkerProc, WorkerShell

Writer = Callable[[bytes], Awaitable[None]]
CTRL_C = 0x03
LONE_LF = re.compile(rb"(?<!\r)\n")
FEED_SLICE = 4096  # bytes of output fed to the emulator between turns of the event loop
VIEWER_BACKLOG = 1 << 20  # bytes queued for a viewer that does not read before it is repainted instead
END_WAIT = 10.0  # seconds destroy waits for the command to end after the hang-up before killing


class TerminalError(Exception):
    """A terminal that does not exist, or one that cannot be made (the message says why)."""


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
    """One session's terminal, kept by the server while its command runs."""

    def __init__(self, server: KServer, agent: Agent, record: SessionRecord, holder: dict[str, Any],
                 runner: WorkerShell, command: str, size: tuple[int, int], scrollback: int) -> None:
        self.server = server
        self.agent = agent
        self.record = record
        self.command = command
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
        self._line = bytearray()  # a K command's line being typed (no pty: the terminal edits it)
        self._input: asyncio.Queue[bytes] = asyncio.Queue()
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
        pump = asyncio.get_running_loop().create_task(self._pump())
        status = 1
        try:
            status = await runner.run(self.command, self._output, self._output, interactive=True)
        finally:
            pump.cancel()
            await asyncio.gather(pump, return_exceptions=True)
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
                await self.server.let_go(self.record, holder, saved)

    async def _output(self, data: bytes) -> None:
        if not self._raw:  # a K command's output, on no pty: a newline starts the next line, as ONLCR makes it
            data = LONE_LF.sub(b"\r\n", data)
        for start in range(0, len(data), FEED_SLICE):
            if start:
                await asyncio.sleep(0)  # the emulator is Python: other sessions go on between slices
            piece = data[start:start + FEED_SLICE]
            self.screen.feed(piece)
            for viewer in self.viewers:
                viewer.push(piece)

    async def _pump(self) -> None:
        """Typed bytes to the command, a chunk each time it asks for one (b"": end of input)."""
        runner = self.runner
        while await runner.take_credit():
            data = await self._input.get()
            if data:
                runner.send_stdin(data)
            else:
                runner.send_eof()

    def _set_raw(self, raw: bool) -> None:
        self._raw = raw
        self._line.clear()

    # -- what front ends do ----------------------------------------------------------------------------

    async def type(self, data: bytes) -> None:
        """Keys, as a terminal sends them. A program with a pty of its own gets them as they
        are (its line discipline echoes, edits and turns Ctrl-C into SIGINT for its foreground
        group); a K command reading the terminal gets edited lines, as from a pty in canonical
        mode: echoed, Backspace erasing, Return ending the line, Ctrl-D on an empty line the
        end of input, Ctrl-C interrupting it as at a K prompt."""
        if not self.alive or not data:
            return
        if self._raw:
            self._input.put_nowait(data)
            return
        echo = bytearray()
        for byte in data:
            if byte == CTRL_C:
                self._line.clear()
                echo += b"^C\n"
                self.runner.interrupt()
            elif byte in (0x0D, 0x0A):
                self._input.put_nowait(bytes(self._line) + b"\n")
                self._line.clear()
                echo += b"\n"
            elif byte in (0x7F, 0x08):
                if self._line:
                    while self._line and self._line.pop() & 0xC0 == 0x80:
                        pass  # the rest of a UTF-8 character
                    echo += b"\b \b"
            elif byte == 0x04:
                if self._line:
                    self._input.put_nowait(bytes(self._line))
                    self._line.clear()
                else:
                    self._input.put_nowait(b"")
            elif byte >= 0x20 or byte == 0x09:
                self._line.append(byte)
                echo.append(byte)
        if echo:
            await self._output(bytes(echo))

    async def resize(self, columns: int, lines: int) -> None:
        """The writer's window changed: the screen and the program's pty follow (SIGWINCH)."""
        if columns <= 0 or lines <= 0 or (columns, lines) == self.size:
            return
        self.size = (columns, lines)
        self.screen.resize(columns, lines)
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

    def __init__(self, server: KServer) -> None:
        self.server = server
        self._by_name: dict[tuple[str, str], PersistentTerminal] = {}

    def get(self, agent: str, session: str) -> PersistentTerminal | None:
        return self._by_name.get((agent, session))

    def all(self) -> list[PersistentTerminal]:
        return list(self._by_name.values())

    async def create(self, agent: Agent, session: str | None, command: str, *, env: dict[str, str] | None = None,
                     cwd: str | None = None, size: tuple[int, int] = (80, 24), front: str = "terminal",
                     term: str = "xterm-256color") -> PersistentTerminal:
        """A persistent terminal in `agent`'s session `session` (None: a fresh name) running
        `command`; the session's lease is taken (LeaseHeld when another holds it)."""
        if session is not None and (agent.name, session) in self._by_name:
            existing = self._by_name[(agent.name, session)]
            if existing.alive:
                raise TerminalError(f"session {agent.name}/{session} already has a terminal "
                                    f"(komputer attach {existing.name})")
            await self.destroy(agent.name, session)
        server = self.server
        limits = server.config.limits
        record, holder = await server.hold(agent, session)
        try:
            if cwd is not None:
                record.cwd = cwd
            base = {"HOME": agent.home, "USER": agent.name, "LOGNAME": agent.name, "TERM": term,
                    "COLUMNS": str(size[0]), "LINES": str(size[1])}
            runner = server.make_shell(agent, record, {**base, **(env or {})}, tty=True, front=front)
            runner.wall_time = limits.terminal_wall_time
            runner.spec["limits"] = {**runner.spec["limits"], "wall_time": limits.terminal_wall_time}
        except BaseException:
            await server.let_go(record, holder, None)
            raise
        terminal = PersistentTerminal(server, agent, record, holder, runner, command, size,
                                      limits.terminal_scrollback)
        self._by_name[(agent.name, record.name)] = terminal
        terminal.start()
        await server.audit("terminal.create", agent=agent.name, session=record.name, command=command, front=front)
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
