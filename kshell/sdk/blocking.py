"""The SDK's calls without `await`, for scripts and notebooks:

    from kshell.sdk.blocking import Komputer

    with Komputer.boot(state="/tmp/k") as computer:
        computer.add_agent("alice")
        agent = computer.login("alice")
        print(agent.exec("echo hi").text)
        print(agent.fs.read_text("~/.profile"))

Each computer runs its async core on an event loop in one thread of its own (so its leases are
renewed while the script does something else); `close()` stops that thread: nothing is left
behind. Every call waits for its answer; `events()` is a plain iterator.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Iterator
from typing import Any

from kshell.sdk import computer as core
from kshell.sdk.options import local_remote, memory_state, ssh_remote
from kshell.sdk.types import AgentNotFound, ExecResult, KomputerClosed, LeaseHeld

__all__ = ["AgentNotFound", "ExecResult", "Komputer", "KomputerClosed", "LeaseHeld", "local_remote",
           "memory_state", "ssh_remote"]


class _Loop:
    """An event loop in a thread of its own, for one computer."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="komputer-sdk", daemon=True)
        self.thread.start()

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.run(self.loop.shutdown_default_executor())  # its to_thread workers end too
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


class _Blocking:
    """Wraps an SDK object: its coroutine methods wait here, and what they return is wrapped
    the same way when it is an SDK object."""

    _wrapped = ("AgentSession", "AgentFS", "Komputer")

    def __init__(self, target: Any, loop: _Loop) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_loop", loop)

    def _wrap(self, value: Any) -> Any:
        if type(value).__name__ in self._wrapped:
            return _Blocking(value, self._loop)
        if isinstance(value, list):
            return [self._wrap(v) for v in value]
        return value

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if inspect.isasyncgenfunction(value):
            return lambda *a, **k: self._iterate(value(*a, **k))
        if inspect.iscoroutinefunction(value):
            return lambda *a, **k: self._wrap(self._loop.run(value(*a, **k)))
        if callable(value) and not isinstance(value, type):
            return lambda *a, **k: self._wrap(value(*a, **k))
        return self._wrap(value)

    def _iterate(self, agen: Any) -> Iterator[Any]:
        try:
            while True:
                try:
                    yield self._loop.run(agen.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            self._loop.run(agen.aclose())

    def __repr__(self) -> str:
        return f"<blocking {self._target!r}>"


async def _awaited(booting: Any) -> Any:
    return await booting


class Komputer(_Blocking):
    """kshell.sdk.Komputer, blocking."""

    @classmethod
    def boot(cls, image: Any = None, **options: Any) -> Komputer:
        loop = _Loop()
        try:
            computer = loop.run(_awaited(core.Komputer.boot(image, **options)))
        except BaseException:
            loop.stop()
            raise
        return cls(computer, loop)

    def close(self, *, end_sessions: bool = False) -> None:
        try:
            self._loop.run(self._target.close(end_sessions=end_sessions))
        finally:
            self._loop.stop()

    def __enter__(self) -> Komputer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
