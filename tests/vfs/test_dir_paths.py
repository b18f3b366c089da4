"""The directory paths a write transaction remembers for the next (records.dir_path, Txn.memo):
receipts of the inode API name the path a directory has now, whoever moved it, in whichever
view, and whatever the memo held when an operation failed."""

from __future__ import annotations

import errno
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

from kfs import forks
from kfs.journal import append_receipt, receipts_since
from kfs.kstate import KState, Txn
from kfs.vfs import RENAME_EXCHANGE, ROOT, ROOT_INO, VFS, PathFS, namespace, records
from kfs.vfs.errors import fs_error
from kfs.vfs.ops import Op

from .child_processes import append_receipts, rename_path

SPAWN = multiprocessing.get_context("spawn")


def in_child(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` in another process (its own writer of the state)."""
    with ProcessPoolExecutor(max_workers=1, mp_context=SPAWN) as pool:
        return pool.submit(fn, *args).result(timeout=60)


def created_path(state: KState, vfs: VFS, parent: int, name: bytes) -> str:
    """The path in the receipt of creating `name` in `parent` by inode."""
    with state.read() as txn:
        start = txn.next_seq("receipts") - 1
    vfs.mknod(parent, name, 0o100644)
    rows = receipts_since(state, start)
    assert [r["op"] for r in rows] == ["vfs.create"]
    return rows[0]["path"]


@pytest.fixture
def tree(vfs: VFS) -> tuple[int, int]:
    """/a/b/c, remembered: (ino of /a, ino of /a/b/c)."""
    a = vfs.mkdir(ROOT_INO, b"a", 0o755).ino
    b = vfs.mkdir(a, b"b", 0o755).ino
    c = vfs.mkdir(b, b"c", 0o755).ino
    vfs.mknod(c, b"first", 0o100644)
    return a, c


def test_receipts_follow_an_ancestor_moved_by_the_same_vfs(state: KState, vfs: VFS, tree: tuple[int, int]) -> None:
    a, c = tree
    assert created_path(state, vfs, c, b"f1") == "/a/b/c/f1"
    vfs.rename(ROOT_INO, b"a", ROOT_INO, b"z")
    assert created_path(state, vfs, c, b"f2") == "/z/b/c/f2"


def test_receipts_follow_a_move_by_another_vfs_of_the_same_state(
    state: KState, vfs: VFS, tree: tuple[int, int]
) -> None:
    _, c = tree
    PathFS(VFS(state, by="other")).rename("/a/b", "/a/y")
    assert created_path(state, vfs, c, b"f") == "/a/y/c/f"


def test_receipts_follow_a_move_by_another_process(state: KState, vfs: VFS, tree: tuple[int, int]) -> None:
    _, c = tree
    in_child(rename_path, str(state.path), "/a", "/x")
    assert created_path(state, vfs, c, b"f") == "/x/b/c/f"


def test_receipts_follow_an_exchange_and_a_replaced_directory(
    state: KState, vfs: VFS, tree: tuple[int, int]
) -> None:
    a, c = tree
    other = vfs.mkdir(ROOT_INO, b"o", 0o755).ino
    vfs.mknod(other, b"first", 0o100644)
    vfs.rename(ROOT_INO, b"a", ROOT_INO, b"o", RENAME_EXCHANGE)
    assert created_path(state, vfs, c, b"f") == "/o/b/c/f"
    assert created_path(state, vfs, other, b"f") == "/a/f"
    vfs.mkdir(ROOT_INO, b"empty", 0o755)
    vfs.rename(ROOT_INO, b"o", ROOT_INO, b"empty")  # replaces the empty directory
    assert created_path(state, vfs, c, b"g") == "/empty/b/c/g"


def test_a_failed_operation_leaves_no_path_it_saw(state: KState, vfs: VFS, tree: tuple[int, int]) -> None:
    a, c = tree

    def move_then_fail(op: Op) -> None:
        namespace.rename(op, records.get_inode(op.txn, ROOT_INO), b"a", records.get_inode(op.txn, ROOT_INO), b"m")
        assert records.child_path(op.txn, c, b"f") == "/m/b/c/f"  # remembered inside the transaction
        raise fs_error(errno.EIO)

    with pytest.raises(OSError):
        vfs.run(ROOT, move_then_fail)
    assert created_path(state, vfs, c, b"f") == "/a/b/c/f"


def test_a_forks_paths_are_its_own(state: KState, vfs: VFS, tree: tuple[int, int]) -> None:
    _, c = tree
    number = forks.create(state)
    fork = VFS(forks.view(state, number), by="fork")
    assert created_path(state, fork, c, b"f") == "/a/b/c/f"
    vfs.rename(ROOT_INO, b"a", ROOT_INO, b"p")  # the parent's move, not the fork's
    assert created_path(state, fork, c, b"g") == "/a/b/c/g"
    assert created_path(state, vfs, c, b"g") == "/p/b/c/g"
    fork.rename(ROOT_INO, b"a", ROOT_INO, b"q")
    assert created_path(state, fork, c, b"h") == "/q/b/c/h"
    assert created_path(state, vfs, c, b"h") == "/p/b/c/h"


def test_a_bounded_memo_still_names_deep_directories(
    state: KState, vfs: VFS, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(records, "_DIR_PATHS_MAX", 3)
    ino, names = ROOT_INO, []
    for depth in range(6):
        names.append(f"d{depth}")
        ino = vfs.mkdir(ino, names[-1].encode(), 0o755).ino
        assert created_path(state, vfs, ino, b"f") == "/" + "/".join(names) + "/f"
    vfs.rename(ROOT_INO, b"d0", ROOT_INO, b"e0")
    assert created_path(state, vfs, ino, b"g") == "/e0/" + "/".join(names[1:]) + "/g"


# -- Txn.memo ----------------------------------------------------------------------------------


def test_a_memo_lives_from_write_to_write_while_only_this_process_writes(state: KState) -> None:
    def remember(txn: Txn) -> None:
        txn.memo("test")["k"] = 1  # type: ignore[index]
        append_receipt(txn, "test.op", "test", path="/")  # an appending write, as every mutation's

    state.write(remember)
    assert state.write(lambda txn: txn.memo("test")) == {"k": 1}
    with state.read() as txn:
        assert txn.memo("test") is None
    in_child(append_receipts, str(state.path), "other", 1)
    assert state.write(lambda txn: txn.memo("test")) == {}


def test_a_memo_goes_with_an_aborted_write(state: KState) -> None:
    def remember_then_fail(txn: Txn) -> None:
        txn.memo("test")["k"] = 1  # type: ignore[index]
        raise OSError(errno.EIO, "no")

    with pytest.raises(OSError):
        state.write(remember_then_fail)
    assert state.write(lambda txn: txn.memo("test")) == {}
