"""Disk quotas through a real mount: the agent's view a delegated program uses
(`komputer mount --agent`) refuses a write past the agent's quota with EDQUOT, keeps its use at
the bound, shows the quota in statvfs, and leaves another agent its room."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from kfs_mounts import Mount

from kfs.agents.records import add_agent
from kfs.kstate import KState, quota
from kfs.vfs import VFS, Cred, PathFS

MIB = 1 << 20


@pytest.fixture
def quota_mount(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """alice's mount (her quota: 1 MiB) and the state's directory."""
    state_dir = tmp_path / "state"
    with KState(state_dir, create=True) as state:
        vfs = VFS(state, by="test")
        alice = add_agent(vfs, "alice")
        add_agent(vfs, "bob")
        state.write(lambda txn: quota.set_limit(txn, alice.uid, MIB))
    top = Path(tempfile.mkdtemp(prefix="kfs-quota."))
    mount = Mount(state_dir, top / "mnt", options=(), extra=("--agent", "alice")).start()
    try:
        yield mount.path, state_dir
    finally:
        mount.stop()
        shutil.rmtree(top, ignore_errors=True)


def test_a_write_past_the_quota_through_the_mount_is_edquot(quota_mount: tuple[Path, Path]) -> None:
    mnt, state_dir = quota_mount
    # the write that fails is one of a bounded loop: 2 MiB at most, twice the quota
    with pytest.raises(OSError) as e, open(mnt / "home/alice/fill", "wb") as f:  # noqa: PT012
        for _ in range(32):
            f.write(b"x" * (64 * 1024))
            f.flush()
            os.fsync(f.fileno())
    assert e.value.errno == errno.EDQUOT
    assert os.strerror(e.value.errno) == "Disk quota exceeded"
    with KState(state_dir) as state:
        with state.read() as txn:  # noqa: SIM117 (the read ends before the writes below)
            used = quota.usage(txn, 100_000)
        assert 0 < used <= MIB  # the bound holds
        bob = PathFS(VFS(state), cred=Cred(100_001, 100_001), cwd="/home/bob")
        bob.write_file("room", b"b" * MIB)  # the other agent still writes
        assert bob.read_file("room") == b"b" * MIB


def test_statvfs_through_the_agents_mount_is_its_quota(quota_mount: tuple[Path, Path]) -> None:
    mnt, _ = quota_mount
    (mnt / "home/alice/f").write_bytes(b"y" * (256 * 1024))
    info = os.statvfs(mnt)
    assert info.f_blocks * info.f_frsize == MIB
    assert info.f_bavail * info.f_frsize == MIB - 256 * 1024
