"""statfs: the numbers follow the data and the inodes stored."""

from __future__ import annotations

from kfs.kstate import KState
from kfs.kstate.schema import U64
from kfs.vfs import PathFS

MIB = 1 << 20


def test_writing_data_lowers_the_free_blocks(fs: PathFS) -> None:
    before = fs.statfs()
    fs.write_file("/f", b"x" * MIB)
    after = fs.statfs()
    assert after.blocks == before.blocks
    assert before.blocks_free - after.blocks_free == MIB // after.block_size


def test_deleting_data_gives_the_free_blocks_back(fs: PathFS) -> None:
    before = fs.statfs()
    fs.write_file("/f", b"x" * MIB)
    fs.unlink("/f")
    assert fs.statfs().blocks_free == before.blocks_free


def test_sparse_holes_take_no_blocks(fs: PathFS) -> None:
    before = fs.statfs()
    fs.write_file("/f", b"")
    fs.truncate("/f", 100 * MIB)
    assert fs.statfs().blocks_free == before.blocks_free


def test_creating_files_raises_the_file_count(fs: PathFS) -> None:
    before = fs.statfs()
    fs.write_file("/a", b"")
    fs.mkdir("/b")
    fs.symlink("a", "/c")
    after = fs.statfs()
    assert after.files == before.files + 3
    assert after.files_free == before.files_free - 3


def test_deleting_files_lowers_the_file_count(fs: PathFS) -> None:
    before = fs.statfs()
    fs.write_file("/a", b"")
    fs.unlink("/a")
    assert fs.statfs().files == before.files


def test_the_total_is_the_max_bytes_quota_when_one_is_set(state: KState, fs: PathFS) -> None:
    state.write(lambda txn: txn.put("meta", b"max_bytes", U64.pack(10 * MIB)))
    info = fs.statfs()
    assert info.blocks * info.block_size == 10 * MIB
    fs.write_file("/f", b"x" * MIB)
    assert fs.statfs().blocks_free * info.block_size == 9 * MIB


def test_names_may_be_255_bytes_long(fs: PathFS) -> None:
    assert fs.statfs().name_max == 255
