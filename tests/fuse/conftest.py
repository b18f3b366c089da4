"""Fixtures for the FUSE tests: a session-wide mount, a directory of it per test, a peer writer;
and the same over a fork (kfs.forks) of a parent that is not empty, where every POSIX case must
hold as on the plain mount.

Tests that kill or remount the daemon make their own `Mount` (see kfs_mounts.py).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from kfs_mounts import QUOTA, Mount, komputer

from kfs.vfs import PathFS


@pytest.fixture(scope="session")
def kfs_mount(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mount]:
    base = tmp_path_factory.mktemp("kfs")
    komputer("init", "--state", str(base / "state"), "--max-bytes", str(QUOTA))
    # pytest's temp dirs are private (0700): other users' tests need a path they can walk
    top = Path(tempfile.mkdtemp(prefix="kfs-mnt."))
    top.chmod(0o755)
    mount = Mount(base / "state", top / "mnt")
    mount.log = base / "mnt.log"
    mount.start()
    yield mount
    mount.stop()
    shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="session")
def fork_mount(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mount]:
    """A mount of a fork whose parent holds files (under /base, and the tests' own names: each
    test's directory is a parent's directory the fork replaces)."""
    base = tmp_path_factory.mktemp("kfs-fork")
    state = str(base / "state")
    komputer("init", "--state", state, "--max-bytes", str(QUOTA))
    komputer("--state", state, "sh", "-c", "mkdir -p /base/d/e && seq 100000 > /base/f && ln /base/f /base/g && "
             "ln -s f /base/l && echo parent > /base/d/e/x && chmod 751 /base/d")
    number = komputer("--state", state, "fork", "create").stdout.strip()
    top = Path(tempfile.mkdtemp(prefix="kfs-fork."))
    top.chmod(0o755)
    mount = Mount(base / "state", top / "mnt", extra=("--fork", number))
    mount.log = base / "mnt.log"
    mount.start()
    yield mount
    mount.stop()
    shutil.rmtree(top, ignore_errors=True)


def _fresh(mount: Mount, request: pytest.FixtureRequest) -> Path:
    name = request.node.name.replace("[", "-").replace("]", "").replace("/", "_")[:200]
    path = mount.path / name
    if path.exists():
        shutil.rmtree(path)
    path.mkdir()
    return path


@pytest.fixture
def mnt(kfs_mount: Mount, request: pytest.FixtureRequest) -> Path:
    """A fresh directory of the session mount for one test (its KState path is /<name>)."""
    return _fresh(kfs_mount, request)


@pytest.fixture
def fork_mnt(fork_mount: Mount, request: pytest.FixtureRequest) -> Path:
    """A fresh directory of the fork's mount for one test."""
    return _fresh(fork_mount, request)


@pytest.fixture
def peer(kfs_mount: Mount) -> Iterator[PathFS]:
    """A PathFS on the session mount's state, opened in this process (another writer)."""
    state, fs = kfs_mount.pathfs()
    yield fs
    state.close()
