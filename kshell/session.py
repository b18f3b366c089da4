"""The K shell's entry point: `Shell(fs).run(script)` runs a script as `bash -c` would, on the
VFS, with state kept between calls (so an interactive session can reuse one Shell).

    shell = Shell(fs, name="k", env={"HOME": "/home/agent"}, limits=Limits())
    result = shell.run("echo hi > f; cat f", stdin=b"", args=["a1"])  # Result(stdout, stderr, status)
    status = shell.run_streaming(script, stdout=write_fn, stderr=write_fn, stdin=b"")
    job = shell.suspend()  # from another thread: Ctrl-Z; the run above returns 148

A foreground command stopped by `suspend()` becomes a job of the session (`jobs`, `fg`, `bg`,
`kill %N`): its thread keeps the shell state it ran on, and the shell goes on with a copy (cwd,
variables, functions, options), as bash goes on when its foreground child stops.

`Shell(fs, hosts={"api": {"/hello": "hello\\n"}})` binds virtual hosts for curl and wget
(kshell.tools.net.hosts), listed in the session's /sys/hosts.md; `network=True` allows real HTTP.
`drives=` mounts the image's drives in the session's view (kfs.drives.view.mount).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from kfs.drives.view import Drives
from kshell.builtins import BUILTINS
from kshell.builtins.vars import SET_O_NAMES, SHOPTS
from kshell.core.errors import AbortCommand, BreakLoop, ContinueLoop, ExitSignal, FatalError, ReturnSignal, SigPipe
from kshell.core.variables import ARRAY, EXPORT, INTEGER, READONLY, Computed, Var
from kshell.exec.interp import Interp, Session
from kshell.exec.jobs import SIGTSTP, Job, JobSession
from kshell.exec.options import option_is_set
from kshell.exec.streams import (
    BufferSink,
    BytesSource,
    CallbackSink,
    Cancel,
    InStream,
    Meter,
    MeteredSink,
    Stream,
)
from kshell.exec.system import SystemFS
from kshell.limits import LimitExceeded, Limits
from kshell.tools import registry as tool_registry

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
BASH_VERSION = "5.2.15(1)-release"
SUSPENDED = 128 + SIGTSTP  # $? after Ctrl-Z stops the foreground command, as bash
STOPPED_JOBS = "There are stopped jobs.\n"
# the C stack of every shell thread: deep recursion needs it; a worker bounded by RLIMIT_DATA
# (which counts thread stacks) lowers it so that its threads fit in the bound
THREAD_STACK = 256 * 1024 * 1024


class Result(NamedTuple):
    stdout: bytes
    stderr: bytes
    status: int


def init_defaults(sh: Interp, pwd: str | None = None) -> None:
    """The variables a new shell starts with (environment entries already set win)."""
    table = sh.vars.table
    cwd = sh.fs.cwd.decode("utf-8", "surrogateescape")
    home = sh.fs.home.decode("utf-8", "surrogateescape")
    uid = sh.fs.cred.uid

    def default(name: str, value: str, flags: int = 0) -> None:
        if name not in table:
            table[name] = Var(value, flags)

    default("HOME", home, EXPORT)
    default("PATH", DEFAULT_PATH, EXPORT)
    table["PWD"] = Var(pwd or cwd, EXPORT)
    default("IFS", " \t\n")
    default("PS4", "+ ")
    default("PS1", "\\s-\\v\\$ ")
    default("PS2", "> ")
    default("OPTIND", "1")
    default("SHELL", "/bin/bash", EXPORT)
    default("USER", "root" if uid == 0 else "agent", EXPORT)
    default("LOGNAME", table["USER"].value if isinstance(table["USER"].value, str) else "agent", EXPORT)
    default("HOSTNAME", "k")
    default("SHLVL", "1", EXPORT)
    # what the shell is, read-only as in bash (an environment entry of the same name is ignored)
    for name, value in (("UID", str(uid)), ("EUID", str(uid)), ("PPID", "1")):
        table[name] = Var(value, INTEGER | READONLY)
    table["SHELLOPTS"] = Computed(shellopts, sh)
    table["BASHOPTS"] = Computed(bashopts, sh)
    default("BASH_VERSION", BASH_VERSION)
    default("MACHTYPE", "x86_64-pc-linux-gnu")
    default("OSTYPE", "linux-gnu")
    default("HOSTTYPE", "x86_64")
    default("TERM", "dumb", EXPORT)
    table["BASH_VERSINFO"] = Var({0: "5", 1: "2", 2: "15", 3: "1", 4: "release",
                                   5: "x86_64-pc-linux-gnu"}, ARRAY | READONLY)


def shellopts(sh: Interp) -> str:
    """$SHELLOPTS: the `set -o` options on, in the order `set -o` lists them."""
    return ":".join(name for name in SET_O_NAMES if option_is_set(sh, name))


def bashopts(sh: Interp) -> str:
    """$BASHOPTS: the shopt options on, in the order `shopt` lists them."""
    return ":".join(name for name in SHOPTS if name in sh.shopts)


class _Foreground:
    """The command a Shell runs in the foreground: `settled` is set when it returns or when
    Ctrl-Z turns it into `job` (its thread then lives on, stopped)."""

    __slots__ = ("interp", "text", "settled", "job", "status")

    def __init__(self, interp: Interp, text: str) -> None:
        self.interp = interp
        self.text = text
        self.settled = threading.Event()
        self.job: Job | None = None
        self.status = 1


class Shell:
    """One shell session on a PathFS. `name` is `$0` and the prefix of error messages (bash
    prints `bash: line 1: ...`; K prints `k: line 1: ...`)."""

    def __init__(self, fs, *, name: str = "k", env: dict[str, str] | None = None,
                 limits: Limits | None = None, hosts: dict | None = None, network: bool | list[str] = False,
                 drives: Drives | None = None) -> None:
        self.limits = limits or Limits()
        self.session = Session(self.limits, name)
        self.session.builtins = BUILTINS  # the command table: the interpreter imports none of it
        own_fs = SystemFS(fs.vfs, session=self.session, cred=fs.cred, cwd=fs.cwd, home=fs.home, umask=fs.umask,
                          tilde=False, policy=fs.policy, drives=drives)
        self.interp = Interp(own_fs, self.session, {})
        self.session.tools.update(tool_registry())
        self.name = name
        if env:
            self.interp.init_env(env)
        init_defaults(self.interp)
        self.exited: int | None = None
        self._lock = threading.Lock()
        self._fg: _Foreground | None = None
        self._exit_warned = False
        self._governed = False  # the tools ask the rules (govern)
        self.bind_hosts(hosts or {}, network=network)

    def bind_hosts(self, hosts: dict, *, network: bool | list[str] = False) -> None:
        """Bind virtual hosts for curl and wget (name -> {path: response} or a handler), listed
        in this session's /sys/hosts.md (a file of its view: nothing is written to the state);
        `network` lets real HTTP reach every other host (True) or those matching a list of globs."""
        from kshell.tools.net.hosts import bind

        self.hosts = bind(self.session, hosts, network)
        if hosts or network:
            self.session.view_files["hosts.md"] = lambda: self.hosts.markdown().encode()
        else:
            self.session.view_files.pop("hosts.md", None)

    def govern(self, rules: list, hook: Callable[[list[str]], object] | None = None) -> None:
        """Command rules (kfs.runtime.rules) and the image's command hook for this session: from
        now on every tool and program asks them first (kshell.exec.scripts.judge; the shell's
        builtins never do), and the tool running in a thread is known (what a write or a host
        an `ask` rule matched replays: kshell.worker.approvals)."""
        from kfs.runtime.rules import CommandRules
        from kshell.exec.scripts import guarded

        session = self.session
        session.rules, session.command_hook = CommandRules(rules), hook
        if not self._governed:
            self._governed = True
            session.tools = {name: guarded(tool) for name, tool in session.tools.items()}

    @property
    def tools(self) -> dict:
        """External commands (ls, grep, ...) registered by later layers: name -> fn(sh, argv)."""
        return self.session.tools

    def run(self, source: str, *, stdin: bytes = b"", args: list[str] | None = None) -> Result:
        """Run `source` as `bash -c SOURCE NAME ARGS...` does, NAME being the shell's name and
        `args` (when given) the positional parameters; collect output. The EXIT trap runs at
        the end, as when a script ends."""
        out = BufferSink(self.limits.output_bytes * 4, "output")
        err = BufferSink(self.limits.output_bytes * 4, "output")
        status = self._run(source, BytesSource(stdin), out, err, args, script=True)
        return Result(bytes(out.data), bytes(err.data), status)

    def run_streaming(self, source: str, *, stdout: Callable[[bytes], object],
                      stderr: Callable[[bytes], object], stdin: bytes | InStream = b"",
                      args: list[str] | None = None, script: bool = True) -> int:
        """As run(), with output delivered as it is produced. script=False runs one
        interactive input (no EXIT trap; `exit` is reported through `self.exited`)."""
        source_stream = BytesSource(stdin) if isinstance(stdin, bytes | bytearray) else stdin
        return self._run(source, source_stream, CallbackSink(stdout), CallbackSink(stderr), args,
                         script=script)

    # ------------------------------------------------------------------ job control

    def enable_job_control(self, *, interactive: bool = True) -> None:
        """`set -m`, as an interactive bash starts: `fg`/`bg` work, and (interactive) job
        notices wait for `notices()` before the prompt instead of being printed by `wait`."""
        self.interp.opts.add("m")
        self.session.jobs.interactive = interactive

    def suspend(self) -> Job | None:
        """Ctrl-Z: stop the foreground command and make it a job, so that the run returns
        SUSPENDED (148) at once and the shell takes new commands. When the command is an `fg`
        waiting for a job, that job is stopped again instead. None when nothing runs."""
        tab = self.session.jobs
        with self._lock:
            fg = self._fg
            if fg is None or fg.settled.is_set():
                return None
            held = tab.foreground
            if held is not None and held.status is None:
                tab.stop(held, SIGTSTP)
                return held
            old = fg.interp
            cancel = old.session.cancel
            cancel.stop(SIGTSTP)
            job = tab.add(self.session.new_pid(), fg.text, cancel)
            fg.job = job
            self.interp = _carry_on(old, self.session, self.limits)
            fg.settled.set()
        return job

    def notices(self) -> str:
        """Jobs that stopped or ended since last reported, as bash prints them before a prompt."""
        return self.session.jobs.notices()

    def stopped_jobs(self) -> bool:
        return any(job.stopped for job in self.session.jobs.ordered())

    def refuse_exit(self) -> str:
        """An interactive shell with stopped jobs refuses the first `exit` (or Ctrl-D) with
        bash's warning; a second one in a row ends it. The warning, or "" to go ahead."""
        if self.session.jobs.interactive and not self._exit_warned and self.stopped_jobs():
            self._exit_warned = True
            return STOPPED_JOBS
        return ""

    def hangup(self) -> None:
        """The session ends: SIGHUP to every job, stopped or running, so no thread lingers."""
        self.session.jobs.hangup()

    # ------------------------------------------------------------------ internals

    def _run(self, source: str, stdin: Stream, out: Stream, err: Stream,
             args: list[str] | None, script: bool) -> int:
        _raise_recursion_limit()
        sh = self.interp
        meter = Meter(self.limits.output_bytes)
        tty = getattr(stdin, "is_terminal", False)
        sh.fds = {0: stdin, 1: MeteredSink(out, meter, terminal=tty), 2: MeteredSink(err, meter, terminal=tty)}
        if args is not None:
            sh.positional = list(args)
        warned, self._exit_warned = self._exit_warned, False
        fg = _Foreground(sh, " ".join(line.strip() for line in source.strip().splitlines() if line.strip()))
        with self._lock:
            self._fg = fg
        worker = threading.Thread(target=self._work, args=(fg, source, meter, script, warned), daemon=True)
        worker.start()
        fg.settled.wait()
        with self._lock:
            if self._fg is fg:
                self._fg = None
            job = fg.job
        if job is not None:
            self.interp.last_status = SUSPENDED
            return SUSPENDED
        return fg.status

    def _work(self, fg: _Foreground, source: str, meter: Meter, script: bool, warned: bool) -> None:
        """The foreground thread; a command suspended meanwhile ends as its job."""
        status = 1
        try:
            status = self._main(fg, source, meter, script, warned)
        finally:
            with self._lock:
                fg.status = status
                job = fg.job
                fg.settled.set()
            if job is not None:
                self.session.jobs.finish(job, status)

    def _exit(self, fg: _Foreground, sh: Interp, status: int, script: bool, warned: bool) -> int:
        """`exit` ran: the shell ends, unless it is a stopped job's (only that job ends) or an
        interactive shell with stopped jobs warns first, as bash."""
        with self._lock:
            if fg.job is not None:
                return status
        if not script and not warned:
            self._exit_warned = False
            warning = self.refuse_exit()
            if warning:
                sh.write_err(warning)
                return 1
        self.exited = status
        return status

    def _main(self, fg: _Foreground, source: str, meter: Meter, script: bool, warned: bool) -> int:
        sh = fg.interp
        sh.is_top = True
        sh.line_meter = meter
        status = 0
        try:
            try:
                status = sh.run_source(source)
            except ExitSignal as e:
                status = self._exit(fg, sh, e.status, script, warned)
            except FatalError as e:
                status = self._exit(fg, sh, e.status, script, True)
            except AbortCommand as e:
                status = e.status
            except (BreakLoop, ContinueLoop):
                status = sh.last_status
            except ReturnSignal as r:
                status = r.status
            except SigPipe:
                status = 141
            except RecursionError:
                sh.error("maximum recursion depth exceeded")
                status = 1
            except LimitExceeded as e:
                if not getattr(e, "quiet", False):
                    sh.error(e.message)
                status = 1
            if script:
                trap = sh.traps.pop("EXIT", None)
                if trap:
                    try:
                        sh.run_trap(trap, status, exit_trap=True)
                    except ExitSignal as e:
                        status = e.status
                    except Exception:  # noqa: BLE001
                        pass
                sh.cleanup_tmp()
        except Exception as e:  # noqa: BLE001 - never a traceback for the user
            sh.write_err(f"{sh.script_name}: internal error: {type(e).__name__}: {e}\n")
            status = 1
        finally:
            for stream in sh.fds.values():
                with contextlib.suppress(Exception):  # a stream that cannot flush is gone
                    stream.flush()
        status &= 0xFF
        sh.last_status = status
        return status


def _carry_on(old: Interp, session: Session, limits: Limits) -> Interp:
    """The shell after Ctrl-Z: a copy of the stopped command's state at the top level (cwd,
    variables, functions, options, traps), with its own cancel flag, while the stopped thread
    keeps `old`, as bash's state stays when its foreground child stops."""
    for _ in range(100):
        try:
            new = old.fork()
            break
        except RuntimeError:  # the command changed a table while it was copied: it parks soon
            time.sleep(0.01)
    else:
        new = old.fork()
    new.pid = old.pid
    new.subshell = old.subshell
    new.traps = dict(old.traps)
    new.parent_traps = old.parent_traps
    while new.vars.frames:  # stopped inside a function: the shell itself is at the top level
        new.vars.pop_frame()
    new.funcnames = []
    new.call_lines = []
    new.call_depth = new.loop_depth = new.source_depth = new.errexit_off = new.arith_depth = 0
    new.in_trap = False
    new.fds = {}
    new.last_status = SUSPENDED
    new.pipestatus = [SUSPENDED]
    new.session = JobSession(session, Cancel(time.monotonic() + limits.wall_time))
    return new


def _raise_recursion_limit() -> None:
    if sys.getrecursionlimit() < 20000:
        sys.setrecursionlimit(20000)
    try:
        if threading.stack_size() != THREAD_STACK:
            threading.stack_size(THREAD_STACK)
    except (ValueError, RuntimeError):
        pass
