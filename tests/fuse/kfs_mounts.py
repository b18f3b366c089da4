"""Real mounts for the FUSE tests: `komputer mount --foreground` in a child process.

A missing tool fails the test with what to install; it is never skipped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kfs.kstate import KState
from kfs.vfs import VFS, PathFS

REPO = Path(__file__).resolve().parents[2]
KOMPUTER = [sys.executable, "-m", "kshell.cli"]
QUOTA = 16 << 30  # the session mount's data quota, which statfs must report


def require_tool(tool: str, package: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"install {package}: `{tool}` is needed by this test (apt-get install -y {package})")
    return path


def require_fuse() -> None:
    if not os.path.exists("/dev/fuse"):
        pytest.fail("install fuse3 and load the fuse module: /dev/fuse is missing (modprobe fuse)")
    require_tool("fusermount3", "fuse3")


def komputer(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*KOMPUTER, *args], cwd=REPO, env=child_env(), capture_output=True, text=True, check=check)


def child_env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), *sys.path]))


class Mount:
    """One `komputer mount --foreground` daemon serving `state` at `path`."""

    def __init__(self, state: Path, path: Path, options: tuple[str, ...] = ("allow_other",),
                 extra: tuple[str, ...] = ()) -> None:
        self.state = state
        self.path = path
        self.options = options
        self.extra = extra  # more `komputer mount` arguments (--agent NAME ...)
        self.log = state.parent / f"{path.name}.log"
        self.proc: subprocess.Popen[str] | None = None
        self.last_output = ""

    def start(self, timeout: float = 20) -> Mount:
        require_fuse()
        with contextlib.suppress(OSError):  # there already, maybe as the stale mount to clear
            self.path.mkdir(parents=True)
        opts = [arg for opt in self.options for arg in ("-o", opt)]
        cmd = [*KOMPUTER, "mount", "--foreground", "--state", str(self.state), str(self.path), *opts, *self.extra]
        self.proc = subprocess.Popen(
            [*cmd, "--log", str(self.log)], cwd=REPO, env=child_env(),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        assert self.proc.stdout is not None
        lines = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "mounted at" in line:
                break
        self.last_output = "".join(lines)
        if self.proc.poll() is not None or not os.path.ismount(self.path):
            self.stop()
            pytest.fail(f"komputer mount did not come up:\n{self.last_output}\n{self.read_log()}")
        return self

    def read_log(self) -> str:
        return self.log.read_text() if self.log.exists() else ""

    def stop(self) -> None:
        """SIGTERM (a clean unmount), then make sure nothing is left mounted."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()
        if os.path.ismount(self.path) or _stale(self.path):
            subprocess.run(["fusermount3", "-uz", str(self.path)], capture_output=True, check=False)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def pathfs(self) -> tuple[KState, PathFS]:
        """The same state opened directly by this (test) process: another writer."""
        state = KState(self.state)
        return state, PathFS(VFS(state, by="test-peer"))


def _stale(path: Path) -> bool:
    try:
        os.statvfs(path)
    except OSError as e:
        return e.errno == 107  # ENOTCONN
    return False


