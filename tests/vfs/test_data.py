"""File contents: random writes, sparse files, truncate, huge offsets, chunk boundaries."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from kfs.kstate import KState, Txn
from kfs.vfs import CHUNK_SIZE, ROOT_INO, VFS, Cred, Inode, PathFS, data

from .oserrors import raises_errno

GIB = 1 << 30


def chunk_rows(state: KState, ino: int) -> int:
    prefix = ino.to_bytes(8, "big")
    with state.read() as txn:
        return sum(1 for _ in txn.scan("chunks", prefix))


def assert_chunks_consistent(state: KState, inode: Inode) -> None:
    """fsck's view: no chunk lies past the size, and the byte counter matches the chunks."""
    prefix = inode.ino.to_bytes(8, "big")
    with state.read() as txn:
        chunks = list(txn.scan("chunks", prefix))
        for key, chunk in chunks:
            index = int.from_bytes(key[8:], "big")
            assert index * CHUNK_SIZE + len(chunk) <= max(inode.size, index * CHUNK_SIZE)
        assert txn.counter(b"data_bytes") == sum(len(c) for _, c in txn.scan("chunks"))


# -- whole-file writes and reads ---------------------------------------------------------------


def test_write_file_then_read_file_returns_the_bytes(fs: PathFS) -> None:
    content = bytes(range(256)) * 1000
    fs.write_file("/f", content)
    assert fs.read_file("/f") == content


def test_write_file_replaces_longer_contents_entirely(fs: PathFS) -> None:
    fs.write_file("/f", b"x" * 200_000)
    fs.write_file("/f", b"short")
    assert fs.read_file("/f") == b"short"
    assert fs.stat("/f").size == 5


def test_an_empty_file_reads_as_empty(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    assert fs.read_file("/f") == b""


def test_str_content_is_written_as_utf8(fs: PathFS) -> None:
    fs.write_file("/f", "naïve\n")
    assert fs.read_file("/f") == "naïve\n".encode()


def test_append_file_adds_to_the_end(fs: PathFS) -> None:
    fs.write_file("/f", b"one\n")
    fs.append_file("/f", b"two\n")
    assert fs.read_file("/f") == b"one\ntwo\n"


def test_append_file_creates_a_missing_file(fs: PathFS) -> None:
    fs.append_file("/f", b"one\n")
    assert fs.read_file("/f") == b"one\n"


def test_read_file_of_a_directory_is_eisdir(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.EISDIR, "/d"):
        fs.read_file("/d")


def test_read_file_of_a_missing_file_is_enoent(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT, "/nope"):
        fs.read_file("/nope")


def test_write_file_onto_a_directory_is_eisdir(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.EISDIR, "/d"):
        fs.write_file("/d", b"x")


def test_write_file_to_a_name_with_a_trailing_slash_is_eisdir(fs: PathFS) -> None:
    with raises_errno(errno.EISDIR, "/new/"):
        fs.write_file("/new/", b"x")
    assert not fs.exists("/new")


def test_write_file_through_a_symlink_writes_the_target(fs: PathFS) -> None:
    fs.write_file("/f", b"old")
    fs.symlink("f", "/l")
    fs.write_file("/l", b"new")
    assert fs.read_file("/f") == b"new"
    assert fs.lstat("/l").is_lnk


# -- random access through handles -------------------------------------------------------------


def test_pwrite_in_the_middle_overwrites_only_those_bytes(fs: PathFS) -> None:
    fs.write_file("/f", b"0123456789")
    with fs.open("/f", os.O_RDWR) as handle:
        assert handle.pwrite(b"abc", 4) == 3
    assert fs.read_file("/f") == b"0123abc789"


def test_pread_past_the_end_returns_what_there_is(fs: PathFS) -> None:
    fs.write_file("/f", b"0123456789")
    with fs.open("/f") as handle:
        assert handle.pread(100, 8) == b"89"
        assert handle.pread(100, 10) == b""
        assert handle.pread(100, 1000) == b""


def test_a_write_past_the_end_leaves_a_hole_that_reads_as_zeros(fs: PathFS) -> None:
    fs.write_file("/f", b"ab")
    with fs.open("/f", os.O_RDWR) as handle:
        handle.pwrite(b"z", 10)
    assert fs.read_file("/f") == b"ab" + bytes(8) + b"z"


def test_a_sparse_file_stores_no_chunks_for_its_holes(state: KState, fs: PathFS) -> None:
    with fs.open("/f", os.O_CREAT | os.O_RDWR) as handle:
        handle.pwrite(b"end", 100 * CHUNK_SIZE)
    assert fs.stat("/f").size == 100 * CHUNK_SIZE + 3
    assert chunk_rows(state, fs.stat("/f").ino) == 1


def test_a_hole_spanning_whole_chunks_reads_as_zeros(fs: PathFS) -> None:
    with fs.open("/f", os.O_CREAT | os.O_RDWR) as handle:
        handle.pwrite(b"a", 0)
        handle.pwrite(b"b", 3 * CHUNK_SIZE + 5)
        middle = handle.pread(3 * CHUNK_SIZE + 5, 0)
    assert middle == b"a" + bytes(3 * CHUNK_SIZE + 4)


def test_a_write_straddling_a_chunk_boundary_lands_on_both_sides(fs: PathFS) -> None:
    fs.write_file("/f", b"." * (2 * CHUNK_SIZE))
    with fs.open("/f", os.O_RDWR) as handle:
        handle.pwrite(b"X" * 100, CHUNK_SIZE - 50)
        assert handle.pread(102, CHUNK_SIZE - 51) == b"." + b"X" * 100 + b"."


def test_a_write_spanning_several_chunks_reads_back_whole(fs: PathFS) -> None:
    payload = os.urandom(3 * CHUNK_SIZE + 17)
    with fs.open("/f", os.O_CREAT | os.O_RDWR) as handle:
        handle.pwrite(payload, CHUNK_SIZE // 2)
        assert handle.pread(len(payload), CHUNK_SIZE // 2) == payload
    assert fs.read_file("/f") == bytes(CHUNK_SIZE // 2) + payload


def test_a_write_ending_exactly_on_a_chunk_boundary(fs: PathFS) -> None:
    with fs.open("/f", os.O_CREAT | os.O_RDWR) as handle:
        handle.pwrite(b"x" * 10, CHUNK_SIZE - 10)
        handle.pwrite(b"y", CHUNK_SIZE)
    assert fs.read_file("/f") == bytes(CHUNK_SIZE - 10) + b"x" * 10 + b"y"


def test_a_short_write_at_the_start_of_a_chunk_keeps_the_rest_of_it(fs: PathFS) -> None:
    fs.write_file("/f", b"." * (CHUNK_SIZE + 100))
    with fs.open("/f", os.O_RDWR) as handle:
        handle.pwrite(b"AB", CHUNK_SIZE)
    data = fs.read_file("/f")
    assert data[CHUNK_SIZE - 1 :] == b".AB" + b"." * 98


def test_a_zero_length_write_changes_nothing(fs: PathFS) -> None:
    fs.write_file("/f", b"abc")
    with fs.open("/f", os.O_RDWR) as handle:
        assert handle.pwrite(b"", 100) == 0
    assert fs.stat("/f").size == 3


def test_a_negative_offset_is_einval(fs: PathFS) -> None:
    fs.write_file("/f", b"abc")
    with fs.open("/f", os.O_RDWR) as handle, raises_errno(errno.EINVAL):
        handle.pwrite(b"x", -1)


# -- offsets beyond 4 GiB ----------------------------------------------------------------------


def test_a_write_at_5_gib_sets_the_size_and_reads_back(fs: PathFS) -> None:
    with fs.open("/big", os.O_CREAT | os.O_RDWR) as handle:
        handle.pwrite(b"far away", 5 * GIB)
        assert handle.pread(8, 5 * GIB) == b"far away"
    assert fs.stat("/big").size == 5 * GIB + 8


def test_the_hole_before_a_write_at_5_gib_reads_as_zeros(fs: PathFS) -> None:
    with fs.open("/big", os.O_CREAT | os.O_RDWR) as handle:
        handle.pwrite(b"far away", 5 * GIB)
        assert handle.pread(4096, 4 * GIB) == bytes(4096)
        assert handle.pread(16, 5 * GIB - 8) == bytes(8) + b"far away"
        assert handle.pread(4, (1 << 32) - 2) == bytes(4)


def test_writes_on_either_side_of_4_gib_do_not_alias(fs: PathFS) -> None:
    with fs.open("/big", os.O_CREAT | os.O_RDWR) as handle:
        handle.pwrite(b"low", 0)
        handle.pwrite(b"high", 1 << 32)
        assert handle.pread(3, 0) == b"low"
        assert handle.pread(4, 1 << 32) == b"high"


def test_truncating_a_huge_sparse_file_down_frees_its_far_chunk(state: KState, fs: PathFS) -> None:
    with fs.open("/big", os.O_CREAT | os.O_RDWR) as handle:
        handle.pwrite(b"far away", 5 * GIB)
    fs.truncate("/big", 1)
    assert fs.stat("/big").size == 1
    assert chunk_rows(state, fs.stat("/big").ino) == 0


# -- truncate ----------------------------------------------------------------------------------


def test_truncate_down_shortens_the_file(fs: PathFS) -> None:
    fs.write_file("/f", b"0123456789")
    fs.truncate("/f", 4)
    assert fs.read_file("/f") == b"0123"


def test_truncate_up_extends_with_zeros(fs: PathFS) -> None:
    fs.write_file("/f", b"abc")
    fs.truncate("/f", 10)
    assert fs.read_file("/f") == b"abc" + bytes(7)


def test_data_cut_by_truncate_does_not_reappear_when_the_file_grows_again(fs: PathFS) -> None:
    fs.write_file("/f", b"secret!" * 30_000)
    fs.truncate("/f", 3)
    fs.truncate("/f", 210_000)
    assert fs.read_file("/f") == b"sec" + bytes(210_000 - 3)


def test_data_cut_by_truncate_does_not_reappear_after_a_write_past_the_end(fs: PathFS) -> None:
    fs.write_file("/f", b"0123456789")
    fs.truncate("/f", 2)
    with fs.open("/f", os.O_RDWR) as handle:
        handle.pwrite(b"Z", 8)
    assert fs.read_file("/f") == b"01" + bytes(6) + b"Z"


def test_truncate_to_a_chunk_boundary(fs: PathFS) -> None:
    fs.write_file("/f", b"a" * CHUNK_SIZE + b"b" * CHUNK_SIZE)
    fs.truncate("/f", CHUNK_SIZE)
    fs.truncate("/f", CHUNK_SIZE + 2)
    assert fs.read_file("/f") == b"a" * CHUNK_SIZE + bytes(2)


def test_truncate_to_zero_frees_every_chunk(state: KState, fs: PathFS) -> None:
    fs.write_file("/f", os.urandom(5 * CHUNK_SIZE))
    fs.truncate("/f", 0)
    assert chunk_rows(state, fs.stat("/f").ino) == 0
    with state.read() as txn:
        assert txn.counter(b"data_bytes") == 0


def test_truncate_through_a_handle(fs: PathFS) -> None:
    fs.write_file("/f", b"0123456789")
    with fs.open("/f", os.O_RDWR) as handle:
        handle.truncate(5)
        assert handle.getattr().size == 5


def test_truncate_of_a_directory_is_eisdir(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.EISDIR, "/d"):
        fs.truncate("/d", 0)


def test_truncate_to_a_negative_size_is_einval(fs: PathFS) -> None:
    fs.write_file("/f", b"abc")
    with raises_errno(errno.EINVAL, "/f"):
        fs.truncate("/f", -1)


def test_truncate_through_a_read_only_handle_is_ebadf(fs: PathFS) -> None:
    fs.write_file("/f", b"abc")
    with fs.open("/f") as handle, raises_errno(errno.EBADF):
        handle.truncate(0)


# -- open flags --------------------------------------------------------------------------------


def test_o_append_writes_at_the_end_whatever_the_offset(fs: PathFS) -> None:
    fs.write_file("/f", b"abc")
    with fs.open("/f", os.O_WRONLY | os.O_APPEND) as handle:
        handle.pwrite(b"Z", 0)
        handle.pwrite(b"Y", 1)
    assert fs.read_file("/f") == b"abcZY"


def test_o_trunc_empties_an_existing_file(fs: PathFS) -> None:
    fs.write_file("/f", b"abc" * 50_000)
    with fs.open("/f", os.O_WRONLY | os.O_TRUNC) as handle:
        handle.pwrite(b"new", 0)
    assert fs.read_file("/f") == b"new"


def test_o_trunc_on_a_new_file_creates_it_empty(fs: PathFS) -> None:
    with fs.open("/f", os.O_WRONLY | os.O_CREAT | os.O_TRUNC):
        pass
    assert fs.stat("/f").size == 0


def test_o_creat_creates_a_missing_file(fs: PathFS) -> None:
    with fs.open("/f", os.O_WRONLY | os.O_CREAT, 0o600) as handle:
        handle.pwrite(b"x", 0)
    assert fs.read_file("/f") == b"x"
    assert fs.stat("/f").mode & 0o777 == 0o600


def test_o_creat_opens_an_existing_file_without_truncating(fs: PathFS) -> None:
    fs.write_file("/f", b"keep")
    with fs.open("/f", os.O_RDWR | os.O_CREAT) as handle:
        assert handle.pread(4, 0) == b"keep"


def test_o_creat_o_excl_on_an_existing_file_is_eexist(fs: PathFS) -> None:
    fs.write_file("/f", b"keep")
    with raises_errno(errno.EEXIST, "/f"):
        fs.open("/f", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    assert fs.read_file("/f") == b"keep"


def test_o_creat_o_excl_on_a_dangling_symlink_is_eexist(fs: PathFS) -> None:
    fs.symlink("/target", "/l")
    with raises_errno(errno.EEXIST, "/l"):
        fs.open("/l", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    assert not fs.exists("/target")


def test_o_creat_on_a_dangling_symlink_creates_the_target(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.symlink("d/target", "/l")
    with fs.open("/l", os.O_WRONLY | os.O_CREAT) as handle:
        handle.pwrite(b"via link", 0)
    assert fs.read_file("/d/target") == b"via link"
    assert fs.lstat("/l").is_lnk


def test_o_creat_on_a_dangling_symlink_into_a_missing_directory_is_enoent(fs: PathFS) -> None:
    fs.symlink("/no/such/target", "/l")
    with raises_errno(errno.ENOENT, "/l"):
        fs.open("/l", os.O_WRONLY | os.O_CREAT)


def test_o_creat_with_a_trailing_slash_is_eisdir(fs: PathFS) -> None:
    with raises_errno(errno.EISDIR, "/new/"):
        fs.open("/new/", os.O_WRONLY | os.O_CREAT)


def test_o_creat_on_an_existing_directory_is_eisdir(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.EISDIR, "/d"):
        fs.open("/d", os.O_RDONLY | os.O_CREAT)


def test_opening_a_missing_file_without_o_creat_is_enoent(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT, "/nope"):
        fs.open("/nope")


def test_opening_a_directory_for_writing_is_eisdir(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.EISDIR, "/d"):
        fs.open("/d", os.O_WRONLY)


def test_o_directory_on_a_file_is_enotdir(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ENOTDIR, "/f"):
        fs.open("/f", os.O_RDONLY | os.O_DIRECTORY)


def test_o_nofollow_on_a_symlink_is_eloop(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.symlink("/f", "/l")
    with raises_errno(errno.ELOOP, "/l"):
        fs.open("/l", os.O_RDONLY | os.O_NOFOLLOW)


def test_reading_a_write_only_handle_is_ebadf(fs: PathFS) -> None:
    fs.write_file("/f", b"abc")
    with fs.open("/f", os.O_WRONLY) as handle, raises_errno(errno.EBADF):
        handle.pread(1, 0)


def test_writing_a_read_only_handle_is_ebadf(fs: PathFS) -> None:
    fs.write_file("/f", b"abc")
    with fs.open("/f") as handle, raises_errno(errno.EBADF):
        handle.pwrite(b"x", 0)


def test_a_closed_handle_is_ebadf(fs: PathFS) -> None:
    fs.write_file("/f", b"abc")
    handle = fs.open("/f")
    handle.close()
    with raises_errno(errno.EBADF):
        handle.pread(1, 0)


def test_a_handle_sees_writes_made_through_paths(fs: PathFS) -> None:
    fs.write_file("/f", b"abc")
    with fs.open("/f") as handle:
        fs.write_file("/f", b"xyz")
        assert handle.pread(3, 0) == b"xyz"


# -- differential: random writes and truncates against a real file ------------------------------

_OFFSETS = hs.integers(0, 3 * CHUNK_SIZE + 100)
_ACTIONS = hs.lists(
    hs.one_of(
        hs.tuples(hs.just("write"), _OFFSETS, hs.binary(min_size=0, max_size=2 * CHUNK_SIZE + 7)),
        hs.tuples(hs.just("truncate"), _OFFSETS, hs.just(b"")),
        hs.tuples(hs.just("append"), hs.just(0), hs.binary(min_size=1, max_size=300)),
    ),
    max_size=8,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(actions=_ACTIONS)
def test_random_writes_and_truncates_match_a_real_file(
    fs: PathFS, tmp_path: Path, actions: list
) -> None:
    real = tmp_path / "real"
    real.write_bytes(b"")
    fs.write_file("/f", b"")
    fd = os.open(real, os.O_RDWR)
    try:
        with fs.open("/f", os.O_RDWR) as handle:
            for action, offset, payload in actions:
                if action == "write":
                    os.pwrite(fd, payload, offset)
                    handle.pwrite(payload, offset)
                elif action == "truncate":
                    os.ftruncate(fd, offset)
                    handle.truncate(offset)
                else:
                    os.pwrite(fd, payload, os.fstat(fd).st_size)
                    handle.pwrite(payload, os.fstat(fd).st_size - len(payload))
                assert handle.getattr().size == os.fstat(fd).st_size
    finally:
        os.close(fd)
    assert fs.read_file("/f") == real.read_bytes()
    assert_chunks_consistent(fs.vfs.state, fs.stat("/f"))


_SMALL_WRITES = hs.lists(
    hs.tuples(hs.integers(0, 3 * CHUNK_SIZE + 100), hs.binary(min_size=1, max_size=9000)), min_size=1, max_size=12
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(writes=_SMALL_WRITES)
def test_small_writes_inside_stored_chunks_match_a_real_file(
    fs: PathFS, tmp_path: Path, writes: list[tuple[int, bytes]]
) -> None:
    """Small writes into full and short chunks: the ones inside a stored chunk are patched into
    its new version (ViewTxn.patch), the others rewrite or grow it."""
    base = bytes(range(256)) * (2 * CHUNK_SIZE // 256) + b"tail" * 1000
    real = bytearray(base)
    fs.write_file("/f", base)
    with fs.open("/f", os.O_RDWR) as handle:
        for offset, payload in writes:
            handle.pwrite(payload, offset)
            if offset > len(real):
                real.extend(bytes(offset - len(real)))
            real[offset : offset + len(payload)] = payload
            start = max(offset - 5, 0)
            assert handle.pread(offset + len(payload) + 5 - start, start) == real[start : offset + len(payload) + 5]
    assert fs.read_file("/f") == bytes(real)
    assert_chunks_consistent(fs.vfs.state, fs.stat("/f"))


def test_a_write_inside_a_chunk_leaves_a_snapshot_read_before_it_unchanged(state: KState, fs: PathFS) -> None:
    """The patch goes into the chunk's new version only: the committed one stays as it was for
    a reader that began before the write."""
    old = os.urandom(3 * CHUNK_SIZE)
    fs.write_file("/f", old)
    ino = fs.stat("/f").ino
    with state.read(views=True) as before:
        with fs.open("/f", os.O_WRONLY) as handle:
            handle.pwrite(b"N" * 4096, CHUNK_SIZE + 8192)
        assert data.read_span(before, ino, len(old), 0, len(old)) == old
    assert fs.read_file("/f") == old[: CHUNK_SIZE + 8192] + b"N" * 4096 + old[CHUNK_SIZE + 12288 :]


def test_an_aborted_write_inside_a_chunk_leaves_it_unchanged(state: KState, fs: PathFS) -> None:
    old = os.urandom(2 * CHUNK_SIZE)
    fs.write_file("/f", old)
    ino = fs.stat("/f").ino

    def write_then_fail(txn: Txn) -> None:
        data.write_span(txn, ino, len(old), 100, b"X" * 5000)
        assert data.read_span(txn, ino, len(old), 100, 5000) == b"X" * 5000
        raise OSError(errno.EIO, "fail after the write")

    with pytest.raises(OSError):
        state.write(write_then_fail, views=True)
    assert fs.read_file("/f") == old
    assert_chunks_consistent(state, fs.stat("/f"))


def test_two_writes_inside_one_chunk_in_one_transaction_both_land(state: KState, fs: PathFS) -> None:
    """The second write patches the version the first one made, already this transaction's."""
    old = os.urandom(CHUNK_SIZE + 10)
    fs.write_file("/f", old)
    ino = fs.stat("/f").ino

    def twice(txn: Txn) -> None:
        data.write_span(txn, ino, len(old), 10, b"a" * 100)
        data.write_span(txn, ino, len(old), 20_000, b"b" * 100)

    state.write(twice, views=True)
    expected = bytearray(old)
    expected[10:110] = b"a" * 100
    expected[20_000:20_100] = b"b" * 100
    assert fs.read_file("/f") == bytes(expected)


def test_a_write_inside_a_chunk_in_a_plain_transaction_rewrites_it(state: KState, fs: PathFS) -> None:
    """Without views (a Txn, not a ViewTxn) the chunk is copied and rewritten: same bytes."""
    old = os.urandom(CHUNK_SIZE)
    fs.write_file("/f", old)
    ino = fs.stat("/f").ino
    state.write(lambda txn: data.write_span(txn, ino, len(old), 4096, b"z" * 4096))
    assert fs.read_file("/f") == old[:4096] + b"z" * 4096 + old[8192:]


def test_data_survives_reopening_the_state(tmp_path: Path) -> None:
    payload = os.urandom(3 * CHUNK_SIZE + 1)
    with KState(tmp_path, create=True) as first:
        PathFS(VFS(first)).write_file("/f", payload)
    with KState(tmp_path) as again:
        assert PathFS(VFS(again)).read_file("/f") == payload


def test_opening_a_directory_takes_no_write_transaction_and_still_checks_the_right_to_list(
    state: KState, fs: PathFS, vfs: VFS
) -> None:
    """A directory's open writes nothing, so it runs in a read transaction (the mount's
    opendir, once per directory of a `git status`): LMDB's last transaction id stays put."""
    fs.mkdir("/open", 0o755)
    fs.mkdir("/private", 0o700)
    public, private = (vfs.lookup(ROOT_INO, name).ino for name in (b"open", b"private"))
    before = state._env.info()["last_txnid"]
    assert vfs.open(public, os.O_RDONLY | os.O_DIRECTORY, Cred(1000, 1000)).ino == public
    with raises_errno(errno.EACCES):
        vfs.open(private, os.O_RDONLY | os.O_DIRECTORY, Cred(1000, 1000))
    assert state._env.info()["last_txnid"] == before
