"""bench/vfs.py: the VFS path API against the same os.* calls on tmpfs, and native vs Python.

Prints ops/s for each and the ratio K time / peer time (lower is better; 1.0 is parity). After
each row the two sides must hold the same (names and sizes, the big file's bytes, every read's
data), or the bench stops before printing it (bench/agree.py).
With --repeat R the VFS rows run R times, each time K and the peer back to back on a fresh
state; a row shows the median run (by ratio), so a burst of load on a shared machine moves it
less than it moves a single run.
Run: .venv/bin/python bench/vfs.py [--n 5000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agree import agree  # noqa: E402

from kfs.kstate import KState  # noqa: E402
from kfs.vfs import VFS, PathFS  # noqa: E402

TMPFS = "/dev/shm"
BLOCK = b"k" * 4096


def timed(fn: Callable[[int], object], n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        fn(i)
    return time.perf_counter() - start


def vfs_rows(n: int) -> list[tuple[str, float, float]]:
    """(operation, K seconds, tmpfs seconds) for n operations each, each row's work checked."""
    state_dir = tempfile.mkdtemp(prefix="kbench-")
    host = tempfile.mkdtemp(prefix="kbench-", dir=TMPFS)
    try:
        fs = PathFS(VFS(KState(state_dir, create=True), by="bench"))
        fs.mkdir("/b")
        rows: list[tuple[str, float, float]] = []

        def same_tree() -> None:  # the last row left the same names and sizes on both sides
            k = sorted((name, fs.stat(f"/b/{name}").size) for name in fs.readdir("/b"))
            peer = sorted((name, os.stat(f"{host}/{name}").st_size) for name in os.listdir(host))
            agree(rows[-1][0], k, peer, "tmpfs")
        rows.append(("create", timed(lambda i: fs.write_file(f"/b/f{i}", b""), n),
                     timed(lambda i: os.close(os.open(f"{host}/f{i}", os.O_CREAT | os.O_WRONLY, 0o644)), n)))
        same_tree()
        rows.append(("stat", timed(lambda i: fs.stat(f"/b/f{i}"), n), timed(lambda i: os.stat(f"{host}/f{i}"), n)))
        big_k = fs.open("/b/big", os.O_CREAT | os.O_RDWR)
        big_h = os.open(f"{host}/big", os.O_CREAT | os.O_RDWR, 0o644)
        offsets = [random.Random(i).randrange(1024) * 4096 for i in range(n)]
        rows.append(("4 KiB write", timed(lambda i: big_k.pwrite(BLOCK, offsets[i]), n),
                     timed(lambda i: os.pwrite(big_h, BLOCK, offsets[i]), n)))
        agree("4 KiB write", fs.read_file("/b/big"), Path(f"{host}/big").read_bytes(), "tmpfs")
        rows.append(("4 KiB read", timed(lambda i: big_k.pread(4096, offsets[i]), n),
                     timed(lambda i: os.pread(big_h, 4096, offsets[i]), n)))
        agree("4 KiB read", [big_k.pread(4096, off) for off in offsets],
              [os.pread(big_h, 4096, off) for off in offsets], "tmpfs")
        big_k.close()
        os.close(big_h)
        rows.append(("rename", timed(lambda i: fs.rename(f"/b/f{i}", f"/b/g{i}"), n),
                     timed(lambda i: os.rename(f"{host}/f{i}", f"{host}/g{i}"), n)))
        same_tree()
        rows.append(("unlink", timed(lambda i: fs.unlink(f"/b/g{i}"), n),
                     timed(lambda i: os.unlink(f"{host}/g{i}"), n)))
        same_tree()
        return rows
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)
        shutil.rmtree(host, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=5000, help="operations per row")
    parser.add_argument("--repeat", type=int, default=1, help="runs of the VFS rows; the median run is shown")
    args = parser.parse_args()
    print(f"{'operation':<28}{'K ops/s':>12}{'peer ops/s':>12}{'K/peer time':>13}")
    runs = f", median of {args.repeat} runs" if args.repeat > 1 else ""
    print(f"-- VFS path API vs os.* on tmpfs ({TMPFS}), {args.n} ops each{runs}")
    results = [vfs_rows(args.n) for _ in range(max(args.repeat, 1))]
    for i, (name, _, _) in enumerate(results[0]):
        by_ratio = sorted((run[i] for run in results), key=lambda row: row[1] / row[2])
        _, k, peer = by_ratio[len(by_ratio) // 2]
        print(f"{name:<28}{args.n / k:>12,.0f}{args.n / peer:>12,.0f}{k / peer:>12.2f}x")
    spec = importlib.util.spec_from_file_location("bench_native", Path(__file__).with_name("native.py"))
    assert spec is not None and spec.loader is not None
    bench_native = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_native)  # the native rows, measured in the same run
    print("-- native core vs its pure-Python twin (K = native, peer = twin)")
    for name, native_s, twin_s in bench_native.run():
        print(f"{name:<28}{1 / native_s:>12,.1f}{1 / twin_s:>12,.1f}{native_s / twin_s:>12.3f}x"
              f"   (native {twin_s / native_s:,.0f}x faster)")


if __name__ == "__main__":
    main()
