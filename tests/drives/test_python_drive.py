"""Python drives (kfs.drives.python): files an operator's class serves, through its view and the
K shell's tools; its writes given back whole, read-only when declared so or without `write`,
its exceptions as errno values (EIO logged by file and line, never with the exception's text);
and the class loaded from the image's stored files and mounted once (kshell.image.drives)."""

from __future__ import annotations

import errno
import logging
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kfs.drives import python as python_drive
from kfs.drives.python import PythonBacking, PythonFS
from kfs.drives.view import DriveFS, Drives, mount
from kfs.runtime import image
from kfs.runtime.drives import Drive, of_image
from kfs.vfs import ROOT, VFS, Cred, PathFS
from kshell.image.drives import PythonDrives
from kshell.session import Shell
from tests.hang import HANG

ALICE = Cred(1000, 1000)
HOME = "/home/alice"
SECRET = "s3cr3t-value"


class DictDrive:
    """Files in a dict, directories implied by their paths (and `mkdir`)."""

    def __init__(self, files: dict[str, bytes] | None = None) -> None:
        self.files = dict(files or {})
        self.dirs = {"/"}
        self.writes: list[tuple[str, bytes]] = []

    def _is_dir(self, path: str) -> bool:
        return path in self.dirs or any(f.startswith(path.rstrip("/") + "/") for f in self.files)

    def stat(self, path: str) -> dict[str, Any] | None:
        if path in self.files:
            return {"type": "file", "size": len(self.files[path]), "mtime": 1700000000.0}
        return {"type": "dir", "size": 0, "mtime": 1700000000.0} if self._is_dir(path) else None

    def readdir(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix):].split("/")[0] for p in [*self.files, *self.dirs] if p.startswith(prefix)}
        return sorted(n for n in names if n)

    def read(self, path: str) -> bytes:
        if path == "/boom":
            raise KeyError(SECRET)  # an operator's bug whose message carries a secret
        return self.files[path]

    def write(self, path: str, data: bytes) -> None:
        self.writes.append((path, data))
        self.files[path] = data

    def mkdir(self, path: str) -> None:
        self.dirs.add(path)

    def unlink(self, path: str) -> None:
        del self.files[path]

    def rename(self, old: str, new: str) -> None:
        self.files[new] = self.files.pop(old)


class ReadOnlyDrive(DictDrive):
    write = None  # type: ignore[assignment]  # no write: the drive is read-only


def view(obj: Any, *, readonly: bool = False) -> PythonFS:
    drive = Drive("crm", "/mnt/crm", "python", handler="m:C", readonly=readonly)
    return PythonBacking(drive, 0, obj).view(ALICE, 0o022)


def test_stat_readdir_and_read_through_the_view() -> None:
    fs = view(DictDrive({"/a.txt": b"alpha\n", "/d/b.txt": b"beta"}))
    top, a = fs.stat("/"), fs.stat("/a.txt")
    assert top.is_dir and stat.S_IMODE(top.mode) == 0o755 and (top.uid, top.gid) == (0, 0)
    assert a.is_reg and a.size == 6 and stat.S_IMODE(a.mode) == 0o644 and a.mtime == 1700000000 * 10**9
    assert a.ino == fs.stat("/a.txt").ino != fs.stat("/d/b.txt").ino  # stable per path
    assert [n for n, _ in fs.scandir("/")] == ["a.txt", "d"] and fs.read_file("/d/b.txt") == b"beta"
    assert fs.realpath("/d/../a.txt") == "/a.txt" and fs.exists("/d") and not fs.exists("/nope")
    with fs.open("/a.txt") as handle:
        assert handle.pread(3, 1) == b"lph" and handle.read_all() == b"alpha\n"
    for call, code in ((lambda: fs.stat("/nope"), errno.ENOENT), (lambda: fs.read_file("/d"), errno.EISDIR),
                       (lambda: fs.scandir("/a.txt"), errno.ENOTDIR), (lambda: fs.stat("/a.txt/"), errno.ENOTDIR)):
        with pytest.raises(OSError) as e:
            call()
        assert e.value.errno == code


def test_writes_are_given_back_whole() -> None:
    obj = DictDrive({"/a.txt": b"alpha\n"})
    fs = view(obj)
    assert fs.write_file("/n.txt", b"new") == 3 and obj.files["/n.txt"] == b"new"
    fs.append_file("/a.txt", b"more\n")
    assert obj.files["/a.txt"] == b"alpha\nmore\n"
    import os

    with fs.open("/h.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC) as handle:
        handle.pwrite(b"hello ", 0)
        handle.pwrite(b"world", 6)
        assert handle.getattr().size == 11
    assert obj.files["/h.txt"] == b"hello world" and obj.writes[-1] == ("/h.txt", b"hello world")
    fs.mkdir("/x/y", parents=True)
    fs.rename("/n.txt", "/x/y/n.txt")
    fs.unlink("/h.txt")
    assert "/h.txt" not in obj.files and obj.files["/x/y/n.txt"] == b"new"
    with pytest.raises(OSError) as e:
        fs.rmdir("/x")  # the class has no rmdir
    assert e.value.errno == errno.EPERM
    for call in (lambda: fs.chmod("/a.txt", 0o600), lambda: fs.symlink("/a.txt", "/l"),
                 lambda: fs.chown("/a.txt", 1), lambda: fs.link("/a.txt", "/b")):
        with pytest.raises(OSError) as e:
            call()
        assert e.value.errno == errno.EPERM and e.value.strerror == "Operation not permitted"


@pytest.mark.parametrize("ro", ["declared", "no write"])
def test_a_read_only_drive_refuses_writes_with_erofs(ro: str) -> None:
    import os

    obj = ReadOnlyDrive({"/a.txt": b"alpha\n"}) if ro == "no write" else DictDrive({"/a.txt": b"alpha\n"})
    fs = view(obj, readonly=ro == "declared")
    assert stat.S_IMODE(fs.stat("/a.txt").mode) == 0o444 and stat.S_IMODE(fs.stat("/").mode) == 0o555
    assert fs.read_file("/a.txt") == b"alpha\n" and not fs.access("/a.txt", os.W_OK)
    for call in (lambda: fs.write_file("/b", b"x"), lambda: fs.open("/a.txt", os.O_WRONLY),
                 lambda: fs.mkdir("/d"), lambda: fs.unlink("/a.txt"), lambda: fs.rename("/a.txt", "/b"),
                 lambda: fs.chmod("/a.txt", 0o600)):
        with pytest.raises(OSError) as e:
            call()
        assert e.value.errno == errno.EROFS
    assert obj.files == {"/a.txt": b"alpha\n"}


class Raising(DictDrive):
    def __init__(self, error: BaseException) -> None:
        super().__init__({"/f": b""})
        self.error = error

    def read(self, path: str) -> bytes:
        raise self.error


@pytest.mark.parametrize(("error", "code"), [
    (FileNotFoundError("/f"), errno.ENOENT), (PermissionError(), errno.EACCES), (IsADirectoryError(), errno.EISDIR),
    (NotADirectoryError(), errno.ENOTDIR), (FileExistsError(), errno.EEXIST),
    (OSError(errno.ENOSPC, "full"), errno.ENOSPC), (ValueError(SECRET), errno.EIO)])
def test_exceptions_are_errno_values(error: BaseException, code: int) -> None:
    with pytest.raises(OSError) as e:
        view(Raising(error)).read_file("/f")
    assert e.value.errno == code and e.value.filename == "/f" and SECRET not in str(e.value)


class Hanging(DictDrive):
    def __init__(self) -> None:
        super().__init__({"/f": b"x"})
        self.release = threading.Event()

    def read(self, path: str) -> bytes:
        self.release.wait(30)
        return b"late"


def test_a_call_that_hangs_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hung call costs its caller CALL_TIMEOUT (ETIMEDOUT), not the session; it keeps the
    drive's lock, so the calls after it time out too, until it returns."""
    monkeypatch.setattr(python_drive, "CALL_TIMEOUT", 0.2)
    drive = Hanging()
    fs = view(drive)
    started = time.monotonic()
    for _ in range(2):
        with pytest.raises(OSError) as e:
            fs.read_file("/f")
        assert e.value.errno == errno.ETIMEDOUT and e.value.filename == "/f"
    assert time.monotonic() - started < HANG  # a hang guard: the drive itself never answers
    drive.release.set()


def test_eio_is_logged_by_file_and_line_without_the_message(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kfs.drives"), pytest.raises(OSError) as e:
        view(DictDrive({"/boom": b""})).read_file("/boom")
    assert e.value.errno == errno.EIO and str(e.value) == "[Errno 5] Input/output error: '/boom'"
    (line,) = caplog.messages
    assert line.startswith("drive crm: DictDrive.read('/boom') raised KeyError at ")
    assert line.endswith(f"{__file__}:{DictDrive.read.__code__.co_firstlineno + 2}") and SECRET not in line


@pytest.fixture
def shell(vfs: VFS) -> Shell:
    root = PathFS(vfs, cred=ROOT)
    root.mkdir(HOME, parents=True)
    root.chown(HOME, ALICE.uid, ALICE.gid)
    objs = {"crm": DictDrive({"/a.txt": b"alpha\n"}), "ref": ReadOnlyDrive({"/r.txt": b"ref\n"})}
    drives = mount([Drive("crm", "/mnt/crm", "python", handler="m:C"),
                    Drive("ref", "/mnt/ref", "python", handler="m:C")], vfs, None, lambda d: objs[d.name])
    return Shell(PathFS(vfs, cred=ALICE, cwd=HOME, home=HOME), drives=drives, env={"HOME": HOME})


def run(sh: Shell, script: str) -> str:
    done = sh.run(script)
    assert done.status == 0, done.stderr.decode()
    return done.stdout.decode()


def test_k_tools_on_a_python_drive(shell: Shell) -> None:
    assert run(shell, "ls /mnt; ls /mnt/crm; cat /mnt/crm/a.txt; echo x > /mnt/crm/b.txt; cat /mnt/crm/b.txt") \
        == "crm\nref\na.txt\nalpha\nx\n"
    assert run(shell, "cd /mnt/crm && mkdir d && cp a.txt d/ && mv b.txt d/c.txt && find . -type f | sort "
                      "&& touch d/c.txt && wc -c < d/c.txt && rm d/a.txt && ls d") \
        == "./a.txt\n./d/a.txt\n./d/c.txt\n2\nc.txt\n"
    assert run(shell, "cp /mnt/crm/a.txt ~/ && cat ~/a.txt && df -T /mnt/crm | tail -1 | awk '{print $2}'") \
        == "alpha\npython\n"
    done = shell.run("echo x > /mnt/ref/r.txt")
    assert done.status == 1 and done.stderr.endswith(b"/mnt/ref/r.txt: Read-only file system\n")
    done = shell.run("chmod 600 /mnt/crm/a.txt")
    assert done.status == 1 and b"Operation not permitted" in done.stderr


def test_without_the_class_a_python_drive_is_not_supported(vfs: VFS) -> None:
    drives = mount([Drive("crm", "/mnt/crm", "python", handler="m:C")], vfs, None)  # as SFTP mounts it
    fs = DriveFS(vfs, drives=drives, cred=ALICE, cwd="/", home="/")
    with pytest.raises(OSError) as e:
        fs.scandir("/mnt/crm")
    assert e.value.errno == errno.ENOTSUP and e.value.filename == "/mnt/crm"
    assert fs.readdir("/mnt") == ["crm"]


CLASS = '''
import json

class CRMDrive:
    def mount(self, ctx):
        self.files = {"/who": (ctx.agent + " " + secret("token")).encode(), "/ctx": ctx.secret("token").encode()}
        MOUNTS.append(ctx.name)

    def unmount(self):
        MOUNTS.append("unmounted")

    def stat(self, path):
        if path == "/":
            return {"type": "dir", "size": 0, "mtime": 0}
        return {"type": "file", "size": len(self.files[path]), "mtime": 0} if path in self.files else None

    def readdir(self, path):
        return sorted(p[1:] for p in self.files)

    def read(self, path):
        return self.files[path]

MOUNTS = []
'''


def test_the_class_is_loaded_from_the_image_and_mounted_once(tmp_path: Path, vfs: VFS) -> None:
    (tmp_path / "crmdrive.py").write_text(CLASS)
    (tmp_path / "broken.py").write_text(
        "class Broken:\n    def mount(self, ctx):\n        raise ValueError(secret('token'))\n")
    (tmp_path / "komputer.toml").write_text('[drives.crm]\npath = "/mnt/crm"\nkind = "python"\n'
                                            'handler = "crmdrive:CRMDrive"\n\n[drives.bad]\npath = "/mnt/bad"\n'
                                            'kind = "python"\nhandler = "broken:Broken"\n')
    image.apply(vfs.state, image.load(tmp_path), by="test")
    record = image.current(vfs.state)
    assert record is not None
    pythons = PythonDrives()

    def drives() -> Drives:
        read = lambda rel: image.read_file(vfs.state, record["version"], rel)  # noqa: E731
        return mount(of_image(record), vfs, None, pythons.opener(record, read, "alice", lambda name: SECRET))

    for _ in range(2):  # a second session of the worker: the same object, mounted once
        fs = DriveFS(vfs, drives=drives(), cred=ALICE, cwd="/", home="/")
        assert fs.read_file("/mnt/crm/who") == f"alice {SECRET}".encode() and fs.readdir("/mnt/crm") == ["ctx", "who"]
        with pytest.raises(OSError) as e:
            fs.readdir("/mnt/bad")
        assert e.value.errno == errno.EIO
    import sys

    mounts = sys.modules["crmdrive"].MOUNTS
    assert mounts == ["crm"]
    pythons.unmount()
    assert mounts == ["crm", "unmounted"]
