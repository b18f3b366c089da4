"""Shared fixtures: a fresh KState in a temp dir, the VFS over it, and a root PathFS; and the
run's end failing when a test left a process or a mount behind (tests/leftovers.py)."""

from __future__ import annotations

import atexit
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kfs.kstate import KState
from kfs.vfs import ROOT, VFS, PathFS
from tests.leftovers import TOKEN, Fence, leftovers

# the run's token, in the environment before any test starts a process: whatever the suite
# starts carries it, even once its parent is gone (xdist workers inherit the controller's)
os.environ.setdefault(TOKEN, f"{os.getpid()}-{time.time_ns()}")
# and its own memory cgroup, where the machine allows one (xdist workers are started in it)
FENCE = None if os.environ.get("PYTEST_XDIST_WORKER") else Fence.enter(f"k-test-{os.getpid()}")
if FENCE is not None:
    atexit.register(FENCE.leave)  # a run that ends before its session finishes leaves no group either
SETTLE = 15.0  # seconds for what a test ended (a daemon told to unmount, a killed server's workers) to go


@pytest.fixture
def state(tmp_path: Path) -> Iterator[KState]:
    """A fresh, empty KState in its own temp directory, closed after the test."""
    ks = KState(tmp_path / "state", create=True)
    yield ks
    ks.close()


@pytest.fixture
def vfs(state: KState) -> VFS:
    return VFS(state, by="test")


@pytest.fixture
def fs(vfs: VFS) -> PathFS:
    """The path face for root, cwd "/", home "/home/agent" (created)."""
    path_fs = PathFS(vfs, cred=ROOT, cwd="/", home="/home/agent")
    path_fs.mkdir("/home/agent", parents=True)
    return path_fs


@pytest.fixture(scope="session", autouse=True)
def secret_key_outside_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Secrets' key file (kfs.runtime.secrets) in a temp dir: no test writes under ~/.config."""
    import os

    os.environ["KOMPUTER_SECRET_KEY"] = str(tmp_path_factory.mktemp("secret-key") / "k.key")
    yield


@pytest.fixture(scope="session", autouse=True)
def memory_drives_in_a_temp_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Memory drives' directories (kfs.drives.memory) in a temp dir, not /dev/shm."""
    import os

    os.environ["KOMPUTER_DRIVES_DIR"] = str(tmp_path_factory.mktemp("drives"))
    yield


@pytest.hookimpl(trylast=True)  # after xdist's, which ends its workers (the controller's children)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The run fails when a process it started still runs or a FUSE mount it made is still
    mounted once every test and fixture has ended (after SETTLE seconds for what is ending)."""
    config = session.config
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # the controller checks, once every worker (its child) has ended
    base_temp = config._tmp_path_factory.getbasetemp() if hasattr(config, "_tmp_path_factory") else None  # noqa: SLF001
    deadline = time.monotonic() + SETTLE
    while (left := leftovers(os.environ[TOKEN], base_temp, FENCE)) and time.monotonic() < deadline:
        time.sleep(0.1)
    if FENCE is not None:
        FENCE.leave()
    if not left:
        return
    report = "\n".join(["tests left these behind (the suite's own; nothing was killed or unmounted):", *left])
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_sep("=", "left behind", red=True)
        reporter.write_line(report)
    else:
        print(report, file=sys.stderr)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
