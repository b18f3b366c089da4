"""K-local background jobs: `cmd &` runs in a thread as a subshell with its own cancel flag, and
is recorded in the session's `JobTable` (numbers for %N, a pid for $!). Signals are virtual: a
terminating signal cancels the job (its status becomes 128+N); the job tools (jobs, kill, wait,
fg, bg, ps) read and act on this table."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kshell.exec.streams import Cancel, NullStream
from kshell.limits import LimitExceeded

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

# Linux x86_64 signal numbers, as `kill -l` lists them
_NAMES = ["HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2", "PIPE",
          "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ",
          "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS"]
SIGNALS: dict[int, str] = {i + 1: name for i, name in enumerate(_NAMES)}
SIGNALS[34] = "RTMIN"
SIGNALS.update({34 + i: f"RTMIN+{i}" for i in range(1, 16)})
SIGNALS.update({64 - i: f"RTMAX-{i}" for i in range(1, 15)})
SIGNALS[64] = "RTMAX"
NUMBERS = {name: num for num, name in SIGNALS.items()}
NUMBERS.update({"IOT": 6, "CLD": 17, "POLL": 29})
SIGKILL, SIGTERM, SIGINT, SIGPIPE = 9, 15, 2, 13
STOPS = frozenset({19, 20, 21, 22})  # STOP TSTP TTIN TTOU: a K job cannot be suspended
IGNORED = frozenset({17, 18, 23, 28})  # CHLD CONT URG WINCH: default action is none
_DESCRIPTIONS = {1: "Hangup", 2: "Interrupt", 3: "Quit", 4: "Illegal instruction", 5: "Trace/breakpoint trap",
                 6: "Aborted", 7: "Bus error", 8: "Floating point exception", 9: "Killed",
                 10: "User defined signal 1", 11: "Segmentation fault", 12: "User defined signal 2",
                 13: "Broken pipe", 14: "Alarm clock", 15: "Terminated"}


def signal_number(spec: str) -> int | None:
    """A signal by number or name (`9`, `KILL`, `SIGKILL`, `kill`), or None."""
    if spec.isdigit():
        n = int(spec)
        return n if n == 0 or n in SIGNALS else None
    name = spec.upper()
    name = name[3:] if name.startswith("SIG") else name
    return NUMBERS.get(name)


def describe(sig: int) -> str:
    return _DESCRIPTIONS.get(sig, f"Signal {sig}")


@dataclass
class Job:
    number: int
    pid: int
    text: str
    cancel: Cancel
    status: int | None = None
    signal: int = 0
    done: threading.Event = field(default_factory=threading.Event)

    def state(self) -> str:
        if self.status is None:
            return "Running"
        if self.signal:
            return describe(self.signal)
        return "Done" if self.status == 0 else f"Exit {self.status}"


class JobSession:
    """A background job's view of the session: everything shared except the cancel flag and the
    iteration count, so that killing a job (or its runaway loop) ends that job only."""

    _OWN = frozenset({"cancel", "iterations"})

    def __init__(self, parent: Any, cancel: Cancel) -> None:
        object.__setattr__(self, "_parent", parent)
        object.__setattr__(self, "cancel", cancel)
        object.__setattr__(self, "iterations", 0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parent, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self._parent, name, value)


class JobTable:
    """The session's background jobs by number, and the statuses of finished pids (for `wait PID`
    after the job has left the table, as bash remembers them)."""

    def __init__(self) -> None:
        self.jobs: dict[int, Job] = {}
        self.finished: dict[int, int] = {}
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)

    # ------------------------------------------------------------------ starting

    def start(self, parent: Interp, command: Any) -> Job:
        from kshell.exec.printer import command_text

        child = parent.fork()
        child.fds[0] = NullStream()
        cancel = Cancel(time.monotonic() + parent.limits.wall_time)
        child.session = JobSession(parent.session, cancel)
        text = " ".join(command_text(command, 0).split())
        with self.lock:
            number = max(self.jobs, default=0) + 1
            job = Job(number, child.pid, text, cancel)
            self.jobs[number] = job
        thread = threading.Thread(target=self._run, args=(job, child, command), daemon=True,
                                  name=f"k-job-{job.pid}")
        thread.start()
        return job

    def _run(self, job: Job, child: Interp, command: Any) -> None:
        try:
            status = child.run_subshell(lambda: child.execute(command))
        except BrokenPipeError:
            status = 141
        except LimitExceeded as e:
            if not job.signal:
                child.error(e.message)
            status = 1
        except BaseException:  # noqa: BLE001 - a job's failure is its status
            status = 1
        finally:
            for stream in (child.fds.get(1), child.fds.get(2)):
                if stream is not None:
                    with contextlib.suppress(Exception):  # a closed sink is gone
                        stream.flush()
        if job.signal:
            status = 128 + job.signal
        with self.changed:
            job.status = status & 0xFF
            self.finished[job.pid] = job.status
            job.done.set()
            self.changed.notify_all()

    # ------------------------------------------------------------------ lookup

    def ordered(self) -> list[Job]:
        with self.lock:
            return [self.jobs[n] for n in sorted(self.jobs)]

    def marks(self) -> dict[int, str]:
        """`+` for the current job (the newest), `-` for the previous one."""
        numbers = sorted(self.jobs)
        marks = {n: " " for n in numbers}
        if numbers:
            marks[numbers[-1]] = "+"
        if len(numbers) > 1:
            marks[numbers[-2]] = "-"
        return marks

    def find(self, spec: str) -> Job | None:
        """A job by %N, %%, %+, %-, %NAME (command prefix), %?TEXT, or by pid."""
        jobs = self.ordered()
        if spec.startswith("%"):
            key = spec[1:]
            if key in ("", "%", "+"):
                return jobs[-1] if jobs else None
            if key == "-":
                return jobs[-2] if len(jobs) > 1 else (jobs[-1] if jobs else None)
            if key.isdigit():
                return self.jobs.get(int(key))
            if key.startswith("?"):
                hits = [j for j in jobs if key[1:] in j.text]
            else:
                hits = [j for j in jobs if j.text.startswith(key)]
            return hits[-1] if len(hits) == 1 else None
        if re.fullmatch(r"\d+", spec):
            pid = int(spec)
            return next((j for j in jobs if j.pid == pid), None)
        return None

    def remove(self, job: Job) -> None:
        with self.lock:
            if self.jobs.get(job.number) is job:
                del self.jobs[job.number]

    # ------------------------------------------------------------------ signals and waiting

    def signal(self, job: Job, sig: int) -> None:
        """Deliver a virtual signal: a terminating one cancels the job."""
        if sig == 0 or sig in IGNORED or job.status is not None:
            return
        job.signal = job.signal or sig
        job.cancel.reason = f"killed by SIG{SIGNALS.get(sig, sig)}"
        job.cancel.cancelled = True

    def wait_job(self, job: Job, cancel: Cancel) -> int:
        """Block until `job` ends (the waiting command stays cancellable); its status."""
        while not job.done.wait(0.05):
            cancel.check()
        return job.status or 0

    def wait_any(self, jobs: list[Job], cancel: Cancel) -> Job | None:
        """The first of `jobs` to end (one already ended first), or None when there are none."""
        if not jobs:
            return None
        while True:
            for job in jobs:
                if job.done.is_set():
                    return job
            with self.changed:
                self.changed.wait(0.05)
            cancel.check()
