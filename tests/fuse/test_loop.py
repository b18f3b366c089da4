"""The request loop's view of trio (kfs/fuse/loop.py): a free lock and a cheap device wait."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pyfuse3
import pytest
import trio

from kfs.fuse import loop, mount
from tests.hang import HANG


def test_pyfuse3_gets_a_lock_that_never_waits_and_the_rest_of_trio() -> None:
    view = loop._trio_for_one_worker()
    assert view.open_nursery is trio.open_nursery
    assert view.ClosedResourceError is trio.ClosedResourceError
    assert view.lowlevel.current_task is trio.lowlevel.current_task
    assert view.lowlevel.notify_closing is trio.lowlevel.notify_closing

    async def nested() -> None:
        lock = view.Lock()
        async with lock, lock:  # one worker: nothing to exclude, nothing to wait for
            pass

    trio.run(nested)


def test_the_device_wait_returns_at_once_when_readable_and_otherwise_waits_in_trio() -> None:
    read_end, write_end = os.pipe()
    wait = loop._DeviceWait(burst=2, block_ms=1, spin_ns=0)
    try:

        async def main() -> None:
            await wait(read_end)  # the first wait always goes through trio: left is 0
            assert wait.left == 2

        async def feeder() -> None:
            await trio.sleep(0.01)
            os.write(write_end, b"x")

        async def both() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(feeder)
                await main()
            await wait(read_end)  # readable: answered by poll(2), one burst slot used
            assert wait.left == 1
            os.read(read_end, 1)
            async with trio.open_nursery() as nursery:  # not readable within block_ms: trio
                nursery.start_soon(feeder)
                await wait(read_end)
            assert wait.left == 2

        trio.run(both)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_the_device_wait_spins_before_it_sleeps() -> None:
    """A request arriving within the spin is taken without a pass through trio; one arriving
    later is waited for in trio (block_ms=0: no blocking poll in between)."""
    read_end, write_end = os.pipe()
    try:

        def feed_after(seconds: float) -> threading.Thread:
            thread = threading.Thread(target=lambda: (time.sleep(seconds), os.write(write_end, b"x")))
            thread.start()
            return thread

        async def main(wait: loop._DeviceWait) -> int:
            wait.left = 2
            feeder = feed_after(0.01)
            await wait(read_end)
            feeder.join()
            os.read(read_end, 1)
            return wait.left

        # spins up to the hang bound: the write 10 ms on comes within it however loaded the machine
        assert trio.run(main, loop._DeviceWait(burst=2, block_ms=0, spin_ns=int(HANG * 1e9))) == 1  # spun
        assert trio.run(main, loop._DeviceWait(burst=2, block_ms=0, spin_ns=0)) == 2  # slept in trio
    finally:
        os.close(read_end)
        os.close(write_end)


def test_serve_requests_runs_one_worker_and_restores_pyfuse3s_trio(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []

    async def fake_main(min_tasks: int, max_tasks: int) -> None:
        seen.append((pyfuse3.trio.Lock, min_tasks, max_tasks))  # type: ignore[attr-defined]

    original = pyfuse3.trio  # type: ignore[attr-defined]
    monkeypatch.setattr(pyfuse3, "main", fake_main)
    with loop.one_worker():
        trio.run(loop.serve_requests)
    assert seen == [(loop._FreeLock, 1, 1)]
    assert pyfuse3.trio is original  # type: ignore[attr-defined]


def test_pyfuse3_makes_its_worker_lock_from_the_one_worker_view(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """pyfuse3.init creates the lock its loop takes per request: the free one, not trio's."""
    seen = []

    def fake_init(*args: object) -> None:
        seen.append(pyfuse3.trio.Lock)  # type: ignore[attr-defined]
        raise RuntimeError("not mounting in this test")

    original = pyfuse3.trio  # type: ignore[attr-defined]
    monkeypatch.setattr(pyfuse3, "init", fake_init)
    with pytest.raises(mount.MountError):
        mount.serve(tmp_path / "state", tmp_path / "mnt", set())
    assert seen == [loop._FreeLock]
    assert pyfuse3.trio is original  # type: ignore[attr-defined]
