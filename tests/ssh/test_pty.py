"""The interactive shell over a PTY: prompt, line editing, Ctrl-C, Ctrl-D, exit N."""

from __future__ import annotations

import time

import paramiko
from kserver import HANG, Bench, need
from ptyclient import STARTED, PtySession

PROMPT = b"alice@k:~$ "


def session(bench: Bench, *command: str) -> PtySession:
    return PtySession([need("ssh"), "-tt", *bench.ssh_options(), "alice@127.0.0.1", *command])


def test_prompt_command_and_exit_status(bench: Bench) -> None:
    s = session(bench)
    try:
        s.expect(PROMPT)
        s.send(b"echo hi there\r")
        assert b"hi there\r\n" in s.expect(PROMPT)
        s.send(b"cd /\r")
        s.expect(b"alice@k:/$ ")
        s.send(b"exit 7\r")
        assert s.wait() == 7
    finally:
        s.close()


def test_line_editing_and_history(bench: Bench) -> None:
    s = session(bench)
    try:
        s.expect(PROMPT)
        s.send(b"echo helo\x1b[Dl\r")  # cursor left, insert: "echo hello"
        assert b"hello\r\n" in s.expect(PROMPT)
        s.send(b"\x1b[A\r")  # up-arrow recalls the last line
        assert b"hello\r\n" in s.expect(PROMPT)
    finally:
        s.close()


def test_ctrl_c_clears_the_half_typed_line(bench: Bench) -> None:
    s = session(bench)
    try:
        s.expect(PROMPT)
        s.send(b"echo never")
        s.expect(b"echo never")  # the line editor has the half-typed line
        s.send(b"\x03")
        s.expect(b"^C")
        s.expect(PROMPT)
        s.send(b"echo $?\r")
        seen = s.expect(PROMPT)
        assert b"never" not in seen and b"130" in seen
    finally:
        s.close()


def test_ctrl_c_interrupts_the_running_command(bench: Bench) -> None:
    s = session(bench)
    try:
        s.expect(PROMPT)
        s.start(b"while :; do :; done")
        s.send(b"\x03")
        s.expect(PROMPT, timeout=HANG)
        s.send(b"echo status=$?\r")
        assert b"status=130" in s.expect(PROMPT)
    finally:
        s.close()


def test_ctrl_c_ends_an_exec_with_130(bench: Bench) -> None:
    s = session(bench, "echo go$((1+1)); while :; do :; done")
    try:
        s.expect(STARTED)  # the loop runs: the interrupt reaches it, not the session's start
        s.send(b"\x03")
        assert s.wait() == 130
    finally:
        s.close()


def test_ctrl_d_logs_out(bench: Bench) -> None:
    s = session(bench)
    try:
        s.expect(PROMPT)
        s.send(b"\x04")
        assert s.wait() == 0
        assert b"logout" in s.buffer
    finally:
        s.close()


def test_paramiko_pty_shell(bench: Bench) -> None:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", bench.port, "alice", key_filename=str(bench.keys["alice"]),
                   look_for_keys=False, allow_agent=False)
    try:
        chan = client.invoke_shell(width=100, height=30)
        buf = b""
        deadline = time.monotonic() + HANG
        while PROMPT not in buf and time.monotonic() < deadline:
            buf += chan.recv(4096)
        chan.send(b'echo "cols=$COLUMNS"\r')
        while b"cols=100" not in buf and time.monotonic() < deadline:
            buf += chan.recv(4096)
        assert b"cols=100" in buf
        chan.send(b"exit 4\r")
        assert chan.recv_exit_status() == 4
    finally:
        client.close()
