"""A worker's side of the process table (kfs.runtime.procs): its jobs and exec commands become
rows the agent's other sessions see, and signals they send reach it.

A signal from another session is queued on the row, then the owner is woken with SIGUSR1; the
handler only sets an event, and a thread takes the queue and delivers each signal as `kill`
would here (kshell.exec.jobs: a terminating signal cancels the job, which also signals a
delegated program's process group).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from kfs.kstate import KState
from kfs.runtime import procs

log = logging.getLogger("kshell.worker")
WAKE = signal.SIGUSR1


def send(state: KState, pid: int, sig: int, agent: str) -> bool:
    """Queue `sig` for `agent`'s process `pid` and wake its owner; whether it exists (live)."""
    found, owner = procs.request_signal(state, pid, sig, agent)
    if owner is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(owner, WAKE)
    return found


class ProcRecorder:
    """The JobTable's recorder for one bound session (kshell.exec.jobs.Recorder)."""

    def __init__(self, state: KState, agent: str, session: str, front: str, keep: int = 4096,
                 agent_jobs: int = 0) -> None:
        self.state = state
        self.agent = agent
        self.session = session
        self.front = front
        self.keep = keep
        self.agent_jobs = agent_jobs  # the agent's live processes in all its sessions (0: no bound)
        self.owner = procs.owner_id()

    def admit(self) -> bool:
        """Whether the agent may start another process: its live rows, in every session and
        worker, are below `[limits] agent_jobs` (the process table is what they all share)."""
        if not self.agent_jobs:
            return True
        try:
            return len(procs.rows(self.state, agent=self.agent, live=True)) < self.agent_jobs
        except Exception:  # noqa: BLE001 - an unreadable table does not stop the session's work
            log.exception("counting the processes of %s", self.agent)
            return True

    def started(self, text: str, cwd: str, kind: str) -> int | None:
        try:
            return procs.start(self.state, agent=self.agent, session=self.session, front=self.front, cmd=text,
                               cwd=cwd, kind=kind, owner=self.owner)
        except Exception:  # noqa: BLE001 - a full state must not stop the job: it runs unrecorded
            log.exception("no process row for %r", text)
            return None

    def ended(self, pid: int, status: int, sig: int, output: dict[str, Any] | None = None,
              live: LiveOutput | None = None) -> None:
        if pid >= procs.PID_BASE:
            shown = {name: c.summary() for name, c in (output or {}).items() if c.total}
            with contextlib.suppress(Exception):
                procs.end(self.state, pid, status, sig, output=shown, chunks=live.take() if live else None)

    def stopped(self, pid: int, stopped: bool) -> None:
        if pid >= procs.PID_BASE:
            with contextlib.suppress(Exception):
                procs.set_stopped(self.state, pid, stopped)

    def signal(self, pid: int, sig: int) -> bool:
        """Send `sig` to the agent's process `pid` in another session; whether it exists."""
        return send(self.state, pid, sig, self.agent)

    def row(self, pid: int) -> dict[str, Any] | None:
        row = procs.get(self.state, pid)
        return row if row is not None and row["agent"] == self.agent else None

    def others(self) -> list[dict[str, Any]]:
        return [r for r in procs.rows(self.state, agent=self.agent, live=True) if r["owner"] != self.owner]


class LiveOutput:
    """An exec command's output as `process` events while it runs (kfs.runtime.procs.
    output_events): gathered and written at most every `PERIOD` seconds, the rest with the
    process's end in the same transaction. At most `LIMIT` bytes per command are published
    (then one line says how much was left out): a command printing gigabytes must not copy
    them into the event log."""

    PERIOD = 0.1
    LIMIT = 64 * 1024

    def __init__(self, state: KState, pid: int) -> None:
        self.state = state
        self.pid = pid
        self._chunks: list[tuple[str, bytes]] = []
        self._published = 0
        self._omitted = 0
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def write(self, stream: str, data: bytes) -> None:
        with self._lock:
            room = self.LIMIT - self._published
            if room <= 0:
                self._omitted += len(data)
                return
            if len(data) > room:
                self._omitted += len(data) - room
                data = data[:room]
            self._published += len(data)
            if self._chunks and self._chunks[-1][0] == stream:
                self._chunks[-1] = (stream, self._chunks[-1][1] + data)
            else:
                self._chunks.append((stream, data))
            if time.monotonic() - self._last < self.PERIOD:
                return
            chunks = self._text()
            self._last = time.monotonic()
        with contextlib.suppress(Exception):  # a full state must not stop the command
            self.state.write(lambda txn: procs.output_events(txn, self.pid, chunks))

    def _text(self) -> list[tuple[str, str]]:
        chunks = [(stream, data.decode("utf-8", "surrogateescape")) for stream, data in self._chunks]
        self._chunks = []
        return chunks

    def take(self) -> list[tuple[str, str]]:
        """What is not published yet, with the count left out, for the process's end."""
        with self._lock:
            chunks = self._text()
            if self._omitted:
                chunks.append(("stderr", f"[{self._omitted} more bytes of output not published]"))
                self._omitted = 0
            return chunks


class SignalInbox:
    """Delivers signals other sessions queue for this process's rows (one thread, woken by
    SIGUSR1 and every second in case a wake-up was lost)."""

    def __init__(self, state: KState, deliver: Callable[[int, int], None]) -> None:
        self.state = state
        self.deliver = deliver
        self.owner = procs.owner_id()
        self._wake = threading.Event()
        signal.signal(WAKE, lambda signum, frame: self._wake.set())
        threading.Thread(target=self._loop, name="k-signals", daemon=True).start()

    def _loop(self) -> None:
        while True:
            self._wake.wait(1.0)
            self._wake.clear()
            try:
                for pid, sig in procs.take_signals(self.state, self.owner):
                    self.deliver(pid, sig)
            except Exception:  # noqa: BLE001 - the next wake-up tries again
                log.exception("delivering signals")
                time.sleep(0.1)
