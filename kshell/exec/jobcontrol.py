"""Job control for K-local jobs (`cmd &`, and foreground commands stopped by Ctrl-Z): jobs, kill,
wait, fg, bg, ps, on the session's job table (kshell.exec.jobs). K jobs are threads, not host
processes: signals are virtual (a terminating signal cancels the job, STOP/TSTP park it at its
next checkpoint, CONT resumes it).

As in bash, `fg` and `bg` need job control: on in the interactive SSH shell, off in scripts and
`ssh host CMD` unless `set -m` turns it on (without it they say `no job control`, as `bash -c`
does). With job control on, `wait` returns 128+N when a job stops and reports jobs as bash's
notices (`[1]+  Done  ...`). One deliberate difference: `jobs` shows a stopped job as `Stopped`
even without job control, where bash (which then never learns of the stop) still says `Running`.

In an SSH session jobs are durable processes (kshell.worker.procs): their pids are the agent's
across sessions, so a later login sees them with `ps` and reaches them with `kill` and `wait`.
`nohup` and `setsid` run a command that a hang-up does not end; `disown` takes a job out of the
table (and out of the hang-up), as bash.

Part of execution, not of the tools: the builtins (kshell.builtins.jobs) run jobs, kill, wait,
fg, bg and disown from here; ps, nohup and setsid are tools (kshell.tools.jobs names them).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from kshell.core.errors import ExitSignal
from kshell.exec.jobs import (
    IGNORED,
    SIGCONT,
    SIGINT,
    SIGNALS,
    STOPS,
    Job,
    JobTable,
    describe,
    signal_number,
    signal_table,
)
from kshell.exec.scripts import find_in_path
from kshell.exec.streams import FileWriter
from kshell.limits import LimitExceeded

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

KILL_USAGE = "kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]\n"
WAIT_USAGE = "wait: usage: wait [-fn] [-p var] [id ...]\n"
JOBS_USAGE = "jobs: usage: jobs [-lnprs] [jobspec ...] or jobs -x command [args]\n"


def table(sh: Interp) -> JobTable:
    return sh.session.jobs


def job_control(sh: Interp) -> bool:
    """`set -m` (monitor mode): on in an interactive session, off in scripts, as bash."""
    return "m" in sh.opts


def _line(job: Job, mark: str, long: bool) -> str:
    text = job.text + (" &" if job.running else "")
    pid = f"{job.pid:>5} " if long else " "
    return f"[{job.number}]{mark} {pid}{job.state(long):<24}{text}\n"


def _flush_finished(sh: Interp, tab: JobTable) -> None:
    """A non-interactive bash with `set -m` reports ended jobs between commands (on stderr) and
    forgets them: do it now, before a job tool looks at the table."""
    if not job_control(sh) or tab.interactive:
        return
    marks = tab.marks()
    for job in tab.ordered():
        if job.status is not None and job.notified != job.state():
            sh.write_err(tab.notice(job, marks.get(job.number, " ")))
            job.notified = job.state()
            tab.remove(job)


def jobs(sh: Interp, argv: list[str]) -> int:
    """`jobs [-lnprs] [%N...]`: running and stopped jobs, and ended ones once (then they leave
    the table)."""
    flags = ""
    args = argv[1:]
    while args and args[0].startswith("-") and len(args[0]) > 1:
        if args[0] == "--":
            args = args[1:]
            break
        for c in args[0][1:]:
            if c not in "lnprs":
                sh.error(f"jobs: -{c}: invalid option")
                sh.write_err(JOBS_USAGE)
                return 2
        flags += args[0][1:]
        args = args[1:]
    tab = table(sh)
    _flush_finished(sh, tab)
    marks = tab.marks()
    chosen: list[Job] = []
    status = 0
    if args:
        for spec in args:
            job = tab.find(spec if spec.startswith("%") else "%" + spec)
            if job is None:
                sh.error(f"jobs: {spec}: no such job")
                status = 1
            else:
                chosen.append(job)
    else:
        chosen = tab.ordered()
    for job in chosen:
        state = job.state()
        if ("r" in flags and not job.running) or ("s" in flags and not job.stopped):
            continue
        if "n" in flags and job.notified == state:
            continue
        if "p" in flags:
            sh.out(f"{job.pid}\n")
        else:
            sh.out(_line(job, marks.get(job.number, " "), "l" in flags))
        job.notified = state
        if job.status is not None:
            tab.remove(job)
    return status


def _kill_list(sh: Interp, args: list[str]) -> int:
    if not args:
        sh.out(signal_table())
        return 0
    status = 0
    for arg in args:
        if arg.isdigit():
            n = int(arg)
            n = n - 128 if n > 128 else n
            if n in SIGNALS:
                sh.out(SIGNALS[n] + "\n")
                continue
        else:
            n = signal_number(arg)
            if n:
                sh.out(f"{n}\n")
                continue
        sh.error(f"kill: {arg}: invalid signal specification")
        status = 1
    return status


def kill(sh: Interp, argv: list[str]) -> int:
    """`kill [-s SIG | -n N | -SIG] %N|PID...`, `kill -l [SIG]`: STOP/TSTP/TTIN/TTOU stop a job,
    CONT resumes it, the others end it (a stopped one too)."""
    args = argv[1:]
    sig = 15
    if args and args[0] in ("-l", "-L"):
        return _kill_list(sh, args[1:])
    if args and args[0] in ("-s", "-n"):
        if len(args) < 2:
            sh.error(f"kill: {args[0]}: option requires an argument")
            return 1
        n = signal_number(args[1])
        if n is None:
            sh.error(f"kill: {args[1]}: invalid signal specification")
            return 1
        sig, args = n, args[2:]
    elif args and args[0].startswith("-") and args[0] != "--" and len(args[0]) > 1:
        n = signal_number(args[0][1:])
        if n is None:
            sh.error(f"kill: {args[0][1:]}: invalid signal specification")
            return 1
        sig, args = n, args[1:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        sh.write_err(KILL_USAGE)
        return 2
    tab = table(sh)
    status = 0
    for target in args:
        if target == "-1":  # every process the agent may signal, as kill(-1, sig) for a user
            for job in tab.live():
                tab.signal(job, sig)
            if tab.recorder is not None:
                for row in tab.recorder.others():
                    tab.recorder.signal(row["pid"], sig)
            continue
        job = tab.find(target)
        if job is None:
            if target.startswith("%"):
                sh.error(f"kill: {target}: no such job")
            elif not target.lstrip("-").isdigit():
                sh.error(f"kill: {target}: arguments must be process or job IDs")
            elif int(target) == sh.session.pid:
                _to_self(sh, sig)
                continue
            elif tab.recorder is not None and tab.recorder.signal(int(target), sig):
                continue  # the agent's process in another session
            else:
                sh.error(f"kill: ({target}) - No such process")
            status = 1
            continue
        tab.signal(job, sig)
    return status


def _to_self(sh: Interp, sig: int) -> None:
    """`kill -SIG $$`: the shell's trap for SIG runs now (as bash runs it when the builtin
    returns); with none, a signal whose default is to end a process ends the shell."""
    if sig == 0:
        return
    name = SIGNALS.get(sig, "")
    action = sh.traps.get(name)
    if action is not None:
        if action:  # an empty action ignores the signal; $? in the trap is kill's own 0
            sh.run_trap(action, 0)
        return
    if sig not in IGNORED and sig not in STOPS and sig != SIGCONT:
        raise ExitSignal(128 + sig)


def _report(sh: Interp, tab: JobTable, job: Job, mark: str) -> None:
    """What bash prints when `wait` reaps a job: a job killed by a signal other than INT, TERM
    or PIPE as `PID Signal  command`; with job control, the others as a notice too."""
    if job.signal and job.signal not in (2, 13, 15):
        sh.error(f"{job.pid:>5} {describe(job.signal):<24}{job.text}")
    elif job_control(sh):
        sh.write_err(tab.notice(job, mark))
    job.notified = job.state()


def _reap(sh: Interp, tab: JobTable, job: Job) -> int:
    """An ended job leaves the table, reported as bash reports it."""
    mark = tab.marks().get(job.number, " ")
    tab.remove(job)
    _report(sh, tab, job, mark)
    return job.status or 0


def _stopped_while_waiting(sh: Interp, tab: JobTable, job: Job, warning: str, *, always: bool = False) -> None:
    """bash with job control, waiting on a job that stops: the stop notice the first time,
    the warning once it has been reported (`wait` with no ID warns every time)."""
    if job.notified != job.state():
        sh.write_err(tab.notice(job))
        job.notified = job.state()
        if not always:
            return
    sh.error(warning)


def wait(sh: Interp, argv: list[str]) -> int:
    """`wait` (every job), `wait ID...` (%N or a pid: the last one's status), `wait -n [ID...]`
    (the next job to end). 127 for an unknown ID, as bash. With job control, a stopped job ends
    the wait with 128 + the stopping signal; without it, wait waits until it is continued and
    ends (or is killed), as bash."""
    args = argv[1:]
    any_one = False
    var = None
    while args and args[0].startswith("-") and len(args[0]) > 1:
        opt = args.pop(0)
        if opt == "--":
            break
        for i, c in enumerate(opt[1:]):
            if c == "n":
                any_one = True
            elif c == "f":
                pass
            elif c == "p":
                rest = opt[i + 2:]
                if not rest and not args:
                    sh.error("wait: -p: option requires an argument")
                    sh.write_err(WAIT_USAGE)
                    return 2
                var = rest or args.pop(0)
                break
            else:
                sh.error(f"wait: -{c}: invalid option")
                sh.write_err(WAIT_USAGE)
                return 2
    tab = table(sh)
    cancel = sh.session.cancel
    jc = job_control(sh)
    if any_one:
        pool = [j for j in (tab.find(a) for a in args) if j is not None] if args else tab.ordered()
        if jc:
            pool = [j for j in pool if not j.stopped]
        job = tab.wait_any(pool, cancel)
        if job is None:
            return 127
        status = _reap(sh, tab, job)
        if var is not None:
            sh.assign_scalar(var, str(job.pid))
        return status
    if not args:
        for job in tab.ordered():
            if jc and job.stopped:
                _stopped_while_waiting(sh, tab, job, f"wait: warning: job {job.number}[{job.pid}] stopped",
                                       always=True)
                continue
            tab.wait_job(job, cancel, until_stopped=jc)
            if job.status is None:  # it stopped while we waited
                _stopped_while_waiting(sh, tab, job, f"wait: warning: job {job.number}[{job.pid}] stopped",
                                       always=True)
                continue
            _reap(sh, tab, job)
        return 0
    status = 0
    for spec in args:
        job = tab.find(spec)
        if job is not None:
            if jc and job.stopped:
                _stopped_while_waiting(sh, tab, job, f"warning: wait_for_job: job {job.number} is stopped")
                status = job.stop_status()
                continue
            status = tab.wait_job(job, cancel, until_stopped=jc)
            if job.status is None:
                _stopped_while_waiting(sh, tab, job, f"warning: wait_for_job: job {job.number} is stopped")
                continue
            _reap(sh, tab, job)
            if var is not None:
                sh.assign_scalar(var, str(job.pid))
        elif spec.startswith("%"):
            sh.error(f"wait: {spec}: no such job")
            status = 127
        elif not spec.isdigit():
            sh.error(f"wait: `{spec}': not a pid or valid job spec")
            status = 1
        elif int(spec) in tab.finished:
            status = tab.finished[int(spec)]
        elif tab.recorder is not None and tab.recorder.row(int(spec)) is not None:
            status = _wait_row(sh, int(spec))
        else:
            sh.error(f"wait: pid {spec} is not a child of this shell")
            status = 127
    return status


def _wait_row(sh: Interp, pid: int) -> int:
    """Wait for the agent's process in another session (polling its row, cancellable); its
    status, 128+N when a signal ended it, 127 when it was lost with a crashed server."""
    recorder = table(sh).recorder
    assert recorder is not None
    while True:
        row = recorder.row(pid)
        if row is None or row["state"] == "lost":
            return 127
        if row["state"] in ("exited", "killed"):
            return int(row["status"])
        sh.session.cancel.check()
        time.sleep(0.05)


def _pick(sh: Interp, tool: str, argv: list[str]) -> Job | None:
    tab = table(sh)
    spec = argv[1] if len(argv) > 1 else "%+"
    job = tab.find(spec if spec.startswith("%") else "%" + spec)
    if job is None:
        sh.error(f"{tool}: {spec if len(argv) > 1 else 'current'}: no such job")
    return job


def fg(sh: Interp, argv: list[str]) -> int:
    """`fg [%N]`: print the job's command, continue it if stopped, and wait for it. Ctrl-C
    (the fg line interrupted) interrupts the job; Ctrl-Z stops it again (status 148)."""
    if not job_control(sh):
        sh.error("fg: no job control")
        return 1
    tab = table(sh)
    _flush_finished(sh, tab)
    job = _pick(sh, "fg", argv)
    if job is None:
        return 1
    if job.status is not None:
        sh.error("fg: job has terminated")
        tab.remove(job)
        return 1
    sh.out(job.text + "\n")
    cancel = sh.session.cancel
    with tab.lock:
        tab.foreground = job
        tab.resume(job)
        if job.number in tab.jobs:
            tab._set_current(job.number)  # noqa: SLF001 - bash's start_job makes it current
    try:
        status = tab.wait_job(job, cancel, until_stopped=True)
    except LimitExceeded:
        tab.signal(job, SIGINT)  # the terminal's interrupt reaches the foreground job
        job.done.wait(5)
        raise
    finally:
        with tab.lock:
            if tab.foreground is job:
                tab.foreground = None
    if job.status is None:  # stopped again (Ctrl-Z): it stays a job, reported by the caller
        return status
    tab.remove(job)
    job.notified = job.state()
    if job.signal and job.signal not in (2, 13, 15):
        sh.error(f"{job.pid:>5} {describe(job.signal):<24}{job.text}")
    return status


def bg(sh: Interp, argv: list[str]) -> int:
    """`bg [%N...]`: continue stopped jobs in the background (`[1]+ sleep 100 &`, as bash)."""
    if not job_control(sh):
        sh.error("bg: no job control")
        return 1
    tab = table(sh)
    status = 0
    for spec in argv[1:] or ["%+"]:
        job = tab.find(spec if spec.startswith("%") else "%" + spec)
        if job is None:
            sh.error(f"bg: {spec if len(argv) > 1 else 'current'}: no such job")
            status = 1
        elif job.status is not None:
            sh.error("bg: job has terminated")
            status = 1
        elif job.running:
            sh.error(f"bg: job {job.number} already in background")
        else:
            mark = tab.marks().get(job.number, " ")
            sh.out(f"[{job.number}]{mark} {job.text} &\n")
            tab.resume(job)
    return status


def program_name(command: str) -> str:
    """What `ps` names a process by: a subshell or group is a shell; nohup and setsid exec
    their command; a path is its last part."""
    words = command.split()
    while words and words[0] in ("nohup", "setsid", "exec"):
        words = words[1:]
    if not words:
        return "?"
    if words[0][0] in "({":
        return "bash"
    return words[0].rsplit("/", 1)[-1] or "?"


def ps(sh: Interp, argv: list[str]) -> int:
    """`ps [-e|-A|-f|-ef|aux]`: the shell, its jobs, and ps itself (virtual processes)."""
    full = False
    for arg in argv[1:]:
        letters = arg.lstrip("-")
        if not letters or any(c not in "eAfauxlw" for c in letters):
            sh.write_err("error: unsupported option (BSD syntax)\n\nUsage:\n ps [options]\n")
            return 1
        full = full or "f" in letters or "u" in letters
    tab = table(sh)
    rows = [(sh.session.pid, 1, "bash", "bash")]
    mine = tab.live()
    rows += [(j.pid, sh.session.pid, program_name(j.text), j.text) for j in mine]
    if tab.recorder is not None:  # the agent's processes in its other sessions
        known = {j.pid for j in mine} | {sh.session.pid}
        rows += [(r["pid"], 1, program_name(r["cmd"]), r["cmd"])
                 for r in tab.recorder.others() if r["pid"] not in known]
    rows.append((sh.session.new_pid(), sh.session.pid, "ps", " ".join(argv)))
    if full:
        uid = sh.fs.cred.uid
        user = "root" if uid == 0 else "agent"
        out = "UID          PID    PPID  C STIME TTY          TIME CMD\n"
        out += "".join(f"{user:<8} {pid:>7} {ppid:>7}  0 00:00 pts/0    00:00:00 {cmd}\n"
                       for pid, ppid, _, cmd in rows)
    else:
        out = "    PID TTY          TIME CMD\n"
        out += "".join(f"{pid:>7} pts/0    00:00:00 {name}\n" for pid, _, name, _ in rows)
    sh.out(out)
    return 0


def nohup(sh: Interp, argv: list[str]) -> int:
    """GNU nohup: run COMMAND immune to hang-ups; output that would go to a terminal is
    appended to nohup.out (in $HOME when the working directory refuses it)."""
    args = argv[1:]
    if args and args[0] == "--":
        args = args[1:]
    if args and args[0] in ("--help", "--version"):
        sh.out("Usage: nohup COMMAND [ARG]...\n  or:  nohup OPTION\nRun COMMAND, ignoring hangup signals.\n"
               if args[0] == "--help" else "nohup (K) 9.1\n")
        return 0
    if not args:
        sh.write_err("nohup: missing operand\n")
        sh.write_err("Try 'nohup --help' for more information.\n")
        return 125
    return _run_immune(sh, args, "nohup")


def setsid(sh: Interp, argv: list[str]) -> int:
    """util-linux setsid: run a program in a new session (no hang-up from this one reaches
    it). -w is what K does anyway (setsid waits for the program); -f (return at once) and -c
    (a controlling terminal) are refused: `setsid CMD &` is the way to K's background."""
    args = argv[1:]
    while args and args[0] in ("-w", "--wait"):
        args = args[1:]
    if args and args[0] in ("-f", "--fork", "-c", "--ctty"):
        sh.write_err(f"setsid: {args[0]} is not supported by K (run `setsid COMMAND &` for a background job)\n")
        return 1
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        sh.write_err("setsid: no command specified\n")
        sh.write_err("Try 'setsid --help' for more information.\n")
        return 1
    return _run_immune(sh, args, "setsid")


def _run_immune(sh: Interp, args: list[str], tool: str) -> int:
    """Run `args` with SIGHUP ignored (the command's Cancel: a job's own, when it is one)."""
    sh.session.cancel.hup_ignored = True
    name = args[0]
    if name not in sh.builtins and sh.tool(name) is None and "/" not in name \
            and find_in_path(sh, name)[0] is None:
        sh.write_err(f"{tool}: failed to run command '{name}': No such file or directory\n")
        return 127
    saved = dict(sh.fds)
    if tool == "nohup" and getattr(sh.fds.get(1), "terminal", False):  # GNU: never to the terminal
        import os

        where = "nohup.out"
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        try:
            handle = sh.fs.open(where, flags, 0o600)
        except OSError:
            where = (sh.get_param("HOME") or "/").rstrip("/") + "/nohup.out"
            try:
                handle = sh.fs.open(where, flags, 0o600)
            except OSError as e:
                sh.write_err(f"nohup: failed to open '{where}': {e.strerror}\n")
                return 127
        sh.write_err(f"nohup: ignoring input and appending output to '{where}'\n")
        sh.fds[1] = FileWriter(handle, where, append=True, unbuffered=True)
        if getattr(sh.fds.get(2), "terminal", False):
            sh.fds[2] = sh.fds[1]
    try:
        return sh.run_command(args, None)
    finally:
        sh.fds = saved


def disown(sh: Interp, argv: list[str]) -> int:
    """bash's `disown [-h] [-ar] [jobspec ...]`: the jobs leave the table (`-h`: stay, but the
    hang-up passes them by); they run on."""
    args = argv[1:]
    keep = every = running = False
    while args and args[0].startswith("-") and len(args[0]) > 1:
        opt = args.pop(0)
        if opt == "--":
            break
        for c in opt[1:]:
            if c == "h":
                keep = True
            elif c == "a":
                every = True
            elif c == "r":
                running = True
            else:
                sh.error(f"disown: -{c}: invalid option")
                sh.write_err("disown: usage: disown [-h] [-ar] [jobspec ... | pid ...]\n")
                return 2
    tab = table(sh)
    if every or running and not args:
        chosen = [j for j in tab.ordered() if not running or j.running]
    elif not args:
        job = tab.find("%+")
        if job is None:
            sh.error("disown: current: no such job")
            return 1
        chosen = [job]
    else:
        chosen = []
        for spec in args:
            job = tab.find(spec)
            if job is None:
                sh.error(f"disown: {spec}: no such job")
                return 1
            chosen.append(job)
    for job in chosen:
        tab.disown(job, keep=keep)
    return 0


