"""The mount driven by ordinary os.* calls: every operation the kernel can send, as root.

Each test works in its own directory of a session-wide mount and, where it matters, checks
the result against KState opened directly (`peer`), so the mount and the VFS agree.
"""

from __future__ import annotations

import ctypes
import errno
import mmap
import os
import socket
import stat
import time
from pathlib import Path

import pytest
from kfs_mounts import QUOTA, Mount

from kfs.vfs import PathFS
from tests.hang import HANG

libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2
UTIME_NOW, UTIME_OMIT = (1 << 30) - 1, (1 << 30) - 2


def renameat2(src: Path, dst: Path, flags: int) -> None:
    if libc.renameat2(AT_FDCWD, bytes(src), AT_FDCWD, bytes(dst), flags) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(src))


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def utimensat(path: Path, atime: tuple[int, int], mtime: tuple[int, int]) -> None:
    times = (Timespec * 2)(Timespec(*atime), Timespec(*mtime))
    if libc.utimensat(AT_FDCWD, bytes(path), times, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(path))


def kpath(mnt: Path, mount: Mount, *parts: str) -> str:
    """The KState path of a path inside the mount."""
    return "/" + "/".join((str(mnt.relative_to(mount.path)), *parts))


def expect_errno(code: int, fn, *args) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(OSError) as info:
        fn(*args)
    assert info.value.errno == code, f"expected {errno.errorcode[code]}, got {info.value!r}"


# -- files and data ----------------------------------------------------------------------------


def test_written_bytes_read_back_through_the_mount_and_from_kstate(mnt: Path, kfs_mount: Mount, peer: PathFS) -> None:
    data = os.urandom(3 * 65536 + 123)
    (mnt / "f").write_bytes(data)
    assert (mnt / "f").read_bytes() == data
    assert peer.read_file(kpath(mnt, kfs_mount, "f")) == data


def test_inode_numbers_are_the_vfs_inode_numbers(mnt: Path, kfs_mount: Mount, peer: PathFS) -> None:
    (mnt / "f").write_bytes(b"x")
    os.mkdir(mnt / "d")
    assert os.stat(mnt / "f").st_ino == peer.stat(kpath(mnt, kfs_mount, "f")).ino
    assert os.stat(mnt / "d").st_ino == peer.stat(kpath(mnt, kfs_mount, "d")).ino


def test_stat_shows_the_stored_attributes(mnt: Path, kfs_mount: Mount, peer: PathFS) -> None:
    (mnt / "f").write_bytes(b"hello")
    os.chmod(mnt / "f", 0o640)
    os.chown(mnt / "f", 1234, 5678)
    s = os.stat(mnt / "f")
    inode = peer.stat(kpath(mnt, kfs_mount, "f"))
    assert (s.st_mode, s.st_uid, s.st_gid, s.st_size, s.st_nlink) == (stat.S_IFREG | 0o640, 1234, 5678, 5, 1)
    assert s.st_mtime_ns == inode.mtime
    assert s.st_ctime_ns == inode.ctime


def test_o_trunc_empties_and_o_append_writes_at_the_end(mnt: Path) -> None:
    f = mnt / "f"
    f.write_bytes(b"0123456789")
    fd = os.open(f, os.O_WRONLY | os.O_APPEND)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, b"AB")
    os.close(fd)
    assert f.read_bytes() == b"0123456789AB"
    fd = os.open(f, os.O_WRONLY | os.O_TRUNC)
    os.close(fd)
    assert f.read_bytes() == b""


def test_o_excl_refuses_an_existing_file(mnt: Path) -> None:
    (mnt / "f").write_bytes(b"")
    expect_errno(errno.EEXIST, os.open, mnt / "f", os.O_WRONLY | os.O_CREAT | os.O_EXCL)


def test_create_applies_the_umask(mnt: Path) -> None:
    old = os.umask(0o027)
    try:
        os.close(os.open(mnt / "f", os.O_WRONLY | os.O_CREAT, 0o666))
        os.mkdir(mnt / "d", 0o777)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(mnt / "f").st_mode) == 0o640
    assert stat.S_IMODE(os.stat(mnt / "d").st_mode) == 0o750


def test_truncate_and_ftruncate_shrink_and_grow_with_zeros(mnt: Path) -> None:
    f = mnt / "f"
    f.write_bytes(b"x" * 100_000)
    os.truncate(f, 10)
    assert f.read_bytes() == b"x" * 10
    with open(f, "r+b") as fh:
        os.ftruncate(fh.fileno(), 70_000)
    assert f.read_bytes() == b"x" * 10 + bytes(69_990)


def test_sparse_writes_past_4_gib_read_back_with_zero_holes(mnt: Path, kfs_mount: Mount, peer: PathFS) -> None:
    f = mnt / "sparse"
    at = 5 << 30
    free_before = peer.statfs().blocks_free
    with open(f, "wb") as fh:
        fh.write(b"head")
        fh.seek(at)
        fh.write(b"tail")
    assert os.stat(f).st_size == at + 4
    with open(f, "rb") as fh:
        assert fh.read(4) == b"head"
        fh.seek(1 << 32)
        assert fh.read(8192) == bytes(8192)
        fh.seek(at - 2)
        assert fh.read() == b"\0\0tail"
    assert free_before - peer.statfs().blocks_free < 64  # holes cost nothing


def test_large_reads_return_every_byte_of_a_file_with_holes(mnt: Path, kfs_mount: Mount, peer: PathFS) -> None:
    size = 5 << 20
    model = bytearray(size)
    with open(mnt / "big", "wb") as fh:
        for at in range(0, size - 300_000, 700_001):  # pieces with holes between them, across chunks
            piece = os.urandom(300_000)
            fh.seek(at)
            fh.write(piece)
            model[at : at + len(piece)] = piece
        fh.truncate(size)  # and a hole at the end
    with open(mnt / "big", "rb", buffering=0) as fh:
        os.posix_fadvise(fh.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)  # read from the daemon, not the page cache
        assert b"".join(iter(lambda: fh.read(1 << 20), b"")) == model
    assert peer.read_file(kpath(mnt, kfs_mount, "big")) == model


def test_mmap_writes_reach_kstate_and_mmap_reads_see_writes(mnt: Path, kfs_mount: Mount, peer: PathFS) -> None:
    f = mnt / "m"
    f.write_bytes(bytes(200_000))
    with open(f, "r+b") as fh, mmap.mmap(fh.fileno(), 0) as m:
        m[70_000:70_005] = b"hello"
        m.flush()
        assert m[0:2] == b"\0\0"
    assert peer.read_file(kpath(mnt, kfs_mount, "m"))[70_000:70_005] == b"hello"
    with open(f, "r+b") as fh:
        os.pwrite(fh.fileno(), b"world", 150_000)
        with mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ) as m:
            assert m[150_000:150_005] == b"world"


def test_unlinked_open_file_keeps_its_data_until_the_last_close(mnt: Path, kfs_mount: Mount) -> None:
    f = mnt / "f"
    f.write_bytes(b"still here")
    fd = os.open(f, os.O_RDWR)
    os.unlink(f)
    assert not f.exists()
    assert os.fstat(fd).st_nlink == 0
    assert os.pread(fd, 100, 0) == b"still here"
    os.pwrite(fd, b"STILL", 0)
    assert os.pread(fd, 100, 0) == b"STILL here"
    os.close(fd)
    state, _ = kfs_mount.pathfs()
    try:
        deadline = time.monotonic() + HANG
        while True:  # the kernel releases asynchronously after close
            with state.read() as txn:
                if txn.last("orphans") is None:
                    break
            assert time.monotonic() < deadline, "the orphan was never reclaimed"
            time.sleep(0.01)
    finally:
        state.close()


def test_fsync_and_fsyncdir_succeed(mnt: Path) -> None:
    fd = os.open(mnt / "f", os.O_WRONLY | os.O_CREAT)
    os.write(fd, b"durable")
    os.fsync(fd)
    os.fdatasync(fd)
    os.close(fd)
    dfd = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(dfd)
    os.close(dfd)


def test_fallocate_is_refused_with_eopnotsupp_and_posix_fallocate_falls_back(mnt: Path) -> None:
    fd = os.open(mnt / "f", os.O_RDWR | os.O_CREAT)
    try:
        assert libc.fallocate(fd, 0, ctypes.c_long(0), ctypes.c_long(4096)) == -1
        assert ctypes.get_errno() == errno.EOPNOTSUPP
        os.posix_fallocate(fd, 0, 10_000)  # glibc writes zeros instead
        assert os.fstat(fd).st_size == 10_000
    finally:
        os.close(fd)


# -- namespace ---------------------------------------------------------------------------------


def test_mkdir_rmdir_and_their_errors(mnt: Path) -> None:
    os.mkdir(mnt / "d")
    expect_errno(errno.EEXIST, os.mkdir, mnt / "d")
    (mnt / "d" / "f").write_bytes(b"")
    expect_errno(errno.ENOTEMPTY, os.rmdir, mnt / "d")
    expect_errno(errno.ENOTDIR, os.rmdir, mnt / "d" / "f")
    os.unlink(mnt / "d" / "f")
    os.rmdir(mnt / "d")
    expect_errno(errno.ENOENT, os.rmdir, mnt / "d")
    assert os.stat(mnt).st_nlink == 2


def test_names_longer_than_255_bytes_are_enametoolong(mnt: Path) -> None:
    expect_errno(errno.ENAMETOOLONG, os.mkdir, mnt / ("x" * 256))
    os.mkdir(mnt / ("x" * 255))


def test_symlink_readlink_and_lstat(mnt: Path) -> None:
    os.symlink("target/../x", mnt / "l")
    assert os.readlink(mnt / "l") == "target/../x"
    assert stat.S_ISLNK(os.lstat(mnt / "l").st_mode)
    assert os.lstat(mnt / "l").st_size == len("target/../x")
    (mnt / "x").write_bytes(b"via link")
    os.symlink("x", mnt / "l2")
    assert (mnt / "l2").read_bytes() == b"via link"


def test_hard_links_share_an_inode_and_count_links(mnt: Path) -> None:
    (mnt / "a").write_bytes(b"shared")
    os.link(mnt / "a", mnt / "b")
    sa, sb = os.stat(mnt / "a"), os.stat(mnt / "b")
    assert sa.st_ino == sb.st_ino and sa.st_nlink == 2
    os.unlink(mnt / "a")
    assert os.stat(mnt / "b").st_nlink == 1
    assert (mnt / "b").read_bytes() == b"shared"
    os.mkdir(mnt / "d")
    expect_errno(errno.EPERM, os.link, mnt / "d", mnt / "d2")


def test_mknod_makes_fifos_sockets_and_devices(mnt: Path) -> None:
    os.mkfifo(mnt / "fifo", 0o600)
    assert stat.S_ISFIFO(os.stat(mnt / "fifo").st_mode)
    os.mknod(mnt / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    s = os.stat(mnt / "null")
    assert stat.S_ISCHR(s.st_mode) and s.st_rdev == os.makedev(1, 3)
    os.mknod(mnt / "blk", stat.S_IFBLK | 0o600, os.makedev(7, 0))
    assert stat.S_ISBLK(os.stat(mnt / "blk").st_mode)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(mnt / "sock"))
    finally:
        sock.close()
    assert stat.S_ISSOCK(os.stat(mnt / "sock").st_mode)


def test_rename_moves_and_replaces(mnt: Path) -> None:
    (mnt / "a").write_bytes(b"A")
    (mnt / "b").write_bytes(b"B")
    os.mkdir(mnt / "d")
    os.rename(mnt / "a", mnt / "d" / "a2")
    assert (mnt / "d" / "a2").read_bytes() == b"A" and not (mnt / "a").exists()
    os.rename(mnt / "b", mnt / "d" / "a2")
    assert (mnt / "d" / "a2").read_bytes() == b"B"
    os.mkdir(mnt / "e")
    (mnt / "e" / "x").write_bytes(b"")
    expect_errno(errno.ENOTEMPTY, os.rename, mnt / "d", mnt / "e")
    expect_errno(errno.EINVAL, os.rename, mnt / "d", mnt / "d" / "sub")


def test_rename_noreplace_refuses_an_existing_target(mnt: Path) -> None:
    (mnt / "a").write_bytes(b"A")
    (mnt / "b").write_bytes(b"B")
    expect_errno(errno.EEXIST, renameat2, mnt / "a", mnt / "b", RENAME_NOREPLACE)
    renameat2(mnt / "a", mnt / "c", RENAME_NOREPLACE)
    assert (mnt / "c").read_bytes() == b"A"


def test_rename_exchange_swaps_two_names(mnt: Path) -> None:
    (mnt / "f").write_bytes(b"file")
    os.mkdir(mnt / "d")
    renameat2(mnt / "f", mnt / "d", RENAME_EXCHANGE)
    assert (mnt / "d").read_bytes() == b"file"
    assert (mnt / "f").is_dir()
    expect_errno(errno.ENOENT, renameat2, mnt / "f", mnt / "missing", RENAME_EXCHANGE)


def test_readdir_lists_every_entry_once_with_dot_entries(mnt: Path) -> None:
    names = {f"n{i:04d}" for i in range(600)}
    for name in names:
        (mnt / name).write_bytes(b"")
    assert set(os.listdir(mnt)) == names
    import subprocess

    listing = subprocess.run(["ls", "-a", str(mnt)], capture_output=True, text=True, check=True).stdout.split()
    assert sorted(listing) == sorted(names | {".", ".."})


def test_readdir_while_the_directory_changes_skips_and_repeats_nothing(mnt: Path) -> None:
    stable = {f"s{i:04d}" for i in range(400)}
    for name in stable:
        (mnt / name).write_bytes(b"")
    seen: list[str] = []
    with os.scandir(mnt) as it:
        for i, entry in enumerate(it):
            seen.append(entry.name)
            if i % 10 == 0:  # churn underneath the open listing
                (mnt / f"new{i}").write_bytes(b"")
                victim = mnt / f"new{i - 10}"
                if victim.exists():
                    victim.unlink()
    assert len(seen) == len(set(seen)), "an entry was listed twice"
    assert stable <= set(seen), "an entry present throughout was skipped"


# -- attributes --------------------------------------------------------------------------------


def test_chmod_and_chown_by_root(mnt: Path, kfs_mount: Mount, peer: PathFS) -> None:
    (mnt / "f").write_bytes(b"")
    os.chmod(mnt / "f", 0o4751)
    os.chown(mnt / "f", 42, 43)  # clears setuid, as Linux does even for root
    assert stat.S_IMODE(os.stat(mnt / "f").st_mode) == 0o751
    os.chmod(mnt / "f", 0o4751)
    inode = peer.stat(kpath(mnt, kfs_mount, "f"))
    assert (inode.perm, inode.uid, inode.gid) == (0o4751, 42, 43)


def test_utimens_sets_explicit_times_now_and_omit(mnt: Path) -> None:
    f = mnt / "f"
    f.write_bytes(b"")
    os.utime(f, ns=(1_000_000_123, 2_000_000_456))
    s = os.stat(f)
    assert (s.st_atime_ns, s.st_mtime_ns) == (1_000_000_123, 2_000_000_456)
    before = time.time_ns()
    utimensat(f, (0, UTIME_OMIT), (0, UTIME_NOW))
    after = time.time_ns()
    s = os.stat(f)
    assert s.st_atime_ns == 1_000_000_123
    # the kernel's coarse clock may lag the fine one by a tick (10 ms at HZ=100): "now" is that close
    assert before - 10_000_000 <= s.st_mtime_ns <= after
    utimensat(f, (7, 8), (0, UTIME_OMIT))
    s2 = os.stat(f)
    assert s2.st_atime_ns == 7_000_000_008 and s2.st_mtime_ns == s.st_mtime_ns


def test_xattrs_set_get_list_remove_with_flags(mnt: Path) -> None:
    f = mnt / "f"
    f.write_bytes(b"")
    os.setxattr(f, "user.color", b"blue")
    assert os.getxattr(f, "user.color") == b"blue"
    assert "user.color" in os.listxattr(f)
    expect_errno(errno.EEXIST, os.setxattr, f, "user.color", b"red", os.XATTR_CREATE)
    expect_errno(errno.ENODATA, os.setxattr, f, "user.size", b"1", os.XATTR_REPLACE)
    os.setxattr(f, "user.color", b"red", os.XATTR_REPLACE)
    assert os.getxattr(f, "user.color") == b"red"
    os.removexattr(f, "user.color")
    expect_errno(errno.ENODATA, os.getxattr, f, "user.color")
    assert os.listxattr(f) == []


def test_statfs_reports_the_quota(mnt: Path) -> None:
    s = os.statvfs(mnt)
    assert s.f_blocks * s.f_frsize == QUOTA
    assert s.f_namemax == 255
    assert 0 < s.f_bavail <= s.f_blocks


def test_access_as_root(mnt: Path) -> None:
    (mnt / "f").write_bytes(b"")
    os.chmod(mnt / "f", 0o644)
    assert os.access(mnt / "f", os.R_OK | os.W_OK)
    assert not os.access(mnt / "f", os.X_OK)
    os.chmod(mnt / "f", 0o744)
    assert os.access(mnt / "f", os.X_OK)


def test_errors_map_to_their_errno(mnt: Path) -> None:
    expect_errno(errno.ENOENT, os.stat, mnt / "missing")
    expect_errno(errno.ENOENT, os.open, mnt / "missing", os.O_RDONLY)
    (mnt / "f").write_bytes(b"")
    expect_errno(errno.ENOTDIR, os.stat, mnt / "f" / "x")
    expect_errno(errno.EISDIR, os.open, mnt, os.O_WRONLY)
    expect_errno(errno.ENODATA, os.getxattr, mnt / "f", "user.none")


def test_fstat_of_an_open_directory_renamed_over_says_no_links(mnt: Path) -> None:
    """xfstests generic/035: the replaced directory is gone, its open handle still answers."""
    (mnt / "d1").mkdir()
    (mnt / "d2").mkdir()
    fd = os.open(mnt / "d2", os.O_RDONLY)
    try:
        os.rename(mnt / "d1", mnt / "d2")
        assert os.fstat(fd).st_nlink == 0
        assert stat.S_ISDIR(os.fstat(fd).st_mode)
    finally:
        os.close(fd)
    fd = os.open(mnt / "d2", os.O_RDONLY)
    try:
        os.rmdir(mnt / "d2")
        assert os.fstat(fd).st_nlink == 0
    finally:
        os.close(fd)


def test_renameat2_whiteout_through_the_mount(mnt: Path) -> None:
    """What overlay file systems ask for (xfstests generic/023-025 need it to run)."""
    (mnt / "a").write_bytes(b"data")
    renameat2(mnt / "a", mnt / "b", 4)  # RENAME_WHITEOUT
    assert (mnt / "b").read_bytes() == b"data"
    got = os.lstat(mnt / "a")
    assert stat.S_ISCHR(got.st_mode) and got.st_rdev == 0
