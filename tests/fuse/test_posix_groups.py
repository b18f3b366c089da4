"""Our own cases for each pjdfstest group the issue names (chmod, link, mkdir, open, rename,
rmdir, symlink, truncate, unlink), run through the mount as root and as other users.

CI has no fetched copy of pjdfstest, so these carry its checks in the normal suite; with a
build at hand, `pytest tests/fuse/pjdfstest_run.py` runs the real thing.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hang import clock_past

NOBODY, OTHER = 65534, 65533
NAME_256 = "x" * 256


def as_user(uid: int, gid: int, fn: Callable[[], object], groups: tuple[int, ...] = ()) -> int:
    """Run `fn` in a forked child with these credentials; returns 0 or the errno it failed with."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 255
        try:
            os.setgroups(list(groups) or [gid])
            os.setgid(gid)
            os.setuid(uid)
            os.umask(0o022)
            fn()
            code = 0
        except OSError as e:
            code = e.errno or 254
        finally:
            os.write(write_end, bytes([code]))
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        got = pipe.read(1)
    os.waitpid(pid, 0)
    assert got, "the child died"
    assert got[0] != 255, "the child raised something other than OSError"
    return got[0]


def err(fn: Callable[[], object]) -> int:
    try:
        fn()
    except OSError as e:
        return e.errno or -1
    return 0


@pytest.fixture(params=["mnt", "fork_mnt"])
def d(request: pytest.FixtureRequest) -> Path:
    """A world-writable directory (not sticky) for tests that act as other users: on the
    plain mount, and on a fork's."""
    where: Path = request.getfixturevalue(request.param)
    os.chmod(where, 0o777)
    return where


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# -- chmod -------------------------------------------------------------------------------------


def test_chmod_by_the_owner_and_by_root_works_and_updates_ctime(d: Path) -> None:
    f = d / "f"
    f.write_bytes(b"")
    os.chown(f, NOBODY, NOBODY)
    before = os.stat(f).st_ctime_ns
    clock_past(before)
    assert as_user(NOBODY, NOBODY, lambda: os.chmod(f, 0o600)) == 0
    assert mode_of(f) == 0o600 and os.stat(f).st_ctime_ns > before
    os.chmod(f, 0o4755)
    assert mode_of(f) == 0o4755


def test_chmod_by_a_non_owner_is_eperm(d: Path) -> None:
    (d / "f").write_bytes(b"")
    assert as_user(NOBODY, NOBODY, lambda: os.chmod(d / "f", 0o777)) == errno.EPERM
    assert mode_of(d / "f") == 0o644


def test_chmod_setgid_by_an_owner_outside_the_group_is_dropped(d: Path) -> None:
    f = d / "f"
    f.write_bytes(b"")
    os.chown(f, NOBODY, 0)
    assert as_user(NOBODY, NOBODY, lambda: os.chmod(f, 0o2755)) == 0
    assert mode_of(f) == 0o755


def test_a_write_by_a_non_owner_clears_setuid_and_setgid(d: Path) -> None:
    f = d / "f"
    f.write_bytes(b"")
    os.chmod(f, 0o6777)

    def write() -> None:
        fd = os.open(f, os.O_WRONLY)
        os.write(fd, b"x")
        os.close(fd)

    assert as_user(NOBODY, NOBODY, write) == 0
    assert mode_of(f) == 0o777


def test_chmod_errors_for_bad_paths(d: Path) -> None:
    (d / "f").write_bytes(b"")
    os.symlink("loop", d / "loop")
    assert err(lambda: os.chmod(d / "missing", 0o644)) == errno.ENOENT
    assert err(lambda: os.chmod(d / NAME_256, 0o644)) == errno.ENAMETOOLONG
    assert err(lambda: os.chmod(d / "f" / "x", 0o644)) == errno.ENOTDIR
    assert err(lambda: os.chmod(d / "loop", 0o644)) == errno.ELOOP


def test_search_permission_is_needed_on_every_directory_of_a_path(d: Path) -> None:
    os.mkdir(d / "sub", 0o700)
    (d / "sub" / "f").write_bytes(b"")
    os.chmod(d / "sub" / "f", 0o666)
    assert as_user(NOBODY, NOBODY, lambda: os.chmod(d / "sub" / "f", 0o600)) == errno.EACCES
    assert as_user(NOBODY, NOBODY, lambda: os.stat(d / "sub" / "f")) == errno.EACCES


# -- link --------------------------------------------------------------------------------------


def test_link_counts_links_and_updates_ctimes(d: Path) -> None:
    (d / "a").write_bytes(b"")
    before = os.stat(d / "a").st_ctime_ns
    dir_before = os.stat(d).st_mtime_ns
    clock_past(max(before, dir_before))
    os.link(d / "a", d / "b")
    assert os.stat(d / "a").st_nlink == 2 and os.stat(d / "a").st_ctime_ns > before
    assert os.stat(d).st_mtime_ns > dir_before


def test_link_errors(d: Path) -> None:
    (d / "a").write_bytes(b"")
    (d / "b").write_bytes(b"")
    os.mkdir(d / "dir")
    assert err(lambda: os.link(d / "a", d / "b")) == errno.EEXIST
    assert err(lambda: os.link(d / "missing", d / "c")) == errno.ENOENT
    assert err(lambda: os.link(d / "dir", d / "c")) == errno.EPERM
    assert err(lambda: os.link(d / "a", d / NAME_256)) == errno.ENAMETOOLONG
    os.chmod(d / "dir", 0o755)
    os.chown(d / "a", NOBODY, NOBODY)  # else protected_hardlinks answers EPERM first
    assert as_user(NOBODY, NOBODY, lambda: os.link(d / "a", d / "dir" / "c")) == errno.EACCES


# -- mkdir -------------------------------------------------------------------------------------


def test_mkdir_takes_the_callers_ids_and_the_umask(d: Path) -> None:
    assert as_user(NOBODY, OTHER, lambda: os.mkdir(d / "sub", 0o777)) == 0
    s = os.stat(d / "sub")
    assert (s.st_uid, s.st_gid, stat.S_IMODE(s.st_mode), s.st_nlink) == (NOBODY, OTHER, 0o755, 2)
    assert os.stat(d).st_nlink == 3


def test_mkdir_in_a_setgid_directory_inherits_group_and_setgid(d: Path) -> None:
    os.mkdir(d / "g")
    os.chown(d / "g", 0, 4242)
    os.chmod(d / "g", 0o2777)
    assert as_user(NOBODY, NOBODY, lambda: os.mkdir(d / "g" / "sub", 0o755)) == 0
    s = os.stat(d / "g" / "sub")
    assert s.st_gid == 4242 and s.st_mode & stat.S_ISGID


def test_mkdir_errors(d: Path) -> None:
    os.mkdir(d / "exists")
    os.mkdir(d / "locked", 0o755)
    assert err(lambda: os.mkdir(d / "exists")) == errno.EEXIST
    assert err(lambda: os.mkdir(d / NAME_256)) == errno.ENAMETOOLONG
    assert err(lambda: os.mkdir(d / "missing" / "x")) == errno.ENOENT
    assert as_user(NOBODY, NOBODY, lambda: os.mkdir(d / "locked" / "x")) == errno.EACCES


# -- open --------------------------------------------------------------------------------------


def test_open_o_creat_sets_mode_owner_and_updates_the_directory(d: Path) -> None:
    before = os.stat(d).st_mtime_ns
    clock_past(before)
    assert as_user(NOBODY, NOBODY, lambda: os.close(os.open(d / "f", os.O_CREAT | os.O_WRONLY, 0o640))) == 0
    s = os.stat(d / "f")
    assert (s.st_uid, s.st_gid, stat.S_IMODE(s.st_mode)) == (NOBODY, NOBODY, 0o640)
    assert os.stat(d).st_mtime_ns > before


def test_open_checks_the_mode_bits_for_each_access(d: Path) -> None:
    f = d / "f"
    f.write_bytes(b"secret")
    os.chown(f, NOBODY, NOBODY)
    os.chmod(f, 0o200)  # the owner may write, not read
    assert as_user(NOBODY, NOBODY, lambda: os.close(os.open(f, os.O_RDONLY))) == errno.EACCES
    assert as_user(NOBODY, NOBODY, lambda: os.close(os.open(f, os.O_WRONLY))) == 0
    assert as_user(OTHER, OTHER, lambda: os.close(os.open(f, os.O_WRONLY))) == errno.EACCES
    os.chmod(f, 0o444)
    assert as_user(NOBODY, NOBODY, lambda: os.close(os.open(f, os.O_RDONLY | os.O_TRUNC))) == errno.EACCES
    assert f.read_bytes() == b"secret"


def test_open_errors(d: Path) -> None:
    (d / "f").write_bytes(b"")
    os.mkdir(d / "dir")
    os.symlink("f", d / "link")
    os.mkfifo(d / "fifo")
    assert err(lambda: os.open(d / "f", os.O_CREAT | os.O_EXCL | os.O_WRONLY)) == errno.EEXIST
    assert err(lambda: os.open(d / "dir", os.O_WRONLY)) == errno.EISDIR
    assert err(lambda: os.open(d / "f" / "x", os.O_RDONLY)) == errno.ENOTDIR
    assert err(lambda: os.open(d / "link", os.O_RDONLY | os.O_NOFOLLOW)) == errno.ELOOP
    assert err(lambda: os.open(d / "fifo", os.O_WRONLY | os.O_NONBLOCK)) == errno.ENXIO
    assert err(lambda: os.open(d / NAME_256, os.O_CREAT | os.O_WRONLY)) == errno.ENAMETOOLONG


# -- rename ------------------------------------------------------------------------------------


def test_renaming_a_directory_moves_its_link_to_the_new_parent(d: Path) -> None:
    os.mkdir(d / "a")
    os.mkdir(d / "b")
    os.mkdir(d / "a" / "sub")
    os.rename(d / "a" / "sub", d / "b" / "sub")
    assert os.stat(d / "a").st_nlink == 2 and os.stat(d / "b").st_nlink == 3
    assert os.stat(d / "b" / "sub" / "..").st_ino == os.stat(d / "b").st_ino


def test_rename_updates_ctime_and_keeps_the_inode(d: Path) -> None:
    (d / "a").write_bytes(b"")
    s = os.stat(d / "a")
    clock_past(s.st_ctime_ns)
    os.rename(d / "a", d / "b")
    t = os.stat(d / "b")
    assert t.st_ino == s.st_ino and t.st_ctime_ns > s.st_ctime_ns


def test_rename_in_a_sticky_directory_is_for_owners_only(d: Path) -> None:
    os.mkdir(d / "tmp")
    os.chmod(d / "tmp", 0o1777)
    (d / "tmp" / "mine").write_bytes(b"")
    os.chown(d / "tmp" / "mine", OTHER, OTHER)
    assert as_user(NOBODY, NOBODY, lambda: os.rename(d / "tmp" / "mine", d / "tmp" / "x")) == errno.EPERM
    assert as_user(OTHER, OTHER, lambda: os.rename(d / "tmp" / "mine", d / "tmp" / "x")) == 0


def test_rename_errors(d: Path) -> None:
    (d / "f").write_bytes(b"")
    os.mkdir(d / "dir")
    os.mkdir(d / "full")
    (d / "full" / "x").write_bytes(b"")
    os.link(d / "f", d / "f2")
    assert err(lambda: os.rename(d / "f", d / "dir")) == errno.EISDIR
    assert err(lambda: os.rename(d / "dir", d / "f")) == errno.ENOTDIR
    assert err(lambda: os.rename(d / "dir", d / "full")) in (errno.ENOTEMPTY, errno.EEXIST)
    assert err(lambda: os.rename(d / "dir", d / "dir" / "in")) == errno.EINVAL
    assert err(lambda: os.rename(d / "missing", d / "x")) == errno.ENOENT
    os.rename(d / "f", d / "f2")  # two links to one file: nothing happens
    assert (d / "f").exists() and os.stat(d / "f").st_nlink == 2


# -- rmdir -------------------------------------------------------------------------------------


def test_rmdir_drops_the_parents_link_count(d: Path) -> None:
    os.mkdir(d / "sub")
    assert os.stat(d).st_nlink == 3
    os.rmdir(d / "sub")
    assert os.stat(d).st_nlink == 2


def test_rmdir_errors(d: Path) -> None:
    os.mkdir(d / "full")
    (d / "full" / "x").write_bytes(b"")
    (d / "f").write_bytes(b"")
    os.mkdir(d / "sticky")
    os.chmod(d / "sticky", 0o1777)
    os.mkdir(d / "sticky" / "theirs")
    os.chown(d / "sticky" / "theirs", OTHER, OTHER)
    assert err(lambda: os.rmdir(d / "full")) == errno.ENOTEMPTY
    assert err(lambda: os.rmdir(d / "f")) == errno.ENOTDIR
    assert err(lambda: os.rmdir(f"{d}/full/.")) == errno.EINVAL  # pathlib would drop the "."
    assert err(lambda: os.rmdir(d / NAME_256)) == errno.ENAMETOOLONG
    assert as_user(NOBODY, NOBODY, lambda: os.rmdir(d / "sticky" / "theirs")) == errno.EPERM


# -- symlink -----------------------------------------------------------------------------------


def test_symlink_belongs_to_its_creator_and_keeps_its_target(d: Path) -> None:
    target = "a/" * 500 + "end"
    assert as_user(NOBODY, OTHER, lambda: os.symlink(target, d / "l")) == 0
    s = os.lstat(d / "l")
    assert (s.st_uid, s.st_gid, s.st_size) == (NOBODY, OTHER, len(target))
    assert os.readlink(d / "l") == target


def test_symlink_errors(d: Path) -> None:
    (d / "f").write_bytes(b"")
    assert err(lambda: os.symlink("x", d / "f")) == errno.EEXIST
    assert err(lambda: os.symlink("x", d / NAME_256)) == errno.ENAMETOOLONG
    assert err(lambda: os.symlink("x" * 4096, d / "long")) == errno.ENAMETOOLONG
    assert err(lambda: os.symlink("x", d / "missing" / "l")) == errno.ENOENT


# -- truncate ----------------------------------------------------------------------------------


def test_truncate_updates_mtime_and_ctime(d: Path) -> None:
    (d / "f").write_bytes(b"12345")
    s = os.stat(d / "f")
    clock_past(max(s.st_mtime_ns, s.st_ctime_ns))
    os.truncate(d / "f", 2)
    t = os.stat(d / "f")
    assert t.st_size == 2 and t.st_mtime_ns > s.st_mtime_ns and t.st_ctime_ns > s.st_ctime_ns


def test_truncate_needs_write_permission_but_ftruncate_on_a_writable_fd_does_not(d: Path) -> None:
    f = d / "f"
    assert as_user(NOBODY, NOBODY, lambda: os.close(os.open(f, os.O_CREAT | os.O_RDWR, 0o444))) == 0

    def create_read_only_then_ftruncate() -> None:
        fd = os.open(d / "g", os.O_CREAT | os.O_RDWR, 0o444)
        os.ftruncate(fd, 100)
        os.close(fd)

    assert as_user(NOBODY, NOBODY, lambda: os.truncate(f, 10)) == errno.EACCES
    assert as_user(NOBODY, NOBODY, create_read_only_then_ftruncate) == 0
    assert os.stat(d / "g").st_size == 100


def test_truncate_errors(d: Path) -> None:
    os.mkdir(d / "dir")
    (d / "f").write_bytes(b"")
    assert err(lambda: os.truncate(d / "dir", 0)) == errno.EISDIR
    assert err(lambda: os.truncate(d / "f", -1)) == errno.EINVAL
    assert err(lambda: os.truncate(d / "missing", 0)) == errno.ENOENT
    assert err(lambda: os.truncate(d / NAME_256, 0)) == errno.ENAMETOOLONG


# -- unlink ------------------------------------------------------------------------------------


def test_unlink_drops_a_link_and_updates_ctime_of_what_remains(d: Path) -> None:
    (d / "a").write_bytes(b"")
    os.link(d / "a", d / "b")
    s = os.stat(d / "b")
    clock_past(s.st_ctime_ns)
    os.unlink(d / "a")
    t = os.stat(d / "b")
    assert t.st_nlink == 1 and t.st_ctime_ns > s.st_ctime_ns


def test_unlink_of_fifos_sockets_devices_and_symlinks(d: Path) -> None:
    os.mkfifo(d / "fifo")
    os.mknod(d / "chr", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    os.symlink("dangling", d / "l")
    for name in ("fifo", "chr", "l"):
        os.unlink(d / name)
    assert os.listdir(d) == []


def test_unlink_errors(d: Path) -> None:
    os.mkdir(d / "dir")
    os.mkdir(d / "sticky")
    os.chmod(d / "sticky", 0o1777)
    (d / "sticky" / "theirs").write_bytes(b"")
    os.chown(d / "sticky" / "theirs", OTHER, OTHER)
    assert err(lambda: os.unlink(d / "dir")) == errno.EISDIR
    assert err(lambda: os.unlink(d / "missing")) == errno.ENOENT
    assert err(lambda: os.unlink(d / NAME_256)) == errno.ENAMETOOLONG
    assert as_user(NOBODY, NOBODY, lambda: os.unlink(d / "sticky" / "theirs")) == errno.EPERM
    os.chmod(d / "dir", 0o755)
    (d / "dir" / "f").write_bytes(b"")
    assert as_user(NOBODY, NOBODY, lambda: os.unlink(d / "dir" / "f")) == errno.EACCES


# -- chown and supplementary groups (pjdfstest's chown group leans on them) ----------------------


def test_an_owner_may_chown_to_a_supplementary_group_but_not_give_the_file_away(d: Path) -> None:
    f = d / "f"
    f.write_bytes(b"")
    os.chown(f, NOBODY, NOBODY)
    assert as_user(NOBODY, NOBODY, lambda: os.chown(f, -1, 4242), groups=(NOBODY, 4242)) == 0
    assert os.stat(f).st_gid == 4242
    assert as_user(NOBODY, NOBODY, lambda: os.chown(f, OTHER, -1)) == errno.EPERM


def test_a_supplementary_group_grants_its_mode_bits(d: Path) -> None:
    f = d / "f"
    f.write_bytes(b"")
    os.chown(f, 0, 4242)
    os.chmod(f, 0o060)

    def write() -> None:
        with open(f, "wb") as fh:
            fh.write(b"group write")

    assert as_user(NOBODY, NOBODY, write, groups=(NOBODY, 4242)) == 0
    assert as_user(NOBODY, NOBODY, write) == errno.EACCES
    assert f.read_bytes() == b"group write"


def test_touch_by_a_non_owner_with_write_access_sets_now_but_not_chosen_times(d: Path) -> None:
    f = d / "f"
    f.write_bytes(b"")
    os.chmod(f, 0o666)
    os.utime(f, ns=(1, 1))
    assert as_user(NOBODY, NOBODY, lambda: os.utime(f)) == 0
    assert os.stat(f).st_mtime_ns > 1
    assert as_user(NOBODY, NOBODY, lambda: os.utime(f, ns=(5, 5))) == errno.EPERM


def test_a_program_of_mode_0111_runs_for_a_user_who_cannot_read_it(d: Path) -> None:
    """xfstests generic/126: execute-only programs run (the kernel's exec open asks for x)."""
    prog = d / "true"
    prog.write_bytes(Path(shutil.which("true") or "/bin/true").read_bytes())
    prog.chmod(0o111)
    assert as_user(NOBODY, NOBODY, lambda: os.open(prog, os.O_RDONLY)) == errno.EACCES

    def run() -> None:
        if subprocess.run([str(prog)]).returncode != 0:
            raise OSError(errno.EIO, "the program failed")

    assert as_user(NOBODY, NOBODY, run) == 0
