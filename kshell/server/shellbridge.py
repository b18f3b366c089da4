"""Running the K shell for an SSH session: worker threads, streamed stdin/stdout/stderr, Ctrl-C.

The K shell is synchronous (it calls the VFS, which runs LMDB transactions), so each command
runs in its own thread while the event loop keeps serving every other connection. Output goes
to the channel with back-pressure (the thread waits for the channel to drain); stdin arrives
through a bounded `StdinFeed`. This module is the one place that knows the Shell's call shape.
"""

from __future__ import annotations

import _thread
import asyncio
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

Writer = Callable[[bytes], Awaitable[None]]
FEED_LIMIT = 1 << 20  # bytes of stdin buffered ahead of the command


class StdinFeed:
    """Bytes from the channel to a command thread; `read_some` blocks, b"" means end of input."""

    def __init__(self, loop: asyncio.AbstractEventLoop, *, pull: bool = False) -> None:
        self._loop = loop
        self.pull = pull  # read the channel only when the command asks (a terminal's typeahead stays)
        self.wanted = asyncio.Event()
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._eof = False
        self._cv = threading.Condition(threading.Lock())
        self._space = asyncio.Event()
        self.cancelled = False

    # loop side
    async def put(self, data: bytes) -> None:
        while True:
            self._space.clear()
            if self._size < FEED_LIMIT or self._eof or self.cancelled:
                break
            await self._space.wait()
        with self._cv:
            self._chunks.append(data)
            self._size += len(data)
            self._cv.notify_all()

    def close(self) -> None:
        with self._cv:
            self._eof = True
            self._cv.notify_all()

    def cancel(self) -> None:
        with self._cv:
            self.cancelled = True
            self._cv.notify_all()
        self._loop.call_soon_threadsafe(self._space.set)

    # thread side
    def read_some(self) -> bytes:
        with self._cv:
            if self.pull and not self._chunks and not self._eof and not self.cancelled:
                self._loop.call_soon_threadsafe(self.wanted.set)
            while not self._chunks and not self._eof and not self.cancelled:
                self._cv.wait(0.1)
            if not self._chunks or self.cancelled:
                return b""
            data = self._chunks.popleft()
            self._size -= len(data)
        self._loop.call_soon_threadsafe(self._space.set)
        return data


def terminal_stream(runner: ShellRunner) -> Any:
    """The terminal as a command's stdin (an InStream): it reads the feed of whichever command
    is in the foreground now, so a command stopped by Ctrl-Z reads the terminal again once `fg`
    brings it back. A read that finds its command's feed gone parks at the command's checkpoint
    (stopped: until fg/bg or kill; interrupted: it ends there)."""
    from kshell.exec.streams import InStream

    session = runner.shell.interp.session  # the command's: it keeps its cancel if it is stopped

    class TerminalStream(InStream):
        name = "stdin"

        def _fill(self) -> bytes:
            while True:
                feed = runner.feed
                if feed is None:
                    return b""
                data = feed.read_some()
                if data or not feed.cancelled:
                    return data
                session.cancel.check()
                if runner.feed is feed:  # continued in the background: no terminal to read
                    return b""

    return TerminalStream()


class ShellRunner:
    """One K shell (its variables, functions, cwd) for one SSH session."""

    def __init__(self, shell: Any, loop: asyncio.AbstractEventLoop, *, tty: bool = False) -> None:
        self.shell = shell
        self.loop = loop
        self.tty = tty
        self.interrupted = False
        self._running = threading.Event()
        self.feed: StdinFeed | None = None  # the foreground command's stdin
        self._muted: threading.Event | None = None  # set: drop the foreground command's output

    async def run(self, source: str, feed: StdinFeed, out: Writer, err: Writer, *, interactive: bool = False) -> int:
        """Run `source` to completion in a worker thread; returns its exit status.

        `interactive` runs one line typed at the prompt (no EXIT trap; `exit` ends the session).
        """
        loop = self.loop
        done: asyncio.Future[int] = loop.create_future()
        self.interrupted = False
        self.feed = feed
        muted = self._muted = threading.Event()

        def emit(writer: Writer) -> Callable[[bytes], None]:
            # not tied to the feed: a command stopped by Ctrl-Z writes again after fg or bg
            def write(data: bytes) -> None:
                if data and not muted.is_set():
                    asyncio.run_coroutine_threadsafe(writer(bytes(data)), loop).result()

            return write

        def work() -> None:
            self._running.set()
            try:
                status = self.shell.run_streaming(
                    source, stdout=emit(out), stderr=emit(err), stdin=terminal_stream(self),
                    script=not interactive
                )
            except BaseException as e:  # noqa: BLE001 - handed to the loop, re-raised there
                loop.call_soon_threadsafe(_settle, done, None, e)
            else:
                if self.interrupted:  # what bash reports after Ctrl-C: $? is 130
                    status = self.shell.interp.last_status = 130
                    if interactive:
                        self.shell.exited = None  # Ctrl-C never ends the session
                loop.call_soon_threadsafe(_settle, done, status, None)
            finally:
                self._running.clear()

        # not threading.Thread.start(): it blocks the event loop until the thread runs (~1 ms
        # under load, per exec); the result comes back through `done` anyway
        _thread.start_new_thread(work, ())
        return await done

    def interrupt(self) -> None:
        """Ctrl-C, or the connection went away: stop the running command (status 130).

        The K shell checks a per-line `Cancel` in its loops and pipe waits and makes a new
        one for each top-level line, so keep flagging the current one until the run returns.
        """
        self.interrupted = True
        if self._muted is not None:
            self._muted.set()
        if self.feed is not None:
            self.feed.cancel()
        shell = self.shell

        def keep_flagging() -> None:
            while self._running.is_set():
                current = shell.interp.session.cancel
                current.reason = current.reason or "interrupted"
                current.cancelled = True
                time.sleep(0.02)

        threading.Thread(target=keep_flagging, name="kshell-interrupt", daemon=True).start()

    def enable_job_control(self) -> None:
        """The interactive shell: job control on (`fg`, `bg`, Ctrl-Z), as an interactive bash."""
        self.shell.enable_job_control(interactive=True)

    def suspend(self) -> bool:
        """Ctrl-Z: stop the running command (it becomes a job; `run` returns 148 at once).
        False when nothing runs, as at bash's prompt."""
        return self.shell.suspend() is not None

    def notices(self) -> str:
        """Job notices due before the next prompt (`[1]+  Done  ...`, stops)."""
        return str(self.shell.notices())

    def refuse_exit(self) -> str:
        """bash's `There are stopped jobs.` for the first Ctrl-D or exit, or "" to go ahead."""
        return str(self.shell.refuse_exit())

    def hangup(self) -> None:
        """The session is over: end every job (SIGHUP), stopped or running."""
        self.shell.hangup()

    @property
    def exited(self) -> bool:
        """`exit` ran in an interactive line: the session ends."""
        return getattr(self.shell, "exited", None) is not None

    @property
    def last_status(self) -> int:
        return int(self.shell.interp.last_status)

    @last_status.setter
    def last_status(self, status: int) -> None:
        """`$?` as the next command sees it (130 after Ctrl-C at the prompt, as bash has it)."""
        self.shell.interp.last_status = status

    def set_terminal_size(self, columns: int, lines: int) -> None:
        """COLUMNS and LINES after a window change (left alone if the user made them readonly)."""
        interp = self.shell.interp
        for name, value in (("COLUMNS", columns), ("LINES", lines)):
            try:
                interp.assign_scalar(name, str(value))
            except Exception:  # noqa: BLE001, S112 - readonly or integer-typed: the user's choice
                continue

    @property
    def cwd(self) -> str:
        return self.shell.interp.fs.cwd.decode("utf-8", "surrogateescape")

    def exported(self) -> dict[str, str]:
        return dict(self.shell.interp.exported_env())

    def functions(self) -> str:
        """Every function as `declare -f` prints it: the source `K_SESSION` re-reads on resume."""
        from kshell.exec.printer import function_text

        return "".join(function_text(f) + "\n" for f in self.shell.interp.funcs.values())

    def define(self, source: str) -> None:
        """Re-read saved function definitions (nothing else runs: they are only definitions)."""
        self.shell.run_streaming(source, stdout=_discard, stderr=_discard, script=False)


def _discard(data: bytes) -> None:
    pass


def _settle(fut: asyncio.Future[int], status: int | None, exc: BaseException | None) -> None:
    if fut.done():
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(int(status or 0))
