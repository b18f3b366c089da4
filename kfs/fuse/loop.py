"""pyfuse3's request loop, run as one trio task with a lock that costs nothing.

pyfuse3.main reads requests in worker tasks that share a `trio.Lock` and, by default, starts
a second task whenever the first is busy. The handlers of `Operations` never wait on
anything but fsync, so a second task only adds a handover per request: the idle task holds
the lock while it waits for the device, the busy one parks on the lock when it is done.
And even uncontended, `trio.Lock.acquire` is two checkpoints (a trip through the scheduler).

So the daemon runs exactly one worker (`max_tasks=1`: nothing can contend for the lock) and
hands pyfuse3 a view of trio whose `Lock` is free and whose `wait_readable` mostly waits for
the device in poll(2) itself (`_DeviceWait`). pyfuse3 looks trio up through its module
attribute `pyfuse3.trio` for this very purpose (`pyfuse3.asyncio` swaps it the same way),
but it makes the worker's lock in `pyfuse3.init`: so the view is in place from before init
until the loop ends (`one_worker`). A request then costs no pass through trio's scheduler
instead of three. An fsync still waits in a worker thread; meanwhile other requests wait
too, which is what a single-threaded server does anyway.

Between requests of a busy caller the worker spins on the device for a few tens of
microseconds before it sleeps (`spin_ns`). A sleeping daemon costs the caller a wake-up per
request, and on a virtual machine waking an idle CPU costs more than the request itself:
measured on the 2-core VM this was tuned on, a getxattr round trip went from 55-63 us to
23-28 us with the spin, a 4 KiB pwrite (two requests) from 140-176 us to 95-110 us.
"""

from __future__ import annotations

import select
import types
from collections.abc import Iterator
from contextlib import contextmanager
from time import perf_counter_ns
from typing import Any

import pyfuse3
import trio


class _FreeLock:
    """What `trio.Lock` is to pyfuse3 when only one task ever takes it: nothing."""

    __slots__ = ()

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


class _DeviceWait:
    """`wait_readable` for the FUSE device that mostly skips trio's scheduler.

    Between requests the worker first spins on the device for `spin_ns` (poll(2) with no
    timeout), then blocks in poll(2) itself (the GIL released) for at most `block_ms`, and it
    does so for at most `burst` requests in a row; then it waits the trio way, which lets the
    other tasks run (the signal handler that unmounts). A request arriving while the worker
    polls costs one system call instead of a pass through the scheduler and its epoll
    registration. Idle, the worker sleeps in trio as before.
    """

    def __init__(self, burst: int = 64, block_ms: int = 10, spin_ns: int = 100_000) -> None:
        self.burst = burst
        self.block_ms = block_ms
        self.spin_ns = spin_ns
        self.left = 0
        self.poller: select.poll | None = None
        self.fd = -1

    async def __call__(self, fd: int) -> None:
        if self.left > 0:
            self.left -= 1
            if fd != self.fd:
                self.poller = select.poll()
                self.poller.register(fd, select.POLLIN)
                self.fd = fd
            poll = self.poller.poll  # type: ignore[union-attr]
            if self.spin_ns:
                until = perf_counter_ns() + self.spin_ns
                while not poll(0):
                    if perf_counter_ns() > until:
                        break
                else:
                    return
            if poll(self.block_ms):  # readable, or an error the read will report
                return
        await trio.lowlevel.wait_readable(fd)
        self.left = self.burst


def _trio_for_one_worker() -> Any:
    view = types.SimpleNamespace(**{name: getattr(trio, name) for name in dir(trio) if not name.startswith("__")})
    view.Lock = _FreeLock
    lowlevel = types.SimpleNamespace(
        **{name: getattr(trio.lowlevel, name) for name in dir(trio.lowlevel) if not name.startswith("__")}
    )
    lowlevel.wait_readable = _DeviceWait()
    view.lowlevel = lowlevel
    return view


@contextmanager
def one_worker() -> Iterator[None]:
    """pyfuse3 sees the one-worker view of trio inside: wrap `pyfuse3.init` (it makes the
    worker's lock) and the loop (`serve_requests`)."""
    saved = pyfuse3.trio  # type: ignore[attr-defined]
    pyfuse3.trio = _trio_for_one_worker()  # type: ignore[attr-defined]
    try:
        yield
    finally:
        pyfuse3.trio = saved  # type: ignore[attr-defined]


async def serve_requests() -> None:
    """Answer the kernel's requests until the session ends (pyfuse3.main, one worker): run
    inside `one_worker`."""
    await pyfuse3.main(min_tasks=1, max_tasks=1)
