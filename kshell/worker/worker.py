"""A session worker: one agent session's K shell, in a process of its own.

Forked by the zygote (already holding the interpreter and every tool in memory), a worker opens
the KState afresh (LMDB handles never cross a fork), waits for `BIND` (which agent, which
directory, which variables), joins its cgroup leaf under the agent, and then runs what the
front end sends: one `RUN` at a time, `CALL`s for the job-control and state questions a
session asks between commands, `INTERRUPT` for Ctrl-C. Output goes back as frames in order,
ending with `DONE`. The shell inside runs as it did in the server's threads before (commands
and jobs are threads of this process), but its memory, threads and CPU are bounded by the
kernel and it can be killed without touching any other session.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import pickle
import queue
import resource
import signal
import socket
import threading
import time
import traceback
from collections import deque
from typing import Any

from kfs.drives.memory import MemoryDrives
from kfs.kstate import KState
from kfs.runtime import procs
from kfs.vfs import VFS
from kfs.vfs.policy import WritePolicy
from kshell.tools.net.hosts import hosts_from_wire
from kshell.view import SessionSpec, SessionView, govern_shell, open_view, resumable, session_network, start_refusal
from kshell.worker import wire
from kshell.worker.cgroups import Bounds, CGroups
from kshell.worker.limits import WorkerLimits
from kshell.worker.procs import LiveOutput, ProcRecorder, SignalInbox

SIGXCPU = 24  # what ends a session's work past its CPU time (bash: "CPU time limit exceeded", status 152)
CPU_SPENT = 128 + SIGXCPU  # a worker's exit status when its CPU time ended it
PUSH_CREDITS = 16  # stdin chunks the front end may send ahead of an exec command's reads
# the interpreter state an interactive session keeps between commands (and across a parked or
# replaced worker); everything else of an Interp is per command or per process
SNAPSHOT_FIELDS = ("vars", "funcs", "aliases", "positional", "opts", "pipefail", "shopts", "noglob",
                   "last_status", "traps", "dirstack", "getopts_pos", "last_arg", "pipestatus", "completions")


class FrameFeed:
    """A command's standard input, arriving as STDIN frames.

    Exec sessions push: the front end may send `PUSH_CREDITS` chunks ahead and one more for each
    chunk read. A terminal pulls: the front end reads the channel only when a command asks, so
    typeahead stays with the line editor for the next prompt."""

    def __init__(self, frames: wire.FrameSocket, *, pull: bool) -> None:
        self.frames = frames
        self.pull = pull
        self.cancelled = False
        self._chunks: deque[bytes] = deque()
        self._eof = False
        self._asked = False
        self._cv = threading.Condition(threading.Lock())
        if not pull:
            frames.send_json(wire.WANT, PUSH_CREDITS)

    def put(self, data: bytes) -> None:
        with self._cv:
            self._chunks.append(data)
            self._asked = False
            self._cv.notify_all()

    def close(self) -> None:
        with self._cv:
            self._eof = True
            self._cv.notify_all()

    def cancel(self) -> None:
        with self._cv:
            self.cancelled = True
            self._cv.notify_all()

    def read_some(self) -> bytes:
        """The next chunk; b"" at end of input or when cancelled."""
        with self._cv:
            if self.pull and not self._chunks and not self._eof and not self._asked and not self.cancelled:
                self._asked = True
                self.frames.send_json(wire.WANT, 1)
            while not self._chunks and not self._eof and not self.cancelled:
                self._cv.wait(0.1)
            if not self._chunks or self.cancelled:
                return b""
            data = self._chunks.popleft()
        if not self.pull:
            self.frames.send_json(wire.WANT, 1)
        return data


def terminal_stream(worker: Worker) -> Any:
    """The terminal as a command's stdin: it reads the feed of whichever command is in the
    foreground now, so a command stopped by Ctrl-Z reads the terminal again once `fg` brings it
    back. A read that finds its command's feed gone parks at the command's checkpoint."""
    from kshell.exec.streams import InStream

    session = worker.shell.interp.session  # the command's: it keeps its cancel if it is stopped

    class TerminalStream(InStream):
        name = "stdin"
        is_terminal = True  # a delegated program reading it gets a pty of its own (kshell.delegate)

        def _fill(self) -> bytes:
            while True:
                feed = worker.feed
                if feed is None:
                    return b""
                data = feed.read_some()
                if data or not feed.cancelled:
                    return data
                session.cancel.check()
                if worker.feed is feed:  # continued in the background: no terminal to read
                    return b""

    return TerminalStream()


class Worker:
    """The shell of one session and the loop that serves its front end."""

    def __init__(self, frames: wire.FrameSocket, state: KState) -> None:
        self.frames = frames
        self.state = state
        self.view: SessionView | None = None  # the session's (kshell.view), once bound
        self.vfs: VFS | None = None  # the session's tree: the state's, or a fork's (K_FORK)
        self.fork: dict[str, Any] | None = None  # the record of the session's fork
        self.shell: Any = None
        self.tty = False
        self.feed: FrameFeed | None = None
        self.interrupted = False
        self.memory = 0
        self.agent: str | None = None
        self._running = threading.Event()
        self.lines_run = 0  # RUN requests taken so far
        self._muted: threading.Event | None = None
        self._lines: queue.SimpleQueue[tuple[str, bool, bool]] | None = None
        self.recorder: ProcRecorder | None = None
        self.policy: WritePolicy | None = None
        self.approvals: Any = None  # kshell.worker.approvals.SessionApprovals, once bound
        self.image: dict[str, Any] | None = None  # the record of the image in force (kfs.runtime.image)
        self.memory_drives: MemoryDrives | None = None  # the server run's, opened by this process
        self.python_drives: Any = None  # kshell.image.drives.PythonDrives, once the image has any
        self.hooks: Any = None  # kshell.worker.hooks.Hooks of that image, when it has any for the agent
        self.network: bool | list[str] = False  # the real network curl, wget (and, when True, programs) reach
        self.hung_up = False  # the connection went away (not Ctrl-C): a pending approval waits for the resume
        self.detached = False  # the session's channel is gone; its jobs run on, their output dropped
        self.inbox = SignalInbox(state, self.deliver)
        self.cgroups: CGroups | None = None
        self.session_cpu = 0.0  # CPU seconds the session may use in all (0: no bound)
        self.cpu_base = 0.0  # what the worker had used when this session was bound
        self.cpu_spent = False  # the session used its CPU time: its jobs ended, no line runs
        self.budget_ended = False  # ... while a line ran: its status is 152, as after SIGXCPU
        self.grace = WorkerLimits().interrupt_grace
        self._budget: threading.Thread | None = None

    # -- setting up ----------------------------------------------------------------------------

    def bind(self, spec: dict[str, Any], snapshot: bytes | None, cgroups: CGroups | None) -> None:
        from kshell.limits import Limits
        from kshell.session import Shell

        limits = spec.get("limits", {})
        self.memory = int(limits.get("session_memory", 0))
        if self.agent is not None:  # a reused worker: it already sits in this agent's cgroup
            if spec["agent"] != self.agent:
                raise PermissionError("a worker never serves two agents")
        elif cgroups is not None:
            cgroups.join(spec["agent"], os.getpid(), Bounds(memory=self.memory,
                                                             tasks=int(limits.get("session_tasks", 0))))
        elif self.memory:
            _rlimit_fallback(self.memory)
        self.agent = spec["agent"]
        self.tty = bool(spec.get("tty"))
        env = spec.get("env") or {}
        session, front = spec.get("session") or "-", spec.get("front") or ("ssh pty" if self.tty else "ssh exec")
        told = (spec["uid"], spec["gid"], spec["home"])  # who the front end logged in
        view = self._open_view(spec, session, front)
        if told != (view.agent.uid, view.agent.gid, view.agent.home):  # the agent changed meanwhile
            raise PermissionError(f"agent {self.agent} is not the one the front end logged in")
        self.view = view
        self.vfs, self.fork, self.image, self.policy = view.vfs, view.fork, view.image, view.policy
        self.hooks = view.hooks
        gov, configured, drives, fs = view.governance, spec.get("configured"), view.drives, view.fs
        shell_limits = Limits(**{name: cast(limits[key]) for key, name, cast in (
            ("wall_time", "wall_time", float), ("session_jobs", "threads", int)) if key in limits})
        self.shell = Shell(fs, name="k", env=env, limits=shell_limits, drives=drives)
        self.shell.interp.session.own_process = True  # `ulimit` sets this process's limits
        if spec.get("functions"):
            self._define(spec["functions"])
        if snapshot:
            self._restore(snapshot)
        if "status" in spec:
            self.shell.interp.last_status = int(spec["status"])
        if spec.get("job_control"):
            self.shell.enable_job_control(interactive=True)
        delegate = spec.get("delegate")
        if delegate is not None:
            from kshell.delegate.config import DelegateConfig

            delegate = DelegateConfig.from_wire(delegate)
        self.network = session_network(view, delegate)
        if spec.get("delegate") is not None:
            self.shell.interp.session.delegation = self._delegation(spec, gov, configured, cgroups)
        self._govern(spec, front)
        self.recorder = ProcRecorder(self.state, spec["agent"], session, front,
                                     int(limits.get("process_output", WorkerLimits().process_output)),
                                     int(limits.get("agent_jobs", 0)))
        self._bind_budget(spec, cgroups)
        self.shell.interp.session.jobs.recorder = self.recorder
        if self.tty:
            from kshell.core.variables import EXPORT
            from kshell.delegate.terminal import Terminal

            env = spec.get("env") or {}
            shell = self.shell
            shell.interp.session.terminal = Terminal(
                lambda raw: self.frames.send_json(wire.RAW, raw),
                int(env.get("COLUMNS") or 80), int(env.get("LINES") or 24), suspend=shell.suspend)
            # the shell's own, as bash's checkwinsize sets them: exported, they would pin a
            # program's ncurses (tput, less) to the size at its start, past every window change
            for name in ("COLUMNS", "LINES"):
                var = shell.interp.vars.table.get(name)
                if var is not None:
                    var.flags &= ~EXPORT

    def _bind_budget(self, spec: dict[str, Any], cgroups: CGroups | None) -> None:
        """The session's CPU time (`[limits] session_cpu`), counted from now plus what its
        earlier workers used (an interactive session's parked or killed ones): a reused
        worker's earlier sessions are not this one's. A thread watches it while the worker lives."""
        limits = spec.get("limits", {})
        self.cgroups = cgroups
        self.session_cpu = float(limits.get("session_cpu", 0))
        self.grace = float(limits.get("interrupt_grace", self.grace))
        before = float(spec.get("cpu_used", 0))  # what the session's earlier workers used
        self.cpu_spent = bool(self.session_cpu) and before > self.session_cpu  # told and recorded then
        self.cpu_base = self.cpu_used() - before
        if self.session_cpu and self._budget is None:
            self._budget = threading.Thread(target=self._watch_budget, name="k-budget", daemon=True)
            self._budget.start()

    def cpu_used(self) -> float:
        """CPU seconds of this worker and everything it started: its cgroup leaf's, else its
        own threads' and its reaped children's (getrusage)."""
        if self.cgroups is not None:
            used = self.cgroups.cpu_seconds(os.getpid())
            if used is not None:
                return used
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    def _watch_budget(self) -> None:
        """Every quarter second: past its CPU time, the session's jobs (`nohup` and disowned
        ones too) and its running line end with SIGXCPU, as a process past RLIMIT_CPU does,
        with one K: line and a `session.limit` event. A detached worker whose jobs do not
        end within `interrupt_grace` exits (the zygote kills what is left of its cgroup)."""
        while True:
            time.sleep(0.25)
            shell = self.shell
            if shell is None or not self.session_cpu or self.cpu_spent:
                continue
            used = self.cpu_used() - self.cpu_base
            if used <= self.session_cpu:
                continue
            self.spend(shell, used)
            deadline = time.monotonic() + self.grace
            while shell.session.jobs.live() and time.monotonic() < deadline:
                time.sleep(0.02)
            if self.detached and shell.session.jobs.live():
                os._exit(CPU_SPENT)

    def spend(self, shell: Any, used: float) -> None:
        """The session's CPU time is used up: end everything it runs, say so once, record it."""
        from kfs.journal import append_event

        self.cpu_spent = True
        shell.session.jobs.end_all(SIGXCPU)
        if self._running.is_set():
            self.budget_ended = True
            current = shell.interp.session.cancel
            current.signal = current.signal or SIGXCPU
            current.kill("session CPU time limit", SIGXCPU)
        self._tell(cpu_message(self.session_cpu))
        recorder = self.recorder
        if recorder is not None:
            with contextlib.suppress(Exception):  # a full state must not keep the bound from acting
                self.state.write(lambda txn: append_event(
                    txn, "session.limit", agent=recorder.agent, session=recorder.session, front=recorder.front,
                    limit="session_cpu", bound=self.session_cpu, used=round(used, 3)))

    def _govern(self, spec: dict[str, Any], front: str) -> None:
        """The view's rules on the session's shell (kshell.view.govern_shell), an `ask` told and
        waited for on this session's channel (kshell.worker.approvals)."""
        from kshell.worker.approvals import SessionApprovals

        self.approvals = SessionApprovals(
            self.state, spec, front, self.policy, tell=self._tell,
            pause=lambda paused: self.frames.send_json(wire.PAUSE, paused),
            stop=lambda: self.interrupted, hung_up=lambda: self.hung_up, shell=lambda: self.shell.interp)
        assert self.view is not None
        govern_shell(self.state, self.view, self.shell, self.approvals, self.network,
                     hosts_from_wire(spec.get("hosts")))

    def _open_view(self, spec: dict[str, Any], session: str, front: str) -> SessionView:
        """The session's view (kshell.view): the agent's credentials, its fork's tree when the
        front end let it name one (K_FORK, checked there), the rules and hooks in force, the
        image's drives: memory drives in the directory of the server run the front end names
        (opened once by this process), python drives made and mounted once by this worker."""
        where = spec.get("memory_drives")
        if where and (self.memory_drives is None or str(self.memory_drives.directory) != where):
            self.memory_drives = MemoryDrives(where)
        if self.python_drives is None:
            from kshell.image.drives import PythonDrives

            self.python_drives = PythonDrives()
        env = spec.get("env") or {}
        fork = env.get("K_FORK")
        return open_view(self.state, SessionSpec(
            spec["agent"], front, session, mode=env.get("K_MODE") or "full", fork=int(fork) if fork else None,
            configured=spec.get("configured"), cwd=spec.get("cwd")),
            memory_drives=self.memory_drives, python_drives=self.python_drives)

    def unmount_drives(self) -> None:
        """The worker ends: the python drives it mounted are unmounted (their `unmount()`)."""
        if self.python_drives is not None:
            with contextlib.suppress(Exception):
                self.python_drives.unmount()

    def _tell(self, text: str) -> None:
        """A line for the agent on the channel's stderr, whatever the command redirected."""
        if not self.detached:
            self.frames.send(wire.ERR, text.encode("utf-8", "surrogateescape"))

    def _delegation(self, spec: dict[str, Any], gov: Any, configured: dict[str, Any] | None,
                    cgroups: CGroups | None) -> Any:
        """The server's `[delegate]` settings with the agent's own (read from this worker's
        KState, so a `komputer agent set` applies from the next session on). A host rule that
        denies or asks takes the network away from programs: K cannot see which host they reach;
        so does a command rule that denies or asks for curl or wget: K cannot see a program fetch.
        `configured` (what komputer.toml says of the agent, a fork's scope included) is what an
        agent's view mounted for its programs reads too; its daemon serves the whole server,
        so it leaves this session's cgroup."""
        from kfs.runtime.rules import withholds_network
        from kshell.delegate import Delegation
        from kshell.delegate.config import DelegateConfig, for_agent

        config = for_agent(DelegateConfig.from_wire(spec["delegate"]), gov.settings)
        # programs reach the whole network or none: K cannot see which host they reach, so an
        # allow-list (or a host rule that denies or asks) leaves them without one
        network = self.network is True and all(r.action == "allow" for r in gov.of("host")) \
            and not withholds_network(gov.of("command"))
        config = dataclasses.replace(config, network=network)
        return Delegation(config, str(self.state.path), spec["uid"], spec["gid"], spec["home"],
                          spec.get("env", {}).get("HOSTNAME") or "komputer", agent=spec["agent"],
                          configured=configured, hold=cgroups.hold_service if cgroups is not None else None)

    def _define(self, source: str) -> None:
        """Re-read saved function definitions (nothing else runs: they are only definitions)."""
        self.shell.run_streaming(source, stdout=_discard, stderr=_discard, script=False)

    def snapshot(self) -> bytes:
        interp = self.shell.interp
        state = {name: getattr(interp, name) for name in SNAPSHOT_FIELDS}
        state["cwd"] = interp.fs.cwd
        state["umask"] = interp.fs.umask
        return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)

    def _restore(self, blob: bytes) -> None:
        """The state a previous worker of this session left (its own snapshot, never anything
        the front end made: the front end only carries the bytes)."""
        state = pickle.loads(blob)  # noqa: S301 - written by a worker of the same agent session
        interp = self.shell.interp
        cwd, umask = state.pop("cwd"), state.pop("umask")
        for name, value in state.items():
            setattr(interp, name, value)
        interp.vars.rebind(interp)  # SHELLOPTS and BASHOPTS read this shell's options
        with contextlib.suppress(OSError):
            if interp.fs.stat(cwd).is_dir:
                interp.fs.cwd = cwd
        interp.fs.umask = umask

    # -- serving -------------------------------------------------------------------------------

    def serve(self) -> bool:
        """Requests until HANGUP or the front end goes away (False), or RESET (True: the worker
        may serve another session of the same agent); every job gets SIGHUP."""
        try:
            while True:
                frame = self.frames.recv()
                if frame is None:
                    return False
                kind, payload = frame
                if kind == wire.RUN:
                    request = json.loads(payload)
                    self.interrupted = False
                    self.lines_run += 1
                    self._running.set()  # before a CALL that follows can ask whether it runs
                    self.feed = FrameFeed(self.frames, pull=self.tty)  # before any STDIN frame
                    self._start(request["source"], bool(request.get("interactive")), bool(request.get("keep")))
                elif kind == wire.STDIN:
                    if self.feed is not None:
                        self.feed.put(payload)
                elif kind == wire.STDIN_EOF:
                    if self.feed is not None:
                        self.feed.close()
                elif kind == wire.INTERRUPT:
                    self.hung_up = self.hung_up or payload == b"hangup"
                    self.interrupt()
                elif kind == wire.CALL:
                    request = json.loads(payload)
                    self.frames.send_json(wire.REPLY, self.call(request["method"], request.get("args", [])))
                elif kind == wire.HANGUP:
                    return False
                elif kind == wire.DETACH:
                    self.detach(bool(json.loads(payload).get("hangup")))
                elif kind == wire.RESET and not self._running.is_set() and not self.live_jobs():
                    # limits `ulimit` set on this process would be the next session's: it ends
                    return not self.shell.interp.session.process_limits_set
        finally:
            with contextlib.suppress(Exception):
                self.shell.hangup()
            delegation = self.shell.interp.session.delegation
            if delegation is not None:  # its warm sandboxes end with it (kshell.delegate.launcher)
                delegation.close()
            if self.hooks is not None and self.hooks.has("session_end"):
                self.hooks.decide("session_end")

    def _session_refused(self) -> str:
        """Why a session_start hook keeps this line from running ("" when it does not): its
        `deny`, or an `ask` someone rejected (asked once, at the first line)."""
        assert self.view is not None
        return start_refusal(self.view, self.approvals, self.shell.interp)

    def call(self, method: str, args: list[Any]) -> Any:
        """The questions a session asks its shell between (or, for `suspend`, during) commands."""
        shell = self.shell
        if method == "suspend":
            deadline = time.monotonic() + 1.0  # the command thread may not have registered yet
            while self._running.is_set() and shell._fg is None and time.monotonic() < deadline:  # noqa: SLF001
                time.sleep(0.002)
            return shell.suspend() is not None
        if method == "notices":
            return str(shell.notices())
        if method == "refuse_exit":
            return str(shell.refuse_exit())
        if method == "set_status":
            shell.interp.last_status = int(args[0])
            return None
        if method == "set_terminal_size":
            interp = shell.interp
            for name, value in (("COLUMNS", args[0]), ("LINES", args[1])):
                with contextlib.suppress(Exception):  # readonly or integer-typed: the user's choice
                    interp.assign_scalar(name, str(value))
            terminal = interp.session.terminal
            if terminal is not None:
                terminal.resize(int(args[0]), int(args[1]))
            return None
        if method == "state":
            return self.state_record()
        if method == "end_jobs":  # the session ends for good (the SDK's close): every job ends
            shell.session.jobs.end_all(signal.SIGHUP)
            return None
        if method == "snapshot":
            return None  # the bytes follow as a SNAPSHOT frame
        raise ValueError(f"unknown call {method!r}")

    def state_record(self) -> dict[str, Any]:
        """What a named session keeps for its next channel and `K_SESSION` resume."""
        return {**resumable(self.shell.interp), "jobs": self.live_jobs()}

    def live_jobs(self) -> int:
        return len(self.shell.session.jobs.live())

    def deliver(self, pid: int, sig: int) -> None:
        """A signal another session sent to one of this worker's processes: a job, or the
        command an exec session runs (its row's pid is the shell's $$)."""
        if self.shell is None:
            return
        session = self.shell.interp.session
        job = session.jobs.by_pid(pid)
        if job is not None:
            session.jobs.signal(job, sig)
        elif pid == session.pid and self._running.is_set() and sig not in (0, 17, 18, 23, 28):
            current = session.cancel
            current.signal = current.signal or sig
            current.kill(f"killed by signal {sig}", sig)

    def detach(self, hangup: bool) -> None:
        """The channel closed with jobs running: they run on (bash under sshd without a pty),
        their output dropped; a terminal session first hangs them up, as a login bash does
        (not `nohup` or disowned ones), and stopped jobs get SIGHUP and SIGCONT, as the kernel
        sends an orphaned stopped group. The worker exits when the last one ends, at the
        latest job's wall-time bound if one never reaches a checkpoint, or, after a hang-up,
        once only jobs the hang-up ended are left `interrupt_grace` later (a job stuck where
        it never sees its flag): the whole worker goes then, with its process group and cgroup."""
        self.detached = True
        jobs = self.shell.session.jobs
        if hangup:
            jobs.hangup()
        for job in jobs.live():
            if job.stopped:
                jobs.signal(job, 1)
                jobs.resume(job)
        hung_up = time.monotonic() + self.grace if hangup else None

        def exit_when_done() -> None:
            while live := jobs.live():
                now = time.monotonic()
                if now > max(j.cancel.deadline for j in live) + 5.0:
                    os._exit(1)
                if hung_up is not None and now > hung_up and not any(durable(j) for j in live):
                    os._exit(1)
                time.sleep(0.05)
            self.unmount_drives()
            os._exit(0)

        threading.Thread(target=exit_when_done, name="k-detached", daemon=True).start()

    def interrupt(self) -> None:
        """Ctrl-C or the connection went away: stop the running command (status 130).

        The K shell checks a per-line `Cancel` in its loops and pipe waits and makes a new one
        for each top-level line, so keep flagging the current one until the run returns. A
        command that never reaches a checkpoint is the front end's to kill."""
        self.interrupted = True
        if self._muted is not None:
            self._muted.set()
        if self.feed is not None:
            self.feed.cancel()
        shell = self.shell
        line = self.lines_run  # this line's: a flagger of an earlier one must not cancel the next

        def keep_flagging() -> None:
            while self._running.is_set() and self.lines_run == line:
                current = shell.interp.session.cancel
                current.reason = current.reason or "interrupted"
                current.signal = current.signal or signal.SIGINT
                current.cancelled = True
                time.sleep(0.02)

        threading.Thread(target=keep_flagging, name="k-interrupt", daemon=True).start()

    def _start(self, source: str, interactive: bool, keep: bool = False) -> None:
        """Hand the line to the worker's run thread (started at the first line: the zygote
        forks single-threaded, and a thread per line would cost as much as a short command)."""
        if self._lines is None:
            self._lines = queue.SimpleQueue()
            threading.Thread(target=self._runner, args=(self._lines,), name="k-run", daemon=True).start()
        self._lines.put((source, interactive, keep))

    def _runner(self, lines: queue.SimpleQueue[tuple[str, bool, bool]]) -> None:
        """A line that fails outside the shell's own error handling leaves no DONE: end the
        worker, so the front end reports it instead of waiting."""
        try:
            while True:
                self._run(*lines.get())
        except BaseException:  # noqa: BLE001
            traceback.print_exc()
            os._exit(70)

    def _run(self, source: str, interactive: bool, keep: bool = False) -> None:
        """One command line, to completion; its output and then DONE go to the front end.
        `keep`: an exec whose shell state lives on (an SDK session's): its snapshot follows,
        as an interactive line's does, so a replaced worker resumes it."""
        frames = self.frames
        feed = self.feed
        muted = self._muted = threading.Event()

        live: LiveOutput | None = None

        def emit(kind: int) -> Any:
            stream = "stdout" if kind == wire.OUT else "stderr"

            def write(data: bytes) -> None:
                if data and not muted.is_set() and not self.detached:
                    frames.send(kind, bytes(data))
                if data and live is not None:
                    live.write(stream, bytes(data))

            return write

        self._running.set()
        status = 1
        pid = None
        receipt = 0
        if not interactive and self.recorder is not None:  # an exec's command is a process, its pid $$
            cwd = self.shell.interp.fs.cwd.decode("utf-8", "surrogateescape")
            pid = self.recorder.started(source[:4096], cwd, "local")
            if pid is not None:
                self.shell.interp.session.pid = pid
                live = LiveOutput(self.state, pid)
                row = procs.get(self.state, pid)
                receipt = int(row["receipt"]) if row is not None else 0
        try:
            if self.approvals is not None:  # what was decided while nobody waited comes first
                self._resume_approvals(emit(wire.OUT), emit(wire.ERR))
            refused = cpu_message(self.session_cpu) if self.cpu_spent else self._session_refused()
            if refused:
                status = CPU_SPENT if self.cpu_spent else status
                emit(wire.ERR)(refused.encode())
            else:
                status = self.shell.run_streaming(source, stdout=emit(wire.OUT), stderr=emit(wire.ERR),
                                                  stdin=terminal_stream(self), script=not interactive)
        except MemoryError:
            status = 137
            muted.clear()
            frames.send(wire.ERR, memory_message(self.memory).encode())
        finally:
            self._running.clear()
            if feed is not None:  # a reader stopped by Ctrl-Z parks, then reads the next foreground's feed
                feed.cancel()
        if self.budget_ended:
            status = self.shell.interp.last_status = CPU_SPENT
            self.budget_ended = False
            if interactive:
                self.shell.exited = None  # the terminal stays: its next lines are refused, with why
        if self.interrupted:  # what bash reports after Ctrl-C: $? is 130
            status = self.shell.interp.last_status = 130
            if interactive:
                self.shell.exited = None  # Ctrl-C never ends the session
        if self.policy is not None and (self.policy.refused or self.policy.told):  # what refused writes
            lines = list(dict.fromkeys(self.policy.told)) + ([self.policy.describe()] if self.policy.refused else [])
            self.policy.refused = 0
            self.policy.told.clear()
            if not muted.is_set():
                frames.send(wire.ERR, "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape"))
        if pid is not None:
            killed = self.shell.interp.session.cancel.signal if self.interrupted or status > 128 else 0
            self.recorder.ended(pid, status & 0xFF, killed, live=live)
        if interactive or keep:
            frames.send(wire.SNAPSHOT, self.snapshot())
        frames.send_json(wire.DONE, {
            "pid": pid or 0, "receipt": receipt, "status": status, "interrupted": self.interrupted,
            "exited": self.shell.exited is not None,
            "cwd": self.shell.interp.fs.cwd.decode("utf-8", "surrogateescape"), "jobs": self.live_jobs(),
            "cpu": self.cpu_used() - self.cpu_base,
        })


    def _resume_approvals(self, out: Any, err: Any) -> None:
        """Apply the decisions on this session's approvals that reached no one (its connection
        went away, or the server was restarted, while they were pending); `$?` is the last."""
        session = self.shell.interp.session

        def replay(source: str, command: str) -> int:
            session.preapproved = command or None
            try:
                return self.shell.run_streaming(source, stdout=out, stderr=err, script=False)
            finally:
                session.preapproved = None

        status = self.approvals.resume(replay, err)
        if status is not None:
            self.shell.interp.last_status = status


def durable(job: Any) -> bool:
    """A job the hang-up spares: `nohup`/`setsid`, disowned, or started by such a job."""
    return bool(job.no_hup or job.cancel.hup_ignored)


def cpu_message(limit: float) -> str:
    return f"K: session CPU time limit of {limit:g} s reached\n"


def memory_message(limit: int) -> str:
    from kshell.worker.limits import size_text

    return f"K: memory limit of {size_text(limit)} reached\n" if limit else "K: out of memory\n"


def _rlimit_fallback(memory: int) -> None:
    """Without cgroups: bound the heap with RLIMIT_DATA (LMDB's shared map does not count
    against it, as it would against RLIMIT_AS), thread stacks made small enough to fit."""
    import kshell.session

    kshell.session.THREAD_STACK = 32 << 20
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_DATA, (memory + 16 * kshell.session.THREAD_STACK,) * 2)


def _discard(data: bytes) -> None:
    pass


def main(ctl: socket.socket, state_dir: str, cgroups: dict[str, Any] | None) -> None:
    """The worker process, right after the fork: never returns (os._exit)."""
    status = 0
    worker: Worker | None = None
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()  # its own process group: killing the worker reaches what it started
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        frames = wire.FrameSocket(ctl)
        state = KState(state_dir)
        worker = Worker(frames, state)
        tree = CGroups.attach(cgroups) if cgroups else None
        while True:
            snapshot: bytes | None = None
            while True:
                frame = frames.recv()
                if frame is None or frame[0] == wire.HANGUP:  # a reset worker the pool let go
                    return  # (the finally clause exits)
                kind, payload = frame
                if kind == wire.RESTORE:
                    snapshot = payload
                elif kind == wire.BIND:
                    break
            try:
                worker.bind(json.loads(payload), snapshot, tree)
            except Exception as e:  # noqa: BLE001 - told to the front end, which tells the agent
                frames.send_json(wire.FAILED, {"message": f"{type(e).__name__}: {e}"})
                status = 1
                return
            frames.send_json(wire.REPLY, {"bound": os.getpid()})
            if not worker.serve():
                break
            worker.shell = worker.feed = None
            frames.send_json(wire.REPLY, {"reset": True})
    except BaseException:  # noqa: BLE001 - a worker never unwinds into the zygote's code
        status = 1
    finally:
        if worker is not None:
            worker.unmount_drives()
        os._exit(status)
