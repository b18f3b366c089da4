"""`KomputerPool`: a thin lifecycle cache of computers by key, over `Komputer.boot` and `login`.

A key maps to one durable computer (its state). The pool coalesces concurrent boots of one key,
keeps at most `max_warm` computers open between calls, detaches sessions idle for `idle_for`
and closes computers idle that long. It is not a task system and holds nothing durable: every
session it hands out is a normal AgentSession of its computer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from kshell.sdk.computer import Komputer
from kshell.sdk.session import AgentSession

__all__ = ["KomputerPool"]


class _Entry:
    __slots__ = ("computer", "last_used", "users")

    def __init__(self, computer: Komputer, now: float) -> None:
        self.computer = computer
        self.last_used = now
        self.users = 0  # with_login blocks running on it now


class KomputerPool:
    """Computers by key: `boot(key)` makes one (a Komputer, or what Komputer.boot returns)."""

    def __init__(self, boot: Callable[[str], Awaitable[Komputer]], *, max_warm: int = 16,
                 idle_for: float = 60.0) -> None:
        if max_warm < 0:
            raise ValueError("max_warm: expected 0 or more")
        self._boot = boot
        self.max_warm = max_warm
        self.idle_for = idle_for
        self._warm: dict[str, _Entry] = {}
        self._booting: dict[str, asyncio.Future[Komputer]] = {}
        self._closing: dict[str, asyncio.Future[None]] = {}  # release(key) under way
        self.counters = {"boots": 0, "logins": 0, "closed": 0}

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    async def get(self, key: str) -> Komputer:
        """The computer of `key`: the warm one, the one booting now (never two boots of a key),
        or a new boot, once a close of that key under way has finished (never two open
        computers of a key). It stays warm until `sweep` or `release` (or `max_warm` is passed)."""
        while True:
            entry = self._warm.get(key)
            if entry is not None and not entry.computer.closed:
                entry.last_used = self._now()
                return entry.computer
            closing = self._closing.get(key)
            if closing is not None:
                await asyncio.shield(closing)
                continue
            booting = self._booting.get(key)
            if booting is not None:
                return await asyncio.shield(booting)
            return await self._boot_key(key)

    async def _boot_key(self, key: str) -> Komputer:
        booting = self._booting[key] = asyncio.get_running_loop().create_future()
        try:
            computer = await self._boot(key)
        except BaseException as e:
            booting.set_exception(e)
            booting.exception()  # retrieved: the waiters (if any) raise it too
            raise
        finally:
            del self._booting[key]
        self.counters["boots"] += 1
        self._warm[key] = _Entry(computer, self._now())
        booting.set_result(computer)
        await self._bound_warm(keep=key)
        return computer

    async def login(self, key: str, agent: str, id: str | None = None, **options: Any) -> AgentSession:
        """A session of `agent` on the computer of `key` (Komputer.login)."""
        computer = await self.get(key)
        self.counters["logins"] += 1
        return await computer.login(agent, id, **options)

    async def checkout(self, key: str) -> Komputer:
        """The computer of `key`, counted as in use until `checkin(key)`: neither `sweep` nor
        `max_warm` closes it meanwhile (a front end holds it for a connection this way)."""
        while True:
            computer = await self.get(key)
            entry = self._warm.get(key)
            if entry is not None and entry.computer is computer and not computer.closed:
                entry.users += 1  # no await since get(): nothing closed it in between
                return computer

    def checkin(self, key: str) -> None:
        """One use of `checkout(key)` is over; the computer is idle from now when none is left."""
        entry = self._warm.get(key)
        if entry is not None:
            entry.users -= 1
            entry.last_used = self._now()

    @contextlib.asynccontextmanager
    async def with_login(self, key: str, agent: str, id: str | None = None,
                         **options: Any) -> AsyncIterator[AgentSession]:
        """A session for the block, detached after it; with `max_warm=0` the computer is closed
        too, so nothing stays warm between calls."""
        computer = await self.checkout(key)
        try:
            self.counters["logins"] += 1
            session = await computer.login(agent, id, **options)
            try:
                yield session
            finally:
                await session.detach(keep=False)
        finally:
            self.checkin(key)
            entry = self._warm.get(key)
            if self.max_warm == 0 and entry is not None and entry.users == 0:
                await self.release(key)

    async def release(self, key: str) -> None:
        """Close the computer of `key` (its sessions detached, their durable state kept); one
        being booted is closed once booted (a fleet host lets go of a computer moved away)."""
        booting = self._booting.get(key)
        if booting is not None:
            await asyncio.wait([booting])  # booted or failed: its error is its waiters'
        entry = self._warm.pop(key, None)
        if entry is not None:
            closing = self._closing[key] = asyncio.get_running_loop().create_future()
            try:
                await entry.computer.close()
            finally:
                del self._closing[key]
                closing.set_result(None)
            self.counters["closed"] += 1

    async def sweep(self) -> dict[str, int]:
        """Detach sessions idle for `idle_for`, then close computers with no session left that
        were idle that long; returns how many of each."""
        now = self._now()
        detached = closed = 0
        for key, entry in list(self._warm.items()):
            if entry.computer.closed:
                self._warm.pop(key, None)
                continue
            detached += len(await entry.computer.detach_idle_sessions(self.idle_for))
            if not entry.users and not entry.computer.sessions() and now - entry.last_used >= self.idle_for:
                await self.release(key)
                closed += 1
        return {"detached": detached, "closed": closed}

    async def _bound_warm(self, keep: str) -> None:
        """Past `max_warm`, close the least recently used computers nobody is using."""
        idle = sorted((e.last_used, k) for k, e in self._warm.items() if k != keep and not e.users)
        while len(self._warm) > max(self.max_warm, 1) and idle:
            await self.release(idle.pop(0)[1])

    def peek(self, key: str) -> Komputer | None:
        """The computer of `key` if it is open now (never opens one)."""
        entry = self._warm.get(key)
        return None if entry is None else entry.computer

    def keys(self) -> list[str]:
        """The keys of the computers open now."""
        return list(self._warm)

    def warm(self) -> list[Komputer]:
        """The computers open now."""
        return [e.computer for e in self._warm.values()]

    def stats(self) -> dict[str, Any]:
        """Local counters: warm computers, boots under way, the sessions they hold."""
        return {"warm": len(self._warm), "booting": len(self._booting),
                "sessions": sum(len(e.computer.sessions()) for e in self._warm.values()),
                "max_warm": self.max_warm, **self.counters}

    async def close(self) -> None:
        """Close every warm computer."""
        for key in list(self._warm):
            await self.release(key)

    async def __aenter__(self) -> KomputerPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
