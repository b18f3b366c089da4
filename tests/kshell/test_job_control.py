"""Job control below the SSH layer: the Cancel stop switch, stopped jobs parking at their
checkpoints (sleep, pipe reads, yes, busy loops), kill of a stopped job, `Shell.suspend` (the
Ctrl-Z mechanism: the foreground command becomes a stopped job while the shell goes on with a
copy of its state), fg/bg on suspended work, the exit warning, and `xargs -P` concurrency."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from kshell import Shell
from kshell.exec.streams import Cancel
from kshell.limits import LimitExceeded
from tests.hang import HANG, poll
from tests.kshell.interp_support import KWorld

WAIT_GO = "until test -e go; do sleep 0.05; done"  # runs until the test makes the file `go`


class Interactive:
    """A shell driven like the SSH session drives it: one line at a time, job control on."""

    def __init__(self, world: KWorld) -> None:
        self.shell: Shell = world.shell()
        self.shell.enable_job_control()
        self.out: list[bytes] = []
        self.lock = threading.Lock()

    def _write(self, data: bytes) -> None:
        with self.lock:
            self.out.append(data)

    def run(self, line: str) -> int:
        return self.shell.run_streaming(line, stdout=self._write, stderr=self._write, script=False)

    def start(self, line: str, ready: Callable[[], object] = lambda: True) -> tuple[threading.Thread, list[int]]:
        """Run `line` on a thread (as the SSH layer does) and return once it is the shell's
        foreground command and `ready()` holds (what it must have done before a Ctrl-Z)."""
        box: list[int] = []
        thread = threading.Thread(target=lambda: box.append(self.run(line)), daemon=True)
        thread.start()
        poll(lambda: self.shell._fg is not None and ready(), f"{line!r} never ran")  # noqa: SLF001
        return thread, box

    def param(self, name: str) -> str | None:
        """A variable as the shell's current command sees it."""
        return self.shell.interp.get_param_or_none(name)

    def take(self) -> bytes:
        with self.lock:
            data = b"".join(self.out)
            self.out.clear()
        return data


def progress(path: str, world: KWorld) -> int:
    """How much a job has appended to `path` so far."""
    return world.fs.stat(path).size if world.fs.exists(path) else 0


# ---------------------------------------------------------------------------- Cancel


def test_a_stopped_cancel_parks_check_until_resumed() -> None:
    cancel = Cancel(time.monotonic() + 60)
    passed = threading.Event()
    cancel.stop()

    def checker() -> None:
        cancel.check()
        passed.set()

    threading.Thread(target=checker, daemon=True).start()
    poll(lambda: cancel.parked == 1, "the check never parked")
    assert not passed.is_set()
    cancel.resume()
    assert passed.wait(HANG)


def test_killing_a_stopped_cancel_ends_the_parked_check_quietly() -> None:
    cancel = Cancel(time.monotonic() + 60)
    cancel.stop(20)
    errors: list[LimitExceeded] = []

    def checker() -> None:
        try:
            cancel.check()
        except LimitExceeded as e:
            errors.append(e)

    thread = threading.Thread(target=checker, daemon=True)
    thread.start()
    cancel.kill("killed by SIGTERM")
    thread.join(HANG)
    assert errors and errors[0].quiet and not cancel.stopped  # type: ignore[attr-defined]


def test_the_wall_clock_does_not_run_while_stopped() -> None:
    cancel = Cancel(time.monotonic() + 30)
    cancel.stop()
    assert cancel.deadline == float("inf")
    cancel.resume()
    assert cancel.deadline <= time.monotonic() + 30


# ---------------------------------------------------------------------------- stopped jobs park


@pytest.mark.parametrize(("body", "threads"), [
    ("while :; do echo $((i=i+1)) >> p; done", 1),
    ("i=0; while :; do i=$((i+1)); echo $i >> p; sleep 0.01; done", 1),
    ("yes | while read -r y; do echo $((i=i+1)) >> p; done", 2),  # a thread per pipeline stage
    ("while :; do echo x; done | while read -r l; do echo $((i=i+1)) >> p; done", 2),
    ("timeout 30 sh -c 'while :; do echo $((i=i+1)) >> p; done'", 1),  # timeout's own flag follows the job's
])
def test_a_stopped_job_makes_no_progress_until_continued(world: KWorld, body: str, threads: int) -> None:
    """Each of the job's threads parks at its next checkpoint (the test waits for that count,
    however slow the machine), and while they are parked nothing is written."""
    sh = world.shell()
    sh.run(f"({body}) &")
    poll(lambda: progress("p", world) > 0, "the job never wrote")
    assert sh.run("kill -STOP %1; jobs").stdout.startswith(b"[1]+  Stopped                 ( ")
    job = sh.session.jobs.find("%1")
    assert job is not None
    poll(lambda: job.cancel.parked == threads, f"the job's {threads} threads never all parked")
    before = progress("p", world)
    for _ in range(20):  # read again and again while every thread stays parked
        assert progress("p", world) == before and job.cancel.parked == threads
        time.sleep(0.01)
    sh.run("kill -CONT %1")
    poll(lambda: progress("p", world) != before, "the continued job never wrote again")
    assert sh.run("kill %1; wait %1; echo $?").stdout == b"143\n"


def test_a_stopped_job_ends_when_killed(world: KWorld) -> None:
    sh = world.shell()
    r = sh.run("sleep 30 & kill -STOP %1; kill %1; wait %1; echo $?; jobs")
    assert r.stdout == b"143\n" and r.stderr == b""


def test_killing_a_job_reaches_the_command_under_timeout(world: KWorld) -> None:
    sh = world.shell()
    r = sh.run("timeout 30 sleep 30 & kill %1; wait %1; echo $?")
    assert r.stdout == b"143\n"


def test_wait_without_job_control_waits_through_a_stop(world: KWorld) -> None:
    sh = world.shell()
    r = sh.run("sleep 0.3 & kill -STOP %1; (sleep 0.3; kill -CONT %1) & wait %1; echo $?; wait")
    assert r.stdout == b"0\n"


def test_current_job_prefers_a_stopped_one(world: KWorld) -> None:
    sh = world.shell()
    r = sh.run("set -m; sleep 30 & sleep 30 & sleep 30 & kill -STOP %1 2>/dev/null; jobs; kill %1 %2 %3")
    assert r.stdout == (b"[1]+  Stopped                 sleep 30\n"
                        b"[2]   Running                 sleep 30 &\n"
                        b"[3]-  Running                 sleep 30 &\n")


# ---------------------------------------------------------------------------- Shell.suspend


def test_suspend_at_the_prompt_does_nothing(world: KWorld) -> None:
    s = Interactive(world)
    assert s.shell.suspend() is None


def test_suspend_makes_the_foreground_command_a_stopped_job(world: KWorld) -> None:
    s = Interactive(world)
    thread, box = s.start("x=1; cd /tmp; sleep 30; echo resumed", ready=lambda: s.param("PWD") == "/tmp")
    job = s.shell.suspend()
    thread.join(HANG)
    assert job is not None and box == [148]
    assert s.shell.notices() == "\n[1]+  Stopped                 x=1; cd /tmp; sleep 30; echo resumed\n"
    s.run("echo $? $x; pwd; jobs")
    assert s.take() == (b"148 1\n/tmp\n"
                        b"[1]+  Stopped                 x=1; cd /tmp; sleep 30; echo resumed\n")


def test_a_ctrl_z_as_the_line_begins_stops_that_line(world: KWorld) -> None:
    """Ctrl-Z the moment a line is handed over, before its first command: the job it makes is
    the line itself (it was not, when each line took a fresh stop switch: `kill %1` missed the
    sleep, which ran its 30 s and then said `never`)."""
    s = Interactive(world)
    for _ in range(5):
        thread, box = s.start("sleep 30; echo ne''ver")
        assert s.shell.suspend() is not None
        thread.join(HANG)
        s.run("kill %1; wait %1; echo $?")
        out = s.take()
        assert box == [148] and out.endswith(b"Terminated              sleep 30; echo ne''ver\n143\n")
        assert b"never" not in out


def test_the_shell_goes_on_with_its_own_state(world: KWorld) -> None:
    s = Interactive(world)
    thread, _ = s.start(f"{WAIT_GO}; echo x=$x")
    s.shell.suspend()
    thread.join(HANG)
    world.fs.write_file("go", b"")
    s.run("x=new; bg; wait %1")
    assert s.take() == f"[1]+ {WAIT_GO}; echo x=$x &\nx=\n[1]+  Done                    {WAIT_GO}; echo x=$x\n".encode()


def test_fg_resumes_a_suspended_command_and_returns_its_status(world: KWorld) -> None:
    s = Interactive(world)
    thread, _ = s.start(f"{WAIT_GO}; echo back; false")
    s.shell.suspend()
    thread.join(HANG)
    s.take()
    world.fs.write_file("go", b"")
    assert s.run("fg") == 1
    assert s.take() == f"{WAIT_GO}; echo back; false\nback\n".encode()
    assert s.run("jobs") == 0 and s.take() == b""


def test_suspend_during_fg_stops_the_same_job_again(world: KWorld) -> None:
    s = Interactive(world)
    thread, _ = s.start("sleep 30")
    s.shell.suspend()
    thread.join(HANG)
    thread, box = s.start("fg %1", ready=lambda: s.shell.session.jobs.foreground is not None)
    job = s.shell.suspend()
    thread.join(HANG)
    assert box == [148] and job is not None and job.number == 1
    s.take()
    s.run("jobs; kill %1; wait %1; echo $?")
    assert s.take() == (b"[1]+  Stopped                 sleep 30\n"
                        b"[1]+  Terminated              sleep 30\n143\n")


def test_killing_a_suspended_command_reports_no_error(world: KWorld) -> None:
    s = Interactive(world)
    thread, _ = s.start("while :; do :; done")
    s.shell.suspend()
    thread.join(HANG)
    s.take()
    s.run("kill -9 %1; wait %1; echo $?")
    out = s.take()
    assert out.endswith(b"Killed                  while :; do :; done\n137\n")
    assert b"killed by" not in out
    assert s.shell.exited is None


def test_exit_with_stopped_jobs_warns_once(world: KWorld) -> None:
    s = Interactive(world)
    thread, _ = s.start("sleep 30")
    s.shell.suspend()
    thread.join(HANG)
    s.take()
    assert s.run("exit") == 1 and s.shell.exited is None
    assert s.take() == b"There are stopped jobs.\n"
    s.run("exit")
    assert s.shell.exited == 1


def test_hangup_ends_every_job(world: KWorld) -> None:
    s = Interactive(world)
    thread, _ = s.start("sleep 30")
    s.shell.suspend()
    thread.join(HANG)
    s.run("sleep 30 &")
    jobs = s.shell.session.jobs.ordered()
    s.shell.hangup()
    assert all(job.done.wait(HANG) for job in jobs)
    assert [job.status for job in jobs] == [129, 129]


# ---------------------------------------------------------------------------- xargs -P


# waits until $2 commands run at once (a hang bound of HANG s, far past any slow start)
WAITER = (b"#!/bin/bash\ntouch \"m.$1\"\nn=0\n"
          b"while [ \"$(ls m.* | wc -l)\" -lt \"$2\" ]; do n=$((n+1)); "
          b"if [ $n -gt 3000 ]; then echo \"serial $1\"; exit 1; fi; sleep 0.02; done\necho \"end $1\"\n")
# says how many commands run beside it (itself included) while it runs
ALONE = b"#!/bin/bash\ntouch \"m.$1\"\nsleep 0.1\necho \"$1 sees $(ls m.* | wc -l)\"\nrm \"m.$1\"\n"


def test_xargs_p_runs_commands_at_once(world: KWorld) -> None:
    world.seed({"w.sh": WAITER})
    world.fs.chmod("w.sh", 0o755)
    r = world.shell().run("seq 4 | xargs -P 4 -I{} ./w.sh {} 4 | sort; echo ${PIPESTATUS[1]}")
    assert r.stdout == b"end 1\nend 2\nend 3\nend 4\n0\n"


def test_xargs_without_p_runs_commands_one_at_a_time(world: KWorld) -> None:
    world.seed({"a.sh": ALONE})
    world.fs.chmod("a.sh", 0o755)
    r = world.shell().run("seq 3 | xargs -I{} ./a.sh {}; echo $?")
    assert r.stdout == b"1 sees 1\n2 sees 1\n3 sees 1\n0\n"


def test_xargs_p_commands_stop_and_die_with_their_job(world: KWorld) -> None:
    sh = world.shell()
    r = sh.run("seq 3 | xargs -P 3 -n 1 sleep 30 & kill -STOP %1; jobs; kill %1; wait %1; echo $?")
    assert r.stdout == b"[1]+  Stopped                 seq 3 | xargs -P 3 -n 1 sleep 30\n143\n"
