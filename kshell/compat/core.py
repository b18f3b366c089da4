"""What the sandbox adapters share: a sandbox is a K computer plus one agent session on it, and
every command any adapter starts is a K process row (kfs.runtime.procs), so every handle and
every adapter sees one process registry.

A sandbox (`KSandbox`) is:
- a computer (`Komputer.boot`) on a memory state (process-local, gone at `destroy`), or on a
  state directory `ROOT/ID` when `K_SANDBOX_ROOT` names a root (durable: another process
  connects to it by id once this one has let it go);
- the agent `user` (made at create; its home is /home/user, as the providers' default user);
- the durable session `sandbox` of that agent: foreground commands run there one at a time,
  each in a subshell so that, as upstream, a `cd` or a variable never leaks into the next;
- one more session per background command (its own worker, so it runs beside the others),
  ended when the command ends.

The adapters' calls are synchronous, as the upstream SDKs' sync clients are: they run on one
event loop in a thread of its own (kshell.sdk.blocking's), so output callbacks fire as output
arrives, whether or not anybody waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import stat as statmod
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from kshell.sdk import AgentSession, CommandTimeout, Komputer, SDKError, local_remote, memory_state

__all__ = ["Entry", "KSandbox", "Outcome", "Process", "SandboxGone", "Unsupported", "Watcher", "run", "sandboxes"]

T = TypeVar("T")
AGENT = "user"  # the providers' default user; its home is /home/user
SESSION = "sandbox"  # the durable session foreground commands run in
ROOT_ENV = "K_SANDBOX_ROOT"  # a directory: sandboxes are durable states under it, one per id
REMOTE_ENV = "K_SANDBOX_REMOTE"  # "local": programs K does not have run under bubblewrap here
MEMORY_ENV = "K_SANDBOX_MEMORY"  # bytes of a memory state (no root)
WARM_ENV = "K_SANDBOX_WARM"  # memory sandboxes kept booted ahead (their shell loaded), for a fast create


class Unsupported(SDKError, NotImplementedError):
    """An upstream call K cannot honour: raised at the call site, naming the feature and why,
    never answered with a stand-in."""

    def __init__(self, feature: str, why: str) -> None:
        super().__init__(f"{feature}: not supported by K: {why}")
        self.feature = feature


class SandboxGone(SDKError):
    """The sandbox was killed (or its computer closed) while the call was in flight or before."""


# -- the event loop all adapters' sync calls run on ---------------------------------------------

_loop: Any = None
_loop_lock = threading.Lock()


def _runtime() -> Any:
    global _loop
    with _loop_lock:
        if _loop is None:
            import atexit

            from kshell.sdk.blocking import _Loop

            _loop = _Loop()
            atexit.register(_let_go)
        return _loop


def _let_go() -> None:
    """At exit, the sandboxes this program left running are let go, not killed (as a provider's
    outlive the script that made them): a durable one stays for `connect` from another program,
    its computer closed cleanly (workers stopped, leases released); a memory one ends with us."""

    async def detach_all() -> None:
        for sandbox in list(_open.values()):
            with contextlib.suppress(Exception):
                await sandbox.detach()
        await cool_down()

    if _loop is not None and (_open or _spares):
        with contextlib.suppress(Exception):
            _loop.run(detach_all())


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` on the adapters' loop and wait for it (from any thread but that loop's)."""
    loop = _runtime()
    if threading.current_thread() is loop.thread:
        coro.close()
        raise RuntimeError("a blocking sandbox call from inside an output callback: it would wait for itself")
    return loop.run(coro)


def submit(coro: Coroutine[Any, Any, T]) -> Any:
    """Schedule `coro` on the adapters' loop without waiting (a concurrent.futures.Future)."""
    return asyncio.run_coroutine_threadsafe(coro, _runtime().loop)


# -- sandboxes ---------------------------------------------------------------------------------

_open: dict[str, KSandbox] = {}  # the sandboxes this process has open, by id (touched on the loop only)
_spares: list[asyncio.Task[tuple[Komputer, AgentSession]]] = []  # memory sandboxes booting or booted ahead


def _memory() -> Any:
    return memory_state(int(os.environ.get(MEMORY_ENV, 256 << 20)))


async def _boot_spare() -> tuple[Komputer, AgentSession]:
    """A memory computer with the agent, its session and its shell loaded (a first command
    run): what `create` hands out at once when K_SANDBOX_WARM asks for spares."""
    computer = await Komputer.boot(None, state=_memory(), remotes=_remote())
    try:
        await computer.add_agent(AGENT)
        session = await computer.login(AGENT, SESSION)
        await session.exec("true")
    except BaseException:
        await computer.close()
        raise
    return computer, session


def _refill() -> None:
    """Start booting spares until K_SANDBOX_WARM of them are booting or ready."""
    wanted = int(os.environ.get(WARM_ENV, "0") or 0)
    loop = asyncio.get_running_loop()
    while len(_spares) < wanted:
        _spares.append(loop.create_task(_boot_spare()))


async def _take_spare() -> tuple[Komputer, AgentSession] | None:
    """A spare (waiting for the one that boots first, if none is ready), then the next is
    started; None when no spares are kept."""
    _refill()
    if not _spares:
        return None
    ready = [t for t in _spares if t.done()]
    task = ready[0] if ready else _spares[0]
    _spares.remove(task)
    _refill()
    try:
        return await task
    except Exception:  # noqa: BLE001 - a spare that failed to boot: boot one now, as without spares
        return None


async def cool_down() -> None:
    """Close the spares kept ahead (K_SANDBOX_WARM unset afterwards keeps none)."""
    while _spares:
        task = _spares.pop()
        with contextlib.suppress(BaseException):
            computer, _ = await task
            await computer.close()


async def warm_up() -> None:
    """Wait until the spares K_SANDBOX_WARM asks for are booted (a program's start, a bench)."""
    _refill()
    await asyncio.gather(*_spares, return_exceptions=True)


def sandboxes() -> dict[str, KSandbox]:
    return _open


def _root() -> Path | None:
    root = os.environ.get(ROOT_ENV)
    return Path(root) if root else None


def _forget_forks(root: Path, sandbox_id: str) -> None:
    """Remove the records of the forks of durable sandbox `sandbox_id` (another program's too):
    they went with its state."""
    for meta_file in root.glob(".*.json"):
        with contextlib.suppress(OSError, ValueError):
            if json.loads(meta_file.read_text()).get("in") == sandbox_id:
                meta_file.unlink()


def _remote() -> dict[str, Any]:
    which = os.environ.get(REMOTE_ENV, "")
    if not which or which == "none":
        return {}
    if which == "local":
        return {"local": local_remote()}
    raise ValueError(f"{REMOTE_ENV}={which!r}: expected 'local' or 'none'")


@dataclass
class Outcome:
    """How a command ended: its output (all of it), its status, and the error that ended it
    when it did not end by itself (a timeout, a callback that raised, a kill, the sandbox's end)."""

    stdout: bytes
    stderr: bytes
    status: int
    error: str | None = None
    exception: BaseException | None = None  # what wait() raises instead of returning, if any


Listener = Callable[[str, bytes], None]


class Process:
    """One command of a sandbox: its K process row, its output as it comes (kept whole for
    `wait` and for handles that connect later), its stdin pipe and its outcome."""

    def __init__(self, sandbox: KSandbox, cmd: str, cwd: str | None, session: AgentSession, *, own: bool,
                 track: bool, stdin: bool, listeners: list[Listener]) -> None:
        self.sandbox = sandbox
        self.cmd = cmd
        self.cwd = cwd
        self.session = session
        self.own = own  # the session is this command's alone (a background command): ended with it
        self.track = track  # its pid is wanted at start (not only when it ended)
        self.pid = 0
        self._before: set[int] = set()  # the session's pids before it started (ended_row)
        self.out: list[bytes] = []
        self.err: list[bytes] = []
        self.combined: list[bytes] = []  # both streams in the order they came (Daytona's `result`)
        self.listeners = list(listeners)
        self.error: str | None = None
        self.failure: BaseException | None = None
        self.done: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] | None = None
        self._stdin: asyncio.Queue[bytes | None] | None = asyncio.Queue() if stdin else None
        self.stdin_closed = not stdin

    # output and callbacks

    def output(self, stream: str, chunk: bytes) -> None:
        (self.out if stream == "stdout" else self.err).append(chunk)
        self.combined.append(chunk)
        for listener in list(self.listeners):
            try:
                listener(stream, chunk)
            except Exception as e:  # noqa: BLE001 - a callback's failure fails its handle, never the loop
                self.fail(e, stream)

    def fail(self, error: Exception, stream: str = "output") -> None:
        """An output callback raised `error`: the handle fails with it (what `wait` raises)
        and the command ends, as by Ctrl-C."""
        if self.failure is None:
            self.failure = error
            self.error = f"{stream} callback raised {type(error).__name__}: {error}"
            self.interrupt()

    async def _pipe(self) -> AsyncIterator[bytes]:
        assert self._stdin is not None
        while True:
            data = await self._stdin.get()
            if data is None:
                return
            yield data

    def send_stdin(self, data: bytes) -> None:
        if self.done.done():
            raise ProcessLookupError(f"process {self.pid} has ended: it reads no more input")
        if self._stdin is None or self.stdin_closed:
            raise BrokenPipeError(f"process {self.pid} was started without stdin, or its stdin was closed")
        self._stdin.put_nowait(data)

    def close_stdin(self) -> None:
        if self._stdin is not None and not self.stdin_closed:
            self.stdin_closed = True
            self._stdin.put_nowait(None)

    @property
    def running(self) -> bool:
        return not self.done.done()

    async def start(self, command: str, *, env: dict[str, str] | None, timeout: float | None) -> None:
        """Start the command; when tracked, return once its process row exists (or it ended)."""
        sid = self.session.id
        before = set()
        if self.track and not self.own:  # the session's jobs that were there already
            before = {r["pid"] for r in await self.sandbox.rows() if r["session"] == sid}
        self._before = before
        self.task = asyncio.get_running_loop().create_task(self._run(command, env, timeout))
        if self.track:
            self.pid = await first_row(self.sandbox, sid, self.done, before) or self.pid

    async def _run(self, command: str, env: dict[str, str] | None, timeout: float | None) -> None:
        result = None
        try:
            try:
                result = await self.session.exec(command, env=env, cwd=self.cwd, timeout=timeout,
                                                 stdin=self._pipe() if self._stdin is not None else None,
                                                 on_output=self.output)
                status = result.status
            except TimeoutError as e:  # CommandTimeout (with what it printed), or a remote session's
                result = e.result if isinstance(e, CommandTimeout) else None
                status = result.status if result is not None else -1
                self.error = self.error or f"command timed out after {timeout:g} s"
                self.failure = self.failure or e
            self.pid = self.pid or getattr(result, "pid", 0)
            if not self.pid and self.track:  # it ended before its row was seen
                self.pid = await self.sandbox.ended_row(self.session.id, self._before)
            outcome = Outcome(b"".join(self.out), b"".join(self.err), status, self.error, self.failure)
        except asyncio.CancelledError:
            if self.failure is not None:  # its own callback failed it (fail() interrupted it before
                # its pid was known, by closing its channel): it has ended when its handle fails
                self.pid = self.pid or await self.sandbox.ended_row(self.session.id, self._before)
                if self.pid:
                    await self.sandbox.end(self.pid)
                outcome = Outcome(b"".join(self.out), b"".join(self.err), -1, self.error, self.failure)
            else:
                outcome = Outcome(b"".join(self.out), b"".join(self.err), -1, "the sandbox was killed",
                                  SandboxGone(f"sandbox {self.sandbox.id} was killed while process {self.pid} ran"))
        except Exception as e:  # noqa: BLE001 - the session could not run it: the handle says why
            outcome = Outcome(b"".join(self.out), b"".join(self.err), -1, str(e), e)
        finally:
            self.close_stdin()
            if self.own:
                with contextlib.suppress(Exception):
                    await self.session.close()
        if not self.done.done():
            self.done.set_result(outcome)
        self.sandbox.processes.pop(self.pid, None)

    async def follow(self, listener: Listener, ended: Callable[[], None]) -> None:
        """Hand `listener` the output so far (stdout's, then stderr's), then the rest as it
        comes; `ended` is called once the command has ended (a handle that connects later)."""
        for chunk in self.out:
            listener("stdout", chunk)
        for chunk in self.err:
            listener("stderr", chunk)
        self.listeners.append(listener)
        self.done.add_done_callback(lambda _: ended())

    async def wait(self) -> Outcome:
        """The outcome (the same one to every waiter, however often asked)."""
        return await asyncio.shield(self.done)

    def interrupt(self) -> bool:
        """End the command as Ctrl-C would (the worker is killed past the grace); False when it
        had ended."""
        if self.done.done():
            return False
        self.sandbox.interrupt(self)
        return True


async def first_row(sandbox: KSandbox, session: str, done: asyncio.Future[Any], before: set[int]) -> int:
    """The pid of the first process row session `session` gets that is not in `before` (a
    command's exec line comes before any job it starts), polled until it is there or `done`
    (then 0)."""
    while not done.done():
        found = [r["pid"] for r in await sandbox.rows() if r["session"] == session and r["pid"] not in before]
        if found:
            return min(found)
        await asyncio.sleep(0.002)
    return 0


# K's shell reading the terminal a line at a time, each line run as typed (a program it starts
# gets the terminal, with a pty of its own); Ctrl-D on an empty line or `exit` ends it.
TERMINAL_SHELL = 'while IFS= read -r line; do eval "$line"; done'


class Terminal:
    """A sandbox's pty (E2B's `pty`, Daytona's pty sessions): a K persistent terminal
    (kshell.server.terminals) in a session of its own, running K's shell line by line
    (TERMINAL_SHELL). What it prints is the terminal's bytes (escape sequences and all), kept
    and handed to listeners as stream "pty"; its pid is the terminal's worker (the process
    running its shell; K keeps process rows for the commands run there, not for the
    terminal). It has the surface of a `Process`, so that the adapters' command handles serve
    it too."""

    def __init__(self, sandbox: KSandbox, listeners: list[Listener]) -> None:
        self.sandbox = sandbox
        self.cmd = TERMINAL_SHELL
        self.pid = 0
        self.out: list[bytes] = []
        self.err: list[bytes] = []
        self.pty: list[bytes] = []
        self.combined = self.pty
        self.listeners = list(listeners)
        self.error: str | None = None
        self.failure: BaseException | None = None
        self.done: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self.terminal: Any = None
        self.viewer: Any = None
        self.task: asyncio.Task[None] | None = None
        self.stdin_closed = False

    async def start(self, *, size: tuple[int, int], cwd: str | None, env: dict[str, str] | None,
                    timeout: float | None) -> None:
        """Make the terminal at `size` (columns, rows) and return once its worker runs."""
        sandbox = self.sandbox
        if sandbox.parent is not None:
            raise Unsupported("pty in a fork", "K's persistent terminals run in the agent's own tree, not a fork's")
        if size[0] <= 0 or size[1] <= 0:
            raise ValueError(f"pty size {size[0]}x{size[1]}: columns and rows must be positive")
        server = sandbox.computer.server
        agent = sandbox.computer.agent(AGENT)
        name = f"pty-{secrets.token_hex(6)}"
        self.terminal = await server.terminals.create(agent, name, self.cmd, env=sandbox.env(env),
                                                      cwd=sandbox.session.fs.path(cwd or sandbox.session.home),
                                                      size=size, front="sdk pty")
        self.viewer = await self.terminal.attach(self._output, size)
        self.task = asyncio.get_running_loop().create_task(self._follow(timeout))
        while not self.terminal.worker_pid and not self.done.done():  # its worker is being started
            await asyncio.sleep(0.002)
        self.pid = self.terminal.worker_pid

    async def _output(self, data: bytes) -> None:
        self.pty.append(data)
        for listener in list(self.listeners):
            try:
                listener("pty", data)
            except Exception as e:  # noqa: BLE001 - a callback's failure fails its handle, never the loop
                self.fail(e, "pty")

    async def _follow(self, timeout: float | None) -> None:
        terminal = self.terminal
        try:
            await asyncio.wait_for(terminal.ended.wait(), timeout or None)
            await terminal.flushed(self.viewer)  # every byte it printed is handed out first
            status = terminal.status if terminal.status is not None else -1
            outcome = Outcome(b"", b"", status, self.error, self.failure)
        except TimeoutError as e:
            self.error = self.error or f"pty timed out after {timeout:g} s"
            outcome = Outcome(b"", b"", -1, self.error, self.failure or e)
        except asyncio.CancelledError:
            outcome = Outcome(b"", b"", -1, "the sandbox was killed",
                              SandboxGone(f"sandbox {self.sandbox.id} was killed while pty {self.pid} ran"))
        finally:
            terminal.detach(self.viewer)
            with contextlib.suppress(Exception):
                await self.sandbox.computer.server.terminals.destroy(AGENT, terminal.record.name)
        if not self.done.done():
            self.done.set_result(outcome)
        self.sandbox.terminals.pop(self.pid, None)

    def fail(self, error: Exception, stream: str = "pty") -> None:
        if self.failure is None:
            self.failure = error
            self.error = f"{stream} callback raised {type(error).__name__}: {error}"
            self.interrupt()

    async def follow(self, listener: Listener, ended: Callable[[], None]) -> None:
        for chunk in self.pty:
            listener("pty", chunk)
        self.listeners.append(listener)
        self.done.add_done_callback(lambda _: ended())

    def send_stdin(self, data: bytes) -> None:
        """Keys, as a terminal sends them (b"\\r" ends a line; a program on the pty gets them raw)."""
        if self.done.done():
            raise ProcessLookupError(f"pty {self.pid} has ended: it reads no more input")
        if self.stdin_closed:
            raise BrokenPipeError(f"pty {self.pid}: its input was closed")
        submit_here(self.terminal.type(data))

    def close_stdin(self) -> None:
        """The end of input, as Ctrl-D at the start of a line sends it."""
        if not self.done.done() and not self.stdin_closed:
            submit_here(self.terminal.type(b"\x04"))
            self.stdin_closed = True

    async def resize(self, columns: int, rows: int) -> None:
        if self.done.done():
            raise ProcessLookupError(f"pty {self.pid} has ended: it has no size to change")
        if columns <= 0 or rows <= 0:
            raise ValueError(f"pty size {columns}x{rows}: columns and rows must be positive")
        await self.terminal.resize(columns, rows)

    @property
    def running(self) -> bool:
        return not self.done.done()

    async def wait(self) -> Outcome:
        return await asyncio.shield(self.done)

    def interrupt(self) -> bool:
        """End the terminal (its shell hung up on, then everything left in its worker killed);
        False when it had ended."""
        if self.done.done() or self.task is None:
            return False
        asyncio.get_running_loop().create_task(self._end())
        return True

    async def _end(self) -> None:
        with contextlib.suppress(Exception):
            await self.sandbox.computer.server.terminals.destroy(AGENT, self.terminal.record.name)


def stream(process: Process | Terminal, timeout: float | None = None) -> Iterator[tuple[str, bytes]]:
    """(stream, chunk) for a command's or pty's output so far, then for the rest as it comes,
    until it ended (from a thread other than the adapters' loop). TimeoutError when `timeout`
    seconds pass with it still running."""
    import queue

    chunks: queue.Queue[tuple[str, bytes] | None] = queue.Queue()
    run(process.follow(lambda name, chunk: chunks.put((name, chunk)), lambda: chunks.put(None)))
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        try:
            item = chunks.get(timeout=None if deadline is None else max(deadline - time.monotonic(), 0))
        except queue.Empty:
            raise TimeoutError(f"process {process.pid} still runs after {timeout:g} s") from None
        if item is None:
            return
        yield item


def submit_here(coro: Coroutine[Any, Any, Any]) -> None:
    """Run `coro` on the running loop (the adapters'), not waited for, in the order asked."""
    asyncio.get_running_loop().create_task(coro)


@dataclass
class Entry:
    """One file as the adapters describe it (each maps it onto its own result type)."""

    name: str
    path: str
    kind: str  # "file", "dir", "symlink" or "other"
    size: int
    mode: int
    uid: int
    gid: int
    owner: str
    group: str
    mtime: int  # ns
    symlink_target: str | None = None


@dataclass
class KSandbox:
    """A K computer and the agent session a sandbox is."""

    id: str
    computer: Komputer
    session: AgentSession
    metadata: dict[str, str] = field(default_factory=dict)
    envs: dict[str, str] = field(default_factory=dict)
    template: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    timeout: float | None = None
    path: Path | None = None  # the state directory of a durable sandbox
    processes: dict[int, Process] = field(default_factory=dict)
    watchers: list[Watcher] = field(default_factory=list)
    killed: bool = False
    parent: KSandbox | None = None  # a fork's: the sandbox whose tree it forked (they share a computer)
    forks: list[KSandbox] = field(default_factory=list)
    names: set[str] = field(default_factory=set)  # a fork's sessions (its processes are theirs)
    sessions: dict[str, AgentSession] = field(default_factory=dict)  # named sessions (Daytona's)
    terminals: dict[int, Terminal] = field(default_factory=dict)  # its ptys, by pid
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)  # one command at a time per session

    # -- lifecycle -----------------------------------------------------------------------------

    @staticmethod
    async def create(*, template: str | None = None, envs: dict[str, str] | None = None,
                     metadata: dict[str, str] | None = None, labels: dict[str, str] | None = None,
                     timeout: float | None = None, id: str | None = None) -> KSandbox:
        """A new sandbox: a computer booted on a fresh state (`template`: an image folder with
        komputer.toml), the agent `user` and its session. Nothing is left behind on failure."""
        if template is not None and not (Path(template) / "komputer.toml").is_file():
            raise FileNotFoundError(f"template {template!r}: K templates are image folders with a komputer.toml "
                                    "(no such file)")
        sandbox_id = id or "k" + secrets.token_hex(8)
        root = _root()
        path = root / sandbox_id if root is not None else None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.mkdir()  # an existing id is not taken over: FileExistsError
        computer = None
        try:
            spare = await _take_spare() if path is None and template is None else None
            if spare is not None:
                computer, session = spare
            else:
                where: Any = path if path is not None else _memory()
                computer = await Komputer.boot(template, state=where, remotes=_remote())
                await computer.add_agent(AGENT)
                session = await computer.login(AGENT, SESSION)
        except BaseException:
            if computer is not None:
                await computer.close()
            if path is not None:
                shutil.rmtree(path, ignore_errors=True)
            raise
        sandbox = KSandbox(sandbox_id, computer, session, dict(metadata or {}), dict(envs or {}), template,
                           dict(labels or {}), timeout=timeout, path=path)
        await sandbox.save_meta()
        _open[sandbox_id] = sandbox
        return sandbox

    async def save_meta(self) -> None:
        """What a durable sandbox's metadata, envs and labels are, beside its state, for `find`."""
        if self.path is None:
            return
        meta = {"metadata": self.metadata, "envs": self.envs, "template": self.template, "labels": self.labels,
                "started": self.started, "timeout": self.timeout}
        (self.path.parent / f".{self.id}.json").write_text(json.dumps(meta))

    @staticmethod
    async def find(sandbox_id: str) -> KSandbox:
        """The sandbox `sandbox_id`: this process's, or a durable one booted again here (its
        session restored). LookupError when there is none."""
        found = _open.get(sandbox_id)
        if found is not None and not found.killed:
            return found
        root = _root()
        path = root / sandbox_id if root is not None else None
        meta_file = root / f".{sandbox_id}.json" if root is not None else None
        if meta_file is not None and not path.is_dir() and meta_file.exists():
            meta = json.loads(meta_file.read_text())
            if "in" in meta:
                return await KSandbox._find_fork(sandbox_id, meta)
        if path is None or not (path / "data.mdb").exists() and not path.is_dir():
            where = f"under {ROOT_ENV}={root}" if root is not None else f"in this process ({ROOT_ENV} is not set)"
            raise LookupError(f"sandbox {sandbox_id} not found {where}")
        meta_file = path.parent / f".{sandbox_id}.json"
        meta = json.loads(meta_file.read_text()) if meta_file.exists() else {}
        computer = await Komputer.boot(None, state=path, remotes=_remote())
        try:
            await computer.recover_sessions()
            held = [s for s in computer.sessions() if s.agent == AGENT and s.id == SESSION]
            session = held[0] if held else await computer.login(AGENT, SESSION)
        except BaseException:
            await computer.close()
            raise
        sandbox = KSandbox(sandbox_id, computer, session, meta.get("metadata", {}), meta.get("envs", {}),
                           meta.get("template"), meta.get("labels", {}), meta.get("started", time.time()),
                           meta.get("timeout"), path=path)
        _open[sandbox_id] = sandbox
        return sandbox

    @staticmethod
    async def _find_fork(sandbox_id: str, meta: dict[str, Any]) -> KSandbox:
        """A fork another program made of a durable sandbox: the sandbox it forked is found
        (booted here if need be), then the fork's session (`fork-N`) logged into again, in the
        fork. LookupError when the fork was discarded meanwhile."""
        parent = await KSandbox.find(meta["parent"])
        computer = parent.computer
        session = next((s for s in computer.sessions() if s.agent == AGENT and s.id == meta["session"]), None)
        if session is None:
            session = await computer.login(AGENT, meta["session"])
        if session.fork_number is None:  # the name no longer names a fork of this agent's
            await session.close()
            raise LookupError(f"sandbox {sandbox_id} not found: its fork was discarded")
        child = KSandbox(sandbox_id, computer, session, meta.get("metadata", {}), meta.get("envs", {}),
                         meta.get("template"), meta.get("labels", {}), meta.get("started", time.time()),
                         meta.get("timeout"), parent=parent, names={session.id})
        parent.forks.append(child)
        _open[sandbox_id] = child
        return child

    @staticmethod
    def known() -> list[str]:
        """Ids of the sandboxes there are: this process's and the durable ones under the root."""
        ids = [i for i, s in _open.items() if not s.killed]
        root = _root()
        if root is not None and root.is_dir():
            ids += sorted(p.name for p in root.iterdir() if p.is_dir() and p.name not in ids)
        return ids

    def _end_processes(self) -> None:
        """The sandbox is killed: each process's waiters get its output so far and SandboxGone,
        and its task is cancelled (its session's end ends the process)."""
        for process in list(self.processes.values()):
            if not process.done.done():
                process.done.set_result(Outcome(b"".join(process.out), b"".join(process.err), -1,
                                                "the sandbox was killed",
                                                SandboxGone(f"sandbox {self.id} was killed while process "
                                                            f"{process.pid} ran")))
            if process.task is not None:
                process.task.cancel()

    async def destroy(self) -> bool:
        """Kill the sandbox: its commands end (waits in flight raise SandboxGone), its sessions
        end, its computer closes, and its state goes. False when it was gone already."""
        if self.killed:
            return False
        self.killed = True
        _open.pop(self.id, None)
        for watcher in list(self.watchers):
            watcher.stop()
        for fork in list(self.forks):
            await fork.destroy()
        self._end_processes()
        for terminal in list(self.terminals.values()):
            if not terminal.done.done():
                terminal.done.set_result(Outcome(b"", b"", -1, "the sandbox was killed",
                                                 SandboxGone(f"sandbox {self.id} was killed while pty "
                                                             f"{terminal.pid} ran")))
            if terminal.task is not None:
                terminal.task.cancel()  # its terminal is destroyed as the task ends
        await asyncio.gather(*(p.task for p in [*self.processes.values(), *self.terminals.values()]
                               if p.task is not None), return_exceptions=True)
        if self.parent is not None:  # a fork: its sessions end and its tree goes; the computer stays
            from kfs import forks

            self.parent.forks.remove(self)
            for session in [self.session, *self.sessions.values()]:
                with contextlib.suppress(Exception):
                    await session.close()
            if not self.computer.closed:
                await asyncio.to_thread(forks.discard, self.computer.state, self.session.fork_number, "sdk")
            top = self.top()
            if top.path is not None:
                (top.path.parent / f".{self.id}.json").unlink(missing_ok=True)
            return True
        await self.computer.close(end_sessions=True)
        if self.path is not None:
            await asyncio.to_thread(shutil.rmtree, self.path, True)
            (self.path.parent / f".{self.id}.json").unlink(missing_ok=True)
            await asyncio.to_thread(_forget_forks, self.path.parent, self.id)
        return True

    async def detach(self) -> None:
        """Let the sandbox go without killing it (a durable sandbox stays for `find`)."""
        if self.killed:
            return
        self.killed = True
        _open.pop(self.id, None)
        for watcher in list(self.watchers):
            watcher.stop()
        await self.computer.close()

    def check(self) -> None:
        if not self.running:
            raise SandboxGone(f"sandbox {self.id} was killed")

    # -- commands ------------------------------------------------------------------------------

    def env(self, envs: dict[str, str] | None) -> dict[str, str] | None:
        merged = {**self.envs, **(envs or {})}
        return merged or None

    async def start(self, cmd: str, *, background: bool, envs: dict[str, str] | None = None,
                    cwd: str | None = None, timeout: float | None = None, stdin: bool = False,
                    listeners: list[Listener] | None = None, session: AgentSession | None = None,
                    scoped: bool = True) -> Process:
        """Start `cmd` (a shell command line). Foreground commands share the sandbox's session
        one at a time, each in a subshell (`scoped`) so nothing of it stays; a background one
        gets a session of its own, so it runs beside them, ended with it. `session`: run in
        that session instead (one at a time there), its shell state living on unless `scoped`."""
        self.check()
        own = background and session is None
        lock = None
        if own:
            session = await self.new_session()
        else:
            session = session or self.session
            lock = self._locks.setdefault(session.id, asyncio.Lock())
            await lock.acquire()
        try:
            where = (cwd or self.session.home) if scoped else cwd
            process = Process(self, cmd, where, session, own=own, track=background, stdin=stdin,
                              listeners=listeners or [])
            await process.start(cmd, env=self.env(envs) if scoped else envs, timeout=timeout or None)
        except BaseException:
            if own:
                with contextlib.suppress(Exception):
                    await session.close()
            elif lock is not None:
                lock.release()
            raise
        if lock is not None:
            process.done.add_done_callback(lambda _: lock.release())
        if background and process.done.done() and not process.pid:  # it never started: say why, here
            failure = process.done.result().exception
            if failure is not None:
                raise failure
        if process.pid:
            self.processes[process.pid] = process
        return process

    async def open_terminal(self, *, size: tuple[int, int], cwd: str | None = None, env: dict[str, str] | None = None,
                            timeout: float | None = None, listeners: list[Listener] | None = None) -> Terminal:
        """A pty of the sandbox (Terminal), its shell started; nothing left behind on failure."""
        self.check()
        terminal = Terminal(self, listeners or [])
        try:
            await terminal.start(size=size, cwd=cwd, env=env, timeout=timeout)
        except BaseException:
            if terminal.terminal is not None:
                with contextlib.suppress(Exception):
                    await self.computer.server.terminals.destroy(AGENT, terminal.terminal.record.name)
            raise
        if terminal.pid:
            self.terminals[terminal.pid] = terminal
        return terminal

    async def exec(self, cmd: str, **options: Any) -> Outcome:
        """A foreground command, waited for."""
        return await (await self.start(cmd, background=False, **options)).wait()

    async def new_session(self, name: str | None = None) -> AgentSession:
        """Another session of the sandbox's agent, in its tree (a fork's sessions are in the
        fork, as `AgentSession.fork` makes its first one)."""
        fork = self.session.fork_number
        if fork is None:
            return await self.computer.login(AGENT, name)
        server = self.computer.server
        agent = self.computer.agent(AGENT)
        record, holder = await server.leases.hold(agent, name or f"sdk-{secrets.token_hex(6)}")
        session = AgentSession(self.computer, agent, record, holder, mode=self.session.mode, fork=fork)
        self.computer._sessions[(AGENT, record.name)] = session  # noqa: SLF001 - released with the computer
        self.names.add(record.name)
        return session

    async def fork(self) -> KSandbox:
        """A sandbox on a K fork of this one's tree (overlay: what it writes stays in it), in
        the same computer, with a session of its own; killed with this one."""
        self.check()
        session = await self.session.fork(disk="overlay")
        child = KSandbox("k" + secrets.token_hex(8), self.computer, session, dict(self.metadata), dict(self.envs),
                         self.template, dict(self.labels), timeout=self.timeout, parent=self,
                         names={session.id})
        self.forks.append(child)
        _open[child.id] = child
        top = child.top()
        if top.path is not None:  # durable: another program finds the fork by id (`find`)
            meta = {"in": top.id, "parent": self.id, "session": session.id, "metadata": child.metadata,
                    "envs": child.envs, "template": child.template, "labels": child.labels,
                    "started": child.started, "timeout": child.timeout}
            (top.path.parent / f".{child.id}.json").write_text(json.dumps(meta))
        return child

    def top(self) -> KSandbox:
        """The sandbox whose computer this one is on (itself, unless it is a fork)."""
        return self if self.parent is None else self.parent.top()

    async def live(self) -> list[dict[str, Any]]:
        """The sandbox's running processes (K's process table, so every handle's and every
        program's); a fork's are those of its sessions, and a forked sandbox's exclude its forks'."""
        self.check()
        rows = await self.rows()
        if self.parent is not None:
            rows = [r for r in rows if r["session"] in self.names]
        else:
            theirs = set().union(*(f.names for f in self.forks)) if self.forks else set()
            rows = [r for r in rows if r["session"] not in theirs]
        return sorted(rows, key=lambda r: r["pid"])

    async def kill(self, pid: int) -> bool:
        """Kill process `pid` (SIGKILL, as upstream); False when it is not running."""
        self.check()
        process = self.processes.get(pid) or self.terminals.get(pid)
        if process is not None:
            return process.interrupt()
        return await self.signal(pid, 9)

    # -- what differs on a remote appliance (RemoteSandbox overrides these) ----------------------

    async def ended_row(self, session: str, before: set[int]) -> int:
        """The pid of a tracked command that ended before its row was seen: locally its exec
        result names it, so none is looked for."""
        return 0

    async def end(self, pid: int) -> None:
        """Kill process `pid` and return once its row is no longer live (a bounded wait: a row
        K cannot end is left as it is)."""
        await self.signal(pid, 9)
        deadline = asyncio.get_running_loop().time() + 10
        while any(r["pid"] == pid for r in await self.rows()) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)

    async def rows(self) -> list[dict[str, Any]]:
        """The agent's live process rows (K's process table: every handle's, every program's)."""
        from kfs.runtime import procs

        return await asyncio.to_thread(procs.rows, self.computer.state, agent=AGENT, live=True)

    async def signal(self, pid: int, sig: int) -> bool:
        """Send `sig` to the agent's process `pid`; False when it is not running."""
        from kshell.worker.procs import send

        return await asyncio.to_thread(send, self.computer.state, pid, sig, AGENT)

    def interrupt(self, process: Process) -> None:
        """End `process` as Ctrl-C would (its worker is killed past the grace)."""
        runner = process.session._runner  # noqa: SLF001
        if runner is not None:
            runner.interrupt()

    @property
    def running(self) -> bool:
        return not self.killed and not self.computer.closed

    # -- files ---------------------------------------------------------------------------------

    async def entry(self, path: str, *, follow: bool = False) -> Entry:
        fs = self.session.fs
        full = fs.path(path)
        info = await fs.stat(full, follow=follow)
        target = await fs.readlink(full) if info.is_symlink else None
        names = await self._names()
        kind = "dir" if info.is_dir else "file" if info.is_file else "symlink" if info.is_symlink else "other"
        return Entry(os.path.basename(full.rstrip("/")) or "/", full, kind, info.size, info.mode, info.uid,
                     info.gid, names[0].get(info.uid, str(info.uid)), names[1].get(info.gid, str(info.gid)),
                     info.mtime, target)

    async def _names(self) -> tuple[dict[int, str], dict[int, str]]:
        """uid and gid names, from the computer's /etc/passwd and /etc/group."""
        out: tuple[dict[int, str], dict[int, str]] = ({}, {})
        for table, path in zip(out, ("/etc/passwd", "/etc/group")):
            with contextlib.suppress(OSError):
                for line in (await self.session.fs.read_text(path)).splitlines():
                    parts = line.split(":")
                    if len(parts) > 2 and parts[2].isdigit():
                        table[int(parts[2])] = parts[0]
        return out

    async def listing(self, path: str, depth: int = 1) -> list[Entry]:
        """The entries under `path`, `depth` levels down (1: its own entries), sorted by path."""
        fs = self.session.fs
        top = fs.path(path)
        if not (await fs.stat(top)).is_dir:
            raise NotADirectoryError(20, "Not a directory", top)
        out: list[Entry] = []
        level = [top]
        for _ in range(max(depth, 1)):
            below = []
            for directory in level:
                for entry in await self.entries(directory):
                    out.append(entry)
                    if entry.kind == "dir":
                        below.append(entry.path)
            level = below
        return out

    async def entries(self, directory: str) -> list[Entry]:
        view = self.session.fs._open  # noqa: SLF001 - the session's own view, as agent.fs opens it
        names = await self._names()

        def scan() -> list[tuple[str, Any, str | None]]:
            fs = view()
            rows = []
            for name, node in fs.scandir(directory):
                full = directory.rstrip("/") + "/" + name
                target = fs.readlink(full) if statmod.S_ISLNK(node.mode) else None
                rows.append((name, node, target))
            return rows

        rows = await self.session.fs._call(scan)  # noqa: SLF001
        out = []
        for name, node, target in sorted(rows, key=lambda r: r[0]):
            mode = node.mode
            kind = ("dir" if statmod.S_ISDIR(mode) else "file" if statmod.S_ISREG(mode)
                    else "symlink" if statmod.S_ISLNK(mode) else "other")
            out.append(Entry(name, directory.rstrip("/") + "/" + name, kind, node.size, mode, node.uid, node.gid,
                             names[0].get(node.uid, str(node.uid)), names[1].get(node.gid, str(node.gid)),
                             int(node.mtime), target))
        return out

    async def watch(self, path: str, *, recursive: bool = False) -> Watcher:
        watcher = Watcher(self, self.session.fs.path(path), recursive)
        await watcher.start()
        self.watchers.append(watcher)
        return watcher


# -- watching a directory on K's change feed ------------------------------------------------------


@dataclass
class Change:
    """One event of a watched directory: what happened to which name (relative to the directory)."""

    name: str
    kind: str  # "create", "write", "remove", "rename", "chmod"


class Watcher:
    """Follows K's change feed (kfs.journal.changes: every write through the shell, SFTP, the
    mount and the SDK appends a row) for one directory, or its tree when `recursive`, and turns
    its rows into named events."""

    def __init__(self, sandbox: KSandbox, path: str, recursive: bool) -> None:
        self.sandbox = sandbox
        self.path = path
        self.recursive = recursive
        self.dirs: dict[int, str] = {}  # watched directory inode -> its path relative to the top ("" the top)
        self.names: dict[int, tuple[int, str]] = {}  # child inode -> (directory inode, name)
        self.seq = 0
        self.events: list[Change] = []
        self.keep = True  # events kept for `take` (an async watch hands them to its listener only)
        self.last: Change | None = None  # the latest event (since the last `take`, or this batch when not kept)
        self.stopped = False
        self.failure: BaseException | None = None
        self._task: asyncio.Task[None] | None = None
        self.listeners: list[Callable[[Change], None]] = []

    async def start(self) -> None:
        from kfs.journal import last_change

        state = self.sandbox.computer.state
        self.seq = await asyncio.to_thread(last_change, state)
        view = self.sandbox.session.fs._open  # noqa: SLF001

        def scan() -> None:
            fs = view()
            top = fs.stat(self.path)
            if not statmod.S_ISDIR(top.mode):
                raise NotADirectoryError(20, "Not a directory", self.path)
            pending = [(top.ino, self.path, "")]
            while pending:
                ino, where, rel = pending.pop()
                self.dirs[ino] = rel
                for name, node in fs.scandir(where):
                    self.names[node.ino] = (ino, name)
                    if self.recursive and statmod.S_ISDIR(node.mode):
                        pending.append((node.ino, where.rstrip("/") + "/" + name, _join(rel, name)))

        await self.sandbox.session.fs._call(scan)  # noqa: SLF001
        self._task = asyncio.get_running_loop().create_task(self._follow())

    def _name(self, parent: int, name: str) -> str:
        return _join(self.dirs[parent], name)

    def _feed(self, batch: list[Any]) -> None:
        from kfs.journal.changes import ChangeKind

        added = {(c.ino) for c in batch if c.kind == ChangeKind.ENTRY_ADD and c.parent in self.dirs}
        for change in batch:
            name = change.name.decode("utf-8", "surrogateescape")
            if change.kind == ChangeKind.ENTRY_ADD and change.parent in self.dirs:
                self.names[change.ino] = (change.parent, name)
                self._emit(self._name(change.parent, name), "create")
                if self.recursive:
                    self._maybe_dir(change.ino, self._name(change.parent, name))
            elif change.kind == ChangeKind.ENTRY_DEL and change.parent in self.dirs:
                if self.names.get(change.ino) == (change.parent, name):
                    del self.names[change.ino]
                moved = change.ino in added and change.ino != 0
                self._emit(self._name(change.parent, name), "rename" if moved else "remove")
            elif change.kind in (ChangeKind.DATA, ChangeKind.ATTR) and change.ino in self.names:
                parent, child = self.names[change.ino]
                if parent in self.dirs:
                    self._emit(self._name(parent, child), "write" if change.kind == ChangeKind.DATA else "chmod")

    def _maybe_dir(self, ino: int, rel: str) -> None:
        def look() -> bool:
            fs = self.sandbox.session.fs._open()  # noqa: SLF001
            with contextlib.suppress(OSError):
                return statmod.S_ISDIR(fs.lstat(self.path.rstrip("/") + "/" + rel).mode)
            return False

        if look():
            self.dirs[ino] = rel

    def _emit(self, name: str, kind: str) -> None:
        change = Change(name, kind)
        if self.last == change and kind == "write":
            return  # one write call appends several rows (data, then its attributes): one event
        self.last = change
        if self.keep:
            self.events.append(change)
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):
                listener(change)

    async def _follow(self) -> None:
        from kfs.journal import changes_since

        state = self.sandbox.computer.state
        try:
            while not self.stopped and not self.sandbox.computer.closed:
                batch = await asyncio.to_thread(changes_since, state, self.seq)
                if batch:
                    self.seq = batch[-1].seq
                    self._feed(batch)
                    if not self.keep:
                        self.last = None
                else:
                    await asyncio.sleep(0.02)
        except Exception as e:  # noqa: BLE001 - the watch ends; its handle says why
            self.failure = e

    def take(self) -> list[Change]:
        if self.failure is not None:
            raise self.failure
        out, self.events = self.events, []
        self.last = None
        return out

    def stop(self) -> None:
        self.stopped = True
        if self._task is not None:
            self._task.cancel()
        with contextlib.suppress(ValueError):
            self.sandbox.watchers.remove(self)


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


# -- sandboxes on a remote appliance ---------------------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    """A remote appliance (`komputer serve`) the adapters reach with the SDK's `Komputer.connect`,
    configured as each SDK configures its endpoint: E2B's `domain` / E2B_DOMAIN, Daytona's
    `api_url` / DAYTONA_API_URL is the appliance's `ssh://AGENT@HOST[:PORT]`, and the `api_key` /
    E2B_API_KEY / DAYTONA_API_KEY the private key file the agent logs in with;
    K_SANDBOX_KNOWN_HOSTS the file holding the appliance's host key (default ~/.ssh/known_hosts)."""

    url: str
    key: str | None = None
    known_hosts: str | None = None

    @staticmethod
    def of(url: str | None, key: str | None) -> Endpoint | None:
        """The endpoint a client's arguments name (None: sandboxes booted here). A URL that is
        not an appliance's is refused with what is expected."""
        if not url:
            return None
        if not url.startswith("ssh://"):
            raise Unsupported(f"endpoint {url!r}", "a K appliance is reached over SSH: give "
                              "ssh://AGENT@HOST[:PORT] (and the agent's private key file as the api key)")
        return Endpoint(url, key or None, os.environ.get(KNOWN_HOSTS_ENV) or None)

    async def connect(self, session: str) -> Any:
        return await Komputer.connect(self.url, key=self.key, known_hosts=self.known_hosts, session=session)


KNOWN_HOSTS_ENV = "K_SANDBOX_KNOWN_HOSTS"
META_DIR = ".k-sandboxes"  # in the agent's home on an appliance: each sandbox's metadata and envs


@dataclass
class RemoteSandbox(KSandbox):
    """A sandbox on a remote appliance: one durable agent session there (its name is the
    sandbox's id), reached over SSH (kshell.sdk.remote): commands on its exec channels, files
    over its SFTP, the process table and signals through komputer-api, so handles in other
    programs agree. Each background command gets a session of its own named `ID-...`, so the
    sandbox's processes are its sessions' rows. Not offered remotely yet, refused by name:
    ptys (K's terminals are not served over komputer-api) and `watch_dir` (nor is the change
    feed), streamed stdin, and forks' own background sessions."""

    endpoint: Endpoint | None = None
    _remote_sessions: list[Any] = field(default_factory=list)  # background commands' sessions

    @staticmethod
    async def create_on(endpoint: Endpoint, *, template: str | None = None, envs: dict[str, str] | None = None,
                        metadata: dict[str, str] | None = None, labels: dict[str, str] | None = None,
                        timeout: float | None = None) -> RemoteSandbox:
        if template is not None:
            raise Unsupported("template on a remote appliance", "its image is the one it serves")
        sandbox_id = "k" + secrets.token_hex(8)
        session = await endpoint.connect(sandbox_id)
        sandbox = RemoteSandbox(sandbox_id, None, session, dict(metadata or {}), dict(envs or {}), None,  # type: ignore[arg-type]
                                dict(labels or {}), timeout=timeout, endpoint=endpoint)
        try:
            await sandbox.save_meta()
        except BaseException:
            await session.close()
            raise
        _open[sandbox_id] = sandbox
        return sandbox

    @staticmethod
    async def find_on(endpoint: Endpoint, sandbox_id: str) -> RemoteSandbox:
        """The sandbox `sandbox_id` on the appliance (made by any program): its session taken
        up again. LookupError when the appliance has no such sandbox."""
        found = _open.get(sandbox_id)
        if isinstance(found, RemoteSandbox) and not found.killed:
            return found
        from kshell.sdk.types import LeaseHeld

        try:
            session = await endpoint.connect(sandbox_id)
        except LeaseHeld:  # another program holds the sandbox's session: this handle gets one of its own
            session = await endpoint.connect(f"{sandbox_id}-{secrets.token_hex(4)}")
        try:
            meta = json.loads(await session.fs.read_text(f"{session.home}/{META_DIR}/{sandbox_id}.json"))
        except FileNotFoundError:
            await session.close()  # connect made a new session of that name: none was there
            raise LookupError(f"sandbox {sandbox_id} not found on {endpoint.url}") from None
        sandbox = RemoteSandbox(sandbox_id, None, session, meta.get("metadata", {}), meta.get("envs", {}),  # type: ignore[arg-type]
                                None, meta.get("labels", {}), meta.get("started", time.time()), meta.get("timeout"),
                                endpoint=endpoint)
        _open[sandbox_id] = sandbox
        return sandbox

    def _meta_path(self) -> str:
        return f"{self.session.home}/{META_DIR}/{self.id}.json"

    async def save_meta(self) -> None:
        meta = {"metadata": self.metadata, "envs": self.envs, "labels": self.labels, "started": self.started,
                "timeout": self.timeout}
        await self.session.fs.mkdir(f"{self.session.home}/{META_DIR}", parents=True)
        await self.session.fs.write_file(self._meta_path(), json.dumps(meta))

    @property
    def running(self) -> bool:
        return not self.killed and not self.session._closed  # noqa: SLF001

    async def rows(self) -> list[dict[str, Any]]:
        return await self.session.processes()

    async def ended_row(self, session: str, before: set[int]) -> int:
        """A remote exec's result names no pid (the channel carries only the status): the
        first row its session got that was not there before the command, ended ones included."""
        pids = [r["pid"] for r in await self.session.processes(session) if r["pid"] not in before]
        return min(pids) if pids else 0

    async def live(self) -> list[dict[str, Any]]:
        """This sandbox's running processes: its sessions' rows (its own, `ID-...`)."""
        mine = [r for r in await self.rows() if r["session"] == self.id or r["session"].startswith(self.id + "-")]
        return sorted(mine, key=lambda r: r["pid"])

    async def signal(self, pid: int, sig: int) -> bool:
        return await self.session.kill(pid, sig)

    def interrupt(self, process: Process) -> None:
        """A remote command ends by a signal through komputer-api when its pid is known, else
        by closing its channel (the server interrupts it as Ctrl-C would)."""
        if process.pid:
            submit_here(self.session.kill(process.pid, 9))
        elif process.task is not None:
            process.task.cancel()

    async def start(self, cmd: str, *, background: bool, stdin: bool = False, **options: Any) -> Process:
        if stdin:
            raise Unsupported("stdin to a command on a remote appliance",
                              "a remote command's input is given whole (komputer-api streams none yet)")
        return await super().start(cmd, background=background, **options)

    async def new_session(self, name: str | None = None) -> Any:
        if self.parent is not None:
            raise Unsupported("another session in a fork on a remote appliance",
                              "a fork's session is its one connection (fork-N)")
        session = await self.endpoint.connect(name or f"{self.id}-{secrets.token_hex(4)}")  # type: ignore[union-attr]
        self._remote_sessions.append(session)
        return session

    async def fork(self) -> KSandbox:
        self.check()
        session = await self.session.fork(disk="overlay")
        child = RemoteSandbox(session.id, None, session, dict(self.metadata), dict(self.envs), None,  # type: ignore[arg-type]
                              dict(self.labels), timeout=self.timeout, parent=self, names={session.id},
                              endpoint=self.endpoint)
        await child.save_meta()  # in the fork's tree: another program finds the fork by id (its session fork-N)
        self.forks.append(child)
        _open[child.id] = child
        return child

    async def open_terminal(self, **options: Any) -> Terminal:
        raise Unsupported("pty on a remote appliance", "K's persistent terminals are not served over "
                          "komputer-api yet (ssh -t AGENT@HOST gives one)")

    async def watch(self, path: str, *, recursive: bool = False) -> Watcher:
        raise Unsupported("watch_dir on a remote appliance", "K's change feed is not served over komputer-api yet")

    async def entries(self, directory: str) -> list[Entry]:
        """A directory's entries over SFTP (names, types, sizes, modes, owners, times)."""
        sftp = await self.session.fs._client()  # noqa: SLF001 - the session's SFTP client
        names = await self._names()
        out = []
        for item in await sftp.readdir(directory):
            if item.filename in (".", ".."):
                continue
            attrs = item.attrs
            mode = attrs.permissions or 0
            kind = ("dir" if statmod.S_ISDIR(mode) else "file" if statmod.S_ISREG(mode)
                    else "symlink" if statmod.S_ISLNK(mode) else "other")
            full = directory.rstrip("/") + "/" + item.filename
            target = await sftp.readlink(full) if kind == "symlink" else None
            uid, gid = attrs.uid or 0, attrs.gid or 0
            out.append(Entry(item.filename, full, kind, attrs.size or 0, mode, uid, gid,
                             names[0].get(uid, str(uid)), names[1].get(gid, str(gid)),
                             int((attrs.mtime or 0) * 1_000_000_000), target))
        return sorted(out, key=lambda e: e.name)

    async def destroy(self) -> bool:
        """End the sandbox: its commands (waits in flight raise SandboxGone), its forks, its
        sessions on the appliance (their processes end with them) and its metadata."""
        if self.killed:
            return False
        self.killed = True
        _open.pop(self.id, None)
        for fork in list(self.forks):
            await fork.destroy()
        self._end_processes()
        await asyncio.gather(*(p.task for p in self.processes.values() if p.task is not None), return_exceptions=True)
        if self.parent is not None:
            self.parent.forks.remove(self)
        with contextlib.suppress(OSError, SDKError):
            await self.session.fs.rm(self._meta_path(), force=True)
        with contextlib.suppress(OSError, SDKError):  # what other handles' sessions still run ends too
            for row in await self.live():
                await self.signal(row["pid"], 9)
        for session in [*self._remote_sessions, *self.sessions.values(), self.session]:
            with contextlib.suppress(Exception):
                await session.close()
        return True

    async def detach(self) -> None:
        if self.killed:
            return
        self.killed = True
        _open.pop(self.id, None)
        for session in [*self._remote_sessions, *self.sessions.values(), self.session]:
            with contextlib.suppress(Exception):
                await session.detach()
