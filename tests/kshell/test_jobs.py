"""Background jobs: `&` runs concurrently (a thread with its own cancel flag), with jobs, kill,
wait, fg, bg and ps on the session's job table. Deterministic cases are compared with bash (pids
normalised); the rest check K's own behaviour (fg/bg without host job control, ps, jobs kept
across run() calls, cancellation)."""

from __future__ import annotations

import re
import time

import pytest

from kshell import Limits
from tests.hang import HANG
from tests.kshell.interp_support import run_bash, run_k

PID = re.compile(rb" *\b\d{2,7}\b")  # a pid (any, as the host numbers them); numbers alike on both sides mask alike

CASES = [
    "sleep 10 & jobs; kill %1; wait %1; echo st=$?",
    "sleep 10 & sleep 10 & jobs; jobs -p | wc -l; kill %1 %2; wait; echo done",
    "sleep 10 & sleep 10 & sleep 10 & jobs; kill %1 %2 %3; wait",
    "sleep 10 & jobs -l; kill %+; wait",
    "sleep 10 & jobs %1; jobs %2; echo $?; kill %%; wait",
    "sleep 10 & jobs -r; kill $!; wait $!; echo st=$?",
    "sleep 10 & sleep 0.3; kill -9 $!; wait $!; echo st=$?",
    "sleep 10 & sleep 0.3; kill -s KILL %1; wait %1; echo st=$?",
    # the pause lets bash see the death before `wait` (then it always reports "Killed"; a `wait`
    # that reaps the job itself does not): without it, bash under load differs from run to run
    "sleep 10 & sleep 0.3; kill -KILL %1; sleep 0.2; wait; echo st=$?",
    "sleep 10 & kill -SIGTERM %1; wait %1; echo st=$?",
    "sleep 10 & sleep 0.3; kill -n 1 %1; wait %1; echo st=$?",
    "sleep 10 & sleep 0.3; kill -HUP %sleep; wait %1; echo st=$?",
    "sleep 10 & sleep 0.3; kill -USR1 %?leep; wait %1; echo st=$?",
    "sleep 10 & kill -0 %1; echo $?; kill %1; wait",
    "(exit 5) & wait $!; echo \"status $?\"",
    "(exit 5) & p=$!; sleep 0.2; wait $p; echo \"status $?\"",
    # by pid, not %N: bash forgets a finished job once another wait reaps it, a race
    "false & p1=$!; true & p2=$!; wait $p1; echo $?; wait $p2; echo $?",
    "{ echo bg; } & wait; echo after-wait",
    "echo a | cat & wait; echo b",
    "x=1 & wait; echo \"[$x]\"",
    "true & p=$!; wait; case $p in ''|*[!0-9]*) echo no-pid;; *) echo pid;; esac",
    "sleep 0.2 & sleep 10 & wait -n; echo n=$?; kill %2; wait",
    "(sleep 0.1; exit 3) & sleep 10 & wait -n; echo n=$?; kill %2; wait",
    "wait -n; echo $?",
    "wait; echo $?",
    "wait 99999; echo $?",
    "wait %3; echo $?",
    "wait abc; echo $?",
    "wait -x; echo $?",
    "for i in 1 2 3; do (sleep 0.$i; echo $i) & done; wait; echo end",
    "sleep 0.1 & wait $! $!; echo $?",
    "echo start; sleep 0.3 && echo late & echo early; wait",
    "kill -l | head -3",
    "kill -l | tail -2",
    "kill -l 9 137 SIGTERM kill 64",
    "kill -l 300; echo $?",
    "kill -s FOO 1; echo $?",
    "kill -FOO 1; echo $?",
    "kill; echo $?",
    "kill -s; echo $?",
    "kill 99999; echo $?",
    "kill %x; echo $?",
    "kill -9 %1; echo $?",
    "kill abc; echo $?",
    "jobs; echo $?",
    "jobs -z; echo $?",
    "while :; do :; done & kill %1; wait %1; echo st=$?",
    "yes | cat > /dev/null & kill %1; wait %1; echo st=$?",
    "sleep 10 | cat & kill %1; wait; echo st=$?",
    "kill -n; echo $?",
]


def _norm(data: bytes) -> str:
    return PID.sub(b" PID", data).decode(errors="replace")


@pytest.mark.parametrize("script", CASES)
def test_jobs_like_bash(bash, script):
    """A job `kill` missed would end on its own later with another status than bash's: the
    statuses say it, not a figure."""
    k = run_k(script)
    b = run_bash(bash, script)
    assert (_norm(k.stdout), _norm(k.stderr), k.status) == (_norm(b.stdout), _norm(b.stderr), b.status), script



def test_jobs_persist_across_runs(world):
    sh = world.shell()
    assert sh.run("sleep 10 &").status == 0
    r = sh.run("jobs")
    assert r.stdout == b"[1]+  Running                 sleep 10 &\n"
    r = sh.run("kill %1; wait %1; echo $?; jobs")
    assert r.stdout == b"143\n"


def test_background_runs_concurrently(world):
    """Each job waits until all three have started: run one after another, the first would
    wait for ever (until the 60 s wall time ends it and `done` is never printed)."""
    sh = world.shell(limits=Limits(wall_time=60))
    r = sh.run("for i in 1 2 3; do (touch m$i; until [ -e m1 -a -e m2 -a -e m3 ]; do sleep 0.02; done; echo $i) & "
               "done; wait; echo done")
    assert sorted(r.stdout.split()) == [b"1", b"2", b"3", b"done"] and r.stdout.endswith(b"done\n")


def test_finished_job_reported_once(world):
    sh = world.shell()
    sh.run("(exit 3) & true &")
    for job in sh.session.jobs.ordered():
        assert job.done.wait(HANG)
    r = sh.run("jobs; echo -; jobs")
    assert r.stdout == b"[1]-  Exit 3                  ( exit 3 )\n[2]+  Done                    true\n-\n"


def test_fg_waits_and_returns_status(world):
    sh = world.shell()
    r = sh.run("set -m; (sleep 0.2; exit 4) & fg; echo st=$?")
    assert r.stdout == b"( sleep 0.2; exit 4 )\nst=4\n"
    r = sh.run("fg; echo $?; fg %3; echo $?")
    assert r.stdout == b"1\n1\n"
    assert r.stderr == b"bash: line 1: fg: current: no such job\nbash: line 1: fg: %3: no such job\n"


def test_bg_reports_running_job(world):
    sh = world.shell()
    r = sh.run("set -m; sleep 10 & bg %1; echo $?; kill %1; wait")
    assert r.stdout == b"0\n"
    assert r.stderr == (b"bash: line 1: bg: job 1 already in background\n"
                        b"[1]+  Terminated              sleep 10\n")  # bash's notice under set -m


def test_ps_lists_shell_and_running_jobs(world):
    sh = world.shell()
    r = sh.run("sleep 10 & ps; kill %1; wait; ps | wc -l")
    lines = r.stdout.decode().splitlines()
    assert lines[0] == "    PID TTY          TIME CMD"
    assert lines[1].endswith(" bash") and lines[2].endswith(" sleep") and lines[3].endswith(" ps")
    assert lines[-1] == "3"
    r = sh.run("ps -ef | head -1; ps -q; echo $?")
    assert r.stdout.startswith(b"UID          PID    PPID  C STIME TTY          TIME CMD\n")
    assert r.stdout.endswith(b"1\n")


def test_wait_p_sets_variable(world):
    sh = world.shell()
    r = sh.run("sleep 0.1 & p=$!; wait -n -p got; [ \"$got\" = \"$p\" ] && echo same")
    assert r.stdout == b"same\n"


def test_killing_a_job_leaves_the_foreground_alone(world):
    sh = world.shell()
    r = sh.run("while :; do :; done & for i in 1 2 3; do echo $i; done; kill %1; wait; echo ok")
    assert r.stdout == b"1\n2\n3\nok\n"


def test_interrupt_ends_a_k_job(world):
    # non-interactive bash starts background commands ignoring SIGINT; a K job is interruptible
    sh = world.shell()
    assert sh.run("sleep 10 & kill -INT %1; wait %1; echo st=$?").stdout == b"st=130\n"


def test_stop_and_continue_a_job(world):
    sh = world.shell()
    r = sh.run("sleep 10 & kill -STOP %1; echo $?; jobs; kill -CONT %1; echo $?; jobs; kill %1; wait")
    assert r.stdout == (b"0\n[1]+  Stopped                 sleep 10\n0\n"
                        b"[1]+  Running                 sleep 10 &\n")


def test_wait_is_bounded_by_wall_time(world):
    sh = world.shell(limits=Limits(wall_time=0.5))
    started = time.monotonic()
    r = sh.run("sleep 0.2; sleep 300 & wait; echo never")
    assert time.monotonic() - started < HANG  # a hang guard: the background sleep 300 would hold wait for 300 s
    assert b"never" not in r.stdout and r.status != 0
    sh.run("kill %1")


def test_background_job_has_its_own_deadline(world):
    sh = world.shell(limits=Limits(wall_time=0.5))
    assert sh.run("sleep 10 &").status == 0
    (job,) = sh.session.jobs.ordered()
    assert job.done.wait(HANG)  # its own 0.5 s wall time ended it, long before the sleep's 10 s
    assert sh.run("jobs").stdout == b"[1]+  Exit 1                  sleep 10\n"


def test_jobs_see_job_output_in_order(bash):
    script = "seq 3 > f & wait; cat f"
    k = run_k(script)
    assert k.stdout == run_bash(bash, script).stdout == b"1\n2\n3\n"


def test_capture_keeps_the_head_the_tail_and_the_count_and_passes_everything_on() -> None:
    from kshell.exec.streams import BufferSink, Capture

    inner = BufferSink(1 << 20, "output")
    capture = Capture(inner, 4)
    for chunk in (b"ab", b"cdef", b"gh", b"ijklmn"):
        capture.write(chunk)
    assert bytes(inner.data) == b"abcdefghijklmn"
    assert capture.summary() == {"head": "abcd", "bytes": 14, "tail": "klmn", "omitted": 6}
    small = Capture(BufferSink(1 << 20, "output"), 4)
    small.write(b"\xffx")
    assert small.summary() == {"head": "\ufffdx", "bytes": 2}


def test_ps_names_a_subshell_bash_and_a_nohup_job_by_its_command() -> None:
    r = run_k("( sleep 1 ) & nohup /bin/sleep 1 > /dev/null & ps; kill %1 %2")
    names = [line.split()[-1] for line in r.stdout.decode().splitlines()[1:]]
    assert names[1:3] == ["bash", "sleep"], r.stdout


def test_setsid_runs_its_command_and_refuses_what_k_cannot_do() -> None:
    r = run_k("setsid -w echo ok; setsid -f true; echo $?; setsid; echo $?")
    assert r.stdout == b"ok\n1\n1\n"
    assert b"setsid: -f is not supported by K" in r.stderr and b"setsid: no command specified" in r.stderr
