"""The adapters' ptys on K's persistent terminals: E2B's `sandbox.pty` (sync and async) and
Daytona's pty sessions drive a real python3 REPL (delegated to this host under bubblewrap,
K_SANDBOX_REMOTE=local, on a pty of its own): keys typed reach it, its output comes back as
the terminal's bytes, a resize reaches it as a window change, and kill ends the shell and
everything it started (False once it was gone)."""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from kshell.compat import core
from kshell.compat import daytona as k_daytona
from kshell.compat import e2b as k_e2b

HANG = 120.0  # only a hang fails: never a speed claim


@pytest.fixture(autouse=True)
def delegated(monkeypatch: pytest.MonkeyPatch) -> None:
    """python3 is a program K delegates: it runs here under bubblewrap."""
    for program, package in (("bwrap", "bubblewrap"), ("python3", "python3")):
        if shutil.which(program) is None:
            pytest.fail(f"{program} is missing: install {package} (apt-get install -y {package})")
    monkeypatch.setenv(core.REMOTE_ENV, "local")


class Screen:
    """The bytes a pty printed, collected on a thread from an iterator of chunks, waited on
    until a marker shows (counted, so that a second prompt is told from the first)."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self.data = bytearray()
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._collect, args=(chunks,), daemon=True)
        self.thread.start()

    def _collect(self, chunks: Iterable[bytes]) -> None:
        for chunk in chunks:
            with self.changed:
                self.data += chunk
                self.changed.notify_all()

    def until(self, marker: bytes, count: int = 1) -> bytes:
        with self.changed:
            assert self.changed.wait_for(lambda: self.data.count(marker) >= count, HANG), bytes(self.data)
            return bytes(self.data)


def pty_chunks(handle: Any) -> Iterator[bytes]:
    for _, _, pty in handle:
        if pty is not None:
            yield pty


def test_e2b_pty_drives_a_python_repl_resizes_and_kills_it() -> None:
    sandbox = k_e2b.Sandbox.create()
    try:
        handle = sandbox.pty.create(k_e2b.PtySize(rows=24, cols=80), envs={"GREETING": "hello"}, timeout=0)
        pid = handle.pid
        assert pid > 0  # the terminal's worker
        screen = Screen(pty_chunks(handle))
        sandbox.pty.send_stdin(pid, b"echo $GREETING $((6*7))\n")
        screen.until(b"hello 42")
        sandbox.pty.send_stdin(pid, b"python3 -q\n")
        screen.until(b">>> ")
        sandbox.pty.send_stdin(pid, b"import os; os.get_terminal_size()\n")
        screen.until(b"os.terminal_size(columns=80, lines=24)")
        sandbox.pty.resize(pid, k_e2b.PtySize(rows=30, cols=100))
        sandbox.pty.send_stdin(pid, b"os.get_terminal_size()\n")
        screen.until(b"os.terminal_size(columns=100, lines=30)")  # the window change reached the REPL
        assert sandbox.pty.kill(pid) is True
        with pytest.raises(k_e2b.CommandExitException):
            handle.wait()
        assert sandbox.pty.kill(pid) is False
        with pytest.raises(k_e2b.NotFoundException):
            sandbox.pty.send_stdin(pid, b"x\n")  # it reads no more input once it ended
    finally:
        sandbox.kill()


def test_e2b_pty_ends_with_its_shell_status_and_wait_hands_on_pty_the_output() -> None:
    with k_e2b.Sandbox.create() as sandbox:
        handle = sandbox.pty.create(k_e2b.PtySize(rows=24, cols=80), cwd="/tmp")
        sandbox.pty.send_stdin(handle.pid, b"pwd; exit 3\n")
        seen = bytearray()
        with pytest.raises(k_e2b.CommandExitException) as caught:
            handle.wait(on_pty=seen.extend)
        assert caught.value.exit_code == 3 and b"/tmp" in seen
        with pytest.raises(k_e2b.CommandExitException):
            handle.wait()  # the same result, asked again
        assert handle.exit_code == 3
        other = k_e2b.Sandbox.connect(sandbox.sandbox_id)
        with pytest.raises(k_e2b.NotFoundException):
            other.pty.connect(handle.pid)


def test_e2b_pty_past_its_timeout_is_ended() -> None:
    with k_e2b.Sandbox.create() as sandbox:
        handle = sandbox.pty.create(k_e2b.PtySize(rows=24, cols=80), timeout=1)  # its shell idles: never ends
        with pytest.raises(k_e2b.TimeoutException, match="pty timed out after 1 s"):
            handle.wait()
        assert sandbox.pty.kill(handle.pid) is False  # it was ended


def test_killing_the_sandbox_ends_a_pty_wait_in_flight() -> None:
    sandbox = k_e2b.Sandbox.create()
    handle = sandbox.pty.create(k_e2b.PtySize(rows=24, cols=80))
    outcome: list[BaseException | Any] = []

    def waiter() -> None:
        try:
            outcome.append(handle.wait())
        except BaseException as e:  # noqa: BLE001 - what the waiter got is the assertion
            outcome.append(e)

    thread = threading.Thread(target=waiter)
    thread.start()
    sandbox.kill()
    thread.join(HANG)
    assert not thread.is_alive()
    assert isinstance(outcome[0], k_e2b.SandboxException) and "was killed" in str(outcome[0])


def test_e2b_async_pty_hands_bytes_to_on_data() -> None:
    async def main() -> None:
        async with await k_e2b.AsyncSandbox.create() as sandbox:
            data = bytearray()
            shown = asyncio.Event()

            async def on_data(chunk: bytes) -> None:
                data.extend(chunk)
                if b"ready 7" in data:
                    shown.set()

            handle = await sandbox.pty.create(k_e2b.PtySize(rows=24, cols=80), on_data)
            await sandbox.pty.send_stdin(handle.pid, b"echo ready $((3+4))\n")
            await shown.wait()
            await sandbox.pty.send_stdin(handle.pid, b"exit\n")
            result = await handle.wait()
            assert result.exit_code == 0
            assert await sandbox.pty.kill(handle.pid) is False

    asyncio.run(asyncio.wait_for(main(), HANG))


def test_daytona_pty_session_drives_a_python_repl() -> None:
    daytona = k_daytona.Daytona()
    sandbox = daytona.create()
    try:
        pty = sandbox.process.create_pty_session("repl", pty_size=k_daytona.PtySize(rows=24, cols=80))
        assert pty.session_id == "repl" and pty.is_connected() and pty.exit_code is None
        screen = Screen(iter(pty))
        pty.send_input("python3 -q\n")
        screen.until(b">>> ")
        pty.send_input("print(6 * 7)\n")
        screen.until(b"42")
        info = sandbox.process.resize_pty_session("repl", k_daytona.PtySize(rows=40, cols=120))
        assert (info.cols, info.rows, info.active) == (120, 40, True)
        pty.send_input("import os; os.get_terminal_size()\n")
        screen.until(b"os.terminal_size(columns=120, lines=40)")
        again = sandbox.process.connect_pty_session("repl")
        Screen(iter(again)).until(b"42")  # a new handle gets the output so far
        assert [i.id for i in sandbox.process.list_pty_sessions()] == ["repl"]
        sandbox.process.kill_pty_session("repl")
        result = pty.wait(timeout=HANG)
        assert result.exit_code is not None and result.exit_code != 0
        assert sandbox.process.get_pty_session_info("repl").active is False
        with pytest.raises(k_daytona.DaytonaNotFoundError):
            sandbox.process.connect_pty_session("repl")
    finally:
        daytona.delete(sandbox)


def test_daytona_async_pty_session() -> None:
    async def main() -> None:
        async with k_daytona.AsyncDaytona() as daytona:
            sandbox = await daytona.create()
            try:
                data = bytearray()
                shown = asyncio.Event()

                def on_data(chunk: bytes) -> None:
                    data.extend(chunk)
                    if b"up 9" in data:
                        shown.set()

                pty = await sandbox.process.create_pty_session("t", on_data)
                await pty.wait_for_connection()
                await pty.send_input("echo up $((4+5)); exit 5\n")
                result = await pty.wait()
                assert shown.is_set() and result.exit_code == 5
            finally:
                await daytona.delete(sandbox)

    asyncio.run(asyncio.wait_for(main(), HANG))
