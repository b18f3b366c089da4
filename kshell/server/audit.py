"""The audit writer: the server's login, exec and refusal events appended to K's journal.

One role of the server (kshell.server.app wires them): the connections' callbacks (auth),
sessions, terminals and the API channel hand it events; it alone writes them, in order, from a
thread of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from typing import Any

from kfs import agents
from kfs.kstate import KState

log = logging.getLogger("kshell.server")


class AuditWriter:
    """Audit events appended in order by one thread, all those queued meanwhile in one transaction.

    Every exec is recorded before it runs (`audit` is awaited), so the cost per event is on each
    command's path: a queue put and one wake-up of the loop per batch, rather than an executor
    future per event and a commit each; eight commands starting together share one commit.
    """

    def __init__(self, state: KState) -> None:
        self.state = state
        self._queue: queue.SimpleQueue[tuple[str, dict[str, Any], asyncio.Future[None] | None] | None] = (
            queue.SimpleQueue()
        )
        self._thread = threading.Thread(target=self._main, name="k-audit", daemon=True)
        self._thread.start()

    def put(self, type_: str, data: dict[str, Any], fut: asyncio.Future[None] | None = None) -> None:
        self._queue.put((type_, data, fut))

    def nowait(self, type_: str, **data: Any) -> None:
        """Append an event from the event loop without waiting for the write (ordered)."""
        self.put(type_, data)

    async def written(self, type_: str, **data: Any) -> None:
        """Append an event and wait until it is written (what must be on record before it runs)."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.put(type_, data, fut)
        await fut

    def _main(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            stop = False
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            self._write(batch)
            if stop:
                return

    def _write(self, batch: list[tuple[str, dict[str, Any], asyncio.Future[None] | None]]) -> None:
        errors: list[BaseException | None]
        try:
            agents.record_events(self.state, [(t, d) for t, d, _ in batch])
            errors = [None] * len(batch)
        except Exception:  # noqa: BLE001 - one bad event must not take the others with it
            errors = []
            for t, d, _ in batch:
                try:
                    agents.record_event(self.state, t, **d)
                    errors.append(None)
                except Exception as e:  # noqa: BLE001 - reported to its caller, or logged
                    errors.append(e)
        futures = [(fut, e) for (_, _, fut), e in zip(batch, errors, strict=True)]
        loop = next((fut.get_loop() for fut, _ in futures if fut is not None), None)
        for (t, _, fut), e in zip(batch, errors, strict=True):
            if fut is None and e is not None:
                log.warning("could not record a %s event: %s", t, e)
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
                loop.call_soon_threadsafe(_settle_all, futures)

    def close(self) -> None:
        """Write everything queued so far, then stop the thread."""
        self._queue.put(None)
        self._thread.join(30)


def _settle_all(futures: list[tuple[asyncio.Future[None] | None, BaseException | None]]) -> None:
    for fut, e in futures:
        if fut is None or fut.done():
            continue
        if e is None:
            fut.set_result(None)
        else:
            fut.set_exception(e)
