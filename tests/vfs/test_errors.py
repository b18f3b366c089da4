"""Every failure of the path API is an OSError with the errno and the path in `.filename`."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from kfs.kstate import KState
from kfs.kstate.schema import U64
from kfs.vfs import VFS, XATTR_REPLACE, Cred, PathFS

from .oserrors import raises_errno

MIB = 1 << 20


def _tree(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/d/f", b"data")
    fs.symlink("/d/missing", "/d/dangling")
    fs.chmod("/d/f", 0o600)


# (call, errno, path that must be in .filename); each runs on the tree above.
FAILURES: list[tuple[str, Callable[[PathFS], object], int, str]] = [
    ("stat", lambda fs: fs.stat("/d/nope"), errno.ENOENT, "/d/nope"),
    ("lstat", lambda fs: fs.lstat("/d/f/x"), errno.ENOTDIR, "/d/f/x"),
    ("read_file", lambda fs: fs.read_file("/d"), errno.EISDIR, "/d"),
    ("write_file", lambda fs: fs.write_file("/d/nope/f", b""), errno.ENOENT, "/d/nope/f"),
    ("append_file", lambda fs: fs.append_file("/d", b""), errno.EISDIR, "/d"),
    ("open", lambda fs: fs.open("/d/dangling"), errno.ENOENT, "/d/dangling"),
    ("mkdir", lambda fs: fs.mkdir("/d/f"), errno.EEXIST, "/d/f"),
    ("rmdir", lambda fs: fs.rmdir("/d"), errno.ENOTEMPTY, "/d"),
    ("unlink", lambda fs: fs.unlink("/d"), errno.EISDIR, "/d"),
    ("rm", lambda fs: fs.rm("/d/nope"), errno.ENOENT, "/d/nope"),
    ("readlink", lambda fs: fs.readlink("/d/f"), errno.EINVAL, "/d/f"),
    ("realpath", lambda fs: fs.realpath("/d/dangling"), errno.ENOENT, "/d/dangling"),
    ("readdir", lambda fs: fs.readdir("/d/f"), errno.ENOTDIR, "/d/f"),
    ("symlink", lambda fs: fs.symlink("x", "/d/f"), errno.EEXIST, "/d/f"),
    ("link", lambda fs: fs.link("/d", "/e"), errno.EPERM, "/e"),
    ("chmod", lambda fs: fs.chmod("/d/nope", 0o644), errno.ENOENT, "/d/nope"),
    ("chown", lambda fs: fs.chown("/d/nope", 1, 1), errno.ENOENT, "/d/nope"),
    ("utime", lambda fs: fs.utime("/d/nope"), errno.ENOENT, "/d/nope"),
    ("truncate", lambda fs: fs.truncate("/d", 0), errno.EISDIR, "/d"),
    ("truncate-negative", lambda fs: fs.truncate("/d/f", -1), errno.EINVAL, "/d/f"),
    ("getxattr", lambda fs: fs.getxattr("/d/f", b"user.none"), errno.ENODATA, "/d/f"),
    (
        "setxattr",
        lambda fs: fs.setxattr("/d/f", b"user.none", b"", XATTR_REPLACE),
        errno.ENODATA,
        "/d/f",
    ),
    ("removexattr", lambda fs: fs.removexattr("/d/f", b"user.none"), errno.ENODATA, "/d/f"),
    ("listxattr", lambda fs: fs.listxattr("/d/nope"), errno.ENOENT, "/d/nope"),
    ("rename", lambda fs: fs.rename("/d/nope", "/d/g"), errno.ENOENT, "/d/nope"),
    (
        "user-read",
        lambda fs: PathFS(fs.vfs, cred=Cred(9, 9)).read_file("/d/f"),
        errno.EACCES,
        "/d/f",
    ),
    (
        "user-chmod",
        lambda fs: PathFS(fs.vfs, cred=Cred(9, 9)).chmod("/d/f", 0o777),
        errno.EPERM,
        "/d/f",
    ),
]


@pytest.mark.parametrize(
    "call, code, path", [(c, e, p) for _, c, e, p in FAILURES], ids=[n for n, _, _, _ in FAILURES]
)
def test_a_failing_call_raises_oserror_with_errno_and_path(
    fs: PathFS, call: Callable[[PathFS], object], code: int, path: str
) -> None:
    _tree(fs)
    with raises_errno(code, path):
        call(fs)


def test_errno_subclasses_are_the_builtin_ones(fs: PathFS) -> None:
    with pytest.raises(FileNotFoundError):
        fs.stat("/nope")
    fs.mkdir("/d")
    with pytest.raises(FileExistsError):
        fs.mkdir("/d")
    with pytest.raises(IsADirectoryError):
        fs.read_file("/d")


def test_the_message_is_the_standard_strerror(fs: PathFS) -> None:
    with pytest.raises(OSError) as info:
        fs.stat("/nope")
    assert info.value.strerror == os.strerror(errno.ENOENT)
    assert str(info.value) == "[Errno 2] No such file or directory: '/nope'"


def test_a_handle_error_names_the_handles_path(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with fs.open("/f") as handle, raises_errno(errno.EBADF, "/f"):
        handle.pwrite(b"x", 0)


def test_a_quota_error_on_a_handle_names_the_handles_path(state: KState, fs: PathFS) -> None:
    state.write(lambda txn: txn.put("meta", b"max_bytes", U64.pack(10)))
    with fs.open("/f", os.O_CREAT | os.O_WRONLY) as handle, raises_errno(errno.ENOSPC, "/f"):
        handle.pwrite(b"x" * 100, 0)


def test_a_full_map_error_names_the_path(tmp_path: Path) -> None:
    with KState(tmp_path, create=True, map_size=1 * MIB, max_map_size=2 * MIB) as ks:
        fs = PathFS(VFS(ks))
        with raises_errno(errno.ENOSPC, "/big"):
            fs.write_file("/big", b"x" * (4 * MIB))
