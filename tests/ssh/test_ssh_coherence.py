"""Coherence between SSH and a real FUSE mount of the same state: what one side writes, the
other sees, pushed rather than waited out: well before the kernel's 30 s cache would expire on
its own (polled with that deadline; about 100 ms on an idle machine, a figure, not a test)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import paramiko
import pytest
from kserver import Bench

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuse"))
from kfs_mounts import Mount  # noqa: E402

from kfs.fuse.operations import CACHE_SECONDS  # noqa: E402

BOUND = CACHE_SECONDS / 3  # seconds: pushed, not expired


@pytest.fixture(scope="module")
def mount(bench: Bench, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    m = Mount(bench.root / "state", tmp_path_factory.mktemp("coherence") / "mnt").start()
    try:
        yield m.path
    finally:
        m.stop()


@pytest.fixture
def client(bench: Bench) -> Iterator[paramiko.SSHClient]:
    c = paramiko.SSHClient()
    c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    c.connect("127.0.0.1", bench.port, "alice", key_filename=str(bench.keys["alice"]),
              look_for_keys=False, allow_agent=False)
    yield c
    c.close()


def run(client: paramiko.SSHClient, command: str) -> tuple[int, bytes]:
    _, stdout, _ = client.exec_command(command)
    out = stdout.read()
    return stdout.channel.recv_exit_status(), out


def seen_within(look: Callable[[], bool], start: float) -> float:
    """Poll `look` until it succeeds; each poll must begin within BOUND of `start`. Returns when
    (after `start`) the successful poll began."""
    while True:
        began = time.monotonic()
        if look():
            return began - start
        assert began - start < BOUND, f"not visible {BOUND:.0f} s after the write"
        time.sleep(0.002)


def test_a_file_written_over_ssh_appears_in_the_mount(mount: Path, client: paramiko.SSHClient) -> None:
    target = mount / "home" / "alice" / "from-ssh.txt"
    assert not target.exists()  # the kernel has looked: a stale negative entry would hide the file
    status, _ = run(client, "echo 'written over ssh' > from-ssh.txt")
    written = time.monotonic()
    assert status == 0

    def look() -> bool:
        try:
            return target.read_bytes() == b"written over ssh\n"
        except FileNotFoundError:
            return False

    assert seen_within(look, written) < BOUND


def test_a_change_over_ssh_replaces_what_the_mount_showed(mount: Path, client: paramiko.SSHClient) -> None:
    target = mount / "home" / "alice" / "changing.txt"
    assert run(client, "echo one > changing.txt")[0] == 0
    seen_within(lambda: target.exists() and target.read_bytes() == b"one\n", time.monotonic())
    assert run(client, "echo two-longer > changing.txt")[0] == 0
    written = time.monotonic()
    assert seen_within(lambda: target.read_bytes() == b"two-longer\n", written) < BOUND


def test_a_file_written_in_the_mount_is_visible_over_ssh(mount: Path, client: paramiko.SSHClient) -> None:
    assert run(client, "echo $(<from-mount.txt)")[1] == b"\n"  # looked for first: nothing there
    (mount / "home" / "alice" / "from-mount.txt").write_bytes(b"written in the mount\n")
    written = time.monotonic()
    assert seen_within(lambda: run(client, "echo $(<from-mount.txt)")[1] == b"written in the mount\n",
                       written) < BOUND
