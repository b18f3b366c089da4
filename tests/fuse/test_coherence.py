"""Coherence with other writers: what another process writes to KState shows through the
mount (though the kernel caches entries and attributes for 30 s), and the reverse. The
assertion is that the change is pushed, not waited out: it shows well before the kernel's
cache would expire on its own. How fast it shows (about 100 ms) is a figure, not a test.

The other writer is this test process, which opens the mount's state directly (`peer`); a
second writer is a child process with its own VFS.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest
from kfs_mounts import Mount, child_env, require_tool

from kfs.fuse.operations import CACHE_SECONDS
from kfs.vfs import PathFS

# pushed, not expired: a third of the kernel's own cache time (a loaded 2-core machine
# takes far longer than the usual 100 ms, but never that long unless nothing pushed it)
BOUND = CACHE_SECONDS / 3


def visible_within(check: Callable[[], bool], bound: float = BOUND) -> float:
    """Poll `check` until it holds; returns the seconds it took (fails past the bound)."""
    start = time.monotonic()
    while True:
        try:
            if check():
                return time.monotonic() - start
        except OSError:
            pass
        elapsed = time.monotonic() - start
        assert elapsed < bound, f"not visible after {elapsed:.3f}s"
        time.sleep(0.002)


def read_line(pipe: IO[bytes], timeout: float = 5) -> bytes:
    """One line from a child's pipe, failing (not hanging) after `timeout` seconds."""
    line = b""
    deadline = time.monotonic() + timeout
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([pipe], [], [], max(deadline - time.monotonic(), 0))
        assert ready, f"no line within {timeout}s (got {line!r})"
        chunk = os.read(pipe.fileno(), 1)
        assert chunk, f"the pipe closed (got {line!r})"
        line += chunk
    return line


def kpath(mnt: Path, mount: Mount, name: str) -> str:
    return f"/{mnt.relative_to(mount.path)}/{name}"


def test_an_overwrite_elsewhere_shows_through_a_cached_file(
    mnt: Path, kfs_mount: Mount, peer: PathFS
) -> None:
    f = mnt / "f"
    f.write_bytes(b"old contents")
    for _ in range(3):  # the kernel now holds its pages and attributes
        assert f.read_bytes() == b"old contents"
    peer.write_file(kpath(mnt, kfs_mount, "f"), b"new contents, longer")
    assert visible_within(lambda: f.read_bytes() == b"new contents, longer") < BOUND


def test_a_file_created_elsewhere_appears(mnt: Path, kfs_mount: Mount, peer: PathFS) -> None:
    assert os.listdir(mnt) == []
    peer.write_file(kpath(mnt, kfs_mount, "new"), b"hi")
    assert visible_within(lambda: os.listdir(mnt) == ["new"]) < BOUND
    assert (mnt / "new").read_bytes() == b"hi"


def test_a_file_removed_elsewhere_disappears(mnt: Path, kfs_mount: Mount, peer: PathFS) -> None:
    (mnt / "gone").write_bytes(b"x")
    os.stat(mnt / "gone")  # cached entry
    peer.unlink(kpath(mnt, kfs_mount, "gone"))
    assert visible_within(lambda: not (mnt / "gone").exists()) < BOUND


def test_a_rename_elsewhere_in_the_mount_root_shows(
    kfs_mount: Mount, peer: PathFS, request: pytest.FixtureRequest
) -> None:
    a, b = (f"root-{request.node.name}-{os.getpid()}-{n}" for n in "ab")
    old, new = kfs_mount.path / a, kfs_mount.path / b  # the kernel never looks the root up
    old.write_bytes(b"A")
    os.stat(old)  # a cached entry of the root
    peer.rename(f"/{a}", f"/{b}")
    try:
        assert visible_within(lambda: not old.exists() and new.read_bytes() == b"A") < BOUND
    finally:
        peer.unlink(f"/{b}")


def test_a_chmod_elsewhere_shows(mnt: Path, kfs_mount: Mount, peer: PathFS) -> None:
    (mnt / "f").write_bytes(b"")
    os.chmod(mnt / "f", 0o644)
    os.stat(mnt / "f")
    peer.chmod(kpath(mnt, kfs_mount, "f"), 0o600)
    assert visible_within(lambda: os.stat(mnt / "f").st_mode & 0o777 == 0o600) < BOUND


def test_a_listing_shows_a_change_made_elsewhere_to_an_entry_it_listed_before(
    mnt: Path, kfs_mount: Mount, peer: PathFS
) -> None:
    """`ls -l` twice: the second listing's attributes are the daemon's reused ones
    (Operations.listed_attrs); a chmod and a write elsewhere show in the next listing."""
    d = mnt / "d"
    d.mkdir()
    (d / "f").write_bytes(b"abc")
    os.chmod(d / "f", 0o644)

    def listing() -> dict[str, tuple[int, int]]:
        with os.scandir(d) as entries:
            return {e.name: (e.stat(follow_symlinks=False).st_mode & 0o777, e.stat(follow_symlinks=False).st_size)
                    for e in entries}

    assert listing() == listing() == {"f": (0o644, 3)}
    peer.chmod(kpath(mnt, kfs_mount, "d/f"), 0o600)
    peer.write_file(kpath(mnt, kfs_mount, "d/f"), b"longer")
    assert visible_within(lambda: listing() == {"f": (0o600, 6)}) < BOUND


def test_a_rename_elsewhere_shows(mnt: Path, kfs_mount: Mount, peer: PathFS) -> None:
    (mnt / "a").write_bytes(b"A")
    os.stat(mnt / "a")
    peer.rename(kpath(mnt, kfs_mount, "a"), kpath(mnt, kfs_mount, "b"))
    assert visible_within(lambda: not (mnt / "a").exists() and (mnt / "b").read_bytes() == b"A") < BOUND


def test_a_write_through_the_mount_is_visible_to_another_vfs_at_once(mnt: Path, kfs_mount: Mount, peer: PathFS) -> None:
    with open(mnt / "f", "wb") as fh:
        fh.write(b"from the mount")
    assert peer.read_file(kpath(mnt, kfs_mount, "f")) == b"from the mount"


def test_a_write_by_a_child_process_vfs_shows(mnt: Path, kfs_mount: Mount) -> None:
    f = mnt / "f"
    f.write_bytes(b"before")
    assert f.read_bytes() == b"before"
    code = (
        "import sys; from kfs.kstate import KState; from kfs.vfs import VFS, PathFS\n"
        "fs = PathFS(VFS(KState(sys.argv[1]), by='child'))\n"
        "fs.write_file(sys.argv[2], b'after'); print('done', flush=True)\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", code, str(kfs_mount.state), kpath(mnt, kfs_mount, "f")],
        env=child_env(), capture_output=True, text=True, check=True,
    )
    assert child.stdout.strip() == "done"
    assert visible_within(lambda: f.read_bytes() == b"after") < BOUND


def test_tail_f_through_the_mount_sees_lines_appended_elsewhere(mnt: Path, kfs_mount: Mount, peer: PathFS) -> None:
    require_tool("tail", "coreutils")
    log = kpath(mnt, kfs_mount, "log")
    peer.write_file(log, b"first\n")
    tail = subprocess.Popen(["tail", "-f", "-s", "0.1", str(mnt / "log")], stdout=subprocess.PIPE)
    try:
        assert tail.stdout is not None
        assert read_line(tail.stdout) == b"first\n"
        for i in range(3):
            peer.append_file(log, f"line {i}\n".encode())
            assert read_line(tail.stdout) == f"line {i}\n".encode()
    finally:
        tail.kill()
        tail.wait()


def test_a_file_held_open_shows_growth_elsewhere_and_without_writeback_a_shrink(
    mnt: Path, kfs_mount: Mount, peer: PathFS, tmp_path: Path
) -> None:
    """A mount sees another writer grow and shrink a file it holds open. Under `-o writeback`
    the kernel keeps the size of a file it holds: growth elsewhere is pushed into it (a store),
    with its pages, a shrink is not (kfs/fuse/coherence.py)."""
    f = mnt / "held"
    f.write_bytes(b"0123456789")
    with open(f, "rb") as held:
        peer.write_file(kpath(mnt, kfs_mount, "held"), b"0123456789 and more")
        assert visible_within(lambda: os.fstat(held.fileno()).st_size == 19) < BOUND
        assert visible_within(lambda: os.pread(held.fileno(), 100, 0) == b"0123456789 and more") < BOUND
        peer.write_file(kpath(mnt, kfs_mount, "held"), b"short")
        assert visible_within(lambda: os.fstat(held.fileno()).st_size == 5) < BOUND
        assert visible_within(lambda: os.pread(held.fileno(), 100, 0) == b"short") < BOUND
    cached = Mount(kfs_mount.state, tmp_path / "cached", options=("allow_other", "writeback")).start()
    try:
        g = cached.path / mnt.relative_to(kfs_mount.path) / "held"
        with open(g, "rb") as held:
            assert held.read() == b"short"
            peer.write_file(kpath(mnt, kfs_mount, "held"), b"short, then more")
            assert visible_within(lambda: os.fstat(held.fileno()).st_size == 16) < BOUND
            assert visible_within(lambda: os.pread(held.fileno(), 100, 0) == b"short, then more") < BOUND
    finally:
        cached.stop()
