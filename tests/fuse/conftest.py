"""Fixtures for the FUSE tests: a session-wide mount, a directory of it per test, a peer writer.

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


@pytest.fixture
def mnt(kfs_mount: Mount, request: pytest.FixtureRequest) -> Path:
    """A fresh directory of the session mount for one test (its KState path is /<name>)."""
    name = request.node.name.replace("[", "-").replace("]", "").replace("/", "_")[:200]
    path = kfs_mount.path / name
    if path.exists():
        shutil.rmtree(path)
    path.mkdir()
    return path


@pytest.fixture
def peer(kfs_mount: Mount) -> Iterator[PathFS]:
    """A PathFS on the session mount's state, opened in this process (another writer)."""
    state, fs = kfs_mount.pathfs()
    yield fs
    state.close()
