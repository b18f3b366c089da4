"""Permission checks for a given uid/gid: owner, group, other, root, directories, sticky, setgid.

These follow the POSIX rules as Linux applies them (CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID
for root; fs.protected_hardlinks as the host sets it, 1 as Debian ships it).
"""

from __future__ import annotations

import errno
import os
import stat as st
from pathlib import Path

import pytest

from kfs.vfs import NOW, R_OK, VFS, W_OK, X_OK, Cred, PathFS, namespace

from .oserrors import raises_errno

ALICE = Cred(1000, 1000)
BOB = Cred(1001, 100)  # in alice's file's group 100 through his primary gid
CAROL = Cred(1002, 2000, frozenset({100}))  # in group 100 through a supplementary group
MALLORY = Cred(1003, 3000)  # in no group of interest


def as_user(vfs: VFS, cred: Cred) -> PathFS:
    return PathFS(vfs, cred=cred, cwd="/", home="/")


@pytest.fixture
def shared(fs: PathFS) -> PathFS:
    """A world-writable /shared and alice's file /shared/f (uid 1000, gid 100)."""
    fs.mkdir("/shared")
    fs.chmod("/shared", 0o777)
    fs.write_file("/shared/f", b"secret")
    fs.chown("/shared/f", 1000, 100)
    return fs


# -- owner, group, other -----------------------------------------------------------------------


def test_the_owner_bits_apply_to_the_owner(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o600)
    alice = as_user(vfs, ALICE)
    assert alice.read_file("/shared/f") == b"secret"
    alice.write_file("/shared/f", b"mine")


def test_the_group_bits_apply_to_a_member_of_the_files_group(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o640)
    bob = as_user(vfs, BOB)
    assert bob.read_file("/shared/f") == b"secret"
    with raises_errno(errno.EACCES, "/shared/f"):
        bob.write_file("/shared/f", b"nope")


def test_supplementary_groups_count_for_the_group_bits(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o640)
    assert as_user(vfs, CAROL).read_file("/shared/f") == b"secret"


def test_the_other_bits_apply_to_everyone_else(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o604)
    mallory = as_user(vfs, MALLORY)
    assert mallory.read_file("/shared/f") == b"secret"
    shared.chmod("/shared/f", 0o640)
    with raises_errno(errno.EACCES, "/shared/f"):
        mallory.read_file("/shared/f")


def test_only_the_first_matching_class_counts(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o074)  # the owner is excluded although group and other may read
    with raises_errno(errno.EACCES, "/shared/f"):
        as_user(vfs, ALICE).read_file("/shared/f")
    shared.chmod("/shared/f", 0o604)  # a group member is excluded although others may read
    with raises_errno(errno.EACCES, "/shared/f"):
        as_user(vfs, BOB).read_file("/shared/f")


def test_root_reads_and_writes_a_file_with_no_permission_bits(shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o000)
    assert shared.read_file("/shared/f") == b"secret"
    shared.write_file("/shared/f", b"root")


def test_root_may_execute_only_a_file_with_some_execute_bit(shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o644)
    assert not shared.access("/shared/f", X_OK)
    shared.chmod("/shared/f", 0o001)
    assert shared.access("/shared/f", X_OK)


def test_access_reports_each_permission(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o640)
    bob = as_user(vfs, BOB)
    assert bob.access("/shared/f", R_OK)
    assert not bob.access("/shared/f", W_OK)
    assert not bob.access("/shared/f", R_OK | W_OK)
    assert bob.access("/shared/f", 0)
    assert not bob.access("/shared/missing", 0)


def test_inode_level_access_raises_eacces(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o600)
    ino = shared.stat("/shared/f").ino
    vfs.access(ino, R_OK | W_OK, ALICE)
    with raises_errno(errno.EACCES):
        vfs.access(ino, R_OK, MALLORY)


def test_opening_for_writing_needs_write_permission(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o644)
    bob = as_user(vfs, BOB)
    bob.open("/shared/f").close()
    with raises_errno(errno.EACCES, "/shared/f"):
        bob.open("/shared/f", os.O_WRONLY)
    with raises_errno(errno.EACCES, "/shared/f"):
        bob.open("/shared/f", os.O_RDONLY | os.O_TRUNC)
    assert shared.read_file("/shared/f") == b"secret"


def test_a_file_created_by_open_is_writable_whatever_its_mode(vfs: VFS, shared: PathFS) -> None:
    alice = as_user(vfs, ALICE)
    with alice.open("/shared/new", os.O_CREAT | os.O_RDWR, 0o444) as handle:
        handle.pwrite(b"ok", 0)
    assert shared.read_file("/shared/new") == b"ok"


def test_truncate_needs_write_permission(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o644)
    with raises_errno(errno.EACCES, "/shared/f"):
        as_user(vfs, BOB).truncate("/shared/f", 0)


# -- directories -------------------------------------------------------------------------------


def test_a_directory_without_search_permission_hides_its_entries(vfs: VFS, fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/d/f", b"x")
    fs.chmod("/d", 0o744)  # others may list but not search
    mallory = as_user(vfs, MALLORY)
    assert mallory.readdir("/d") == ["f"]
    with raises_errno(errno.EACCES, "/d/f"):
        mallory.stat("/d/f")
    with raises_errno(errno.EACCES, "/d/f"):
        mallory.read_file("/d/f")


def test_search_permission_is_needed_on_every_ancestor(vfs: VFS, fs: PathFS) -> None:
    fs.mkdir("/a/b/c", parents=True)
    fs.chmod("/a", 0o700)
    with raises_errno(errno.EACCES, "/a/b/c"):
        as_user(vfs, MALLORY).stat("/a/b/c")


def test_a_directory_with_search_but_no_read_permission_cannot_be_listed(
    vfs: VFS, fs: PathFS
) -> None:
    fs.mkdir("/d")
    fs.write_file("/d/f", b"x")
    fs.chmod("/d", 0o711)
    mallory = as_user(vfs, MALLORY)
    assert mallory.read_file("/d/f") == b"x"
    with raises_errno(errno.EACCES, "/d"):
        mallory.readdir("/d")


def test_root_searches_and_lists_any_directory(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/d/f", b"x")
    fs.chmod("/d", 0o000)
    assert fs.readdir("/d") == ["f"]
    assert fs.read_file("/d/f") == b"x"


def test_creating_in_a_directory_needs_write_permission(vfs: VFS, fs: PathFS) -> None:
    fs.mkdir("/d")
    mallory = as_user(vfs, MALLORY)
    with raises_errno(errno.EACCES, "/d/f"):
        mallory.write_file("/d/f", b"x")
    with raises_errno(errno.EACCES, "/d/sub"):
        mallory.mkdir("/d/sub")
    with raises_errno(errno.EACCES, "/d/l"):
        mallory.symlink("x", "/d/l")
    assert fs.readdir("/d") == []


def test_removing_from_a_directory_needs_write_permission(vfs: VFS, fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/d/f", b"x")
    fs.chown("/d/f", 1003, 3000)
    with raises_errno(errno.EACCES, "/d/f"):
        as_user(vfs, MALLORY).unlink("/d/f")
    assert fs.exists("/d/f")


def test_renaming_needs_write_permission_on_both_directories(vfs: VFS, fs: PathFS) -> None:
    fs.mkdir("/open")
    fs.chmod("/open", 0o777)
    fs.mkdir("/closed")
    mallory = as_user(vfs, MALLORY)
    mallory.write_file("/open/f", b"x")
    with raises_errno(errno.EACCES, "/open/f", "/closed/f"):
        mallory.rename("/open/f", "/closed/f")


def test_moving_a_directory_to_another_parent_needs_write_permission_on_it(
    vfs: VFS, fs: PathFS
) -> None:
    for d in ("/p", "/q"):
        fs.mkdir(d)
        fs.chmod(d, 0o777)
    fs.mkdir("/p/rootdir")  # owned by root, 0755: its ".." cannot be rewritten by others
    with raises_errno(errno.EACCES, "/p/rootdir", "/q/rootdir"):
        as_user(vfs, MALLORY).rename("/p/rootdir", "/q/rootdir")


def test_recursive_removal_that_meets_a_protected_directory_removes_nothing(
    vfs: VFS, fs: PathFS
) -> None:
    fs.mkdir("/t")
    fs.chmod("/t", 0o777)
    alice = as_user(vfs, ALICE)
    alice.mkdir("/t/mine/sub", parents=True)
    alice.write_file("/t/mine/a", b"x")
    fs.mkdir("/t/mine/sub/rootdir")
    fs.write_file("/t/mine/sub/rootdir/f", b"x")
    with raises_errno(errno.EACCES):
        alice.rm("/t/mine", recursive=True)
    assert fs.read_file("/t/mine/a") == b"x"
    assert fs.read_file("/t/mine/sub/rootdir/f") == b"x"


# -- sticky directories ------------------------------------------------------------------------


@pytest.fixture
def tmp_dir(vfs: VFS, fs: PathFS) -> PathFS:
    """/tmp as Linux has it: root-owned, 1777, with alice's file /tmp/a in it."""
    fs.mkdir("/tmp")
    fs.chmod("/tmp", 0o1777)
    as_user(vfs, ALICE).write_file("/tmp/a", b"alice")
    return fs


def test_in_a_sticky_directory_others_cannot_delete_a_file(vfs: VFS, tmp_dir: PathFS) -> None:
    with raises_errno(errno.EPERM, "/tmp/a"):
        as_user(vfs, MALLORY).unlink("/tmp/a")
    assert tmp_dir.exists("/tmp/a")


def test_in_a_sticky_directory_others_cannot_rename_a_file_away(vfs: VFS, tmp_dir: PathFS) -> None:
    with raises_errno(errno.EPERM, "/tmp/a", "/tmp/b"):
        as_user(vfs, MALLORY).rename("/tmp/a", "/tmp/b")


def test_in_a_sticky_directory_others_cannot_replace_a_file_by_rename(
    vfs: VFS, tmp_dir: PathFS
) -> None:
    mallory = as_user(vfs, MALLORY)
    mallory.write_file("/tmp/m", b"mallory")
    with raises_errno(errno.EPERM, "/tmp/m", "/tmp/a"):
        mallory.rename("/tmp/m", "/tmp/a")
    assert tmp_dir.read_file("/tmp/a") == b"alice"


def test_in_a_sticky_directory_others_cannot_remove_a_subdirectory(
    vfs: VFS, tmp_dir: PathFS
) -> None:
    as_user(vfs, ALICE).mkdir("/tmp/adir")
    with raises_errno(errno.EPERM, "/tmp/adir"):
        as_user(vfs, MALLORY).rmdir("/tmp/adir")


def test_in_a_sticky_directory_the_owner_of_the_file_may_delete_it(
    vfs: VFS, tmp_dir: PathFS
) -> None:
    as_user(vfs, ALICE).unlink("/tmp/a")
    assert not tmp_dir.exists("/tmp/a")


def test_in_a_sticky_directory_the_owner_of_the_directory_may_delete_any_file(
    vfs: VFS, tmp_dir: PathFS
) -> None:
    tmp_dir.chown("/tmp", 1003, 3000)
    as_user(vfs, MALLORY).unlink("/tmp/a")
    assert not tmp_dir.exists("/tmp/a")


def test_in_a_sticky_directory_root_may_delete_any_file(tmp_dir: PathFS) -> None:
    tmp_dir.unlink("/tmp/a")
    assert not tmp_dir.exists("/tmp/a")


def test_in_a_sticky_directory_others_may_still_create_files(vfs: VFS, tmp_dir: PathFS) -> None:
    as_user(vfs, MALLORY).write_file("/tmp/m", b"x")
    assert tmp_dir.stat("/tmp/m").uid == MALLORY.uid


# -- setgid directories ------------------------------------------------------------------------


@pytest.fixture
def project(fs: PathFS) -> PathFS:
    """/project: root:50, mode 2777 (setgid, writable by all)."""
    fs.mkdir("/project")
    fs.chown("/project", 0, 50)
    fs.chmod("/project", 0o2777)
    return fs


def test_a_file_created_in_a_setgid_directory_takes_the_directorys_group(
    vfs: VFS, project: PathFS
) -> None:
    as_user(vfs, ALICE).write_file("/project/f", b"")
    inode = project.stat("/project/f")
    assert (inode.uid, inode.gid) == (ALICE.uid, 50)
    assert not inode.mode & st.S_ISGID


def test_a_directory_created_in_a_setgid_directory_inherits_group_and_setgid(
    vfs: VFS, project: PathFS
) -> None:
    as_user(vfs, ALICE).mkdir("/project/sub")
    inode = project.stat("/project/sub")
    assert inode.gid == 50
    assert inode.mode & st.S_ISGID


def test_setgid_inheritance_carries_down_nested_directories(vfs: VFS, project: PathFS) -> None:
    as_user(vfs, ALICE).mkdir("/project/a/b/c", parents=True)
    as_user(vfs, ALICE).write_file("/project/a/b/c/f", b"")
    assert project.stat("/project/a/b/c").gid == 50
    assert project.stat("/project/a/b/c").mode & st.S_ISGID
    assert project.stat("/project/a/b/c/f").gid == 50


def test_a_file_in_an_ordinary_directory_takes_the_callers_group(vfs: VFS, fs: PathFS) -> None:
    fs.mkdir("/plain")
    fs.chown("/plain", 0, 50)
    fs.chmod("/plain", 0o777)
    as_user(vfs, ALICE).write_file("/plain/f", b"")
    assert fs.stat("/plain/f").gid == ALICE.gid


# -- chmod and chown ---------------------------------------------------------------------------


def test_chmod_by_someone_other_than_the_owner_is_eperm(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o666)
    with raises_errno(errno.EPERM, "/shared/f"):
        as_user(vfs, BOB).chmod("/shared/f", 0o777)
    assert st.S_IMODE(shared.stat("/shared/f").mode) == 0o666


def test_chmod_by_the_owner_is_allowed(vfs: VFS, shared: PathFS) -> None:
    as_user(vfs, ALICE).chmod("/shared/f", 0o4750)
    assert st.S_IMODE(shared.stat("/shared/f").mode) == 0o4750


def test_chmod_by_the_owner_outside_the_files_group_drops_setgid(vfs: VFS, shared: PathFS) -> None:
    as_user(vfs, ALICE).chmod("/shared/f", 0o2755)  # alice is not in group 100
    assert st.S_IMODE(shared.stat("/shared/f").mode) == 0o0755


def test_chmod_by_the_owner_inside_the_files_group_keeps_setgid(vfs: VFS, shared: PathFS) -> None:
    shared.chown("/shared/f", gid=ALICE.gid)
    as_user(vfs, ALICE).chmod("/shared/f", 0o2755)
    assert st.S_IMODE(shared.stat("/shared/f").mode) == 0o2755


def test_chown_to_another_user_by_a_non_root_caller_is_eperm(vfs: VFS, shared: PathFS) -> None:
    with raises_errno(errno.EPERM, "/shared/f"):
        as_user(vfs, ALICE).chown("/shared/f", MALLORY.uid)
    assert shared.stat("/shared/f").uid == ALICE.uid


def test_chgrp_by_the_owner_to_a_group_they_belong_to_is_allowed(vfs: VFS, shared: PathFS) -> None:
    as_user(vfs, ALICE).chown("/shared/f", gid=ALICE.gid)
    assert shared.stat("/shared/f").gid == ALICE.gid


def test_chgrp_by_the_owner_to_a_foreign_group_is_eperm(vfs: VFS, shared: PathFS) -> None:
    with raises_errno(errno.EPERM, "/shared/f"):
        as_user(vfs, ALICE).chown("/shared/f", gid=4242)


def test_chgrp_by_someone_other_than_the_owner_is_eperm(vfs: VFS, shared: PathFS) -> None:
    with raises_errno(errno.EPERM, "/shared/f"):
        as_user(vfs, BOB).chown("/shared/f", gid=BOB.gid)


def test_a_failed_chmod_or_chown_changes_nothing(vfs: VFS, shared: PathFS) -> None:
    before = shared.stat("/shared/f")
    with pytest.raises(OSError):
        as_user(vfs, ALICE).chown("/shared/f", MALLORY.uid, ALICE.gid)
    assert shared.stat("/shared/f") == before


# -- utime -------------------------------------------------------------------------------------


def test_utime_sets_explicit_nanosecond_times(shared: PathFS) -> None:
    shared.utime("/shared/f", 1_234_567_890_123_456_789, 987_654_321_000_000_001)
    inode = shared.stat("/shared/f")
    assert (inode.atime, inode.mtime) == (1_234_567_890_123_456_789, 987_654_321_000_000_001)


def test_utime_with_none_keeps_that_time(shared: PathFS) -> None:
    shared.utime("/shared/f", 5, 6)
    shared.utime("/shared/f", None, 7)
    inode = shared.stat("/shared/f")
    assert (inode.atime, inode.mtime) == (5, 7)


def test_utime_now_sets_both_times_to_the_current_time(shared: PathFS) -> None:
    shared.utime("/shared/f", 5, 6)
    shared.utime("/shared/f", NOW, NOW)
    inode = shared.stat("/shared/f")
    assert inode.atime == inode.mtime == inode.ctime


def test_utime_now_is_allowed_for_anyone_who_may_write(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o666)
    as_user(vfs, MALLORY).utime("/shared/f", NOW, NOW)


def test_utime_now_without_write_permission_is_eacces(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o644)
    with raises_errno(errno.EACCES, "/shared/f"):
        as_user(vfs, MALLORY).utime("/shared/f", NOW, NOW)


def test_utime_now_by_the_owner_needs_no_write_permission(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o444)
    as_user(vfs, ALICE).utime("/shared/f", NOW, NOW)


def test_explicit_utime_by_someone_other_than_the_owner_is_eperm(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o666)
    with raises_errno(errno.EPERM, "/shared/f"):
        as_user(vfs, MALLORY).utime("/shared/f", 1, 2)


def test_explicit_utime_by_the_owner_is_allowed(vfs: VFS, shared: PathFS) -> None:
    as_user(vfs, ALICE).utime("/shared/f", 1, 2)
    assert shared.stat("/shared/f").mtime == 2


def test_utime_of_a_symlink_itself_without_following(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.symlink("/f", "/l")
    fs.utime("/l", 11, 12, follow=False)
    assert fs.lstat("/l").mtime == 12
    assert fs.stat("/f").mtime != 12


# -- writes drop privileges --------------------------------------------------------------------


def test_a_write_by_a_non_root_caller_clears_setuid(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o4777)
    as_user(vfs, MALLORY).write_file("/shared/f", b"changed")
    assert st.S_IMODE(shared.stat("/shared/f").mode) == 0o0777


def test_a_write_by_a_non_root_caller_clears_group_executable_setgid(
    vfs: VFS, shared: PathFS
) -> None:
    shared.chmod("/shared/f", 0o2777)
    as_user(vfs, MALLORY).append_file("/shared/f", b"more")
    assert st.S_IMODE(shared.stat("/shared/f").mode) == 0o0777


def test_a_write_keeps_setgid_without_group_execute(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o2666)
    as_user(vfs, MALLORY).write_file("/shared/f", b"changed")
    assert st.S_IMODE(shared.stat("/shared/f").mode) == 0o2666


def test_a_write_through_a_handle_by_a_non_root_caller_clears_setuid(
    vfs: VFS, shared: PathFS
) -> None:
    shared.chmod("/shared/f", 0o4766)
    with as_user(vfs, MALLORY).open("/shared/f", os.O_WRONLY) as handle:
        handle.pwrite(b"x", 0)
    assert st.S_IMODE(shared.stat("/shared/f").mode) == 0o0766


def test_a_truncate_by_a_non_root_caller_clears_setuid(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o4766)
    as_user(vfs, MALLORY).truncate("/shared/f", 1)
    assert st.S_IMODE(shared.stat("/shared/f").mode) == 0o0766


def test_a_write_by_root_keeps_setuid(shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o4755)
    shared.write_file("/shared/f", b"root")
    assert st.S_IMODE(shared.stat("/shared/f").mode) == 0o4755


# -- hard link protection ----------------------------------------------------------------------


def test_hard_linking_someone_elses_file_one_cannot_write_is_eperm(vfs: VFS, fs: PathFS) -> None:
    fs.mkdir("/pub")
    fs.chmod("/pub", 0o777)
    fs.write_file("/pub/rootfile", b"x")  # root's, 0644
    with raises_errno(errno.EPERM, "/pub/link"):
        as_user(vfs, MALLORY).link("/pub/rootfile", "/pub/link")


def test_with_protected_hardlinks_off_on_the_host_anyone_links_any_file(
    vfs: VFS, fs: PathFS, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """xfstests generic/597: the kernel lets the link through to the mount, K must not refuse it.
    (The host's sysctl itself is not ours to change: a copy of the file says 0.)"""
    setting = tmp_path / "protected_hardlinks"
    setting.write_text("0\n")
    monkeypatch.setattr(namespace, "PROTECTED_HARDLINKS", str(setting))
    fs.mkdir("/pub")
    fs.chmod("/pub", 0o777)
    fs.write_file("/pub/rootfile", b"x")
    as_user(vfs, MALLORY).link("/pub/rootfile", "/pub/link")
    assert fs.stat("/pub/rootfile").nlink == 2
    setting.write_text("1\n")
    with raises_errno(errno.EPERM, "/pub/link2"):
        as_user(vfs, MALLORY).link("/pub/rootfile", "/pub/link2")


def test_hard_linking_ones_own_file_is_allowed(vfs: VFS, fs: PathFS) -> None:
    fs.mkdir("/pub")
    fs.chmod("/pub", 0o777)
    mallory = as_user(vfs, MALLORY)
    mallory.write_file("/pub/mine", b"x")
    mallory.link("/pub/mine", "/pub/link")
    assert fs.stat("/pub/link").nlink == 2


def test_scandir_contents_gives_a_file_one_may_not_read_as_its_error(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared/f", 0o600)
    shared.write_file("/shared/open", b"o")
    found = {name: content for name, _, content in
             as_user(vfs, BOB).scandir_contents("/shared", lambda name, _: True, budget=100)}
    assert found["open"] == b"o"
    assert isinstance(found["f"], OSError) and found["f"].errno == errno.EACCES
    assert found["f"].filename == "/shared/f"


def test_scandir_contents_of_a_directory_one_may_not_search_gives_each_file_eacces(vfs: VFS, shared: PathFS) -> None:
    shared.chmod("/shared", 0o774)  # readable, not searchable by others
    found = dict((name, content) for name, _, content in
                 as_user(vfs, MALLORY).scandir_contents("/shared", lambda name, _: True, budget=100))
    assert isinstance(found["f"], OSError) and found["f"].errno == errno.EACCES


def test_the_kernels_open_for_execve_needs_x_not_r(vfs: VFS, shared: PathFS) -> None:
    from kfs.vfs.vfs import FMODE_EXEC

    shared.chmod("/shared/f", 0o111)
    ino = shared.stat("/shared/f").ino
    vfs.open(ino, os.O_RDONLY | FMODE_EXEC, MALLORY).close()  # what FUSE sends for execve
    with raises_errno(errno.EACCES):
        vfs.open(ino, os.O_RDONLY, MALLORY)
    shared.chmod("/shared/f", 0o444)
    with raises_errno(errno.EACCES):
        vfs.open(ino, os.O_RDONLY | FMODE_EXEC, MALLORY)
