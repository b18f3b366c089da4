"""K-local jobs: `cmd &` runs in a thread as a subshell with its own `Cancel`, and is recorded in
the session's `JobTable` (numbers for %N, a pid for $!); a foreground command stopped by Ctrl-Z
(`Shell.suspend`) joins the table too. Signals are virtual: a terminating signal cancels the job
(its status becomes 128+N), STOP/TSTP/TTIN/TTOU park its threads at their next checkpoint and
CONT lets them go on. The job tools (jobs, kill, wait, fg, bg, ps) read and act on this table;
the current (`+`) and previous (`-`) jobs follow bash's rules, which prefer stopped jobs."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from typing import TYPE_CHECKING, Any, Protocol

from kfs.values import field, value_class
from kshell.core.errors import SigPipe
from kshell.exec.streams import Cancel, Capture, NullStream
from kshell.limits import LimitExceeded
from kshell.syntax.printer import command_text

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
SIGCONT, SIGSTOP, SIGTSTP = 18, 19, 20
STOPS = frozenset({19, 20, 21, 22})  # STOP TSTP TTIN TTOU: the job parks until CONT
IGNORED = frozenset({17, 23, 28})  # CHLD URG WINCH: default action is none
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


def signal_table() -> str:
    """`kill -l` and `trap -l`: every signal, numbered, five to a line."""
    entries = [f"{n:2d}) SIG{name}" for n, name in sorted(SIGNALS.items())]
    text = "".join(e + ("\n" if i % 5 == 0 else "\t") for i, e in enumerate(entries, 1))
    return text if text.endswith("\n") else text + "\n"  # bash's last line keeps its tab


_STOP_DESCRIPTIONS = {19: "Stopped (signal)", 20: "Stopped", 21: "Stopped (tty input)", 22: "Stopped (tty output)"}


def describe(sig: int) -> str:
    """strsignal(3), as bash prints a job killed by `sig`."""
    return _DESCRIPTIONS.get(sig, f"Signal {sig}")


@value_class
class Job:
    """One job: a background command or a stopped foreground one. `status` is set when it ends;
    `signal` is the terminating signal that ended it (0: it exited); `notified` is the state
    last reported to the user (bash reports a stop or an end once)."""

    number: int
    pid: int
    text: str
    cancel: Cancel
    status: int | None = None
    signal: int = 0
    done: threading.Event = field(default_factory=threading.Event)
    notified: str = "Running"
    no_hup: bool = False  # `disown -h`: the session's hang-up passes it by
    output: dict[str, Capture] = field(default_factory=dict)  # stdout/stderr as recorded (durable jobs)

    @property
    def stopped(self) -> bool:
        return self.status is None and self.cancel.stopped

    @property
    def running(self) -> bool:
        return self.status is None and not self.cancel.stopped

    def state(self, long: bool = False) -> str:
        """The status word of `jobs` (`jobs -l` names the stopping signal, as bash)."""
        if self.status is None:
            if self.cancel.stopped:
                return _STOP_DESCRIPTIONS.get(self.cancel.stop_signal, "Stopped") if long else "Stopped"
            return "Running"
        if self.signal:
            return describe(self.signal)
        return "Done" if self.status == 0 else f"Exit {self.status}"

    def stop_status(self) -> int:
        """What `wait` returns for a stopped job: 128 + the stopping signal."""
        return 128 + (self.cancel.stop_signal or SIGSTOP)


def _kind(parent: Interp, text: str) -> str:
    """`delegated` when the job's first command is a host program, else `local` (a crash
    can resume only local work)."""
    name = text.split(" ", 1)[0]
    if parent.session.delegation is None or not name or name in parent.builtins or parent.tool(name) is not None \
            or name in parent.funcs:
        return "local"

    from kshell.exec.scripts import find_in_path  # on first use, not at start-up

    path, ok = find_in_path(parent, name)
    return "delegated" if ok and path is not None and parent.fs.host_path(path) else "local"


class JobSession:
    """A background job's view of the session: everything shared except the cancel flag and the
    iteration count, so that killing a job (or its runaway loop) ends that job only."""

    _OWN = frozenset({"cancel", "iterations", "job"})

    def __init__(self, parent: Any, cancel: Cancel) -> None:
        object.__setattr__(self, "_parent", parent)
        object.__setattr__(self, "cancel", cancel)
        object.__setattr__(self, "iterations", 0)
        object.__setattr__(self, "job", None)  # the job this view runs (None: a top-level line's)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parent, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self._parent, name, value)


class Recorder(Protocol):
    """Where jobs become durable processes (kshell.worker.procs): rows in KState with pids all
    the agent's sessions share. Without one (a shell of the CLI), pids are the session's own."""

    keep: int  # bytes of a job's output kept for its events, from the start and from the end

    def admit(self) -> bool: ...
    def started(self, text: str, cwd: str, kind: str) -> int | None: ...
    def ended(self, pid: int, status: int, signal: int, output: dict[str, Capture] | None = None) -> None: ...
    def stopped(self, pid: int, stopped: bool) -> None: ...
    def signal(self, pid: int, sig: int) -> bool: ...
    def row(self, pid: int) -> dict[str, Any] | None: ...
    def others(self) -> list[dict[str, Any]]: ...


class JobTable:
    """The session's jobs by number, the current and previous job (for `%+`, `%-` and the marks
    of `jobs`), and the statuses of finished pids (for `wait PID` after the job has left the
    table, as bash remembers them). `foreground` is the job an `fg` is waiting for, so that
    Ctrl-Z stops that job rather than the `fg` line."""

    def __init__(self) -> None:
        self.jobs: dict[int, Job] = {}
        self.finished: dict[int, int] = {}
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.current: int | None = None
        self.previous: int | None = None
        self.foreground: Job | None = None
        self.interactive = False  # an interactive shell reports jobs before its prompt, not in wait
        self.disowned: list[Job] = []  # left the table (`disown`), still running
        self.hung_up = False  # the session hung up: a job a running one starts now gets SIGHUP too
        self.ending = 0  # the session's budget is spent: every job, and any started now, gets this signal
        self.recorder: Recorder | None = None

    # ------------------------------------------------------------------ starting

    def start(self, parent: Interp, command: Any) -> Job:
        """`command &`. A job a job starts belongs to the same tree: it gets no more wall time
        than its starter has left (a budget renewed per job would let a fork bomb run for
        ever) and keeps its starter's exemption from the hang-up (`nohup`'s ignored SIGHUP
        is inherited, and a disowned job's children are not the session's to hang up)."""
        parent.session.cancel.check()  # a killed (or hung-up) command starts nothing more
        if self.recorder is not None and not self.recorder.admit():
            parent.fork_failed()  # the agent's processes, in all its sessions, are at their bound
        starter: Job | None = getattr(parent.session, "job", None)
        child = parent.fork()
        child.fds[0] = NullStream()
        child.loop_depth = 0  # a job is a subshell: `break` there is not the loop's
        deadline = time.monotonic() + parent.limits.wall_time
        cancel = Cancel(deadline if starter is None else min(deadline, starter.cancel.deadline))
        child.session = JobSession(parent.session, cancel)
        text = " ".join(command_text(command, 0).split())
        output: dict[str, Capture] = {}
        if self.recorder is not None:
            cwd = parent.fs.cwd.decode("utf-8", "surrogateescape")
            child.pid = self.recorder.started(text, cwd, _kind(parent, text)) or child.pid
            for fd, name in ((1, "stdout"), (2, "stderr")):  # what it prints, for its events
                if child.fds.get(fd) is not None and self.recorder.keep > 0:
                    child.fds[fd] = output[name] = Capture(child.fds[fd], self.recorder.keep)
        if text.split(" ", 1)[0] in ("nohup", "setsid") or starter is not None and starter.cancel.hup_ignored:
            cancel.hup_ignored = True  # from the start: a hang-up right after `&` must not reach it
        job = self.add(child.pid, text, cancel)
        child.session.job = job
        job.output = output
        job.no_hup = starter is not None and starter.no_hup
        if self.hung_up and not job.no_hup:  # flags checked after the job is in the table: a
            self.signal(job, 1)  # hang-up or an end either saw it there or is seen here
        if self.ending:
            self.signal(job, self.ending)
        if parent.session.cancel.cancelled:  # killed while it was starting this one: it dies too
            self.signal(job, parent.session.cancel.signal or SIGKILL)
        try:
            parent.start_thread(self._run, (job, child, command), f"k-job-{job.pid}")
        except BaseException:
            with self.changed:
                self.jobs.pop(job.number, None)
                self._reset_current()
            if self.recorder is not None:  # bash's "fork: Resource temporarily unavailable": it never ran
                self.recorder.ended(job.pid, 254, 0)
            raise
        return job

    def add(self, pid: int, text: str, cancel: Cancel) -> Job:
        """Record a job (a new background command, or a stopped foreground one) and make the
        current job what bash would make it."""
        with self.changed:
            number = max(self.jobs, default=0) + 1
            job = Job(number, pid, text, cancel)
            self.jobs[number] = job
            if cancel.stopped:
                job.notified = ""  # a new stopped job is reported once
                self._set_current(number)
            else:
                self._reset_current()
            self.changed.notify_all()
        return job

    def _run(self, job: Job, child: Interp, command: Any) -> None:
        try:
            status = child.run_subshell(lambda: child.execute(command))
        except SigPipe:
            status = 141
        except LimitExceeded as e:
            if not job.signal and not getattr(e, "quiet", False):
                child.error(e.message)
            status = 1
        except BaseException:  # noqa: BLE001 - a job's failure is its status
            status = 1
        finally:
            for stream in (child.fds.get(1), child.fds.get(2)):
                if stream is not None:
                    with contextlib.suppress(Exception):  # a closed sink is gone
                        stream.flush()
        self.finish(job, status)

    def finish(self, job: Job, status: int) -> None:
        """The job's threads have ended with `status` (128+N when a signal ended it)."""
        if job.signal:
            status = 128 + job.signal
        if self.recorder is not None:
            self.recorder.ended(job.pid, status & 0xFF, job.signal, job.output)
        with self.changed:
            job.status = status & 0xFF
            self.finished[job.pid] = job.status
            if job in self.disowned:
                self.disowned.remove(job)
            job.done.set()
            self.changed.notify_all()

    # ------------------------------------------------------------------ lookup

    def ordered(self) -> list[Job]:
        with self.lock:
            return [self.jobs[n] for n in sorted(self.jobs)]

    def marks(self) -> dict[int, str]:
        """`+` for the current job, `-` for the previous one, blank for the others."""
        with self.lock:
            marks = {n: " " for n in self.jobs}
            if self.previous in marks and self.previous != self.current:
                marks[self.previous] = "-"
            if self.current in marks:
                marks[self.current] = "+"
            return marks

    def find(self, spec: str) -> Job | None:
        """A job by %N, %%, %+, %-, %NAME (command prefix), %?TEXT, or by pid."""
        jobs = self.ordered()
        if spec.startswith("%"):
            key = spec[1:]
            with self.lock:
                if key in ("", "%", "+"):
                    return self.jobs.get(self.current) if self.current is not None else None
                if key == "-":
                    number = self.previous if self.previous is not None else self.current
                    return self.jobs.get(number) if number is not None else None
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
        with self.changed:
            if self.jobs.get(job.number) is job:
                del self.jobs[job.number]
                if self.current == job.number:
                    self.current = None
                if self.previous == job.number:
                    self.previous = None
                self._reset_current()

    # ------------------------------------------------------------------ current and previous (bash's jobs.c)

    def _last(self, below: int | None, stopped: bool) -> int | None:
        """The newest job numbered below `below` (all when None) that is stopped (or not: an
        ended job still in the table counts as running, as bash sees it until it reaps it)."""
        for n in sorted(self.jobs, reverse=True):
            if (below is None or n < below) and self.jobs[n].stopped == stopped:
                return n
        return None

    def _set_current(self, number: int) -> None:
        """bash's set_current_job: `number` becomes `+`; `-` prefers a stopped job."""
        if self.current != number:
            self.previous, self.current = self.current, number
        prev = self.jobs.get(self.previous) if self.previous is not None else None
        if self.previous != self.current and prev is not None and prev.stopped:
            return
        cur = self.jobs[number]
        if cur.stopped:
            candidate = self._last(number, stopped=True)
            if candidate is not None:
                self.previous = candidate
                return
        candidate = self._last(None if cur.stopped else number, stopped=False)
        self.previous = candidate if candidate is not None else self.current

    def _reset_current(self) -> None:
        """bash's reset_current: keep a stopped current job, else the previous one if stopped,
        else the newest stopped job, else the newest running one."""
        cur = self.jobs.get(self.current) if self.current is not None else None
        if cur is not None and cur.stopped:
            candidate: int | None = self.current
        else:
            prev = self.jobs.get(self.previous) if self.previous is not None else None
            candidate = self.previous if prev is not None and prev.stopped else None
            if candidate is None:
                candidate = self._last(None, stopped=True)
            if candidate is None:
                candidate = self._last(None, stopped=False)
        if candidate is not None:
            self._set_current(candidate)
        else:
            self.current = self.previous = None

    # ------------------------------------------------------------------ signals and waiting

    def signal(self, job: Job, sig: int) -> None:
        """Deliver a virtual signal: STOP/TSTP/TTIN/TTOU stop the job, CONT resumes it, a
        terminating signal ends it (a stopped job too: bash continues it to let it die)."""
        if sig == 0 or sig in IGNORED or job.status is not None or sig == 1 and job.cancel.hup_ignored:
            return
        if sig in STOPS:
            self.stop(job, sig)
        elif sig == SIGCONT:
            self.resume(job)
        else:
            job.signal = job.signal or sig
            job.cancel.kill(f"killed by SIG{SIGNALS.get(sig, sig)}", sig)

    def stop(self, job: Job, sig: int = SIGTSTP) -> None:
        with self.changed:
            if job.status is not None or job.cancel.stopped:
                return
            job.cancel.stop(sig)
            job.notified = ""
            if job.number in self.jobs:
                self._set_current(job.number)
            self.changed.notify_all()
        if self.recorder is not None:
            self.recorder.stopped(job.pid, True)

    def resume(self, job: Job) -> None:
        with self.changed:
            if not job.stopped:
                return
            job.cancel.resume()
            job.notified = "Running"
            if job.number in self.jobs:
                self._reset_current()
            self.changed.notify_all()
        if self.recorder is not None:
            self.recorder.stopped(job.pid, False)

    def hangup(self) -> None:
        """The session ends: SIGHUP to every job (stopped ones too), as a login bash does;
        not to a disowned one, and a `nohup` one ignores it."""
        self.hung_up = True
        for job in self.ordered():
            if not job.no_hup:
                self.signal(job, 1)

    def end_all(self, sig: int) -> None:
        """The session's budget is spent: `sig` ends every job, `nohup` and disowned ones too,
        and every job started from now on."""
        self.ending = sig
        for job in self.live():
            self.signal(job, sig)

    def disown(self, job: Job, *, keep: bool = False) -> None:
        """`disown`: the job leaves the table (it runs on, unknown to `jobs` and the hang-up);
        `disown -h` (keep) only spares it the hang-up."""
        job.no_hup = True
        if keep:
            return
        with self.changed:
            self.remove(job)
            if job.status is None:
                self.disowned.append(job)

    def live(self) -> list[Job]:
        """Jobs still running or stopped, disowned ones too: what keeps a session's worker."""
        with self.lock:
            return [j for j in [*self.jobs.values(), *self.disowned] if j.status is None]

    def by_pid(self, pid: int) -> Job | None:
        with self.lock:
            return next((j for j in [*self.jobs.values(), *self.disowned] if j.pid == pid), None)

    def wait_job(self, job: Job, cancel: Cancel, *, until_stopped: bool = False) -> int:
        """Block until `job` ends (or, with `until_stopped`, stops); the waiting command stays
        cancellable. Its status (128 + the stopping signal for a stopped job)."""
        while not job.done.wait(0.05):
            if until_stopped and job.stopped:
                return job.stop_status()
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

    # ------------------------------------------------------------------ notices

    def notice(self, job: Job, mark: str | None = None) -> str:
        """bash's job status line: `[1]+  Stopped                 sleep 100` (a stop notice
        starts with a newline, as bash prints it)."""
        if mark is None:
            mark = self.marks().get(job.number, " ")
        line = f"[{job.number}]{mark}  {job.state():<24}{job.text}"
        return ("\n" if job.stopped else "") + line + ("\n" if job.stopped else " &\n" if job.running else "\n")

    def notices(self) -> str:
        """What an interactive shell prints before its prompt: jobs that stopped or ended since
        last reported (ended ones then leave the table)."""
        out = ""
        with self.lock:
            marks = self.marks()
            for job in self.ordered():
                state = job.state()
                if job.running or job.notified == state:
                    continue
                out += self.notice(job, marks.get(job.number, " "))
                job.notified = state
                if job.status is not None:
                    self.remove(job)
        return out
