"""The image's drives in a real FUSE mount (kfs.drives.nodes): a memory drive, a host drive, a
read-only host drive and a python drive at their paths, as the sessions' shells see them.

The test process plays the server: it applies the image and begins the memory drives' run
(kfs.drives.memory), and writes on the memory drive as a session's shell would; the mount is
`komputer mount`, another process, as `komputer up` runs it."""

from __future__ import annotations

import errno
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kfs_mounts import Mount, komputer

from kfs.drives.memory import MemoryBacking, MemoryDrives
from kfs.kstate import KState
from kfs.runtime import image
from kfs.runtime.drives import of_image
from kfs.vfs import ROOT
from tests.hang import HANG

MANIFEST = """[drives.data]
path = "/mnt/data"
kind = "host"
source = "{data}"

[drives.scratch]
path = "/mnt/scratch"
kind = "memory"
max_bytes = "1M"

[drives.crm]
path = "/srv/crm"
kind = "python"
handler = "crmdrive:CRMDrive"

[drives.ref]
path = "/srv/ref"
kind = "host"
source = "{ref}"
readonly = true
"""

CRM_DRIVE = """class CRMDrive:
    def stat(self, path):
        return {"type": "dir", "size": 0, "mtime": 0.0} if path == "/" else None

    def readdir(self, path):
        return []
"""


class Server:
    """What the test holds of the server's side: the state, this run's memory drives and a
    shell's view of the memory drive."""

    def __init__(self, base: Path) -> None:
        self.state = KState(base / "state")
        self.begin()

    def begin(self) -> None:
        """A server run: its memory drives, empty."""
        self.memory = MemoryDrives.begin(self.state)
        scratch = next(d for d in of_image(image.current(self.state)) if d.kind == "memory")
        self.scratch = MemoryBacking(scratch, self.memory.state(scratch), 1).view(ROOT, 0o022)

    def restart(self) -> None:
        self.memory.end()
        self.begin()


@pytest.fixture
def drives(tmp_path: Path) -> Iterator[tuple[Path, Server, Path]]:
    """(the mount's /, the server's side, the host drive's source)."""
    data, ref, img = tmp_path / "data", tmp_path / "ref", tmp_path / "img"
    for d in (data, ref, img):
        d.mkdir()
    (ref / "manual.txt").write_text("read me\n")
    (img / "komputer.toml").write_text(MANIFEST.format(data=data, ref=ref))
    (img / "crmdrive.py").write_text(CRM_DRIVE)
    komputer("init", "--state", str(tmp_path / "state"))
    state = KState(tmp_path / "state")
    image.apply(state, image.load(img), by="test")
    state.close()
    server = Server(tmp_path)
    top = Path(tempfile.mkdtemp(prefix="kfs-drives."))
    mount = Mount(tmp_path / "state", top / "mnt").start()
    try:
        yield mount.path, server, data
    finally:
        mount.stop()
        server.memory.end()
        server.state.close()
        os.rmdir(top / "mnt")
        os.rmdir(top)


def error(call, *args) -> int:  # noqa: ANN001
    with pytest.raises(OSError) as raised:
        call(*args)
    return raised.value.errno


def test_each_drive_at_its_path(drives: tuple[Path, Server, Path]) -> None:
    mnt, server, data = drives
    server.scratch.write_file("/seen", b"from a shell\n")
    (data / "given.txt").write_text("from the host\n")
    assert sorted(os.listdir(mnt / "mnt")) == ["data", "scratch"]
    assert (mnt / "mnt/scratch/seen").read_text() == "from a shell\n"
    assert (mnt / "mnt/data/given.txt").read_text() == "from the host\n"
    assert (mnt / "srv/ref/manual.txt").read_text() == "read me\n"
    # each drive's numbers are its own range, as the shell's `ls -i` shows them; `..` leads back to K
    assert [os.stat(mnt / p).st_ino >> 48 for p in ("mnt/data", "mnt/scratch", "srv/ref")] == [16, 17, 19]
    assert os.stat(mnt / "mnt/scratch/seen").st_ino >> 48 == 17
    assert os.stat(mnt / "mnt/scratch/..").st_ino == os.stat(mnt / "mnt").st_ino
    assert os.stat(mnt / "mnt/scratch").st_mode & 0o7777 == 0o1777
    # the python drive: the mount runs no image code
    assert error(os.listdir, mnt / "srv/crm") == errno.EOPNOTSUPP


def test_files_on_the_memory_drive(drives: tuple[Path, Server, Path]) -> None:
    mnt, server, _ = drives
    top = mnt / "mnt/scratch"
    (top / "d").mkdir()
    (top / "d/a").write_text("one\n")
    assert server.scratch.read_file("/d/a") == b"one\n"  # what the shells see
    server.scratch.write_file("/d/a", b"two, longer\n")  # a shell's write: the next open sees it
    assert (top / "d/a").read_text() == "two, longer\n"
    os.rename(top / "d/a", top / "d/b")
    os.symlink("b", top / "d/l")
    os.link(top / "d/b", top / "d/h")
    assert os.readlink(top / "d/l") == "b" and (top / "d/l").read_text() == "two, longer\n"
    assert os.stat(top / "d/b").st_nlink == 2
    assert sorted(os.listdir(top / "d")) == ["b", "h", "l"]
    with open(top / "d/b", "r+") as f:  # open, unlinked, still there for fstat and reads
        os.unlink(top / "d/b")
        os.unlink(top / "d/h")
        assert os.fstat(f.fileno()).st_nlink == 0 and f.read() == "two, longer\n"
    os.chmod(top / "d", 0o700)
    assert os.stat(top / "d").st_mode & 0o777 == 0o700
    os.utime(top / "d", ns=(1_000_000_000, 2_000_000_000))
    assert os.stat(top / "d").st_mtime_ns == 2_000_000_000
    os.unlink(top / "d/l")
    os.rmdir(top / "d")
    assert server.scratch.scandir("/") == []
    with pytest.raises(OSError) as raised, open(top / "big", "wb") as f:  # its own byte limit
        f.write(b"x" * (2 << 20))
        f.flush()
        os.fsync(f.fileno())
    assert raised.value.errno == errno.ENOSPC


def test_drives_are_mounts(drives: tuple[Path, Server, Path]) -> None:
    mnt, _, data = drives
    (mnt / "mnt/scratch/f").write_text("x")
    assert error(os.rename, mnt / "mnt/scratch/f", mnt / "mnt/data/f") == errno.EXDEV
    assert error(os.link, mnt / "mnt/scratch/f", mnt / "mnt/data/f") == errno.EXDEV
    assert error(os.rename, mnt / "mnt/scratch/f", mnt / "f") == errno.EXDEV
    assert error(os.rmdir, mnt / "mnt/scratch") == errno.EBUSY
    assert error(os.rename, mnt / "mnt", mnt / "elsewhere") == errno.EBUSY
    assert error(os.rename, mnt / "srv/ref", mnt / "srv/other") == errno.EBUSY
    (mnt / "mnt/data/made").write_text("made\n")
    assert (data / "made").read_text() == "made\n"
    assert error((mnt / "srv/ref/new").write_text, "no") == errno.EROFS
    assert error(os.unlink, mnt / "srv/ref/manual.txt") == errno.EROFS


def test_a_new_server_run_empties_the_memory_drive(drives: tuple[Path, Server, Path]) -> None:
    mnt, server, _ = drives
    server.scratch.write_file("/old", b"gone at restart\n")
    assert os.listdir(mnt / "mnt/scratch") == ["old"]
    server.restart()
    server.scratch.write_file("/new", b"this run\n")
    deadline = time.monotonic() + HANG
    while os.listdir(mnt / "mnt/scratch") != ["new"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert os.listdir(mnt / "mnt/scratch") == ["new"]
    assert (mnt / "mnt/scratch/new").read_text() == "this run\n"


def test_a_host_drive_never_sets_setuid_or_setgid_on_the_host(drives: tuple[Path, Server, Path]) -> None:
    mnt, _, data = drives
    (mnt / "mnt/data/own.txt").write_text("x\n")
    os.chmod(mnt / "mnt/data/own.txt", 0o4755)
    os.chmod(mnt / "mnt/data/own.txt", 0o6755)
    fd = os.open(mnt / "mnt/data/made", os.O_CREAT | os.O_WRONLY, 0o6755)
    os.close(fd)
    os.mkdir(mnt / "mnt/data/d", 0o2775)
    for name, perm in (("own.txt", 0o755), ("made", 0o755), ("d", 0o775)):
        assert oct((data / name).stat().st_mode & 0o7777) == oct(perm & ~0o022 if name != "own.txt" else perm)
        assert oct(os.stat(mnt / "mnt/data" / name).st_mode & 0o7777) == oct((data / name).stat().st_mode & 0o7777)
