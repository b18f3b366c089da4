"""Inodes: types, mode bits, owners, link counts, sizes, nanosecond times, numbers, generations."""

from __future__ import annotations

import errno
import os
import stat as st
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kfs.kstate import KState
from kfs.vfs import ROOT_INO, VFS, Cred, Inode, PathFS

from .oserrors import raises_errno

USER = Cred(1000, 1000)


def tick() -> None:
    """Let the clock move, so that a time set by the next operation differs from earlier ones."""
    start = time.time_ns()
    while time.time_ns() == start:
        pass


def times(inode: Inode) -> tuple[int, int, int]:
    return inode.atime, inode.mtime, inode.ctime


def changed_times(fs: PathFS, path: str, action: Callable[[], object]) -> str:
    """Which of a, m, c (atime, mtime, ctime) of `path` the action changed, e.g. "mc"."""
    before = times(fs.lstat(path))
    tick()
    action()
    after = times(fs.lstat(path))
    for old, new in zip(before, after):
        assert new >= old, "times never go backwards"
    return "".join(flag for flag, old, new in zip("amc", before, after) if new != old)


# -- types and mode bits -----------------------------------------------------------------------


def test_root_is_a_directory_with_inode_number_one(fs: PathFS) -> None:
    root = fs.stat("/")
    assert root.ino == ROOT_INO
    assert st.S_ISDIR(root.mode)


@pytest.mark.parametrize(
    "make, is_type",
    [
        (lambda fs: fs.write_file("/x", b""), st.S_ISREG),
        (lambda fs: fs.mkdir("/x"), st.S_ISDIR),
        (lambda fs: fs.symlink("target", "/x"), st.S_ISLNK),
        (lambda fs: fs.mknod("/x", st.S_IFIFO | 0o644), st.S_ISFIFO),
        (lambda fs: fs.mknod("/x", st.S_IFSOCK | 0o644), st.S_ISSOCK),
        (lambda fs: fs.mknod("/x", st.S_IFCHR | 0o644, os.makedev(1, 3)), st.S_ISCHR),
        (lambda fs: fs.mknod("/x", st.S_IFBLK | 0o644, os.makedev(7, 0)), st.S_ISBLK),
    ],
    ids=["regular", "directory", "symlink", "fifo", "socket", "char-device", "block-device"],
)
def test_each_file_type_is_stored_in_the_mode(
    fs: PathFS, make: Callable[[PathFS], object], is_type: Callable[[int], bool]
) -> None:
    make(fs)
    assert is_type(fs.lstat("/x").mode)


def test_device_nodes_keep_their_device_number(fs: PathFS) -> None:
    fs.mknod("/null", st.S_IFCHR | 0o666, os.makedev(1, 3))
    assert fs.lstat("/null").rdev == os.makedev(1, 3)


def test_a_non_root_caller_cannot_make_a_device_node(vfs: VFS, fs: PathFS) -> None:
    fs.chmod("/", 0o777)
    user = PathFS(vfs, cred=USER)
    with raises_errno(errno.EPERM, "/dev0"):
        user.mknod("/dev0", st.S_IFCHR | 0o600, os.makedev(1, 3))


def test_a_non_root_caller_can_make_a_fifo(vfs: VFS, fs: PathFS) -> None:
    fs.chmod("/", 0o777)
    PathFS(vfs, cred=USER).mknod("/pipe", st.S_IFIFO | 0o600)
    assert st.S_ISFIFO(fs.lstat("/pipe").mode)


def test_new_files_get_the_requested_mode_minus_the_umask(fs: PathFS) -> None:
    fs.write_file("/f", b"", mode=0o666)
    fs.mkdir("/d", 0o777)
    assert st.S_IMODE(fs.stat("/f").mode) == 0o644
    assert st.S_IMODE(fs.stat("/d").mode) == 0o755


@pytest.mark.parametrize("bits", [0o4755, 0o2755, 0o1777, 0o7777, 0o0000, 0o0640])
def test_chmod_stores_every_permission_bit_including_setuid_setgid_sticky(
    fs: PathFS, bits: int
) -> None:
    fs.write_file("/f", b"")
    fs.chmod("/f", bits)
    mode = fs.stat("/f").mode
    assert st.S_IMODE(mode) == bits
    assert st.S_ISREG(mode)


def test_chmod_never_changes_the_file_type(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.chmod("/d", st.S_IFREG | 0o700)
    assert fs.stat("/d").mode == st.S_IFDIR | 0o700


def test_a_symlink_has_mode_0777(fs: PathFS) -> None:
    fs.symlink("anything", "/l")
    assert fs.lstat("/l").mode == st.S_IFLNK | 0o777


def test_new_files_belong_to_the_callers_uid_and_gid(vfs: VFS, fs: PathFS) -> None:
    fs.chmod("/", 0o777)
    user = PathFS(vfs, cred=Cred(1234, 5678))
    user.write_file("/f", b"")
    user.mkdir("/d")
    for path in ("/f", "/d"):
        inode = fs.stat(path)
        assert (inode.uid, inode.gid) == (1234, 5678)


def test_root_can_chown_a_file_to_any_uid_and_gid(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.chown("/f", 42, 43)
    inode = fs.stat("/f")
    assert (inode.uid, inode.gid) == (42, 43)


def test_chown_with_only_a_gid_keeps_the_uid(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.chown("/f", 42, 43)
    fs.chown("/f", gid=7)
    inode = fs.stat("/f")
    assert (inode.uid, inode.gid) == (42, 7)


def test_chown_clears_setuid_and_group_executable_setgid_even_for_root(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.chmod("/f", 0o6755)
    fs.chown("/f", 1, 1)
    assert st.S_IMODE(fs.stat("/f").mode) == 0o755


def test_chown_keeps_setgid_without_group_execute_as_mandatory_locking_mark(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.chmod("/f", 0o2644)
    fs.chown("/f", 1, 1)
    assert st.S_IMODE(fs.stat("/f").mode) == 0o2644


def test_chown_of_a_directory_keeps_its_setgid_bit(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.chmod("/d", 0o2775)
    fs.chown("/d", 1, 1)
    assert st.S_IMODE(fs.stat("/d").mode) == 0o2775


# -- link counts -------------------------------------------------------------------------------


def test_a_new_directory_has_two_links(fs: PathFS) -> None:
    fs.mkdir("/d")
    assert fs.stat("/d").nlink == 2


def test_a_directory_has_two_links_plus_one_per_subdirectory(fs: PathFS) -> None:
    fs.mkdir("/d")
    for name in ("a", "b", "c"):
        fs.mkdir(f"/d/{name}")
    fs.write_file("/d/file", b"")
    fs.symlink("a", "/d/link")
    assert fs.stat("/d").nlink == 5


def test_removing_a_subdirectory_drops_the_parents_link_count(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.mkdir("/d/a")
    fs.rmdir("/d/a")
    assert fs.stat("/d").nlink == 2


def test_recursive_removal_restores_the_parents_link_count(fs: PathFS) -> None:
    root_links = fs.stat("/").nlink
    fs.mkdir("/d/e/f", parents=True)
    fs.write_file("/d/e/f/x", b"x")
    fs.rm("/d", recursive=True)
    assert fs.stat("/").nlink == root_links


def test_a_new_file_has_one_link(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    assert fs.stat("/f").nlink == 1


# -- sizes -------------------------------------------------------------------------------------


def test_a_files_size_is_its_byte_length(fs: PathFS) -> None:
    fs.write_file("/f", "héllo")
    assert fs.stat("/f").size == len("héllo".encode())


def test_a_symlinks_size_is_the_length_of_its_target(fs: PathFS) -> None:
    fs.symlink("../some/where", "/l")
    assert fs.lstat("/l").size == len("../some/where")


def test_blocks_in_512_byte_units_cover_the_size(fs: PathFS) -> None:
    fs.write_file("/f", b"x" * 513)
    assert fs.stat("/f").blocks * 512 >= 513


# -- times -------------------------------------------------------------------------------------


def test_times_are_nanoseconds_since_the_epoch(fs: PathFS) -> None:
    before = time.time_ns()
    fs.write_file("/f", b"")
    after = time.time_ns()
    inode = fs.stat("/f")
    for value in (inode.atime, inode.mtime, inode.ctime):
        assert before <= value <= after


def test_creating_a_file_sets_all_its_times_to_now(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    inode = fs.stat("/f")
    assert inode.atime == inode.mtime == inode.ctime


def test_creating_a_file_updates_the_parents_mtime_and_ctime(fs: PathFS) -> None:
    fs.mkdir("/d")
    assert changed_times(fs, "/d", lambda: fs.write_file("/d/f", b"")) == "mc"


def test_making_a_directory_updates_the_parents_mtime_and_ctime(fs: PathFS) -> None:
    fs.mkdir("/d")
    assert changed_times(fs, "/d", lambda: fs.mkdir("/d/e")) == "mc"


def test_writing_updates_mtime_and_ctime_but_not_atime(fs: PathFS) -> None:
    fs.write_file("/f", b"one")
    assert changed_times(fs, "/f", lambda: fs.write_file("/f", b"two")) == "mc"


def test_writing_through_a_handle_updates_mtime_and_ctime(fs: PathFS) -> None:
    fs.write_file("/f", b"one")
    with fs.open("/f", os.O_RDWR) as handle:
        assert changed_times(fs, "/f", lambda: handle.pwrite(b"x", 1)) == "mc"


def test_writing_a_file_does_not_touch_its_parent(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/d/f", b"one")
    assert changed_times(fs, "/d", lambda: fs.write_file("/d/f", b"two")) == ""


def test_reading_changes_neither_mtime_nor_ctime(fs: PathFS) -> None:
    fs.write_file("/f", b"one")
    assert changed_times(fs, "/f", lambda: fs.read_file("/f")) in ("", "a")


def test_truncating_updates_mtime_and_ctime(fs: PathFS) -> None:
    fs.write_file("/f", b"0123456789")
    assert changed_times(fs, "/f", lambda: fs.truncate("/f", 3)) == "mc"


def test_chmod_updates_only_ctime(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    assert changed_times(fs, "/f", lambda: fs.chmod("/f", 0o600)) == "c"


def test_chmod_does_not_touch_the_parent(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/d/f", b"")
    assert changed_times(fs, "/d", lambda: fs.chmod("/d/f", 0o600)) == ""


def test_chown_updates_only_ctime(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    assert changed_times(fs, "/f", lambda: fs.chown("/f", 5, 5)) == "c"


def test_linking_updates_the_files_ctime(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    assert changed_times(fs, "/f", lambda: fs.link("/f", "/g")) == "c"


def test_linking_updates_the_new_parents_mtime_and_ctime(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.mkdir("/d")
    assert changed_times(fs, "/d", lambda: fs.link("/f", "/d/g")) == "mc"


def test_unlinking_updates_the_parents_mtime_and_ctime(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/d/f", b"")
    assert changed_times(fs, "/d", lambda: fs.unlink("/d/f")) == "mc"


def test_unlinking_one_of_two_links_updates_the_files_ctime(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.link("/f", "/g")
    assert changed_times(fs, "/g", lambda: fs.unlink("/f")) == "c"


def test_renaming_updates_both_parents_mtime_and_ctime(fs: PathFS) -> None:
    fs.mkdir("/a")
    fs.mkdir("/b")
    fs.write_file("/a/f", b"")
    before_a, before_b = times(fs.stat("/a")), times(fs.stat("/b"))
    tick()
    fs.rename("/a/f", "/b/f")
    after_a, after_b = times(fs.stat("/a")), times(fs.stat("/b"))
    assert after_a[0] == before_a[0] and after_a[1] > before_a[1] and after_a[2] > before_a[2]
    assert after_b[0] == before_b[0] and after_b[1] > before_b[1] and after_b[2] > before_b[2]


def test_renaming_updates_the_renamed_files_ctime_only(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    before = times(fs.stat("/f"))
    tick()
    fs.rename("/f", "/g")
    after = times(fs.stat("/g"))
    assert after[:2] == before[:2] and after[2] > before[2]


# -- inode numbers and generations -------------------------------------------------------------


def test_inode_numbers_are_unique(fs: PathFS) -> None:
    for i in range(20):
        fs.write_file(f"/f{i}", b"")
    assert len({fs.stat(f"/f{i}").ino for i in range(20)}) == 20


def test_an_inode_number_survives_rename(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    ino = fs.stat("/f").ino
    fs.mkdir("/d")
    fs.rename("/f", "/d/g")
    assert fs.stat("/d/g").ino == ino


def test_an_inode_number_survives_reopening_the_state(tmp_path: Path) -> None:
    with KState(tmp_path, create=True) as first:
        fs = PathFS(VFS(first))
        fs.write_file("/f", b"data")
        ino = fs.stat("/f").ino
    with KState(tmp_path) as again:
        assert PathFS(VFS(again)).stat("/f").ino == ino


def test_inode_numbers_of_deleted_files_are_not_reused(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    old = fs.stat("/f").ino
    fs.unlink("/f")
    fs.write_file("/f", b"")
    assert fs.stat("/f").ino > old


def test_a_new_inode_has_generation_one(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    assert fs.stat("/f").generation == 1


def test_stat_of_an_inode_by_number_matches_stat_by_path(vfs: VFS, fs: PathFS) -> None:
    fs.write_file("/f", b"abc")
    assert vfs.getattr(fs.stat("/f").ino) == fs.stat("/f")


def test_getattr_of_a_freed_inode_is_enoent(vfs: VFS, fs: PathFS) -> None:
    fs.write_file("/f", b"abc")
    ino = fs.stat("/f").ino
    fs.unlink("/f")
    with raises_errno(errno.ENOENT):
        vfs.getattr(ino)


# -- memos and views on the hot paths ---------------------------------------------------------


def test_dirent_keys_from_the_name_memo_match_the_hash_even_after_it_overflows(
    fs: PathFS, monkeypatch: pytest.MonkeyPatch
) -> None:
    import struct

    from kfs.vfs import records

    monkeypatch.setattr(records, "_KEY_TAILS_MAX", 8)
    monkeypatch.setattr(records, "_KEY_TAILS", {})
    names = [b"f%d" % i for i in range(30)] + [b"\xff\xfe", b"x" * 255, b"."]
    for _ in range(2):
        for name in names:
            want = struct.pack(">QQ", 7, records.name_cookie(name)) + name
            assert records.dirent_key(7, name) == want
    assert len(records._KEY_TAILS) <= 8
    fs.mkdir("/d")
    for i in range(30):
        fs.write_file(f"/d/f{i}", b"")
    assert sorted(fs.readdir("/d")) == sorted(f"f{i}" for i in range(30))
    assert all(fs.stat(f"/d/f{i}").is_reg for i in range(30))


def test_a_buffers_read_gives_views_that_scans_and_reads_handle(state: KState, fs: PathFS) -> None:
    from kfs.vfs import CHUNK_SIZE

    fs.write_file("/f", bytes(range(256)) * (3 * CHUNK_SIZE // 256))
    ino = fs.stat("/f").ino
    prefix = ino.to_bytes(8, "big")
    with state.read(views=True) as txn:
        assert isinstance(txn.get_view("inodes", (ROOT_INO).to_bytes(8, "big")), memoryview)
        assert type(txn.get("inodes", (ROOT_INO).to_bytes(8, "big"))) is bytes
        assert len(list(txn.scan_views("chunks", prefix))) == 3
        rows = list(txn.scan("chunks", prefix))
        assert len(rows) == 3 and all(type(k) is bytes and type(v) is bytes for k, v in rows)
        assert all(type(k) is bytes for k in txn.scan_keys("chunks", prefix))
        assert type(txn.last("chunks")) is bytes
    kept = rows[1][1]
    assert len(kept) == CHUNK_SIZE and kept[:1] == bytes([0])  # copies outlive the transaction
    with fs.open("/f") as h:
        whole = fs.read_file("/f")
        assert h.pread(10, CHUNK_SIZE - 5) == whole[CHUNK_SIZE - 5 : CHUNK_SIZE + 5]
        assert h.pread(2 * CHUNK_SIZE, 7) == whole[7 : 2 * CHUNK_SIZE + 7]
        out = bytearray(100)
        assert h.pread_into(memoryview(out), 3 * CHUNK_SIZE - 40) == 40
        assert bytes(out[:40]) == whole[-40:]


def test_writes_through_a_view_transaction_rewrite_chunks_correctly(state: KState, fs: PathFS) -> None:
    import os

    from kfs.vfs import CHUNK_SIZE

    model = bytearray(os.urandom(2 * CHUNK_SIZE + 100))
    fs.write_file("/f", bytes(model))
    with fs.open("/f", os.O_RDWR) as h:
        for offset, size in [(0, 10), (CHUNK_SIZE - 3, 7), (100, 4096), (2 * CHUNK_SIZE + 50, 200), (5, CHUNK_SIZE)]:
            block = os.urandom(size)
            h.pwrite(block, offset)
            end = offset + size
            if end > len(model):
                model.extend(bytes(end - len(model)))
            model[offset:end] = block
            assert h.pread(len(model) + 10, 0) == bytes(model)
    assert fs.read_file("/f") == bytes(model)
    with state.read() as txn:
        stored = sum(len(v) for _, v in txn.scan("chunks"))
        assert txn.counter(b"data_bytes") == stored


def test_a_view_transaction_that_frees_an_orphan_first_deletes_the_right_chunks(
    state: KState, vfs: VFS, fs: PathFS
) -> None:
    import os

    from kfs.vfs import CHUNK_SIZE

    fs.write_file("/doomed", b"d" * (3 * CHUNK_SIZE))
    fs.write_file("/kept", b"k" * (2 * CHUNK_SIZE))
    doomed = fs.open("/doomed")
    fs.unlink("/doomed")
    vfs.release_later(doomed)  # its release rides with the next transaction: a view one below
    with fs.open("/kept", os.O_RDWR) as h:
        h.pwrite(b"x" * 10, 5)
    with state.read() as txn:
        assert txn.counter(b"data_bytes") == 2 * CHUNK_SIZE
        assert sum(len(v) for _, v in txn.scan("chunks")) == 2 * CHUNK_SIZE
    assert fs.read_file("/kept") == b"k" * 5 + b"x" * 10 + b"k" * (2 * CHUNK_SIZE - 15)
