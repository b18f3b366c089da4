"""Forks (kfs.forks, kfs.kstate.layers) on the VFS: made in O(1), a snapshot of the parent that
holds while both write, copy-up by the chunk, what `diff` reports, `merge` (conflicts refused
with their paths, the result checked by fsck), forks of forks, `discard`, a shared fork, events."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kfs import forks
from kfs.fsck import check
from kfs.journal import events_since
from kfs.kstate import KState
from kfs.kstate.layers import LAYERED, STATE, VERSIONS, prefix
from kfs.vfs import VFS, PathFS
from kfs.vfs.inode import CHUNK_SIZE


@pytest.fixture
def state(tmp_path: Path) -> Iterator[KState]:
    with KState(tmp_path / "s", create=True) as s:
        yield s


@pytest.fixture
def parent(state: KState) -> PathFS:
    fs = PathFS(VFS(state, by="test"))
    fs.mkdir("/w/d/e", parents=True)
    fs.write_file("/w/a", b"a\n")
    fs.write_file("/w/big", bytes(range(256)) * (64 * CHUNK_SIZE // 256))  # 64 chunks
    fs.link("/w/a", "/w/a2")
    fs.symlink("a", "/w/l")
    fs.write_file("/w/d/e/x", b"x\n")
    fs.chmod("/w/d", 0o750)
    return fs


def fork_fs(state: KState, number: int) -> PathFS:
    return PathFS(VFS(forks.view(state, number), by="test"))


def layer_rows(state: KState, number: int, db: str | None = None) -> int:
    with state.read() as txn:
        head = prefix(number, LAYERED[db]) if db else number.to_bytes(8, "big")
        return len(txn.scan_keys("layers", head))


def tree(fs: PathFS, top: str = "/w") -> dict[str, bytes | str]:
    """Every path under `top`: a file's bytes, a link's target, "dir"."""
    out: dict[str, bytes | str] = {}
    for name, inode in fs.scandir(top):
        path = f"{top}/{name}"
        if inode.is_dir:
            out[path] = "dir"
            out.update(tree(fs, path))
        elif inode.is_lnk:
            out[path] = "-> " + fs.readlink(path)
        else:
            out[path] = fs.read_file(path)
    return out


def test_a_fork_is_made_in_o1_and_sees_the_parent_as_it_was(state: KState, parent: PathFS) -> None:
    before = tree(parent)
    number = forks.create(state, by="test")
    assert layer_rows(state, number) == 0  # nothing copied
    fork = fork_fs(state, number)
    assert tree(fork) == before
    for path in ("/w/a", "/w/d", "/w/l"):
        assert fork.lstat(path) == parent.lstat(path)  # numbers, modes, links, times
    parent.write_file("/w/a", b"changed by the parent\n")
    with parent.open("/w/big", os.O_RDWR) as f:  # a handle's write: the hot path, straight to LMDB's handles
        f.pwrite(b"P" * 5000, CHUNK_SIZE - 10)
    parent.unlink("/w/l")
    parent.mkdir("/w/later")
    parent.rename("/w/d", "/w/d2")
    assert tree(fork) == before  # the parent's writes after the fork do not show


def test_the_forks_writes_stay_in_it(state: KState, parent: PathFS) -> None:
    before = tree(parent)
    number = forks.create(state)
    fork = fork_fs(state, number)
    fork.write_file("/w/new", b"n\n")
    fork.unlink("/w/a2")
    fork.rename("/w/d", "/w/moved")
    fork.rm("/w/moved/e", recursive=True)
    fork.mkdir("/w/moved/e")  # made again: the old entries do not show through
    fork.chmod("/w/a", 0o600)
    assert tree(parent) == before
    assert fork.scandir("/w/moved/e") == [] and fork.stat("/w/a").nlink == 1
    assert sorted(n for n, _ in fork.scandir("/w")) == ["a", "big", "l", "moved", "new"]


def test_a_forks_receipts_name_the_fork(state: KState, parent: PathFS) -> None:
    """A write in a fork is not the state's and may be discarded: its receipt says which fork
    (its `by` ends with `fork N`), through the path face and an open handle alike."""
    from kfs.journal import receipts_since

    number = forks.create(state)
    fork = fork_fs(state, number)
    seen = receipts_since(state)[-1]["id"]
    fork.write_file("/w/new", b"n\n")
    with fork.open("/w/new", os.O_WRONLY) as handle:
        handle.pwrite(b"m", 0)
    parent.write_file("/w/mine", b"p\n")
    rows = [(r["op"], r["path"], r["by"]) for r in receipts_since(state, seen + 1)]
    assert ("vfs.write", "/w/new", f"test fork {number}") in rows
    assert all(by == f"test fork {number}" for _, path, by in rows if path == "/w/new"), rows
    assert [by for _, path, by in rows if path == "/w/mine"] == ["test"]
    forks.discard(state, number)
    assert all(by == f"test fork {number}" for _, path, by in
               ((r["op"], r["path"], r["by"]) for r in receipts_since(state, seen + 1)) if path == "/w/new")


def test_one_byte_written_to_a_large_file_copies_one_chunk(state: KState, parent: PathFS) -> None:
    number = forks.create(state)
    fork = fork_fs(state, number)
    with fork.open("/w/big", os.O_RDWR) as f:
        f.pwrite(b"!", 40 * CHUNK_SIZE + 5)
    assert layer_rows(state, number, "chunks") == 1
    data = fork.read_file("/w/big")
    assert data[40 * CHUNK_SIZE + 5] == ord("!") and len(data) == 64 * CHUNK_SIZE
    assert parent.read_file("/w/big")[40 * CHUNK_SIZE + 5] == 5


def test_parent_and_fork_writing_the_same_files_at_once(state: KState, parent: PathFS) -> None:
    number = forks.create(state)
    fork = fork_fs(state, number)

    def writer(fs: PathFS, tag: bytes) -> None:
        for i in range(200):
            fs.write_file(f"/w/f{i % 10}", tag + b"%d" % i)
            fs.append_file("/w/a", tag)

    threads = [threading.Thread(target=writer, args=(fs, tag)) for fs, tag in ((parent, b"P"), (fork, b"F"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert parent.read_file("/w/a") == b"a\n" + b"P" * 200
    assert fork.read_file("/w/a") == b"a\n" + b"F" * 200
    assert all(parent.read_file(f"/w/f{i}").startswith(b"P") and fork.read_file(f"/w/f{i}").startswith(b"F")
               for i in range(10))


def test_diff_and_merge(state: KState, parent: PathFS) -> None:
    number = forks.create(state)
    fork = fork_fs(state, number)
    fork.write_file("/w/new", b"n\n")
    fork.unlink("/w/l")
    fork.rename("/w/d", "/w/moved")
    fork.mkdir("/w/made/deep", parents=True)
    fork.write_file("/w/made/deep/q", b"q\n")
    fork.link("/w/made/deep/q", "/w/made/q2")
    with fork.open("/w/big", os.O_RDWR) as f:
        f.pwrite(b"!", 3)
    parent.write_file("/w/unrelated", b"the parent's\n")  # elsewhere: no conflict
    found = forks.diff(state, number)
    assert found.changes == [("changed", "/w/big"), ("removed", "/w/d"), ("removed", "/w/l"), ("added", "/w/made"),
                             ("added", "/w/moved"), ("added", "/w/new")]
    assert found.conflicts == []
    expected = tree(fork)
    forks.merge(state, number)
    assert tree(parent) == {**expected, "/w/unrelated": b"the parent's\n"}
    assert parent.stat("/w/made/q2").nlink == 2  # the fork's hard link is one
    assert forks.forks(state) == [] and layer_rows(state, number) == 0
    assert check(state).clean
    kinds = [e["type"] for e in events_since(state) if e["type"].startswith("fork.")]
    assert kinds == ["fork.create", "fork.merge"]


def test_a_merge_is_refused_where_the_parent_changed_the_same_paths(state: KState, parent: PathFS) -> None:
    number = forks.create(state)
    fork = fork_fs(state, number)
    fork.write_file("/w/a", b"the fork's\n")
    fork.write_file("/w/both", b"the fork's\n")
    fork.write_file("/w/only-fork", b"f\n")
    parent.append_file("/w/a", b"the parent's\n")
    parent.write_file("/w/both", b"the parent's\n")
    with pytest.raises(forks.Conflict) as refused:
        forks.merge(state, number)
    assert refused.value.paths == ["/w/a", "/w/both"]
    assert not parent.exists("/w/only-fork")  # nothing of it happened
    assert fork.read_file("/w/only-fork") == b"f\n"  # and the fork is still there


def test_forks_of_forks_and_discard(state: KState, parent: PathFS) -> None:
    first = forks.create(state)
    fork = fork_fs(state, first)
    fork.write_file("/w/a", b"first\n")
    second = forks.create(state, parent=first)
    child = fork_fs(state, second)
    fork.write_file("/w/a", b"first, later\n")  # the child's snapshot holds
    parent.write_file("/w/a", b"the state's\n")
    assert child.read_file("/w/a") == b"first\n"
    child.write_file("/w/c", b"c\n")
    forks.merge(state, second)  # into the first fork, not the state
    assert fork.read_file("/w/c") == b"c\n" and not parent.exists("/w/c")
    third = forks.create(state, parent=first)
    assert forks.discard(state, first) == [third, first]  # closing a fork closes the forks made of it
    assert forks.forks(state) == []
    with state.read() as txn:
        assert txn.scan_keys("layers") == []
    with pytest.raises(OSError):
        fork.write_file("/w/a", b"gone\n")


def test_a_shared_fork_writes_to_its_parent(state: KState, parent: PathFS) -> None:
    number = forks.create(state, disk="shared", mode="readonly")
    shared = fork_fs(state, number)
    shared.write_file("/w/s", b"s\n")
    assert parent.read_file("/w/s") == b"s\n"
    with pytest.raises(forks.ForkError, match="shares its parent's disk"):
        forks.diff(state, number)


def test_bad_requests_are_refused(state: KState, parent: PathFS) -> None:
    with pytest.raises(forks.ForkError, match="no fork 7"):
        forks.create(state, parent=7)
    with pytest.raises(forks.ForkError, match="disk 'tmpfs'"):
        forks.create(state, disk="tmpfs")
    for call in (forks.diff, forks.merge, forks.discard, forks.view):
        with pytest.raises(forks.ForkError, match="no fork 9"):
            call(state, 9)


def test_only_own_rows_are_the_forks_changes(state: KState, parent: PathFS) -> None:
    """Versions the parent kept for the fork are not its changes: diff stays empty, and the
    fork's own layer holds nothing."""
    number = forks.create(state)
    parent.write_file("/w/a", b"parent\n")
    parent.rm("/w/d", recursive=True)
    with state.read() as txn:
        assert not list(txn.scan("layers", number.to_bytes(8, "big")))
        assert list(txn.scan("layers", prefix(STATE, LAYERED["chunks"] | VERSIONS)))
    assert forks.diff(state, number).changes == []


def layer_pages(state: KState) -> int:
    """The bytes of LMDB pages the `layers` database takes."""
    with state.read() as txn:
        stat = txn._t.stat(txn._dbs["layers"])
    return (stat["branch_pages"] + stat["leaf_pages"] + stat["overflow_pages"]) * stat["psize"]


def test_an_overwrite_keeps_one_copy_for_many_forks(state: KState, parent: PathFS) -> None:
    """A parent's overwrite keeps the old chunks once, however many forks see them (it kept a
    copy per fork: 300 forks made a 2 MiB overwrite grow the state by 582 MiB), charged once to
    the forks' owner and given back when the last fork that reads them goes."""
    from kfs.agents import add_agent
    from kfs.kstate import quota

    carol = add_agent(VFS(state, by="test"), "carol")
    old = parent.read_file("/w/big")
    numbers = [forks.create(state, agent="carol") for _ in range(30)]
    pages = layer_pages(state)
    parent.write_file("/w/big", os.urandom(len(old)))
    grown = layer_pages(state) - pages
    assert grown < 2 * len(old), f"layers grew by {grown} bytes for a {len(old)}-byte overwrite"
    with state.read() as txn:
        assert quota.usage(txn, carol.uid) == len(old)  # once, not once per fork
    assert all(fork_fs(state, n).read_file("/w/big") == old for n in numbers)
    assert check(state).clean
    for n in numbers[:-1]:
        forks.discard(state, n)
        with state.read() as txn:
            assert quota.usage(txn, carol.uid) == len(old)  # the last fork still reads them
    assert fork_fs(state, numbers[-1]).read_file("/w/big") == old
    forks.discard(state, numbers[-1])
    with state.read() as txn:
        assert quota.usage(txn, carol.uid) == 0 and not list(txn.scan("layers"))
    assert check(state).clean


def test_each_fork_reads_the_version_of_its_own_time(state: KState, parent: PathFS) -> None:
    """Forks made between a parent's writes each see the parent as it was at their making; a
    version goes when the forks that read it go, the others' stay."""
    first = forks.create(state)
    parent.write_file("/w/a", b"one\n")
    second, third = forks.create(state), forks.create(state)
    parent.write_file("/w/a", b"two\n")
    parent.write_file("/w/a", b"three\n")  # the same generation: nothing more kept
    assert fork_fs(state, first).read_file("/w/a") == b"a\n"
    assert fork_fs(state, second).read_file("/w/a") == b"one\n"
    assert fork_fs(state, third).read_file("/w/a") == b"one\n"
    assert forks.diff(state, second).conflicts == []
    fork_fs(state, second).write_file("/w/a", b"mine\n")
    assert forks.diff(state, second).conflicts == ["/w/a"]  # the parent changed it since the fork
    forks.discard(state, first)
    assert fork_fs(state, third).read_file("/w/a") == b"one\n"
    assert tree(fork_fs(state, third)) == {**tree(parent), "/w/a": b"one\n", "/w/a2": b"one\n"}
    assert check(state).clean
    forks.discard(state, second)
    forks.discard(state, third)
    with state.read() as txn:
        assert not list(txn.scan("layers"))


@pytest.mark.parametrize("seed", [26, 7, 1999])
def test_forks_of_forks_made_between_writes_each_keep_their_own_time(state: KState, parent: PathFS, seed: int) -> None:
    """Writes, removals, forks (of the state and of forks), merges and discards interleaved at
    random: every view reads and lists what a copy made at its fork would (its own changes on
    top, a merged fork's in its parent), and when all go nothing is left kept or charged."""
    import random

    rng = random.Random(seed)
    names = [f"/w/m{i}" for i in range(8)]
    for name in names[:6]:
        parent.write_file(name, b"base " + name.encode())
    views: dict[int, PathFS] = {forks.STATE: parent}
    model: dict[int, dict[str, bytes]] = {forks.STATE: {n: b"base " + n.encode() for n in names[:6]}}
    made: dict[int, int] = {}  # fork -> its parent
    base: dict[int, dict[str, bytes]] = {}  # fork -> its parent's files when it was made
    merged = refused = 0
    for step in range(150):
        op = rng.random()
        view = rng.choice(sorted(views))
        if op < 0.45:
            name, data = rng.choice(names), os.urandom(rng.choice((10, 3 * CHUNK_SIZE)))
            views[view].write_file(name, data)
            model[view][name] = data
        elif op < 0.55 and model[view]:
            name = rng.choice(sorted(model[view]))
            views[view].rm(name)
            del model[view][name]
        elif op < 0.8 or len(views) == 1:
            number = forks.create(state, parent=view)
            views[number], model[number], made[number] = fork_fs(state, number), dict(model[view]), view
            base[number] = dict(model[view])
        elif op < 0.88:  # a merge: the fork's changes into its parent, or refused with nothing done
            victim = rng.choice([f for f in views if f != forks.STATE])
            try:
                forks.merge(state, victim)
            except forks.Conflict:
                refused += 1
            else:
                merged += 1
                above, mine, was = model[made[victim]], model[victim], base[victim]
                for name in set(mine) | set(was):
                    if mine.get(name) != was.get(name):
                        if name in mine:
                            above[name] = mine[name]
                        else:
                            above.pop(name, None)
                gone = [victim]
                while gone:
                    f = gone.pop()
                    gone += [c for c, p in made.items() if p == f]
                    del views[f], model[f], made[f]
        else:
            victim = rng.choice([f for f in views if f != forks.STATE])
            for gone in forks.discard(state, victim):
                del views[gone], model[gone], made[gone]
        for number, fs in views.items():
            listed = sorted(f"/w/{n}" for n, _ in fs.scandir("/w") if n.startswith("m"))
            assert listed == sorted(model[number]), (step, number)
            for name, data in model[number].items():
                assert fs.read_file(name) == data, (step, number, name)
    assert check(state).clean and merged and refused, (merged, refused)
    for number in [f for f in made if made[f] == forks.STATE]:
        forks.discard(state, number)
    with state.read() as txn:
        assert not list(txn.scan("layers"))
    assert check(state).clean


def test_each_fork_keeps_what_the_parent_had_when_it_was_made_as_newer_forks_come(
    state: KState, parent: PathFS
) -> None:
    """The parent's writes keep versions for its newest fork, whose record a write reads
    (decoded once per distinct record, kfs.kstate.layers._gen_and_uid): a newer fork must
    move what the same process's next writes keep."""
    seen: dict[int, bytes] = {}
    for n in range(3):
        parent.write_file("/w/a", f"version {n}\n".encode())
        seen[forks.create(state, by="test")] = f"version {n}\n".encode()
        parent.write_file("/w/a", b"after\n")  # kept for the fork just made, not an older one
    for number, contents in seen.items():
        assert fork_fs(state, number).read_file("/w/a") == contents
