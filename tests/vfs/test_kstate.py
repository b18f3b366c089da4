"""KState: named databases, schema versions and migrations, map growth, quotas, many processes."""

from __future__ import annotations

import errno
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import lmdb
import pytest

import kfs.kstate.env as kstate_env
from kfs.kstate import KState
from kfs.kstate.env import StateError
from kfs.kstate.schema import DATABASES, MIGRATIONS, SCHEMA_VERSION, U64
from kfs.vfs import VFS, PathFS
from tests.hang import HANG

from .child_processes import (
    append_receipts,
    grow_in_steps,
    hold_read_txn,
    open_and_close,
    pwrite_blocks,
    reopen_and_write,
    write_bulk,
    write_then_wait_for_other,
)
from .oserrors import raises_errno

MIB = 1 << 20
SPAWN = multiprocessing.get_context("spawn")


def stored_chunk_bytes(state: KState) -> int:
    with state.read() as txn:
        return sum(len(v) for _, v in txn.scan("chunks"))


def data_bytes_counter(state: KState) -> int:
    with state.read() as txn:
        return txn.counter(b"data_bytes")


# -- named databases and schema ----------------------------------------------------------------


def test_every_named_database_exists_in_the_lmdb_environment(tmp_path: Path) -> None:
    KState(tmp_path, create=True).close()
    env = lmdb.open(str(tmp_path), max_dbs=len(DATABASES) + 4, readonly=True, lock=False)
    try:
        with env.begin() as t:
            for name in DATABASES:
                env.open_db(name, txn=t, create=False)  # raises NotFoundError when missing
    finally:
        env.close()


def test_named_databases_are_readable_through_a_transaction(state: KState) -> None:
    with state.read() as txn:
        for name in DATABASES:
            assert txn.stat(name.decode())["entries"] >= 0


def test_a_new_state_stores_the_current_schema_version(state: KState) -> None:
    with state.read() as txn:
        assert txn.get("meta", b"schema") == U64.pack(SCHEMA_VERSION)


def test_a_new_state_has_a_filesystem_uuid_that_survives_reopening(tmp_path: Path) -> None:
    with KState(tmp_path, create=True) as first:
        fs_uuid = first.fs_uuid
    with KState(tmp_path) as again:
        assert again.fs_uuid == fs_uuid != ""


def test_opening_a_missing_state_without_create_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(StateError, match="komputer init"):
        KState(tmp_path / "nothing")


def test_a_state_from_a_newer_schema_refuses_to_open_with_a_clear_message(tmp_path: Path) -> None:
    with KState(tmp_path, create=True) as ks:
        ks.write(lambda txn: txn.put("meta", b"schema", U64.pack(SCHEMA_VERSION + 1)))
    with pytest.raises(StateError, match=r"schema version \d+ is newer.*upgrade"):
        KState(tmp_path)


def test_an_older_state_runs_the_migration_hook_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    KState(tmp_path, create=True).close()
    ran: list[int] = []

    def to_next(txn: object) -> None:
        ran.append(SCHEMA_VERSION)
        txn.put("meta", b"migrated", b"yes")  # type: ignore[attr-defined]

    monkeypatch.setattr(kstate_env, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setitem(MIGRATIONS, SCHEMA_VERSION, to_next)
    with KState(tmp_path) as ks, ks.read() as txn:
        assert ran == [SCHEMA_VERSION]
        assert txn.get("meta", b"migrated") == b"yes"
        assert txn.get("meta", b"schema") == U64.pack(SCHEMA_VERSION + 1)


def test_a_migrated_state_does_not_migrate_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    KState(tmp_path, create=True).close()
    ran: list[int] = []
    monkeypatch.setattr(kstate_env, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setitem(MIGRATIONS, SCHEMA_VERSION, lambda txn: ran.append(1))
    KState(tmp_path).close()
    KState(tmp_path).close()
    assert ran == [1]


def test_a_write_that_raises_commits_nothing(state: KState) -> None:
    def body(txn: object) -> None:
        txn.put("meta", b"half", b"done")  # type: ignore[attr-defined]
        raise OSError(errno.EIO, "boom")

    with raises_errno(errno.EIO):
        state.write(body)
    with state.read() as txn:
        assert txn.get("meta", b"half") is None


# -- map growth and its ceiling ----------------------------------------------------------------


def fill_until_full(fs: PathFS) -> tuple[dict[str, bytes], OSError]:
    written: dict[str, bytes] = {}
    for i in range(1000):
        path = f"/fill-{i}"
        content = bytes([i % 251]) * (256 * 1024)
        try:
            fs.write_file(path, content)
        except OSError as err:
            return written, err
        written[path] = content
    raise AssertionError("the map never filled up")


def test_the_map_grows_from_a_small_size_up_to_its_ceiling(tmp_path: Path) -> None:
    with KState(tmp_path, create=True, map_size=1 * MIB, max_map_size=8 * MIB) as ks:
        assert ks.map_size == 1 * MIB
        written, err = fill_until_full(PathFS(VFS(ks)))
        assert err.errno == errno.ENOSPC
        assert ks.map_size == 8 * MIB
        assert sum(len(c) for c in written.values()) > 4 * MIB


def _mapped_bytes(data_file: Path) -> int:
    """Resident bytes of this process's mappings of `data_file` (smaps' Rss)."""
    real, total, ours = os.path.realpath(data_file), 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if "-" in line.split(" ", 1)[0] and len(line.split()) >= 5:  # a mapping's header line
            ours = line.split(maxsplit=5)[-1] == real
        elif ours and line.startswith("Rss:"):
            total += int(line.split()[1]) * 1024
    return total


@pytest.mark.parametrize("memory", [True, False], ids=["tmpfs", "disk"])
def test_a_growth_maps_the_new_stretch_at_once_on_tmpfs_only(tmp_path: Path, memory: bool) -> None:
    """On tmpfs the stretch a growth adds is prefaulted (kfs/kstate/prefault.py), off the
    writer's path; on a disk it would cost writes of zeros, so its pages fault in as LMDB uses
    them."""
    base = Path(tempfile.mkdtemp(dir="/dev/shm")) if memory else tmp_path
    try:
        with KState(base / "s", create=True, map_size=1 * MIB, max_map_size=256 * MIB) as ks:
            ks.write(lambda txn: txn.put("meta", b"big", b"x" * (2 * MIB)))
            assert ks.map_size >= 9 * MIB
            assert ks._prefaulting is not None  # the growth's stretch is mapped in a thread
            ks._prefaulting.join()
            mapped = _mapped_bytes(base / "s" / "data.mdb")
            if memory:
                assert mapped >= ks.map_size - 3 * MIB  # all but what the first MiBs left unmapped
            else:
                assert mapped < 4 * MIB
    finally:
        if memory:
            shutil.rmtree(base)


def test_a_full_map_gives_enospc_and_leaves_the_state_readable_and_consistent(
    tmp_path: Path,
) -> None:
    with KState(tmp_path, create=True, map_size=1 * MIB, max_map_size=8 * MIB) as ks:
        fs = PathFS(VFS(ks))
        written, err = fill_until_full(fs)
        failed = f"/fill-{len(written)}"
        assert err.errno == errno.ENOSPC
        assert not fs.exists(failed)
        for path, content in written.items():
            assert fs.read_file(path) == content
        assert sorted(fs.readdir("/")) == sorted(p[1:] for p in written)
        assert (
            data_bytes_counter(ks)
            == stored_chunk_bytes(ks)
            == sum(len(c) for c in written.values())
        )
        assert fs.statfs().files == len(written) + 1
    with KState(tmp_path, max_map_size=8 * MIB) as again:
        fs = PathFS(VFS(again))
        for path, content in written.items():
            assert fs.read_file(path) == content


def test_freeing_space_after_a_full_map_lets_writes_succeed_again(tmp_path: Path) -> None:
    with KState(tmp_path, create=True, map_size=1 * MIB, max_map_size=8 * MIB) as ks:
        fs = PathFS(VFS(ks))
        written, _ = fill_until_full(fs)
        for path in list(written)[:8]:
            fs.unlink(path)
        fs.write_file("/after", b"a" * 100_000)
        assert fs.read_file("/after") == b"a" * 100_000


# -- max_bytes quota ---------------------------------------------------------------------------


def set_quota(state: KState, limit: int) -> None:
    state.write(lambda txn: txn.put("meta", b"max_bytes", U64.pack(limit)))


def test_writing_past_the_max_bytes_quota_gives_enospc(state: KState, fs: PathFS) -> None:
    set_quota(state, 100_000)
    fs.write_file("/a", b"a" * 60_000)
    with raises_errno(errno.ENOSPC):
        fs.write_file("/b", b"b" * 60_000)


def test_a_write_refused_by_the_quota_creates_no_file(state: KState, fs: PathFS) -> None:
    set_quota(state, 100_000)
    with raises_errno(errno.ENOSPC):
        fs.write_file("/big", b"b" * 200_000)
    assert not fs.exists("/big")
    assert data_bytes_counter(state) == 0


def test_a_replacement_refused_by_the_quota_leaves_the_old_contents(
    state: KState, fs: PathFS
) -> None:
    set_quota(state, 100_000)
    fs.write_file("/a", b"old" * 10_000)
    with raises_errno(errno.ENOSPC):
        fs.write_file("/a", b"n" * 200_000)
    assert fs.stat("/a").size == 30_000
    assert fs.read_file("/a") == b"old" * 10_000


def test_an_append_refused_by_the_quota_leaves_the_file_unchanged(
    state: KState, fs: PathFS
) -> None:
    set_quota(state, 100_000)
    fs.write_file("/a", b"x" * 90_000)
    with raises_errno(errno.ENOSPC):
        fs.append_file("/a", b"y" * 20_000)
    assert fs.read_file("/a") == b"x" * 90_000


def test_a_handle_write_refused_by_the_quota_leaves_the_file_unchanged(
    state: KState, fs: PathFS
) -> None:
    set_quota(state, 100_000)
    fs.write_file("/a", b"x" * 1000)
    with fs.open("/a", os.O_RDWR) as handle:
        with raises_errno(errno.ENOSPC):
            handle.pwrite(b"y" * 200_000, 500)
        assert handle.getattr().size == 1000
        assert handle.pread(2000, 0) == b"x" * 1000


def test_replacing_a_file_within_the_quota_counts_only_the_new_size(
    state: KState, fs: PathFS
) -> None:
    set_quota(state, 100_000)
    fs.write_file("/a", b"x" * 60_000)
    fs.write_file("/a", b"y" * 90_000)
    assert data_bytes_counter(state) == 90_000


def test_deleting_files_gives_quota_back(state: KState, fs: PathFS) -> None:
    set_quota(state, 100_000)
    fs.write_file("/a", b"x" * 90_000)
    fs.unlink("/a")
    fs.write_file("/b", b"y" * 90_000)
    assert data_bytes_counter(state) == 90_000


def test_the_quota_error_names_the_path(state: KState, fs: PathFS) -> None:
    set_quota(state, 1000)
    with raises_errno(errno.ENOSPC, "/big"):
        fs.write_file("/big", b"b" * 2000)


# -- several processes, crashes ----------------------------------------------------------------


def test_two_processes_write_one_state_at_once_and_see_each_others_writes(tmp_path: Path) -> None:
    KState(tmp_path, create=True).close()
    with ProcessPoolExecutor(max_workers=2, mp_context=SPAWN) as pool:
        left = pool.submit(write_then_wait_for_other, str(tmp_path), "left", "right", 50)
        right = pool.submit(write_then_wait_for_other, str(tmp_path), "right", "left", 50)
        seen_by_left, seen_by_right = left.result(timeout=60), right.result(timeout=60)
    expected = sorted(
        [f"{t}-{i}" for t in ("left", "right") for i in range(50)] + ["done-left", "done-right"]
    )
    assert sorted(seen_by_left) == sorted(seen_by_right) == expected
    with KState(tmp_path) as ks:
        fs = PathFS(VFS(ks))
        assert fs.read_file("/right-49") == b"right 49\n"
        inos = [fs.stat("/" + name).ino for name in expected]
        assert len(set(inos)) == len(inos)


def test_a_map_grown_by_another_process_is_adopted_without_stalling(tmp_path: Path) -> None:
    with KState(tmp_path, create=True, map_size=1 * MIB, max_map_size=64 * MIB) as ks:
        fs = PathFS(VFS(ks))
        fs.write_file("/mine", b"m")
        with ProcessPoolExecutor(max_workers=1, mp_context=SPAWN) as pool:
            pool.submit(write_bulk, str(tmp_path), "/big", 3 * MIB).result(timeout=60)
        # adopting the size waits for this process's reads to end: one of its own held open
        # would stall it and fail with EBUSY, on a fast machine or a slow one
        assert fs.stat("/big").size == 3 * MIB
        fs.write_file("/after", b"a" * MIB)
        assert fs.read_file("/mine") == b"m"


def test_processes_opening_the_state_never_cut_off_a_map_another_process_is_growing(tmp_path: Path) -> None:
    """With WRITEMAP, LMDB truncates the data file to the map size it is opened with: a size
    taken from the file while another process grows it killed that process with SIGBUS (seen
    as a session worker dying while a new one opened the state)."""
    KState(tmp_path, create=True).close()
    with ProcessPoolExecutor(max_workers=3, mp_context=SPAWN) as pool:
        grower = pool.submit(grow_in_steps, str(tmp_path), 60, 512 * 1024)
        openers = [pool.submit(open_and_close, str(tmp_path), 150) for _ in range(2)]
        assert grower.result(timeout=120) == 60
        assert [o.result(timeout=120) for o in openers] == [150, 150]
    with KState(tmp_path) as ks:
        assert PathFS(VFS(ks)).read_file("/grow-59") == bytes([59]) * 512 * 1024


def test_threads_of_one_process_write_one_state_at_once(state: KState, fs: PathFS) -> None:
    errors: list[BaseException] = []

    def writer(tag: int) -> None:
        try:
            for i in range(25):
                fs.write_file(f"/t{tag}-{i}", f"{tag}:{i}")
                assert fs.read_file(f"/t{tag}-{i}") == f"{tag}:{i}".encode()
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len([n for n in fs.readdir("/") if n.startswith("t")]) == 100


def kill_a_reader_mid_transaction(state_dir: str) -> None:
    ready = SPAWN.Event()
    child = SPAWN.Process(target=hold_read_txn, args=(state_dir, ready))
    child.start()
    try:
        assert ready.wait(30), "child never opened its read transaction"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.join()


def test_a_reader_killed_mid_transaction_is_cleared_by_the_next_process_to_open(
    state: KState,
) -> None:
    kill_a_reader_mid_transaction(str(state.path))  # this process keeps the state open meanwhile
    with ProcessPoolExecutor(max_workers=1, mp_context=SPAWN) as pool:
        cleared = pool.submit(reopen_and_write, str(state.path), "/after-crash").result(timeout=60)
    assert cleared >= 1
    assert PathFS(VFS(state)).read_file("/after-crash") == b"written after the crash"


def test_a_state_whose_only_reader_was_killed_reopens_and_keeps_working(tmp_path: Path) -> None:
    KState(tmp_path, create=True).close()
    kill_a_reader_mid_transaction(str(tmp_path))
    with KState(tmp_path) as ks:
        fs = PathFS(VFS(ks))
        fs.write_file("/after-crash", b"ok")
        assert fs.read_file("/after-crash") == b"ok"


@pytest.fixture(params=["disk", "tmpfs"])
def state_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A state directory on the test's disk, or on tmpfs (where growths prefault the map in a
    thread: kfs/kstate/prefault.py)."""
    if request.param == "disk":
        yield tmp_path / "s"
        return
    base = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        yield base / "s"
    finally:
        shutil.rmtree(base)


def test_writes_grow_and_abort_while_threads_read_in_tight_loops(state_dir: Path) -> None:
    """Reads that never pause must not starve writers: a resize waits for open reads while new
    ones wait for it, and an aborted write (py-lmdb's abort waits until no LMDB call of any
    thread is in flight) holds new reads back. Before, two such readers kept the first write
    that overflowed the map from ever returning. On tmpfs, the threads that prefault each
    growth give way to the next resize too."""
    errors: list[BaseException] = []
    done = threading.Event()
    with KState(state_dir, create=True, map_size=1 * MIB, max_map_size=512 * MIB) as ks:
        ks.write(lambda t: t.put("meta", b"probe", b"x" * 100))

        def reader() -> None:
            try:
                while not done.is_set():
                    with ks.read() as txn:
                        assert txn.get("meta", b"probe") == b"x" * 100
            except BaseException as e:  # noqa: BLE001 - reported by the test
                errors.append(e)

        def failing(txn) -> None:
            txn.put("meta", b"half", b"done")
            raise OSError(errno.ENOENT, "No such file or directory")

        def writer() -> None:
            blob = os.urandom(MIB)
            for i in range(100):
                ks.write(lambda t, i=i: t.put("chunks", i.to_bytes(8, "big"), blob))
                with pytest.raises(OSError):
                    ks.write(failing)

        threads = [threading.Thread(target=reader) for _ in range(4)]
        for t in threads:
            t.start()
        w = threading.Thread(target=writer)
        w.start()
        w.join(120)  # a liveness bound, not a speed one: starved, the writer never returns
        finished = not w.is_alive()
        done.set()
        for t in threads:
            t.join()
        w.join()
        assert finished
        assert ks.map_size >= 64 * MIB
        with ks.read() as txn:
            assert txn.get("meta", b"half") is None
    assert errors == []


def test_a_map_another_process_grows_is_adopted_by_readers_while_this_process_writes(tmp_path: Path) -> None:
    """A read that finds the map grown by another process remaps it, which LMDB (and py-lmdb)
    refuse while a write transaction of this process is open: the remap waits for this
    process's writer. Before, a reader remapped while another thread's write was under way and
    failed with "Cannot set_mapsize while a write transaction is active" (seen in a suite run:
    the SSH server's thread wrote while the test read what a worker process had written)."""
    errors: list[BaseException] = []
    done = threading.Event()
    with KState(tmp_path, create=True, map_size=1 * MIB, max_map_size=512 * MIB) as ks:
        ks.write(lambda t: t.put("meta", b"probe", b"x"))

        def loop(body: Callable[[int], None]) -> None:
            try:
                i = 0
                while not done.is_set():
                    body(i)
                    i += 1
            except BaseException as e:  # noqa: BLE001 - reported by the test
                errors.append(e)

        def read(_: int) -> None:
            with ks.read() as txn:
                assert txn.get("meta", b"probe") == b"x"

        def write(i: int) -> None:
            ks.write(lambda t: t.put("meta", b"n", str(i).encode()))

        threads = [threading.Thread(target=loop, args=(body,)) for body in (read, read, write, write)]
        for t in threads:
            t.start()
        try:
            with ProcessPoolExecutor(max_workers=1, mp_context=SPAWN) as pool:
                pool.submit(grow_in_steps, str(tmp_path), 40, 512 * 1024).result(timeout=HANG)
        finally:
            done.set()
            for t in threads:
                t.join()
    assert errors == []


# -- sequence numbers of the append-only journals (Txn.next_seq) ---------------------------------


def receipt_ids(state: KState) -> list[int]:
    with state.read() as txn:
        return [U64.unpack(key[:8])[0] for key, _ in txn.scan("receipts")]


def append_one(state: KState, by: str) -> int:
    from kfs.journal import append_receipt

    return state.write(lambda txn: append_receipt(txn, "test.op", by, path=f"/{by}"))


def test_appends_in_one_transaction_and_across_transactions_number_consecutively(state: KState) -> None:
    from kfs.journal import append_receipt

    first = append_one(state, "a")
    pair = state.write(lambda txn: (append_receipt(txn, "test.op", "b"), append_receipt(txn, "test.op", "c")))
    assert [first, *pair, append_one(state, "d")] == list(range(first, first + 4))
    assert receipt_ids(state) == list(range(1, first + 4))


def test_an_append_after_another_process_appended_takes_the_next_free_number(tmp_path: Path) -> None:
    """This process remembers the last number it handed out; a commit by another process in
    between must make it look again, or its next row would overwrite the other's."""
    with KState(tmp_path, create=True) as ks:
        mine = [append_one(ks, "parent")]
        with ProcessPoolExecutor(max_workers=1, mp_context=SPAWN) as pool:
            theirs = pool.submit(append_receipts, str(tmp_path), "child", 3).result(timeout=60)
            mine.append(append_one(ks, "parent"))
            ks.write(lambda txn: None)  # a write that changes nothing spends no transaction id
            theirs += pool.submit(append_receipts, str(tmp_path), "child", 1).result(timeout=60)
            mine.append(append_one(ks, "parent"))
        assert len(set(mine + theirs)) == 7
        assert receipt_ids(ks) == sorted(mine + theirs)
        from kfs.journal import receipts_since

        by = {row["id"]: row["by"] for row in receipts_since(ks)}
        assert [by[i] for i in mine] == ["parent"] * 3 and [by[i] for i in theirs] == ["child"] * 4


def test_an_aborted_append_leaves_its_number_to_the_next_one(state: KState) -> None:
    from kfs.journal import append_receipt

    before = append_one(state, "a")

    def fails(txn: object) -> None:
        append_receipt(txn, "test.op", "lost")  # type: ignore[arg-type]
        raise OSError(errno.EIO, "abort")

    with pytest.raises(OSError):
        state.write(fails)
    assert append_one(state, "b") == before + 1
    assert receipt_ids(state)[-2:] == [before, before + 1]


def test_processes_writing_through_handles_at_once_lose_no_receipt_and_no_change(tmp_path: Path) -> None:
    from kfs.journal import changes_since, receipts_since

    KState(tmp_path, create=True).close()
    count = 150
    with ProcessPoolExecutor(max_workers=3, mp_context=SPAWN) as pool:
        jobs = [pool.submit(pwrite_blocks, str(tmp_path), f"/w{n}", count) for n in range(3)]
        for job in jobs:
            job.result(timeout=120)
    with KState(tmp_path) as ks:
        writes = [row for row in receipts_since(ks, 0, 100_000) if row["op"] == "vfs.write"]
        assert sorted(row["path"] for row in writes) == sorted(f"/w{n}" for n in range(3) for _ in range(count))
        fs = PathFS(VFS(ks))
        inos = {fs.stat(f"/w{n}").ino for n in range(3)}
        data_changes = [c for c in changes_since(ks, 0, 100_000) if c.ino in inos and c.kind == 2]
        assert len(data_changes) == 3 * count
        seqs = [c.seq for c in changes_since(ks, 0, 100_000)]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
