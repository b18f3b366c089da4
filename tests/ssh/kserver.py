"""A K SSH server on a loopback port in a thread of the test process, plus client helpers."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kfs.agents import add_agent, add_key
from kfs.kstate import KState
from kfs.vfs import VFS
from kshell.server import KServer, ServerConfig
from tests.hang import HANG, poll  # noqa: F401 - the ssh tests take both from here

CLIENTS = {"ssh": "openssh-client", "sftp": "openssh-client", "scp": "openssh-client",
           "ssh-keygen": "openssh-client", "sshfs": "sshfs", "fusermount3": "fuse3"}


def need(program: str) -> str:
    """The path of a client program; a missing one fails the test with what to install."""
    path = shutil.which(program)
    if path is None:
        pytest.fail(f"{program} is missing: install {CLIENTS.get(program, program)} (apt-get install -y "
                    f"{CLIENTS.get(program, program)})")
    return path


def keygen(path: Path, comment: str = "") -> Path:
    need("ssh-keygen")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)], check=True)
    return path


class ServerThread:
    """Runs a KServer in its own event loop thread until `stop()`."""

    def __init__(self, state_dir: Path, config: ServerConfig, **kwargs: Any) -> None:
        self.state_dir = state_dir
        self.config = config
        self.kwargs = kwargs
        self.port = 0
        self.server: KServer | None = None
        self.state: KState | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, name="kserver", daemon=True)

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as e:  # noqa: BLE001
            self._error = e
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        assert self.state is not None
        self.server = KServer(self.state, self.config, **self.kwargs)
        addrs = await self.server.start("127.0.0.1", 0)
        self.port = addrs[0][1]
        self._ready.set()
        await self._stop.wait()
        await self.server.stop()

    def start(self, state: KState) -> ServerThread:
        self.state = state
        self._thread.start()
        # a loaded machine starts it late, never "at port 0": only a hang fails
        assert self._ready.wait(2 * HANG), f"the K server did not start within {2 * HANG:.0f} s"
        if self._error is not None:
            raise self._error
        return self

    def call(self, fn: Any) -> Any:
        """Run `fn()` on the server's loop thread and return its result."""
        assert self._loop is not None
        fut: asyncio.Future[Any] = asyncio.run_coroutine_threadsafe(_call(fn), self._loop)  # type: ignore[arg-type]
        return fut.result(HANG)

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(HANG)


async def _call(fn: Any) -> Any:
    return fn()


@dataclass
class Bench:
    """A running server with agents alice and bob and their key files."""

    root: Path
    state: KState
    thread: ServerThread
    keys: dict[str, Path] = field(default_factory=dict)

    @property
    def port(self) -> int:
        return self.thread.port

    @property
    def server(self) -> KServer:
        assert self.thread.server is not None
        return self.thread.server

    def audited(self) -> None:
        """Returns once every audit event the server has queued is written: the server writes
        them in order off its loop, so a barrier event queued from the loop is written last."""
        loop = self.thread._loop  # noqa: SLF001
        assert loop is not None
        asyncio.run_coroutine_threadsafe(self.server.audit("test.barrier"), loop).result(HANG)

    def ssh_options(self, key: str = "alice", *, port_flag: str = "-p") -> list[str]:
        return [
            port_flag, str(self.port), "-i", str(self.keys[key]),
            "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-o", "LogLevel=ERROR", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
            "-F", "/dev/null",
        ]

    def ssh(self, command: str | None, *, user: str = "alice", key: str | None = None,
            extra: list[str] | None = None, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        argv = [need("ssh"), *self.ssh_options(key or user), *(extra or []), f"{user}@127.0.0.1"]
        if command is not None:
            argv.append(command)
        kwargs.setdefault("timeout", 60)
        kwargs.setdefault("capture_output", True)
        if "input" not in kwargs:
            kwargs.setdefault("stdin", subprocess.DEVNULL)
        return subprocess.run(argv, **kwargs)


def make_bench(root: Path, config: ServerConfig, **kwargs: Any) -> Bench:
    state = KState(root / "state", create=True)
    vfs = VFS(state, by="test")
    keys: dict[str, Path] = {}
    for name in ("alice", "bob"):
        add_agent(vfs, name)
        keys[name] = keygen(root / f"{name}_key", f"{name}@test")
        add_key(state, name, (root / f"{name}_key.pub").read_text())
    keys["stranger"] = keygen(root / "stranger_key", "stranger@test")
    thread = ServerThread(root / "state", config, **kwargs).start(state)
    return Bench(root, state, thread, keys)


def close_bench(bench: Bench) -> None:
    bench.thread.stop()
    bench.state.close()


def komputer(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    result = subprocess.run([sys.executable, "-m", "kshell.cli", *args], capture_output=True, text=True,
                            env=env, timeout=HANG)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def start_host(config: Path, listen: str = "127.0.0.1:0") -> tuple[subprocess.Popen[str], int]:
    """`komputer serve --config CONFIG` in a process of its own; returns it and its port."""
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen([sys.executable, "-m", "kshell.cli", "serve", "--config", str(config),
                             "--listen", listen], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        pytest.fail(f"komputer serve did not start: {line}{proc.stdout.read()}")
    return proc, int(line.split("listening on ")[1].split(" ")[0].rsplit(":", 1)[1])


os.environ.setdefault("LC_ALL", "C.UTF-8")
