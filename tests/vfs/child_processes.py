"""Bodies of the child processes that multi-process tests spawn (importable, as spawn needs)."""

from __future__ import annotations

import time
from multiprocessing.synchronize import Event

from kfs.kstate import KState
from kfs.vfs import VFS, PathFS


def write_then_wait_for_other(state_dir: str, tag: str, other: str, count: int) -> list[str]:
    """Write `count` files named after `tag`, then wait to see the other writer finish.

    Returns the root listing as this process sees it once both are done.
    """
    with KState(state_dir) as state:
        fs = PathFS(VFS(state, by=f"writer-{tag}"))
        for i in range(count):
            fs.write_file(f"/{tag}-{i}", f"{tag} {i}\n")
        fs.write_file(f"/done-{tag}", b"")
        deadline = time.monotonic() + 30
        while not fs.exists(f"/done-{other}"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"writer {tag} never saw {other} finish")
            time.sleep(0.01)
        return fs.readdir("/")


def hold_read_txn(state_dir: str, ready: Event) -> None:
    """Open a read transaction and keep it open until killed."""
    state = KState(state_dir)
    with state.read() as txn:
        txn.get("meta", b"schema")
        ready.set()
        time.sleep(600)


def hold_unlinked_file(state_dir: str, path: str, ready: Event) -> None:
    """Create `path`, keep it open, unlink it, and wait to be killed with the handle open."""
    state = KState(state_dir)
    fs = PathFS(VFS(state, by="holder"))
    fs.write_file(path, b"x" * 200_000)
    handle = fs.open(path)
    fs.unlink(path)
    assert handle.pread(3, 0) == b"xxx"
    ready.set()
    time.sleep(600)


def reopen_and_write(state_dir: str, path: str) -> int:
    """Open the state (as a second process would), write `path`; returns stale readers cleared."""
    with KState(state_dir) as state:
        PathFS(VFS(state, by="reopener")).write_file(path, b"written after the crash")
        return state.stale_readers_cleared


def write_bulk(state_dir: str, path: str, size: int) -> None:
    """Write `size` bytes to `path` in one go (enough to grow the map of a small state)."""
    with KState(state_dir) as state:
        PathFS(VFS(state, by="bulk")).write_file(path, b"b" * size)


def grow_in_steps(state_dir: str, steps: int, size: int) -> int:
    """Write `steps` files of `size` bytes, each its own transaction: the map grows many times."""
    from kfs.kstate import KState
    from kfs.vfs import VFS, PathFS

    with KState(state_dir, map_size=1 << 20) as ks:
        fs = PathFS(VFS(ks))
        for i in range(steps):
            fs.write_file(f"/grow-{i}", bytes([i % 251]) * size)
    return steps


def open_and_close(state_dir: str, times: int) -> int:
    """Open the state again and again (as each new session worker does), with a small map."""
    from kfs.kstate import KState

    for _ in range(times):
        KState(state_dir, map_size=1 << 20).close()
    return times


def append_receipts(state_dir: str, by: str, count: int) -> list[int]:
    """Append `count` receipts from this process, one write each; returns their ids."""
    from kfs.journal import append_receipt

    with KState(state_dir) as state:
        return [state.write(lambda txn: append_receipt(txn, "test.op", by, path=f"/{by}")) for _ in range(count)]


def pwrite_blocks(state_dir: str, path: str, count: int) -> None:
    """`count` 4 KiB writes through one handle (the hot path), each its own transaction."""
    import os

    with KState(state_dir) as state:
        fs = PathFS(VFS(state, by=f"writer {path}"))
        with fs.open(path, os.O_CREAT | os.O_WRONLY) as handle:
            for i in range(count):
                handle.pwrite(bytes([i % 256]) * 4096, (i * 7919 % 64) * 4096)


def rename_path(state_dir: str, src: str, dst: str) -> None:
    """Rename `src` to `dst`, as another process's writer."""
    with KState(state_dir) as state:
        PathFS(VFS(state, by="renamer")).rename(src, dst)
