"""Extended attributes: namespaces, create/replace flags, limits, listing, permissions."""

from __future__ import annotations

import errno
import time

import pytest

from kfs.vfs import VFS, XATTR_CREATE, XATTR_REPLACE, Cred, PathFS

from .oserrors import raises_errno

USER = Cred(1000, 1000)
OTHER = Cred(1001, 1001)


def test_a_user_xattr_round_trips(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.setxattr("/f", b"user.colour", b"blue\x00\xff")
    assert fs.getxattr("/f", b"user.colour") == b"blue\x00\xff"


def test_an_xattr_may_have_an_empty_value(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.setxattr("/f", b"user.flag", b"")
    assert fs.getxattr("/f", b"user.flag") == b""


def test_setxattr_replaces_an_existing_value(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.setxattr("/f", b"user.k", b"one")
    fs.setxattr("/f", b"user.k", b"two")
    assert fs.getxattr("/f", b"user.k") == b"two"


def test_directories_carry_xattrs(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.setxattr("/d", b"user.k", b"v")
    assert fs.getxattr("/d", b"user.k") == b"v"


def test_a_missing_xattr_is_enodata(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ENODATA, "/f"):
        fs.getxattr("/f", b"user.none")


def test_xattr_create_on_an_existing_name_is_eexist(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.setxattr("/f", b"user.k", b"one")
    with raises_errno(errno.EEXIST, "/f"):
        fs.setxattr("/f", b"user.k", b"two", XATTR_CREATE)
    assert fs.getxattr("/f", b"user.k") == b"one"


def test_xattr_create_on_a_new_name_sets_it(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.setxattr("/f", b"user.k", b"one", XATTR_CREATE)
    assert fs.getxattr("/f", b"user.k") == b"one"


def test_xattr_replace_on_a_missing_name_is_enodata(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ENODATA, "/f"):
        fs.setxattr("/f", b"user.k", b"v", XATTR_REPLACE)
    assert fs.listxattr("/f") == []


def test_xattr_replace_on_an_existing_name_replaces_it(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.setxattr("/f", b"user.k", b"one")
    fs.setxattr("/f", b"user.k", b"two", XATTR_REPLACE)
    assert fs.getxattr("/f", b"user.k") == b"two"


def test_a_value_over_64_kib_is_e2big(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.E2BIG, "/f"):
        fs.setxattr("/f", b"user.big", b"x" * (64 * 1024 + 1))


def test_a_value_of_exactly_64_kib_is_accepted(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.setxattr("/f", b"user.big", b"x" * (64 * 1024))
    assert len(fs.getxattr("/f", b"user.big")) == 64 * 1024


def test_a_name_over_255_bytes_is_erange(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ERANGE, "/f"):
        fs.setxattr("/f", b"user." + b"a" * 251, b"v")


def test_a_name_outside_the_known_namespaces_is_eopnotsupp(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.EOPNOTSUPP, "/f"):
        fs.setxattr("/f", b"colour", b"v")


def test_listxattr_lists_every_name(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    for name in (b"user.b", b"user.a", b"trusted.t"):
        fs.setxattr("/f", name, b"v")
    assert sorted(fs.listxattr("/f")) == [b"trusted.t", b"user.a", b"user.b"]


def test_listxattr_of_a_file_without_xattrs_is_empty(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    assert fs.listxattr("/f") == []


def test_removexattr_removes_the_name(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.setxattr("/f", b"user.k", b"v")
    fs.removexattr("/f", b"user.k")
    assert fs.listxattr("/f") == []
    with raises_errno(errno.ENODATA, "/f"):
        fs.getxattr("/f", b"user.k")


def test_removexattr_of_a_missing_name_is_enodata(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ENODATA, "/f"):
        fs.removexattr("/f", b"user.none")


def test_xattrs_go_with_the_inode_not_the_name(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.setxattr("/f", b"user.k", b"v")
    fs.link("/f", "/g")
    fs.rename("/f", "/h")
    assert fs.getxattr("/g", b"user.k") == fs.getxattr("/h", b"user.k") == b"v"


def test_xattrs_are_dropped_with_the_inode(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.setxattr("/f", b"user.k", b"v")
    fs.unlink("/f")
    with fs.vfs.state.read() as txn:
        assert not list(txn.scan("xattrs"))


def test_setxattr_updates_ctime(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    before = fs.stat("/f")
    start = time.time_ns()
    while time.time_ns() == start:
        pass
    fs.setxattr("/f", b"user.k", b"v")
    after = fs.stat("/f")
    assert after.ctime > before.ctime and after.mtime == before.mtime


def test_a_user_xattr_on_a_symlink_itself_is_eperm(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.symlink("/f", "/l")
    with raises_errno(errno.EPERM, "/l"):
        fs.setxattr("/l", b"user.k", b"v", follow=False)


def test_setxattr_through_a_symlink_sets_the_target(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.symlink("/f", "/l")
    fs.setxattr("/l", b"user.k", b"v")
    assert fs.getxattr("/f", b"user.k") == b"v"


def test_setting_a_user_xattr_needs_write_permission(vfs: VFS, fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.chmod("/f", 0o644)
    with raises_errno(errno.EACCES, "/f"):
        PathFS(vfs, cred=OTHER).setxattr("/f", b"user.k", b"v")


def test_reading_a_user_xattr_needs_read_permission(vfs: VFS, fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.setxattr("/f", b"user.k", b"v")
    fs.chmod("/f", 0o600)
    with raises_errno(errno.EACCES, "/f"):
        PathFS(vfs, cred=OTHER).getxattr("/f", b"user.k")


@pytest.mark.parametrize("name", [b"trusted.k", b"security.k"])
def test_a_non_root_caller_cannot_set_a_privileged_xattr(vfs: VFS, fs: PathFS, name: bytes) -> None:
    fs.write_file("/f", b"")
    fs.chown("/f", USER.uid, USER.gid)
    with raises_errno(errno.EPERM, "/f"):
        PathFS(vfs, cred=USER).setxattr("/f", name, b"v")


def test_a_non_root_caller_lists_only_user_xattrs(vfs: VFS, fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.setxattr("/f", b"user.k", b"v")
    fs.setxattr("/f", b"trusted.t", b"v")
    assert PathFS(vfs, cred=USER).listxattr("/f") == [b"user.k"]


def test_inode_level_xattrs_match_the_path_level(vfs: VFS, fs: PathFS) -> None:
    fs.write_file("/f", b"")
    ino = fs.stat("/f").ino
    vfs.setxattr(ino, b"user.k", b"v")
    assert fs.getxattr("/f", b"user.k") == vfs.getxattr(ino, b"user.k") == b"v"
    assert vfs.listxattr(ino) == [b"user.k"]
    vfs.removexattr(ino, b"user.k")
    with raises_errno(errno.ENODATA):
        vfs.getxattr(ino, b"user.k")


def test_anyone_reads_a_files_capability_and_its_owner_sets_one(vfs: VFS, fs: PathFS) -> None:
    """As Linux: security.* is readable by all (generic/633 reads one from a user namespace,
    whose root is another uid here), and a file's owner may set its capability, which the
    kernel allowed only with CAP_SETFCAP in the owner's namespace."""
    fs.write_file("/f", b"")
    fs.setxattr("/f", b"security.capability", b"caps")
    user, other = PathFS(vfs, cred=USER), PathFS(vfs, cred=OTHER)
    assert user.getxattr("/f", b"security.capability") == b"caps"
    assert b"security.capability" in user.listxattr("/f")
    fs.write_file("/mine", b"")
    fs.chown("/mine", USER.uid, USER.gid)
    user.setxattr("/mine", b"security.capability", b"v3")
    assert fs.getxattr("/mine", b"security.capability") == b"v3"
    with raises_errno(errno.EPERM, "/mine"):
        other.setxattr("/mine", b"security.capability", b"v3")
    with raises_errno(errno.EPERM, "/mine"):
        user.setxattr("/mine", b"security.selinux", b"x")
