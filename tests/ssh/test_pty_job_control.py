"""Job control in the interactive shell over `ssh -tt`, as a person at a keyboard uses it: Ctrl-Z
stops the running command (`^Z`, `[1]+  Stopped ...`, `$?` 148), which then is job 1 for jobs,
fg (Ctrl-C interrupts it: 130), bg and kill; the first exit with stopped jobs only warns."""

from __future__ import annotations

import time

from kserver import Bench, need
from ptyclient import PtySession

PROMPT = b"alice@k:~$ "


def session(bench: Bench) -> PtySession:
    s = PtySession([need("ssh"), "-tt", *bench.ssh_options(), "alice@127.0.0.1"])
    s.expect(PROMPT)
    return s


def stop_sleep(s: PtySession) -> bytes:
    """Run `sleep 30`, press Ctrl-Z once it runs; what the terminal showed up to the prompt."""
    s.send(b"sleep 30\r")
    s.expect(b"sleep 30\r\n")
    time.sleep(0.3)  # the command is running (Ctrl-Z at the prompt does nothing, as bash)
    s.send(b"\x1a")
    return s.expect(PROMPT)


def test_ctrl_z_stops_the_command_and_fg_brings_it_back_for_ctrl_c(bench: Bench) -> None:
    s = session(bench)
    try:
        seen = stop_sleep(s)
        assert b"^Z" in seen and b"[1]+  Stopped                 sleep 30" in seen
        s.send(b"echo status=$?\r")
        assert b"status=148" in s.expect(PROMPT)
        s.send(b"jobs\r")
        assert b"[1]+  Stopped                 sleep 30\r\n" in s.expect(PROMPT)
        s.send(b"fg\r")
        s.expect(b"sleep 30\r\n")
        time.sleep(0.3)
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
        s.send(b"x=before\r")
        s.expect(PROMPT)
        s.send(b"sleep 2; echo done-$x\r")  # long enough that Ctrl-Z lands in the sleep on a loaded machine
        s.expect(b"done-$x\r\n")
        time.sleep(0.2)
        s.send(b"\x1a")
        assert b"Stopped                 sleep 2; echo done-$x" in s.expect(PROMPT)
        s.send(b"x=after; bg\r")
        assert b"[1]+ sleep 2; echo done-$x &" in s.expect(PROMPT)
        s.expect(b"done-before")  # the stopped command kept its own shell state
        s.send(b"echo x=$x\r")
        assert b"x=after" in s.expect(PROMPT)
    finally:
        s.close()


def test_ctrl_z_during_fg_stops_the_same_job_again(bench: Bench) -> None:
    s = session(bench)
    try:
        stop_sleep(s)
        s.send(b"fg %1\r")
        s.expect(b"sleep 30\r\n")
        time.sleep(0.3)
        s.send(b"\x1a")
        assert b"[1]+  Stopped                 sleep 30" in s.expect(PROMPT)
        s.send(b"jobs\r")
        seen = s.expect(PROMPT)
        assert b"[1]+  Stopped                 sleep 30" in seen and b"[2]" not in seen
        s.send(b"kill %1; wait %1; echo st=$?\r")
        seen = s.expect(PROMPT)
        assert b"[1]+  Terminated              sleep 30" in seen and b"st=143" in seen
    finally:
        s.close()


def test_exit_with_stopped_jobs_warns_once(bench: Bench) -> None:
    s = session(bench)
    try:
        stop_sleep(s)
        s.send(b"exit\r")
        assert b"There are stopped jobs." in s.expect(PROMPT)
        s.send(b"exit\r")  # a second exit in a row ends the session, with $? of the first (1), as bash
        assert s.wait() == 1
    finally:
        s.close()


def test_a_stopped_reader_reads_the_terminal_again_after_fg(bench: Bench) -> None:
    s = session(bench)
    try:
        s.send(b"cat\r")
        s.expect(b"cat\r\n")
        time.sleep(0.3)
        s.send(b"\x1a")
        assert b"[1]+  Stopped                 cat" in s.expect(PROMPT)
        s.send(b"fg\r")
        s.expect(b"cat\r\n")
        time.sleep(0.3)
        s.send(b"hello\r")
        time.sleep(0.3)
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
        s.send(b"n=0; while :; do n=$((n+1)); done\r")
        s.expect(b"done\r\n")
        time.sleep(0.3)
        s.send(b"\x1a")
        assert b"Stopped                 n=0; while :; do n=$((n+1)); done" in s.expect(PROMPT)
        s.send(b"kill %1; wait; echo st=$?\r")
        assert b"st=0" in s.expect(PROMPT)
    finally:
        s.close()
