"""The Operations class called directly, without a kernel: translation, counts, offsets.

The lowest rung that sees the FUSE layer: each handler is awaited with a stand-in request
context, over a VFS on a temp KState.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import threading
import time
from types import SimpleNamespace
from typing import Any

import pyfuse3
import pytest
import trio

from kfs.fuse.coherence import ChangeFollower
from kfs.fuse.operations import Operations
from kfs.vfs import CHUNK_SIZE, ROOT_INO, VFS, PathFS
from tests.hang import HANG

ROOT_CTX = SimpleNamespace(uid=0, gid=0, pid=os.getpid(), umask=0o022)


def user_ctx(uid: int = 1000, gid: int = 1000) -> SimpleNamespace:
    return SimpleNamespace(uid=uid, gid=gid, pid=0, umask=0o022)


def call(coro_fn: Any, *args: Any) -> Any:
    return trio.run(coro_fn, *args)


def fields(**set_: bool) -> SimpleNamespace:
    names = ("update_atime", "update_mtime", "update_ctime", "update_mode", "update_uid", "update_gid", "update_size")
    return SimpleNamespace(**{n: set_.get(n, False) for n in names})


@pytest.fixture
def ops(vfs: VFS) -> Operations:
    return Operations(vfs)


def errno_of(coro_fn: Any, *args: Any) -> int:
    with pytest.raises(pyfuse3.FUSEError) as info:
        call(coro_fn, *args)
    return info.value.errno


def test_a_vfs_error_becomes_its_errno(ops: Operations) -> None:
    assert errno_of(ops.getattr, 424242, ROOT_CTX) == errno.ENOENT
    call(ops.mkdir, ROOT_INO, b"d", 0o755, ROOT_CTX)
    assert errno_of(ops.mkdir, ROOT_INO, b"d", 0o755, ROOT_CTX) == errno.EEXIST


def test_an_unexpected_exception_becomes_eio_and_a_log_line(
    ops: Operations, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(ino: int) -> None:
        raise RuntimeError("a bug below the FUSE layer")

    monkeypatch.setattr(ops.vfs, "getattr", broken)
    with caplog.at_level(logging.ERROR, logger="kfs.fuse"):
        assert errno_of(ops.getattr, ROOT_INO, ROOT_CTX) == errno.EIO
    assert "a bug below the FUSE layer" in caplog.text


def test_forget_never_raises(ops: Operations, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ops, "lookups", None)  # anything at all going wrong inside
    assert call(ops.forget, [(5, 1)]) is None


def test_lookup_counts_rise_with_each_entry_reply_and_fall_with_forget(ops: Operations) -> None:
    ino = call(ops.mkdir, ROOT_INO, b"d", 0o755, ROOT_CTX).st_ino
    call(ops.lookup, ROOT_INO, b"d", ROOT_CTX)
    call(ops.lookup, ROOT_INO, b"d", ROOT_CTX)
    assert ops.lookups[ino] == 3
    call(ops.forget, [(ino, 2)])
    assert ops.lookups[ino] == 1
    call(ops.forget, [(ino, 1)])
    assert ino not in ops.lookups


def test_entries_carry_the_vfs_inode_number_generation_and_timeouts(ops: Operations, fs: PathFS) -> None:
    fs.write_file("/f", b"abc")
    entry = call(ops.lookup, ROOT_INO, b"f", ROOT_CTX)
    inode = fs.stat("/f")
    assert (entry.st_ino, entry.generation, entry.st_size) == (inode.ino, inode.generation, 3)
    assert entry.attr_timeout == entry.entry_timeout == ops.timeout > 0


def test_readdir_offsets_resume_after_dot_entries_and_survive_changes(ops: Operations, fs: PathFS) -> None:
    fs.mkdir("/d")
    for i in range(300):
        fs.write_file(f"/d/f{i:03d}", b"")
    d = fs.stat("/d").ino
    fh = call(ops.opendir, d, ROOT_CTX)
    first = [(name, off) for name, _, off in ops.dir_entries(fh, 0)][:50]
    assert [name for name, _ in first[:2]] == [b".", b".."]
    seen = {name for name, _ in first[2:]}
    fs.unlink("/d/" + sorted(n.decode() for n in seen)[0])  # one already returned
    rest = [name for name, _, _ in ops.dir_entries(fh, first[-1][1])]
    assert not seen & set(rest), "a resumed listing repeated entries"
    assert len(seen) + len(rest) == 300
    call(ops.releasedir, fh)


def test_a_listing_reuses_an_entrys_attributes_only_while_its_inode_is_unchanged(
    ops: Operations, fs: PathFS, state: Any
) -> None:
    fs.write_file("/f", b"abc")
    first = ops.listed_attrs(fs.stat("/f"))
    assert ops.listed_attrs(fs.stat("/f")) is first
    other = PathFS(VFS(state, by="another writer"))
    other.chmod("/f", 0o600)
    assert ops.listed_attrs(fs.stat("/f")).st_mode & 0o777 == 0o600
    other.write_file("/f", b"longer")
    again = ops.listed_attrs(fs.stat("/f"))
    assert (again.st_mode & 0o777, again.st_size) == (0o600, 6)
    ops.lookups[again.st_ino] = 1
    call(ops.forget, [(again.st_ino, 1)])
    assert again.st_ino not in ops.listed, "a forgotten inode's attributes stay remembered"


def test_create_with_a_name_taken_meanwhile_opens_it_unless_o_excl(ops: Operations, fs: PathFS) -> None:
    fs.write_file("/f", b"theirs")
    info, entry = call(ops.create, ROOT_INO, b"f", stat.S_IFREG | 0o644, os.O_RDWR | os.O_CREAT, ROOT_CTX)
    assert call(ops.read, info.fh, 0, 100) == b"theirs"
    call(ops.release, info.fh)
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL
    assert errno_of(ops.create, ROOT_INO, b"f", stat.S_IFREG | 0o644, flags, ROOT_CTX) == errno.EEXIST


def test_create_and_mkdir_apply_the_callers_umask(ops: Operations) -> None:
    ctx = SimpleNamespace(uid=0, gid=0, pid=0, umask=0o077)
    info, entry = call(ops.create, ROOT_INO, b"f", stat.S_IFREG | 0o666, os.O_WRONLY, ctx)
    assert stat.S_IMODE(entry.st_mode) == 0o600
    assert stat.S_IMODE(call(ops.mkdir, ROOT_INO, b"d", 0o777, ctx).st_mode) == 0o700


def test_read_and_write_on_an_unknown_handle_are_ebadf(ops: Operations) -> None:
    assert errno_of(ops.read, 99, 0, 10) == errno.EBADF
    assert errno_of(ops.write, 99, 0, b"x") == errno.EBADF


def test_a_non_owner_time_update_is_taken_as_utime_now(ops: Operations, fs: PathFS) -> None:
    """pyfuse3 hands UTIME_NOW over as the clock's reading; the kernel vetted the caller."""
    fs.write_file("/f", b"")
    fs.chmod("/f", 0o666)
    attr = pyfuse3.EntryAttributes()
    attr.st_mtime_ns = 5
    entry = call(ops.setattr, fs.stat("/f").ino, attr, fields(update_mtime=True), None, user_ctx())
    assert entry.st_mtime_ns > 5  # the VFS's own "now", not the stale reading


def test_a_write_by_a_non_owner_may_clear_setuid(ops: Operations, fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.chmod("/f", 0o4777)
    ino = fs.stat("/f").ino
    attr = pyfuse3.EntryAttributes()
    attr.st_mode = stat.S_IFREG | 0o777
    entry = call(ops.setattr, ino, attr, fields(update_mode=True), None, user_ctx())
    assert stat.S_IMODE(entry.st_mode) == 0o777
    attr.st_mode = stat.S_IFREG | 0o700  # anything more than dropping privileges: refused
    assert errno_of(ops.setattr, ino, attr, fields(update_mode=True), None, user_ctx()) == errno.EPERM


def test_statfs_reports_block_counts_and_name_length(ops: Operations) -> None:
    out = call(ops.statfs, ROOT_CTX)
    assert out.f_namemax == 255 and out.f_bsize == 4096 and out.f_blocks >= out.f_bfree > 0


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def inode(self, ino: int, attr_only: bool) -> None:
        self.calls.append(("inode", ino, attr_only))

    def entry(self, parent: int, name: bytes) -> None:
        self.calls.append(("entry", parent, name))


def test_the_follower_invalidates_what_other_writers_changed_and_skips_its_own(vfs: VFS, state: Any) -> None:
    other = PathFS(VFS(state, by="other"))
    own = PathFS(vfs)
    recorder = Recorder()
    follower = ChangeFollower(vfs, lambda ino: True, recorder)
    own.write_file("/mine", b"x")
    other.write_file("/theirs", b"y")
    ino = other.stat("/theirs").ino
    assert follower.catch_up() > 0
    assert ("entry", ROOT_INO, b"theirs") in recorder.calls
    assert ("inode", ROOT_INO, False) in recorder.calls  # its listing changed
    assert not any(call[-1] == b"mine" for call in recorder.calls)
    recorder.calls.clear()
    other.write_file("/theirs", b"new contents")
    follower.catch_up()
    assert recorder.calls == [("inode", ino, False)]  # attributes and cached pages
    assert not any(call[-1] == b"mine" for call in recorder.calls)
    recorder.calls.clear()
    other.chmod("/theirs", 0o600)
    follower.catch_up()
    assert recorder.calls == [("inode", ino, True)]


def test_the_follower_skips_inodes_the_kernel_does_not_know(vfs: VFS, state: Any) -> None:
    other = PathFS(VFS(state, by="other"))
    recorder = Recorder()
    follower = ChangeFollower(vfs, lambda ino: False, recorder)
    other.write_file("/theirs", b"y")
    follower.catch_up()
    assert recorder.calls == []


# -- the fast paths: reused read buffer, no FLUSH, closes that ride along --------------------


def open_records(state: Any, ino: int) -> int:
    with state.read() as txn:
        return sum(1 for _ in txn.scan("opens", ino.to_bytes(8, "big")))


def test_a_read_across_chunks_holes_and_the_end_returns_exactly_the_file(ops: Operations, fs: PathFS) -> None:
    head, tail = os.urandom(CHUNK_SIZE + 100), os.urandom(3 * CHUNK_SIZE // 2)
    with fs.open("/sparse", os.O_CREAT | os.O_RDWR) as handle:
        handle.pwrite(head, 0)
        handle.pwrite(tail, 3 * CHUNK_SIZE + 7)  # a hole of two chunks and a bit between them
    model = head + bytes(3 * CHUNK_SIZE + 7 - len(head)) + tail
    info = call(ops.open, fs.stat("/sparse").ino, os.O_RDONLY, ROOT_CTX)
    reads = [(0, 1 << 20), (5, 2 * CHUNK_SIZE), (CHUNK_SIZE - 1, 3 * CHUNK_SIZE), (len(model) - 9, 1 << 20)]
    for offset, size in reads:
        assert bytes(call(ops.read, info.fh, offset, size)) == model[offset : offset + size]
    assert bytes(call(ops.read, info.fh, len(model), 1 << 20)) == b""
    call(ops.release, info.fh)


def test_flush_answers_enosys_so_the_kernel_stops_sending_it(ops: Operations) -> None:
    info, _ = call(ops.create, ROOT_INO, b"f", stat.S_IFREG | 0o644, os.O_WRONLY, ROOT_CTX)
    call(ops.write, info.fh, 0, b"committed before the reply")
    assert errno_of(ops.flush, info.fh) == errno.ENOSYS
    call(ops.release, info.fh)


def test_a_release_drops_the_open_record_with_the_next_transaction(ops: Operations, state: Any) -> None:
    info, entry = call(ops.create, ROOT_INO, b"f", stat.S_IFREG | 0o644, os.O_WRONLY, ROOT_CTX)
    call(ops.release, info.fh)
    assert open_records(state, entry.st_ino) == 1  # not yet: no transaction since
    call(ops.mkdir, ROOT_INO, b"d", 0o755, ROOT_CTX)
    assert open_records(state, entry.st_ino) == 0


def test_an_unlinked_file_is_freed_once_its_queued_release_lands(ops: Operations, state: Any) -> None:
    other = PathFS(VFS(state, by="other"))
    info, entry = call(ops.create, ROOT_INO, b"f", stat.S_IFREG | 0o644, os.O_RDWR, ROOT_CTX)
    call(ops.write, info.fh, 0, b"x" * 1000)
    call(ops.release, info.fh)
    other.unlink("/f")  # the open record, not yet dropped, still holds the data
    assert other.vfs.getattr(entry.st_ino).nlink == 0
    ops.tick()  # the daemon's housekeeping
    assert open_records(state, entry.st_ino) == 0
    with pytest.raises(FileNotFoundError):
        other.vfs.getattr(entry.st_ino)


def test_a_file_reopened_before_its_release_lands_stays_open(ops: Operations, state: Any) -> None:
    other = PathFS(VFS(state, by="other"))
    info, entry = call(ops.create, ROOT_INO, b"f", stat.S_IFREG | 0o644, os.O_RDWR, ROOT_CTX)
    call(ops.release, info.fh)
    again = call(ops.open, entry.st_ino, os.O_RDONLY, ROOT_CTX)
    ops.tick()
    other.unlink("/f")
    assert call(ops.getattr, entry.st_ino, ROOT_CTX).st_nlink == 0  # still there for the open handle
    call(ops.release, again.fh)
    ops.shutdown()
    assert open_records(state, entry.st_ino) == 0


def test_the_root_is_always_known_to_the_kernel(ops: Operations) -> None:
    assert ops.known(ROOT_INO)
    assert not ops.known(12345)


def test_the_follower_runs_the_daemons_chores_after_every_poll(vfs: VFS) -> None:
    polls = threading.Semaphore(0)
    follower = ChangeFollower(vfs, lambda ino: True, Recorder(), poll=0.001, chores=polls.release)
    follower.start()
    try:
        assert all(polls.acquire(timeout=HANG) for _ in range(3)), "the chores never ran"
    finally:
        follower.stop()


def test_the_follower_repeats_each_invalidation_one_poll_later(vfs: VFS, state: Any) -> None:
    """A reply read before a foreign change but delivered after its invalidation is dropped too."""
    other = PathFS(VFS(state, by="other"))
    recorder = Recorder()
    polls = threading.Semaphore(0)
    follower = ChangeFollower(vfs, lambda ino: True, recorder, poll=0.001, chores=polls.release)
    follower.start()
    try:
        assert polls.acquire(timeout=HANG)
        other.write_file("/theirs", b"y")
        deadline = time.monotonic() + HANG
        while recorder.calls.count(("entry", ROOT_INO, b"theirs")) < 2 and time.monotonic() < deadline:
            time.sleep(0.001)
        for _ in range(3):  # the echo is sent once, not every poll
            assert polls.acquire(timeout=HANG)
    finally:
        follower.stop()
    assert recorder.calls.count(("entry", ROOT_INO, b"theirs")) == 2
    assert recorder.calls.count(("inode", ROOT_INO, False)) == 2


# -- fewer round trips: negative entries, the capability attribute, writeback handles ----------


def test_a_missing_name_is_a_negative_entry_the_kernel_caches(ops: Operations) -> None:
    entry = call(ops.lookup, ROOT_INO, b"missing", ROOT_CTX)
    assert entry.st_ino == 0 and entry.entry_timeout == ops.timeout  # no reference taken
    assert ops.lookups == {}


def test_security_capability_misses_are_remembered_until_it_changes(ops: Operations, vfs: VFS, state: Any) -> None:
    info, entry = call(ops.create, ROOT_INO, b"f", stat.S_IFREG | 0o644, os.O_WRONLY, ROOT_CTX)
    ino = entry.st_ino
    assert errno_of(ops.getxattr, ino, b"security.capability", ROOT_CTX) == errno.ENODATA
    assert ino in ops.no_capability
    other = PathFS(VFS(state, by="other"))
    other.setxattr("/f", b"security.capability", b"caps")
    ops.changed([ino])  # what the coherence thread says of the other writer's row
    assert call(ops.getxattr, ino, b"security.capability", ROOT_CTX) == b"caps"
    call(ops.removexattr, ino, b"security.capability", ROOT_CTX)
    assert errno_of(ops.getxattr, ino, b"security.capability", ROOT_CTX) == errno.ENODATA
    call(ops.setxattr, ino, b"security.capability", b"mine", ROOT_CTX)
    assert call(ops.getxattr, ino, b"security.capability", ROOT_CTX) == b"mine"
    call(ops.forget, [(ino, 1)])
    assert ino not in ops.no_capability
    call(ops.release, info.fh)


def test_writeback_handles_read_for_the_kernel_and_write_where_it_says(ops: Operations, fs: PathFS) -> None:
    """The kernel fills a page through a write-only handle, and places O_APPEND writes itself."""
    ops.enable_writeback_cache = True  # `-o writeback`
    fs.write_file("/f", b"0123456789")
    ino = fs.stat("/f").ino
    wo = call(ops.open, ino, os.O_WRONLY, ROOT_CTX)
    assert bytes(call(ops.read, wo.fh, 0, 4)) == b"0123"
    app = call(ops.open, ino, os.O_WRONLY | os.O_APPEND, ROOT_CTX)
    call(ops.write, app.fh, 2, b"ab")  # the kernel's page, at the offset it chose
    assert fs.read_file("/f") == b"01ab456789"
    call(ops.release, wo.fh)
    call(ops.release, app.fh)


def test_the_follower_resizes_a_writeback_cached_file_another_writer_changed(vfs: VFS, state: Any) -> None:
    other = PathFS(VFS(state, by="other"))
    other.write_file("/f", b"short")
    ino = other.stat("/f").ino
    recorder = WritebackRecorder()
    follower = ChangeFollower(vfs, lambda ino: True, recorder, name_of=lambda i: (ROOT_INO, b"f") if i == ino else None)
    other.write_file("/f", b"a longer body")
    follower.catch_up()
    assert ("inode", ino, False) in recorder.calls
    assert ("deleted", ROOT_INO, b"f", ino) in recorder.calls  # an inode nobody holds: dropped
    assert recorder.calls[-1] == ("store", ino, 12, b"y")  # one held open: its size moves up
    recorder.calls.clear()
    other.chmod("/f", 0o600)
    follower.catch_up()
    assert recorder.calls == [("inode", ino, True)]  # attributes only: the size stays


class WritebackRecorder(Recorder):
    def deleted(self, parent: int, name: bytes, ino: int) -> None:
        self.calls.append(("deleted", parent, name, ino))

    def store(self, ino: int, offset: int, data: bytes) -> None:
        self.calls.append(("store", ino, offset, data))


def test_a_rename_through_the_mount_moves_the_name_the_follower_uses(ops: Operations) -> None:
    info, entry = call(ops.create, ROOT_INO, b"a", stat.S_IFREG | 0o644, os.O_WRONLY, ROOT_CTX)
    call(ops.release, info.fh)
    call(ops.rename, ROOT_INO, b"a", ROOT_INO, b"b", 0, ROOT_CTX)
    assert ops.name_of(entry.st_ino) == (ROOT_INO, b"b")
