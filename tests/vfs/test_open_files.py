"""Open files: unlinked-but-open data lives until the last close; orphans of dead processes go."""

from __future__ import annotations

import errno
import multiprocessing
import os
import signal

from kfs.kstate import KState
from kfs.vfs import ROOT_INO, VFS, PathFS

from .child_processes import hold_unlinked_file
from .oserrors import raises_errno

SPAWN = multiprocessing.get_context("spawn")


def inode_count(state: KState) -> int:
    with state.read() as txn:
        return txn.stat("inodes")["entries"]


def orphan_count(state: KState) -> int:
    with state.read() as txn:
        return txn.stat("orphans")["entries"]


def data_bytes(state: KState) -> int:
    with state.read() as txn:
        return txn.counter(b"data_bytes")


def test_an_unlinked_open_file_is_still_readable_through_its_handle(fs: PathFS) -> None:
    fs.write_file("/f", b"still here")
    with fs.open("/f") as handle:
        fs.unlink("/f")
        assert not fs.exists("/f")
        assert handle.pread(100, 0) == b"still here"


def test_an_unlinked_open_file_is_still_writable_through_its_handle(fs: PathFS) -> None:
    fs.write_file("/f", b"0123456789")
    with fs.open("/f", os.O_RDWR) as handle:
        fs.unlink("/f")
        handle.pwrite(b"abc", 8)
        handle.truncate(9)
        assert handle.pread(100, 0) == b"01234567a"


def test_an_unlinked_open_file_has_no_links(fs: PathFS) -> None:
    fs.write_file("/f", b"x")
    with fs.open("/f") as handle:
        fs.unlink("/f")
        assert handle.getattr().nlink == 0


def test_the_last_close_frees_an_unlinked_file(state: KState, vfs: VFS, fs: PathFS) -> None:
    before = inode_count(state)
    fs.write_file("/f", b"x" * 100_000)
    handle = fs.open("/f")
    ino = handle.ino
    fs.unlink("/f")
    assert inode_count(state) == before + 1
    handle.close()
    assert inode_count(state) == before
    assert data_bytes(state) == 0
    assert orphan_count(state) == 0
    with raises_errno(errno.ENOENT):
        vfs.getattr(ino)


def test_an_unlinked_file_lives_until_the_last_of_several_handles_closes(
    state: KState, fs: PathFS
) -> None:
    before = inode_count(state)
    fs.write_file("/f", b"shared")
    first, second = fs.open("/f"), fs.open("/f", os.O_RDWR)
    fs.unlink("/f")
    first.close()
    assert second.pread(6, 0) == b"shared"
    assert inode_count(state) == before + 1
    second.close()
    assert inode_count(state) == before


def test_closing_a_handle_twice_is_harmless(state: KState, fs: PathFS) -> None:
    fs.write_file("/f", b"x")
    handle = fs.open("/f")
    handle.close()
    handle.close()
    assert fs.read_file("/f") == b"x"


def test_closing_a_handle_of_a_linked_file_keeps_the_file(fs: PathFS) -> None:
    fs.write_file("/f", b"x")
    fs.open("/f").close()
    assert fs.read_file("/f") == b"x"


def test_a_file_replaced_by_rename_lives_while_open(state: KState, fs: PathFS) -> None:
    before = inode_count(state)
    fs.write_file("/old", b"old data")
    fs.write_file("/new", b"new data")
    with fs.open("/old") as handle:
        fs.rename("/new", "/old")
        assert handle.pread(100, 0) == b"old data"
        assert fs.read_file("/old") == b"new data"
    assert inode_count(state) == before + 1


def test_an_unlinked_open_file_frees_its_quota_at_last_close(state: KState, fs: PathFS) -> None:
    fs.write_file("/f", b"x" * 50_000)
    with fs.open("/f"):
        fs.unlink("/f")
        assert data_bytes(state) == 50_000
    assert data_bytes(state) == 0


def test_a_file_created_and_opened_at_the_inode_level_lives_until_release(
    state: KState, vfs: VFS
) -> None:
    before = inode_count(state)
    handle, inode = vfs.create(ROOT_INO, b"f", 0o644, os.O_RDWR)
    handle.pwrite(b"abc", 0)
    vfs.unlink(ROOT_INO, b"f")
    assert handle.pread(3, 0) == b"abc"
    handle.close()
    assert inode_count(state) == before
    with raises_errno(errno.ENOENT):
        vfs.getattr(inode.ino)


def test_an_orphan_of_a_killed_process_is_reclaimed_when_the_vfs_next_opens(
    state: KState, vfs: VFS
) -> None:
    before_inodes, before_bytes = inode_count(state), data_bytes(state)
    ready = SPAWN.Event()
    child = SPAWN.Process(target=hold_unlinked_file, args=(str(state.path), "/orphan", ready))
    child.start()
    try:
        assert ready.wait(60), "child never got its unlinked file open"
        assert orphan_count(state) == 1
        VFS(state)  # the holder is alive: its orphan must survive another process opening
        assert inode_count(state) == before_inodes + 1
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.join()
    VFS(state)
    assert orphan_count(state) == 0
    assert inode_count(state) == before_inodes
    assert data_bytes(state) == before_bytes


def test_an_orphan_of_a_killed_process_is_reclaimed_after_reopening_the_state(
    tmp_path: os.PathLike[str],
) -> None:
    KState(tmp_path, create=True).close()
    ready = SPAWN.Event()
    child = SPAWN.Process(target=hold_unlinked_file, args=(str(tmp_path), "/orphan", ready))
    child.start()
    try:
        assert ready.wait(60), "child never got its unlinked file open"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.join()
    with KState(tmp_path) as state:
        VFS(state)
        assert orphan_count(state) == 0
        assert inode_count(state) == 1  # only the root is left
        assert data_bytes(state) == 0
        with state.read() as txn:
            assert not list(txn.scan("chunks"))
            assert not list(txn.scan("opens"))
