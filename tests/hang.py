"""Waiting for an event a test can observe, instead of sleeping and hoping it happened: a poll
on the condition itself (a process row, a file, output seen), bounded only against a hang."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

HANG = 60.0  # seconds: a wait longer than this is a hang; never a claim about speed (a loaded machine is slow)


def poll(check: Callable[[], object], what: str, timeout: float = HANG) -> float:
    """Seconds until `check()` holds: the wait for an event a test can observe (a process row,
    a worker gone, a file there) instead of a sleep; fails with `what` past `timeout`."""
    t0 = time.monotonic()
    while not check():
        assert time.monotonic() - t0 < timeout, f"{what} after {timeout:.0f} s"
        time.sleep(0.01)
    return time.monotonic() - t0


def clock_past(stamp_ns: int) -> None:
    """Returns once the host's clock (time.time_ns, which K stamps with) reads past `stamp_ns`:
    a strict `>` on a stamp taken after this says the operation set it, not that time stood
    still."""
    poll(lambda: time.time_ns() > stamp_ns, "the clock never passed the stamp")


async def apoll(check: Callable[[], object], what: str, timeout: float = HANG) -> Any:
    """The asyncio form of `poll`: `check()` may return an awaitable, which is awaited; returns
    the first true value it gave (a pending approval, a row), failing with `what` past `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if inspect.isawaitable(got):
            got = await got
        if got:
            return got
        assert time.monotonic() < deadline, f"{what} after {timeout:.0f} s"
        await asyncio.sleep(0.01)
