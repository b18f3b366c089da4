"""The `time` reserved word's measurements and report (bash 5.2's time_command).

Real time is the monotonic clock around the pipeline. User and system time are honest about
K's processes being threads of one Python process: the process-wide getrusage would count every
other session's threads, so a timed command counts the CPU time of the threads that ran it
(getrusage(RUSAGE_THREAD), split into user and system; where the platform lacks it,
time.thread_time() as user time and 0 as system time):

- the shell's own thread, from the start of the pipeline to its end (builtins, functions, K's
  in-process tools, command and process substitutions all run there);
- every thread a shell started while the pipeline ran (pipeline stages, jobs, `xargs -P`),
  each adding its own total when it ends (see `metered`). A job still running when the report
  is printed is not in it, as bash counts only the children it has waited for.

Programs K delegates to the host sandbox are real processes; their CPU time is not counted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

try:
    import resource

    _RUSAGE_THREAD: int | None = resource.RUSAGE_THREAD
except (ImportError, AttributeError):  # not Linux
    _RUSAGE_THREAD = None

# bash's BASH_TIMEFORMAT and POSIX_TIMEFORMAT
DEFAULT_FORMAT = "\nreal\t%3lR\nuser\t%3lU\nsys\t%3lS"
POSIX_FORMAT = "real %2R\nuser %2U\nsys %2S"


def thread_cpu() -> tuple[float, float]:
    """(user, system) CPU seconds of the calling thread so far."""
    if _RUSAGE_THREAD is not None:
        usage = resource.getrusage(_RUSAGE_THREAD)
        return usage.ru_utime, usage.ru_stime
    return time.thread_time(), 0.0


class CpuMeter:
    """One running `time`: its start, and the CPU time of the threads that ran its pipeline.
    Threads add to it as they end, from any thread: `parts` only grows by list.append, which
    the interpreter makes atomic."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.cpu0 = thread_cpu()
        self.parts: list[tuple[float, float]] = []

    def stop(self) -> tuple[float, float, float]:
        """(real, user, system) seconds since the start, the calling thread's CPU included."""
        real = time.monotonic() - self.started
        user, system = thread_cpu()
        user -= self.cpu0[0]
        system -= self.cpu0[1]
        for u, s in list(self.parts):
            user += u
            system += s
        return real, user, system


def metered(target: Callable[..., Any], meters: tuple[CpuMeter, ...]) -> Callable[..., Any]:
    """`target` wrapped to add the CPU time of the thread it runs in to each running `time`
    that started it (nested `time`s each count it once)."""

    def run(*args: Any) -> Any:
        try:
            return target(*args)
        finally:
            used = thread_cpu()
            for meter in meters:
                meter.parts.append(used)

    return run


class TimeFormatError(Exception):
    """TIMEFORMAT holds `%` and a character that is no conversion: bash prints no report."""

    def __init__(self, char: str) -> None:
        super().__init__(char)
        self.char = char


def format_report(fmt: str, real: float, user: float, system: float) -> str:
    """TIMEFORMAT's expansion, as bash's print_formatted_time: `%%`; `%P` (the CPU share,
    (user+system)/real, two decimals); `%[p][l]R|U|S` with p in 0-9 (more than 3 counts as
    3: digits after the point, truncated, not rounded) and `l` for the MmS.FFs form. A `%`
    ending the text is itself; anything else raises TimeFormatError."""
    times = {"R": _secs(real), "E": _secs(real), "U": _secs(user), "S": _secs(system)}
    out: list[str] = []
    i = 0
    n = len(fmt)
    while i < n:
        c = fmt[i]
        if c != "%" or i + 1 == n:
            out.append(c)
            i += 1
            continue
        i += 1
        c = fmt[i]
        if c == "%":
            out.append("%")
            i += 1
            continue
        if c == "P":
            out.append(_cpu_share(real, user, system))
            i += 1
            continue
        prec = 3
        long_form = False
        if c.isdigit() and c.isascii():
            prec = min(int(c), 3)
            i += 1
        if i < n and fmt[i] == "l":
            long_form = True
            i += 1
        c = fmt[i] if i < n else "\0"
        if c not in times:
            raise TimeFormatError(c)
        out.append(_seconds_text(*times[c], prec, long_form))
        i += 1
    return "".join(out)


def _secs(seconds: float) -> tuple[int, int]:
    """Whole seconds and milliseconds, the microseconds rounded (bash's timeval_to_secs)."""
    usecs = max(round(seconds * 1_000_000), 0)
    sec, usec = divmod(usecs, 1_000_000)
    msec = usec // 1000 + (1 if usec % 1000 >= 500 else 0)
    if msec >= 1000:
        sec += 1
        msec -= 1000
    return sec, msec


def _seconds_text(sec: int, msec: int, prec: int, long_form: bool) -> str:
    """bash's mkfmt: [Mm]S[.FFF][s], the fraction truncated to `prec` digits."""
    head = f"{sec // 60}m{sec % 60}" if long_form else str(sec)
    frac = f".{msec:03d}"[: prec + 1] if prec else ""
    return head + frac + ("s" if long_form else "")


def _cpu_share(real: float, user: float, system: float) -> str:
    """(user + system) / real as a percentage with two decimals, truncated (bash's
    timeval_to_cpu works in microseconds); 0.00 when no real time passed."""
    real_us = round(real * 1_000_000)
    cpu = round((user + system) * 1_000_000) * 10_000 // real_us if real_us > 0 else 0
    return f"{cpu // 100}.{cpu % 100:02d}"

