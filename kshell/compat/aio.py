"""The async clients (E2B's `AsyncSandbox`, Daytona's `AsyncDaytona`) are twins of the sync
ones: each async call runs the sync adapter's call in a thread of ours and awaits it,
and what it returns is lifted to its async twin (a `Sandbox` becomes an `AsyncSandbox`, a
`CommandHandle` an `AsyncCommandHandle`), so the translation onto K is written once.

The sync calls already run K on the adapters' loop (kshell.compat.core), so the caller's loop
is never blocked. Output callbacks an async client is given (plain or `async def`, as upstream's
`OutputHandler`) run in order on the caller's loop, through a `Relay`; one that raises fails the
command it listens to, as a sync callback does.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import queue
import threading
from collections.abc import Callable
from typing import Any

from kshell.compat import core

__all__ = ["Relay", "Twin", "awaited", "lift", "off", "passed", "shown", "twin_of"]

_twins: dict[type, type[Twin]] = {}


class _Pool:
    """The threads the async clients' calls run in: daemon threads (a wait blocked on a command
    that never ends must not hold the interpreter's exit, where the adapters let their
    sandboxes go), started when none is idle, kept for the next calls. Unbounded, so that
    waits (a handle's `wait`, a session's logs) never starve the calls that would end them
    (a send_stdin, a kill)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                threading.Thread(target=self._work, name="k-compat-async", daemon=True).start()
        self._jobs.put(job)

    def _work(self) -> None:
        while True:
            self._jobs.get()()
            with self._lock:
                self._idle += 1


_pool = _Pool()


class Twin:
    """An async client object: the sync adapter object it stands for is `_sync`."""

    def __init__(self, sync: Any) -> None:
        self._sync = sync


def twin_of(sync_cls: type) -> Callable[[type[Twin]], type[Twin]]:
    """Register the decorated class as `sync_cls`'s async twin (what `lift` turns it into)."""

    def register(cls: type[Twin]) -> type[Twin]:
        _twins[sync_cls] = cls
        return cls

    return register


def lift(value: Any) -> Any:
    """A sync call's result as the async client's: adapter objects become their twins (lists
    element by element, an exception in a list, as E2B's fork returns, stays as it is)."""
    cls = _twins.get(type(value))
    if cls is not None:
        return cls(value)
    if isinstance(value, list):
        return [lift(v) for v in value]
    return value


async def off(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)` (a blocking adapter call) in the pool, awaited: twins among the
    arguments (an AsyncSandbox given to AsyncDaytona.delete) go as their sync objects, and the
    result is lifted."""
    loop = asyncio.get_running_loop()
    args = tuple(a._sync if isinstance(a, Twin) else a for a in args)  # noqa: SLF001
    kwargs = {k: v._sync if isinstance(v, Twin) else v for k, v in kwargs.items()}  # noqa: SLF001
    future: asyncio.Future[Any] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():
            return  # the caller was cancelled meanwhile
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def job() -> None:
        try:
            result = fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - handed to the awaiting caller
            with contextlib.suppress(RuntimeError):  # its loop closed meanwhile: nobody awaits it
                loop.call_soon_threadsafe(settle, None, e)
        else:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle, result, None)

    _pool.submit(job)
    return lift(await future)


def awaited(sync_cls: type, name: str) -> Any:
    """The async twin of `sync_cls.name`: an instance method, classmethod or staticmethod with
    the same parameters (`inspect.signature` follows `__wrapped__`), run by `off`."""
    raw = inspect.getattr_static(sync_cls, name)
    if isinstance(raw, classmethod):
        @functools.wraps(raw.__func__)
        async def on_class(cls: type, *args: Any, **kwargs: Any) -> Any:
            return await off(getattr(sync_cls, name), *args, **kwargs)

        return classmethod(on_class)
    if isinstance(raw, staticmethod):
        @functools.wraps(raw.__func__)
        async def static(*args: Any, **kwargs: Any) -> Any:
            return await off(getattr(sync_cls, name), *args, **kwargs)

        return staticmethod(static)

    @functools.wraps(getattr(raw, "fn", raw))
    async def on_instance(self: Twin, *args: Any, **kwargs: Any) -> Any:
        return await off(getattr(self._sync, name), *args, **kwargs)

    return on_instance


def passed(sync_cls: type, name: str) -> Any:
    """`sync_cls.name` kept synchronous in the async client (where upstream's is too: a
    refusal, a local getter), its result lifted."""

    @functools.wraps(getattr(sync_cls, name))
    def call(self: Twin, *args: Any, **kwargs: Any) -> Any:
        return lift(getattr(self._sync, name)(*args, **kwargs))

    return call


def shown(name: str, doc: str | None = None) -> property:
    """The sync object's property `name`, lifted."""
    return property(lambda self: lift(getattr(self._sync, name)), doc=doc)


_END = object()


class Relay:
    """Calls `handler` on the caller's loop with each item pushed from any thread, one at a
    time and in order (awaiting what an `async def` handler returns). A handler that raises
    fails the process it is bound to (core.Process.fail: the command ends as by Ctrl-C, its
    wait raises); the first such error is kept for the async handle's `wait`."""

    def __init__(self, handler: Callable[[Any], Any], stream: str = "output") -> None:
        self.loop = asyncio.get_running_loop()
        self.handler = handler
        self.stream = stream
        self.error: Exception | None = None
        self.process: core.Process | None = None
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self.task = self.loop.create_task(self._drain())

    def push(self, item: Any) -> None:
        """From any thread (the adapters' loop's, a pool thread)."""
        self.loop.call_soon_threadsafe(self._queue.put_nowait, item)

    def end(self) -> None:
        self.push(_END)

    def bind(self, process: core.Process, *, until_done: bool = True) -> None:
        """Fail `process` when a handler raises (now, if one raised before it was known);
        `until_done`: the relay ends once the process has ended (after its last output)."""
        self.process = process
        if self.error is not None:
            core.submit(_fail(process, self.error, self.stream))
        if until_done:
            core.submit(_on_done(process, self.end))

    async def _drain(self) -> None:
        while (item := await self._queue.get()) is not _END:
            try:
                result = self.handler(item)
                if inspect.isawaitable(result):
                    await result
            except Exception as e:  # noqa: BLE001 - a callback's failure fails its command, never the loop
                if self.error is None:
                    self.error = e
                    if self.process is not None:
                        core.submit(_fail(self.process, e, self.stream))

    async def drained(self) -> None:
        """Wait until every item pushed before the end was handled."""
        await asyncio.shield(self.task)


async def _fail(process: core.Process, error: Exception, stream: str) -> None:
    process.fail(error, stream)


async def _on_done(process: core.Process, then: Callable[[], None]) -> None:
    process.done.add_done_callback(lambda _: then())
