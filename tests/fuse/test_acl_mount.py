"""POSIX ACLs through the mount: setfacl/getfacl round-trip, the kernel enforces them
(FUSE_POSIX_ACL with default_permissions), and new files inherit a directory's default ACL.
On a plain mount and on a fork's mount alike."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_posix_groups import as_user

NOBODY, OTHER = 65534, 65533


def facl(*args: str) -> str:
    tool = "setfacl" if args[0] != "get" else "getfacl"
    if shutil.which(tool) is None:
        pytest.fail(f"install {tool} (apt-get install acl)")
    argv = [tool, *(args[1:] if args[0] == "get" else args)]
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


@pytest.fixture(params=["plain", "fork"])
def where(request: pytest.FixtureRequest) -> Path:
    path = request.getfixturevalue("mnt" if request.param == "plain" else "fork_mnt")
    path.chmod(0o755)
    return path


def test_a_named_user_entry_round_trips_and_shows_in_the_mode(where: Path) -> None:
    f = where / "f"
    f.write_bytes(b"x")
    f.chmod(0o600)
    facl("-m", f"u:{NOBODY}:r", str(f))
    assert f"user:{NOBODY}:r--" in facl("get", "-n", str(f))
    assert f.stat().st_mode & 0o777 == 0o640  # the mask shows as the group bits
    assert b"system.posix_acl_access" in "\0".join(os.listxattr(f)).encode()


def test_the_kernel_grants_a_named_user_and_denies_others(where: Path) -> None:
    f = where / "f"
    f.write_bytes(b"secret")
    f.chmod(0o600)
    facl("-m", f"u:{NOBODY}:r", str(f))
    assert as_user(NOBODY, NOBODY, f.read_bytes) == 0
    assert as_user(OTHER, OTHER, f.read_bytes) == errno.EACCES
    facl("-x", f"u:{NOBODY}", str(f))
    assert as_user(NOBODY, NOBODY, f.read_bytes) == errno.EACCES


def test_a_named_user_denied_where_other_may_read(where: Path) -> None:
    f = where / "f"
    f.write_bytes(b"x")
    f.chmod(0o644)
    facl("-m", f"u:{NOBODY}:-", str(f))
    assert as_user(NOBODY, NOBODY, f.read_bytes) == errno.EACCES
    assert as_user(OTHER, OTHER, f.read_bytes) == 0


def test_new_files_inherit_the_default_acl(where: Path) -> None:
    d = where / "d"
    d.mkdir()
    facl("-d", "-m", f"u:{NOBODY}:rwx", str(d))
    # with umask 0: the kernel masks the mode with the umask before a FUSE file system sees it
    # (pyfuse3 cannot ask for FUSE_DONT_MASK), where Linux's own file systems skip the umask
    # under a default ACL
    old = os.umask(0)
    try:
        (d / "f").write_bytes(b"x")
        (d / "sub").mkdir()
    finally:
        os.umask(old)
    got = facl("get", "-n", str(d / "f"))
    assert f"user:{NOBODY}:rwx\t#effective:rw-" in got and "mask::rw-" in got
    assert f"default:user:{NOBODY}:rwx" in facl("get", "-n", str(d / "sub"))
    assert as_user(NOBODY, NOBODY, lambda: (d / "f").write_bytes(b"y")) == 0


def test_chmod_changes_the_mask_the_kernel_checks(where: Path) -> None:
    f = where / "f"
    f.write_bytes(b"x")
    facl("-m", f"u:{NOBODY}:rw", str(f))
    f.chmod(0o604)
    assert "mask::---" in facl("get", "-n", str(f))
    assert as_user(NOBODY, NOBODY, lambda: f.open("r+b").close()) == errno.EACCES
