"""Fork benchmark (kfs.forks): what a fork costs, against its parent and fuse-overlayfs, in one run.

    .venv/bin/python bench/fork.py [--scale 1] [--files 1000,100000]

Rows (goals in brackets):
- fork creation in a workspace of 1,000 and 100,000 files, median of 21 (the same for both, < 10 ms);
- a 1 MiB file the fork has not touched read in the fork vs in its parent, median of 51 (within 1.2x);
- the first 4 KiB write into a 64 MiB file in the fork (one chunk copied up) vs the same write in
  the parent, median of 51;
- a 2 MiB overwrite of a file its 300 forks all see, vs the same overwrite without forks, and
  what it grew the `layers` database by (the old chunks kept once for all 300, not once each:
  it was 582 MiB, a copy per fork; goal: one copy, 2 MiB);
- `tar x` of a 200 MiB tree (at --scale 1) into a fork's FUSE mount vs the plain kfs mount vs
  fuse-overlayfs over tmpfs (apt-get install fuse-overlayfs), each on a parent that holds the
  100,000-file workspace for the forks.
Ratios are K time / peer time (lower is better for K). Each row's work is checked before any row
is printed (bench/agree.py): every fork holds its parent's workspace, the fork reads the parent's
bytes, the fork's and the parent's files match after the same writes, and each target's
extracted tree is the archive's source tree. Run as root.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.append(str(REPO / "bench"))  # after the repository: bench/native.py is not the native package

from agree import agree  # noqa: E402
from fs import make_tree, sh, tmpfs, tree_digest, wait_mounted  # noqa: E402

from kfs import forks  # noqa: E402
from kfs.kstate import KState  # noqa: E402
from kfs.vfs import VFS, PathFS  # noqa: E402

MIB = 1 << 20
KOMPUTER = [sys.executable, "-m", "kshell.cli"]


def median_time(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def workspace(state: KState, files: int) -> PathFS:
    """`files` small files in directories of 1,000, and the files the rows read and write."""
    fs = PathFS(VFS(state, by="bench"))
    for i in range(files):
        if i % 1000 == 0:
            fs.mkdir(f"/w/d{i // 1000}", parents=True)
        fs.write_file(f"/w/d{i // 1000}/f{i}", b"x" * 100)
    fs.write_file("/w/read.bin", os.urandom(MIB))
    fs.write_file("/w/big.bin", bytes(64 * MIB))
    return fs


def creation(base: Path, files: int) -> float:
    with KState(base / f"create-{files}", create=True) as state:
        workspace(state, files)
        made: list[int] = []
        took = median_time(lambda: made.append(forks.create(state, by="bench")), 21)
        parent = PathFS(VFS(state, by="bench"))
        fork = PathFS(VFS(forks.view(state, made[-1]), by="bench"))
        agree(f"fork creation, {files:,} files", sorted(fork.readdir("/w")), sorted(parent.readdir("/w")), "parent")
    return took


def reads_and_copy_up(base: Path) -> tuple[float, float, float, float]:
    with KState(base / "rw", create=True) as state:
        parent = workspace(state, 1000)
        fork = PathFS(VFS(forks.view(state, forks.create(state, by="bench")), by="bench"))
        read_parent = median_time(lambda: parent.read_file("/w/read.bin"), 51)
        read_fork = median_time(lambda: fork.read_file("/w/read.bin"), 51)
        agree("read 1 MiB untouched", fork.read_file("/w/read.bin"), parent.read_file("/w/read.bin"), "parent")
        block = os.urandom(4096)
        offsets = iter(range(0, 64 * MIB, 65536 * 8))  # a chunk the fork has not written yet, each time

        def first_write(fs: PathFS) -> Callable[[], None]:
            def write() -> None:
                with fs.open("/w/big.bin", os.O_RDWR) as f:
                    f.pwrite(block, next(offsets) + 12288)
            return write

        write_fork = median_time(first_write(fork), 51)
        offsets = iter(range(0, 64 * MIB, 65536 * 8))
        write_parent = median_time(first_write(parent), 51)
        agree("first 4 KiB write", fork.read_file("/w/big.bin"), parent.read_file("/w/big.bin"), "parent")
    return read_fork, read_parent, write_fork, write_parent


def layer_bytes(state: KState) -> int:
    """The bytes of LMDB pages the `layers` database takes."""
    with state.read() as txn:
        stat = txn._t.stat(txn._dbs["layers"])
    return (stat["branch_pages"] + stat["leaf_pages"] + stat["overflow_pages"]) * stat["psize"]


def overwrite(base: Path, count: int = 300) -> tuple[float, float, int]:
    """Seconds for a 2 MiB overwrite without forks, then with `count` forks that see the file,
    and the bytes the latter grew `layers` by."""
    with KState(base / "overwrite", create=True) as state:
        fs = PathFS(VFS(state, by="bench"))
        fs.write_file("/f.bin", os.urandom(2 * MIB))
        plain = median_time(lambda: fs.write_file("/f.bin", os.urandom(2 * MIB)), 5)
        for _ in range(count):
            forks.create(state, by="bench")
        before = layer_bytes(state)
        t = time.perf_counter()
        fs.write_file("/f.bin", os.urandom(2 * MIB))
        took = time.perf_counter() - t
        return plain, took, layer_bytes(state) - before


def tar_x(base: Path, scale: float) -> dict[str, float]:
    """Seconds to untar the tree into each target."""
    out: dict[str, float] = {}
    total = int(200 * MIB * scale)
    with tmpfs(base, "src") as src:
        tree = make_tree(src, max(int(2000 * scale), 10), total)
        archive = src / "tree.tar"
        sh("tar", "cf", str(archive), "-C", str(tree.parent), tree.name)
        source = tree_digest(tree)

        def untar(into: Path) -> float:
            t = time.perf_counter()
            sh("tar", "xf", str(archive), "-C", str(into))
            os.sync()
            took = time.perf_counter() - t
            agree(f"tar x into {into.parent.name}", tree_digest(into / tree.name), source, "the source tree")
            return took

        state_dir = base / "mounted"
        with KState(state_dir, create=True) as state:
            workspace(state, 100_000)
            number = forks.create(state, by="bench")
        for name, extra in (("kfs", []), ("kfs fork", ["--fork", str(number)])):
            mnt = base / name.replace(" ", "-")
            mnt.mkdir()
            sh(*KOMPUTER, "mount", "--state", str(state_dir), str(mnt), *extra, cwd=REPO)
            try:
                (mnt / "x").mkdir()
                out[name] = untar(mnt / "x")
            finally:
                sh("fusermount3", "-u", str(mnt))
        if shutil.which("fuse-overlayfs") is None:
            print("fuse-overlayfs: not installed (apt-get install fuse-overlayfs)")
            return out
        with tmpfs(base, "ovl") as ovl:
            for d in ("lower", "upper", "work"):
                (ovl / d).mkdir()
            for i in range(0, 100_000, 1000):  # the same parent: 100,000 files
                d = ovl / "lower" / f"d{i // 1000}"
                d.mkdir()
                for j in range(i, i + 1000):
                    (d / f"f{j}").write_bytes(b"x" * 100)
            mnt = base / "overlay"
            mnt.mkdir()
            proc = subprocess.Popen(["fuse-overlayfs", "-f", "-o", f"lowerdir={ovl}/lower,upperdir={ovl}/upper,"
                                     f"workdir={ovl}/work", str(mnt)])
            try:
                wait_mounted(mnt, proc)
                (mnt / "x").mkdir()
                out["fuse-overlayfs"] = untar(mnt / "x")
            finally:
                sh("fusermount3", "-u", str(mnt))
                proc.wait(timeout=30)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="the tar tree's size, 1 = 200 MiB")
    parser.add_argument("--files", default="1000,100000", help="workspace sizes for the creation row")
    parser.add_argument("--no-tar", action="store_true", help="skip the FUSE rows")
    parser.add_argument("--overwrite-only", action="store_true", help="only the 300-fork overwrite rows")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (the tar rows mount tmpfs and FUSE filesystems)")
    base = Path(tempfile.mkdtemp(prefix="k-bench-fork."))
    try:
        rows = []
        plain, took, grown = overwrite(base)
        rows.append(("2 MiB overwrite, 300 forks", took * 1e3, "ms", took / plain, "vs no forks"))
        rows.append(("  layers grown by it", grown / MIB, "MiB", grown / (2 * MIB), "vs 2 MiB"))
        if args.overwrite_only:
            args.files, args.no_tar = "", True
        sizes = [int(n) for n in args.files.split(",") if n]
        made = {n: creation(base, n) for n in sizes}
        for n in sizes:
            rows.append((f"fork creation, {n:,} files", made[n] * 1e3, "ms", made[n] / made[sizes[0]],
                         f"vs {sizes[0]:,} files"))
        if not args.overwrite_only:
            read_fork, read_parent, write_fork, write_parent = reads_and_copy_up(base)
            rows.append(("read 1 MiB untouched, fork", read_fork * 1e3, "ms", read_fork / read_parent, "vs parent"))
            rows.append(("first 4 KiB write (copy-up), fork", write_fork * 1e6, "us", write_fork / write_parent,
                         "vs parent"))
        if not args.no_tar:
            times = tar_x(base, args.scale)
            for name in ("kfs fork", "kfs", "fuse-overlayfs"):
                if name in times:
                    peer = times.get("fuse-overlayfs")
                    rows.append((f"tar x {200 * args.scale:.0f} MiB, {name}", times[name], "s",
                                 times[name] / peer if peer else float("nan"), "vs fuse-overlayfs"))
            if "kfs" in times:
                rows.append(("tar x, fork / plain mount", times["kfs fork"], "s", times["kfs fork"] / times["kfs"],
                             "vs kfs"))
        print(f"{'row':<40} {'time':>10}      {'ratio':>7}")
        for name, value, unit, ratio, against in rows:
            print(f"{name:<40} {value:>10.3f} {unit:<4} {ratio:>7.2f}x {against}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
