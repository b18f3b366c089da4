"""`komputer mount` as a command: daemonising, signals, read-only mounts, allow_other, refusals."""

from __future__ import annotations

import errno
import os
import signal
import time
from pathlib import Path

import pytest
from kfs_mounts import Mount, komputer, require_fuse

from kfs.fuse.mount import READAHEAD_KB, MountError, check_allow_other, mount_device
from tests.hang import HANG


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_allow_other_for_a_non_root_user_needs_user_allow_other(tmp_path: Path) -> None:
    conf = tmp_path / "fuse.conf"
    conf.write_text("#user_allow_other\n")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.setuid(65534)
        try:
            check_allow_other({"allow_other"}, conf)
            message = "allowed"
        except MountError as e:
            message = str(e)
        os.write(write_end, message.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        message = pipe.read().decode()
    os.waitpid(pid, 0)
    assert "user_allow_other" in message and str(conf) in message
    conf.write_text("user_allow_other\n")
    check_allow_other({"allow_other"}, conf)  # root may anyway; the file now permits it too


def test_mount_without_foreground_returns_once_mounted_and_sigterm_unmounts(tmp_path: Path) -> None:
    require_fuse()
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    result = komputer("mount", "--state", str(tmp_path / "state"), str(mnt), "--log", str(tmp_path / "log"))
    assert result.returncode == 0, result.stderr
    try:
        assert os.path.ismount(mnt)
        (mnt / "f").write_bytes(b"works at once")
        pid = int(result.stdout.rsplit("daemon pid ", 1)[1].rstrip(")\n"))
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + HANG
        while os.path.ismount(mnt) or _alive(pid):
            assert time.monotonic() < deadline, "SIGTERM did not unmount and end the daemon"
            time.sleep(0.05)
    finally:
        if os.path.ismount(mnt):
            os.system(f"fusermount3 -uz {mnt}")
    assert "unmounted" in (tmp_path / "log").read_text()


def test_a_second_mount_on_a_live_mount_point_is_refused(kfs_mount: Mount) -> None:
    result = komputer("mount", "--state", str(kfs_mount.state), str(kfs_mount.path), check=False)
    assert result.returncode == 1
    assert "already a mount point" in result.stderr


def test_a_read_only_mount_refuses_writes_with_erofs(tmp_path: Path) -> None:
    komputer("init", "--state", str(tmp_path / "state"))
    mount = Mount(tmp_path / "state", tmp_path / "mnt", options=("ro",)).start()
    try:
        with pytest.raises(OSError) as info:
            (mount.path / "f").write_bytes(b"")
        assert info.value.errno == errno.EROFS
        assert os.listdir(mount.path) == []
    finally:
        mount.stop()


def test_the_mount_device_comes_from_mountinfo_with_octal_escapes(tmp_path: Path) -> None:
    info = tmp_path / "mountinfo"
    info.write_text(
        "22 1 0:21 / /tmp rw - tmpfs tmpfs rw\n"
        "40 22 0:40 / /tmp/a\\040b rw - fuse.kfs kfs:/s rw\n"
        "41 22 0:41 / /tmp/a\\040b rw - fuse.kfs kfs:/t rw\n"  # stacked on top: this one is seen
    )
    assert mount_device(Path("/tmp/a b"), info) == "0:41"
    assert mount_device(Path("/tmp/elsewhere"), info) is None


def test_the_mount_reads_ahead_a_megabyte(kfs_mount: Mount) -> None:
    """Sequential reads come as 1 MiB requests, not 128 KiB ones (root sets this through /sys)."""
    device = mount_device(kfs_mount.path)
    assert device is not None
    setting = Path("/sys/class/bdi") / device / "read_ahead_kb"
    deadline = time.monotonic() + HANG
    while setting.read_text().strip() != str(READAHEAD_KB):  # set once INIT is answered
        assert time.monotonic() < deadline, f"read-ahead stayed at {setting.read_text().strip()} KiB"
        time.sleep(0.01)
