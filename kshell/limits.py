"""Hard bounds on what one script may consume, so that no script can hang or exhaust the
appliance. Each bound fails with a clear message and a non-zero status (`LimitExceeded`)."""

from __future__ import annotations

from kfs.values import value_class


@value_class(frozen=True, slots=True)
class Limits:
    """Per-shell bounds. `wall_time` is seconds per top-level command (a `run()` line);
    `loop_iterations` counts every iteration of every loop within one top-level command."""

    loop_iterations: int = 10_000_000
    wall_time: float = 300.0
    recursion_depth: int = 1000
    brace_words: int = 100_000
    output_bytes: int = 64 * 1024 * 1024
    variable_bytes: int = 64 * 1024 * 1024
    pipeline_buffer: int = 64 * 1024
    threads: int = 256  # jobs, pipeline stages and xargs -P commands alive at once (K's processes)


class LimitExceeded(Exception):
    """A bound was hit: the shell reports `message` and the command fails with `status`."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
