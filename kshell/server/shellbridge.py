"""Running the K shell for an SSH session: worker threads, streamed stdin/stdout/stderr, Ctrl-C.

The K shell is synchronous (it calls the VFS, which runs LMDB transactions), so each command
runs in its own thread while the event loop keeps serving every other connection. Output goes
to the channel with back-pressure (the thread waits for the channel to drain); stdin arrives
through a bounded `StdinFeed`. This module is the one place that knows the Shell's call shape.
"""

from __future__ import annotations

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


def feed_stream(feed: StdinFeed) -> Any:
    """The feed as the K shell's input stream type (an InStream pulling from the channel)."""
    from kshell.exec.streams import InStream

    class FeedStream(InStream):
        name = "stdin"

        def _fill(self) -> bytes:
            return feed.read_some()

    return FeedStream()


class ShellRunner:
    """One K shell (its variables, functions, cwd) for one SSH session."""

    def __init__(self, shell: Any, loop: asyncio.AbstractEventLoop, *, tty: bool = False) -> None:
        self.shell = shell
        self.loop = loop
        self.tty = tty
        self.interrupted = False
        self._running = threading.Event()
        self._feed: StdinFeed | None = None

    async def run(self, source: str, feed: StdinFeed, out: Writer, err: Writer, *, interactive: bool = False) -> int:
        """Run `source` to completion in a worker thread; returns its exit status.

        `interactive` runs one line typed at the prompt (no EXIT trap; `exit` ends the session).
        """
        loop = self.loop
        done: asyncio.Future[int] = loop.create_future()
        self.interrupted = False
        self._feed = feed

        def emit(writer: Writer) -> Callable[[bytes], None]:
            def write(data: bytes) -> None:
                if data and not feed.cancelled:
                    asyncio.run_coroutine_threadsafe(writer(bytes(data)), loop).result()

            return write

        def work() -> None:
            self._running.set()
            try:
                status = self.shell.run_streaming(
                    source, stdout=emit(out), stderr=emit(err), stdin=feed_stream(feed), script=not interactive
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

        threading.Thread(target=work, name="kshell-command", daemon=True).start()
        return await done

    def interrupt(self) -> None:
        """Ctrl-C, or the connection went away: stop the running command (status 130).

        The K shell checks a per-line `Cancel` in its loops and pipe waits and makes a new
        one for each top-level line, so keep flagging the current one until the run returns.
        """
        self.interrupted = True
        if self._feed is not None:
            self._feed.cancel()
        shell = self.shell

        def keep_flagging() -> None:
            while self._running.is_set():
                current = shell.session.cancel
                current.reason = current.reason or "interrupted"
                current.cancelled = True
                time.sleep(0.02)

        threading.Thread(target=keep_flagging, name="kshell-interrupt", daemon=True).start()

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
