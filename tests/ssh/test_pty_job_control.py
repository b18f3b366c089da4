"""Job control in the interactive shell over `ssh -tt`, as a person at a keyboard uses it: Ctrl-Z
stops the running command (`^Z`, `[1]+  Stopped ...`, `$?` 148), which then is job 1 for jobs,
fg (Ctrl-C interrupts it: 130), bg and kill; the first exit with stopped jobs only warns.

Keys are pressed once what they act on is seen running (its own output), never after a sleep:
a loaded machine only makes the test slower."""

from __future__ import annotations

from kserver import Bench, need
from ptyclient import PtySession

PROMPT = b"alice@k:~$ "
TICKS = b"while :; do echo t$((1+1)); sleep 0.1; done"  # prints t2 while it runs (its echoed line holds no t2)
TICK = b"t2\r\n"


def session(bench: Bench) -> PtySession:
    s = PtySession([need("ssh"), "-tt", *bench.ssh_options(), "alice@127.0.0.1"])
    s.expect(PROMPT)
    return s


def stop_ticks(s: PtySession) -> bytes:
    """Run TICKS, press Ctrl-Z once it runs; what the terminal showed up to the prompt."""
    s.send(TICKS + b"\r")
    s.expect(TICK)
    s.send(b"\x1a")
    return s.expect(PROMPT)


def test_ctrl_z_stops_the_command_and_fg_brings_it_back_for_ctrl_c(bench: Bench) -> None:
    s = session(bench)
    try:
        seen = stop_ticks(s)
        assert b"^Z" in seen and b"[1]+  Stopped                 " + TICKS in seen
        s.send(b"echo status=$?\r")
        assert b"status=148" in s.expect(PROMPT)
        s.send(b"jobs\r")
        assert b"[1]+  Stopped                 " + TICKS + b"\r\n" in s.expect(PROMPT)
        s.send(b"fg\r")
        s.expect(TICKS + b"\r\n")  # fg shows the command
        s.expect(TICK)  # and it runs again
        s.send(b"\x03")
        s.expect(PROMPT)
        s.send(b"echo status=$?; jobs; echo end\r")
        seen = s.expect(PROMPT)
        assert b"status=130" in seen and b"Stopped" not in seen and b"end" in seen
    finally:
        s.close()


def test_bg_resumes_a_stopped_command_in_the_background(bench: Bench) -> None:
    s = session(bench)
    try:
        s.send(b"x=before; rm -f ready\r")
        s.expect(PROMPT)
        body = b"until test -e ready; do sleep 0.05; done; echo done-$x"  # runs until `ready` is made
        s.start(body)
        line = b"echo go$((1+1)); " + body
        s.send(b"\x1a")
        assert b"Stopped                 " + line in s.expect(PROMPT)
        s.send(b"x=after; bg\r")
        assert b"[1]+ " + line + b" &" in s.expect(PROMPT)
        s.send(b"touch ready\r")
        s.expect(b"done-before")  # the stopped command kept its own shell state
        s.send(b"echo x=$x\r")  # (the job's output may come before or after a prompt: not counted)
        s.expect(b"x=after\r\n")
    finally:
        s.close()


def test_ctrl_z_during_fg_stops_the_same_job_again(bench: Bench) -> None:
    s = session(bench)
    try:
        stop_ticks(s)
        s.send(b"fg %1\r")
        s.expect(TICKS + b"\r\n")
        s.expect(TICK)  # the job runs in the foreground again
        s.send(b"\x1a")
        assert b"[1]+  Stopped                 " + TICKS in s.expect(PROMPT)
        s.send(b"jobs\r")
        seen = s.expect(PROMPT)
        assert b"[1]+  Stopped                 " + TICKS in seen and b"[2]" not in seen
        s.send(b"kill %1; wait %1; echo st=$?\r")
        seen = s.expect(PROMPT)
        assert b"[1]+  Terminated              " + TICKS in seen and b"st=143" in seen
    finally:
        s.close()


def test_exit_with_stopped_jobs_warns_once(bench: Bench) -> None:
    s = session(bench)
    try:
        stop_ticks(s)
        s.send(b"exit\r")
        assert b"There are stopped jobs." in s.expect(PROMPT)
        s.send(b"exit\r")  # a second exit in a row ends the session, with $? of the first (1), as bash
        assert s.wait() == 1
    finally:
        s.close()


def test_a_stopped_reader_reads_the_terminal_again_after_fg(bench: Bench) -> None:
    """Keys typed once fg has shown the command go to that line, so to cat when it reads."""
    s = session(bench)
    try:
        s.start(b"cat")
        s.send(b"\x1a")
        assert b"[1]+  Stopped                 echo go$((1+1)); cat" in s.expect(PROMPT)
        s.send(b"fg\r")
        s.expect(b"echo go$((1+1)); cat\r\n")
        s.send(b"hello\r")
        s.send(b"\x04")
        seen = s.expect(PROMPT)
        assert seen.count(b"hello") >= 2  # the editor's echo, then cat's copy
        s.send(b"echo status=$?\r")
        assert b"status=0" in s.expect(PROMPT)
    finally:
        s.close()


def test_ctrl_z_stops_a_busy_shell_loop(bench: Bench) -> None:
    s = session(bench)
    try:
        s.start(b"n=0; while :; do n=$((n+1)); done")
        s.send(b"\x1a")
        assert b"Stopped                 echo go$((1+1)); n=0; while :; do n=$((n+1)); done" in s.expect(PROMPT)
        s.send(b"kill %1; wait; echo st=$?\r")
        assert b"st=0" in s.expect(PROMPT)
    finally:
        s.close()
