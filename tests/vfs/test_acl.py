"""POSIX ACLs as the xattrs Linux stores them (kfs/vfs/acl.py): checked, folded into the mode,
kept in step on chmod, and inherited from a directory's default ACL."""

from __future__ import annotations

import errno

from kfs.kstate import quota
from kfs.vfs import VFS, Cred, PathFS, acl
from kfs.vfs.acl import GROUP, GROUP_OBJ, MASK, OTHER, USER, USER_OBJ

from .oserrors import raises_errno


def value(*entries: tuple[int, int, int]) -> bytes:
    return acl.pack(list(entries))


NAMED = value((USER_OBJ, 7, 0), (USER, 5, 1000), (GROUP_OBJ, 5, 0), (MASK, 5, 0), (OTHER, 0, 0))


def test_an_access_acl_with_a_named_user_is_stored_and_sets_the_group_bits_from_the_mask(fs: PathFS) -> None:
    fs.write_file("/f", b"", mode=0o600)
    fs.setxattr("/f", acl.ACCESS, NAMED)
    assert fs.getxattr("/f", acl.ACCESS) == NAMED
    assert fs.stat("/f").perm == 0o750


def test_an_acl_the_mode_says_in_full_becomes_the_mode_and_is_not_stored(fs: PathFS) -> None:
    fs.write_file("/f", b"", mode=0o600)
    fs.setxattr("/f", acl.ACCESS, value((USER_OBJ, 6, 0), (GROUP_OBJ, 4, 0), (OTHER, 4, 0)))
    assert fs.stat("/f").perm == 0o644
    with raises_errno(errno.ENODATA):
        fs.getxattr("/f", acl.ACCESS)
    assert acl.ACCESS not in fs.listxattr("/f")


def test_a_malformed_acl_is_einval(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.EINVAL):  # a named user needs a mask
        fs.setxattr("/f", acl.ACCESS, value((USER_OBJ, 7, 0), (USER, 5, 1000), (GROUP_OBJ, 5, 0), (OTHER, 0, 0)))
    with raises_errno(errno.EINVAL):
        fs.setxattr("/f", acl.ACCESS, b"\x02\x00\x00\x00\x01")


def test_a_default_acl_is_only_for_directories(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.EACCES):
        fs.setxattr("/f", acl.DEFAULT, NAMED)


def test_only_the_owner_sets_an_acl_and_anyone_reads_it(fs: PathFS, vfs: VFS) -> None:
    fs.write_file("/f", b"", mode=0o600)
    fs.setxattr("/f", acl.ACCESS, NAMED)
    user = PathFS(vfs, cred=Cred(1000, 1000))
    assert user.getxattr("/f", acl.ACCESS) == NAMED
    assert acl.ACCESS in user.listxattr("/f")
    with raises_errno(errno.EPERM):
        user.setxattr("/f", acl.ACCESS, NAMED)


def test_chmod_rewrites_the_owner_mask_and_other_entries(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.setxattr("/f", acl.ACCESS, NAMED)
    fs.chmod("/f", 0o604)
    got = acl.parse(fs.getxattr("/f", acl.ACCESS))
    assert got == [(USER_OBJ, 6, acl.UNDEFINED_ID), (USER, 5, 1000), (GROUP_OBJ, 5, acl.UNDEFINED_ID),
                   (MASK, 0, acl.UNDEFINED_ID), (OTHER, 4, acl.UNDEFINED_ID)]


def test_files_and_directories_inherit_a_default_acl(fs: PathFS) -> None:
    fs.mkdir("/d")
    default = value((USER_OBJ, 7, 0), (GROUP_OBJ, 7, 0), (GROUP, 7, 50), (MASK, 7, 0), (OTHER, 0, 0))
    fs.setxattr("/d", acl.DEFAULT, default)
    fs.umask = 0
    fs.write_file("/d/f", b"", mode=0o640)
    assert fs.stat("/d/f").perm == 0o640  # each class keeps what both the mode and the ACL allow
    assert acl.parse(fs.getxattr("/d/f", acl.ACCESS))[3] == (MASK, 4, acl.UNDEFINED_ID)
    with raises_errno(errno.ENODATA):
        fs.getxattr("/d/f", acl.DEFAULT)
    fs.mkdir("/d/sub", 0o777)
    assert fs.stat("/d/sub").perm == 0o770
    assert fs.getxattr("/d/sub", acl.DEFAULT) == default
    fs.write_file("/d/sub/g", b"", mode=0o666)  # and the subdirectory passes it on
    assert fs.stat("/d/sub/g").perm == 0o660


def test_a_default_acl_of_only_base_entries_gives_the_masked_mode_and_no_access_acl(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.setxattr("/d", acl.DEFAULT, value((USER_OBJ, 7, 0), (GROUP_OBJ, 5, 0), (OTHER, 0, 0)))
    fs.umask = 0
    fs.write_file("/d/f", b"", mode=0o666)
    assert fs.stat("/d/f").perm == 0o640
    with raises_errno(errno.ENODATA):
        fs.getxattr("/d/f", acl.ACCESS)


def test_acl_permission_order_owner_named_user_groups_other() -> None:

    from kfs.vfs.inode import Inode

    inode = Inode(2, 0o100750, 10, 20, 1, 0, 0, 0, 0, 0)
    entries = [(USER_OBJ, 6, 0), (USER, 4, 30), (USER, 7, 31), (GROUP_OBJ, 5, 0), (GROUP, 0, 40),
               (MASK, 5, 0), (OTHER, 1, 0)]
    assert acl.permits(entries, Cred(10, 99), inode, 6) and not acl.permits(entries, Cred(10, 99), inode, 1)
    assert acl.permits(entries, Cred(30, 99), inode, 4)
    assert not acl.permits(entries, Cred(31, 99), inode, 2)  # the mask takes w from a named user
    assert acl.permits(entries, Cred(32, 20), inode, 5)  # the owning group
    assert not acl.permits(entries, Cred(33, 40), inode, 1)  # a matching group denies other's x
    assert acl.permits(entries, Cred(34, 99), inode, 1) and not acl.permits(entries, Cred(34, 99), inode, 4)


def test_the_vfs_checks_an_acl_for_everyone_but_the_owner(fs: PathFS, vfs: VFS) -> None:
    fs.write_file("/f", b"secret", mode=0o600)
    fs.setxattr("/f", acl.ACCESS, NAMED)  # user 1000: r-x under the mask
    named, other = PathFS(vfs, cred=Cred(1000, 1000)), PathFS(vfs, cred=Cred(1001, 1001))
    assert named.read_file("/f") == b"secret"
    assert named.access("/f", 4) and not named.access("/f", 2)
    with raises_errno(errno.EACCES):
        other.read_file("/f")
    with raises_errno(errno.EACCES):
        named.write_file("/f", b"x")
    fs.mkdir("/d", 0o700)
    fs.setxattr("/d", acl.ACCESS, value((USER_OBJ, 7, 0), (USER, 7, 1000), (GROUP_OBJ, 0, 0), (MASK, 7, 0), (OTHER, 0, 0)))
    named.write_file("/d/mine", b"x")  # w and x on the directory come from the named entry
    assert named.readdir("/d") == ["mine"]
    with raises_errno(errno.EACCES):
        other.readdir("/d")


def test_inherited_acls_are_charged_to_the_new_files_owner_and_given_back(fs: PathFS, vfs: VFS) -> None:
    fs.mkdir("/d")
    fs.chmod("/d", 0o777)
    fs.setxattr("/d", acl.DEFAULT, NAMED)
    user = PathFS(vfs, cred=Cred(1000, 1000))
    with vfs.state.read() as txn:
        before = quota.usage(txn, 1000)
    user.mkdir("/d/sub")
    with vfs.state.read() as txn:
        assert quota.usage(txn, 1000) == before + len(acl.ACCESS) + len(acl.DEFAULT) + 2 * len(NAMED)
    user.rmdir("/d/sub")
    with vfs.state.read() as txn:
        assert quota.usage(txn, 1000) == before
