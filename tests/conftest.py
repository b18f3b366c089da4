"""Shared fixtures: a fresh KState in a temp dir, the VFS over it, and a root PathFS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kfs.kstate import KState
from kfs.vfs import ROOT, VFS, PathFS


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
