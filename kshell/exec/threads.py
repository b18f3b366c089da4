"""The shell's processes are threads: a job, a pipeline stage, an `xargs -P` command each
run in one. A session may have `Limits.threads` of them alive at once; the next one fails as
bash's fork does at the user's process limit ("fork: Resource temporarily unavailable"), and
the command line that wanted it is abandoned (status 126, bash's EX_NOEXEC). So a fork bomb
(`f(){ f | f & }; f`) runs out of room instead of out of the machine; the same holds when the
operating system refuses a thread (the worker's cgroup task bound, its memory)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

FORK_FAILED = 126
RETRY = 0.25  # seconds a full budget is waited for before the fork fails


class ForkFailed(Exception):
    """No room for another thread; the caller reports it (it knows its shell's name)."""


class Threads:
    """One session's budget of threads (shared by its subshells and jobs)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.live = 0
        self._lock = threading.Condition(threading.Lock())

    def start(self, target: Callable[..., Any], args: tuple[Any, ...], name: str | None = None) -> threading.Thread:
        """Start `target(*args)` in a thread counted against the budget; ForkFailed if it stays
        full for RETRY seconds (a job that has just ended, its `wait` answered, may not have
        given its thread back yet: bash's fork retries too)."""
        with self._lock:
            if self.live >= self.limit and not self._lock.wait_for(lambda: self.live < self.limit, RETRY):
                raise ForkFailed
            self.live += 1

        def run() -> None:
            try:
                target(*args)
            finally:
                with self._lock:
                    self.live -= 1
                    self._lock.notify()

        thread = threading.Thread(target=run, daemon=True, name=name)
        try:
            thread.start()
        except RuntimeError:  # "can't start new thread": the worker's task or memory bound
            with self._lock:
                self.live -= 1
                self._lock.notify()
            raise ForkFailed from None
        return thread
