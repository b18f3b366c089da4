"""Filesystem benchmark: the kfs mount against tmpfs and C FUSE peers, in one run.

    .venv/bin/python bench/fs.py [--scale 0.25] [--only tmpfs,kfs,...] [--repeat 3]

Targets: tmpfs (the limit), bindfs and fuse-overlayfs over tmpfs (C FUSE peers: `make
test-deps`, or apt-get install bindfs fuse-overlayfs), sshfs to Debian's sshd started by the bench on a loopback port, and kfs (kfs-writeback: mounted
`-o writeback`). Workloads
(sizes at --scale 1, the issue's): sequential write with fsync and read of a 1 GiB file, 4 KiB
random reads and writes, create+stat+unlink of 10,000 files, `ls -l` of a 10,000-entry
directory, `grep -r` over 2,000 files, `tar c` and `tar x` of a 200 MiB tree. Prints one table
and the ratios kfs/peer (higher is better for kfs). Run as root. On a shared or noisy machine,
`--repeat N` runs every target N times, round-robin on fresh mounts, and keeps each
workload's best result. Every workload also yields what it did (the file's digest, the blocks
read, the listing's names and sizes, grep's counts, the archive's members and the tree
extracted), which must be the same on every target as on the first, or the bench stops before
its table (bench/agree.py): a rate for other work is no result.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MIB = 1 << 20

from agree import agree  # noqa: E402  (bench/, the script's own directory, or fork.py's path)

Result = tuple[float, str, object]  # value, unit, what the workload did (compared across targets)


def sh(*cmd: str, **kw: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(cmd, check=True, capture_output=True, **kw)  # type: ignore[call-overload]


def drop_caches() -> None:
    os.sync()
    with contextlib.suppress(OSError):
        Path("/proc/sys/vm/drop_caches").write_text("3\n")


@contextmanager
def tmpfs(base: Path, name: str) -> Iterator[Path]:
    path = base / name
    path.mkdir()
    sh("mount", "-t", "tmpfs", "-o", "size=80%", "tmpfs", str(path))
    try:
        yield path
    finally:
        sh("umount", "-l", str(path))


def wait_mounted(path: Path, proc: subprocess.Popen[bytes] | None = None, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not os.path.ismount(path):
        if proc is not None and proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{path} did not mount")
        time.sleep(0.05)


@contextmanager
def local_sshd(base: Path) -> Iterator[tuple[int, Path]]:
    """Debian's sshd on a free loopback port, root let in by a throwaway key: the sshfs peer.

    Its own config, host key and authorized keys live in `base`; the system's sshd is untouched.
    """
    if not Path("/usr/sbin/sshd").exists():
        sys.exit("the sshfs peer needs sshd: apt-get install openssh-server")
    d = base / "sshd"
    d.mkdir()
    for key in ("host", "client"):
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / key))
    shutil.copy(d / "client.pub", d / "authorized_keys")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (d / "config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host\nPidFile {d}/sshd.pid\n"
        f"AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
        "Subsystem sftp /usr/lib/openssh/sftp-server\n"
    )
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    proc = subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", str(d / "config")])
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("sshd did not start")
            time.sleep(0.05)
        yield port, d / "client"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextmanager
def target(name: str, base: Path) -> Iterator[Path]:
    if name == "tmpfs":
        with tmpfs(base, "tmpfs") as path:
            yield path
        return
    if name == "bindfs":
        with tmpfs(base, "bind-src") as src:
            mnt = base / "bindfs"
            mnt.mkdir()
            sh("bindfs", str(src), str(mnt))
            try:
                yield mnt
            finally:
                sh("fusermount3", "-u", str(mnt))
        return
    if name == "fuse-overlayfs":
        with tmpfs(base, "ovl-src") as src:
            for d in ("lower", "upper", "work"):
                (src / d).mkdir()
            mnt = base / "overlay"
            mnt.mkdir()
            sh("fuse-overlayfs", "-o", f"lowerdir={src}/lower,upperdir={src}/upper,workdir={src}/work", str(mnt))
            try:
                yield mnt
            finally:
                sh("fusermount3", "-u", str(mnt))
        return
    if name == "sshfs":
        with tmpfs(base, "ssh-src") as src, local_sshd(base) as (port, key):
            mnt = base / "sshfs"
            mnt.mkdir()
            options = f"IdentityFile={key},StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,BatchMode=yes"
            sh("sshfs", "-p", str(port), "-o", options, f"root@127.0.0.1:{src}", str(mnt))
            try:
                yield mnt
            finally:
                sh("fusermount3", "-u", str(mnt))
        return
    if name in ("kfs", "kfs-writeback"):  # the latter: `-o writeback`, the kernel's writeback cache
        with tmpfs(base, f"{name}-state") as state:
            mnt = base / name
            mnt.mkdir()
            env = dict(os.environ, PYTHONPATH=str(REPO))
            cmd = [sys.executable, "-m", "kshell.cli", "mount", "--foreground", "--state", str(state / "s"), str(mnt),
                   *(["-o", "writeback"] if name == "kfs-writeback" else [])]
            proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL)
            try:
                wait_mounted(mnt, proc)
                yield mnt
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)
        return
    raise ValueError(name)


# -- workloads: each returns (value, unit) -----------------------------------------------------


def digest(path: Path) -> str:
    """The file's bytes, read outside every timing."""
    h = hashlib.blake2b()
    with open(path, "rb") as f:
        while chunk := f.read(MIB):
            h.update(chunk)
    return h.hexdigest()


def tree_digest(tree: Path) -> list[tuple[str, int, str]]:
    """Each file's path, size and bytes, read outside every timing."""
    return sorted((str(p.relative_to(tree)), p.stat().st_size, digest(p)) for p in tree.rglob("*") if p.is_file())


def seq_write(root: Path, size: int) -> Result:
    block = random.Random(5).randbytes(MIB)  # the same bytes on every target
    start = time.perf_counter()
    fd = os.open(root / "big", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for _ in range(size // MIB):
        os.write(fd, block)
    os.fsync(fd)
    os.close(fd)
    rate = size / MIB / (time.perf_counter() - start)
    return rate, "MiB/s", digest(root / "big")


def seq_read(root: Path, size: int) -> Result:
    drop_caches()
    h = hashlib.blake2b()  # on every target alike: a read of other bytes is no result
    start = time.perf_counter()
    fd = os.open(root / "big", os.O_RDONLY)
    while chunk := os.read(fd, MIB):
        h.update(chunk)
    os.close(fd)
    return size / MIB / (time.perf_counter() - start), "MiB/s", h.hexdigest()


def rand_io(root: Path, size: int, ops: int, write: bool) -> Result:
    rng = random.Random(7)
    block = random.Random(9).randbytes(4096)
    fd = os.open(root / "big", os.O_RDWR)
    blocks = size // 4096
    h = hashlib.blake2b()
    start = time.perf_counter()
    for _ in range(ops):
        at = rng.randrange(blocks) * 4096
        if write:
            os.pwrite(fd, block, at)
        else:
            h.update(os.pread(fd, 4096, at))
    os.close(fd)
    rate = ops / (time.perf_counter() - start)
    return rate, "ops/s", digest(root / "big") if write else h.hexdigest()


def create_stat_unlink(root: Path, count: int) -> Result:
    d = root / "many"
    d.mkdir()
    sizes = 0
    start = time.perf_counter()
    for i in range(count):
        os.close(os.open(d / f"f{i}", os.O_WRONLY | os.O_CREAT, 0o644))
    for i in range(count):
        sizes += os.stat(d / f"f{i}").st_size
    for i in range(count):
        os.unlink(d / f"f{i}")
    rate = 3 * count / (time.perf_counter() - start)
    return rate, "ops/s", (sizes, os.listdir(d))


def ls_l(root: Path, count: int) -> Result:
    d = root / "listing"
    d.mkdir()
    for i in range(count):
        os.close(os.open(d / f"entry{i:06d}", os.O_WRONLY | os.O_CREAT, 0o644))
    drop_caches()
    start = time.perf_counter()
    listing = sh("ls", "-l", str(d)).stdout
    elapsed = time.perf_counter() - start
    # the mode, size and name of each entry (owners differ on sshfs, times on every target)
    entries = [(f[0], f[4], f[-1]) for f in (line.split() for line in listing.splitlines()[1:])]
    return elapsed, "s", entries


def make_tree(root: Path, files: int, total: int) -> Path:
    rng = random.Random(3)
    tree = root / "tree"
    per = max(total // files, 1)
    for i in range(files):
        sub = tree / f"d{i % 40}"
        sub.mkdir(parents=True, exist_ok=True)
        vocabulary = [b"alpha", b"beta", b"gamma", b"needle" if i % 97 == 0 else b"delta"]
        words = b" ".join(rng.choice(vocabulary) for _ in range(per // 6 + 1))
        (sub / f"f{i}.txt").write_bytes(words[:per])
    return tree


def grep_r(root: Path, files: int) -> Result:
    tree = make_tree(root, files, files * 4096)
    drop_caches()
    start = time.perf_counter()
    done = subprocess.run(["grep", "-r", "-c", "needle", str(tree)], capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    shutil.rmtree(tree)
    counts = sorted(done.stdout.replace(str(tree).encode(), b"TREE").splitlines())
    return elapsed, "s", (done.returncode, counts, done.stderr)


def tar_c_x(root: Path, total: int) -> tuple[Result, Result]:
    tree = make_tree(root, 2000, total)
    drop_caches()
    archive = Path(tempfile.gettempdir()) / f"bench-fs-{os.getpid()}.tar"
    start = time.perf_counter()
    sh("tar", "cf", str(archive), "-C", str(root), "tree")
    c = time.perf_counter() - start
    members = sorted(sh("tar", "tf", str(archive)).stdout.splitlines())
    shutil.rmtree(tree)
    start = time.perf_counter()
    sh("tar", "xf", str(archive), "-C", str(root))
    x = time.perf_counter() - start
    archive.unlink()
    return (c, "s", members), (x, "s", tree_digest(root / "tree"))


def run_all(root: Path, scale: float) -> dict[str, Result]:
    size = max(int(1024 * scale), 16) * MIB
    out: dict[str, Result] = {}
    out["seq write+fsync"] = seq_write(root, size)
    out["seq read"] = seq_read(root, size)
    out["4K rand read"] = rand_io(root, size, int(20_000 * scale) or 1000, write=False)
    out["4K rand write"] = rand_io(root, size, int(20_000 * scale) or 1000, write=True)
    os.unlink(root / "big")
    out["create+stat+unlink"] = create_stat_unlink(root, int(10_000 * scale))
    out["ls -l"] = ls_l(root, int(10_000 * scale))
    out["grep -r"] = grep_r(root, int(2_000 * scale))
    out["tar c"], out["tar x"] = tar_c_x(root, int(200 * scale) * MIB)
    return out


def best(old: dict[str, Result], new: dict[str, Result]) -> dict[str, Result]:
    """Each workload's better result: the higher rate, or the shorter time (unit "s")."""
    out = dict(new)
    for w, (value, unit, did) in old.items():
        if w in out and (value < out[w][0] if unit == "s" else value > out[w][0]):
            out[w] = (value, unit, did)
    return out


def same_work(name: str, results: dict[str, Result], first: tuple[str, dict[str, Result]] | None) -> None:
    """Stop unless every workload on `name` did what it did on the first target."""
    if first is not None:
        for w, (_, _, did) in results.items():
            agree(f"{name}: {w}", did, first[1][w][2], first[0])


def cell(result: Result) -> str:
    value, unit, _ = result
    return f"{value:16.3f}" if unit == "s" else f"{value:16.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the issue's sizes (default 1)")
    parser.add_argument("--only", default="tmpfs,bindfs,fuse-overlayfs,sshfs,kfs,kfs-writeback")
    parser.add_argument("--repeat", type=int, default=1, help="runs per target, best kept (default 1)")
    args = parser.parse_args()
    names = args.only.split(",")
    results: dict[str, dict[str, Result]] = {}
    first: tuple[str, dict[str, Result]] | None = None  # the first target's results: what every other must do
    skipped: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="bench-fs.") as tmp:
        for run in range(args.repeat):
            for name in names:
                if name in skipped:
                    continue
                try:
                    base = Path(tmp) / f"{run}"
                    base.mkdir(exist_ok=True)
                    with target(name, base) as root:
                        done = run_all(root, args.scale)
                    same_work(name, done, first)
                    first = first or (name, done)
                    results[name] = best(results.get(name, {}), done)
                except (OSError, RuntimeError, subprocess.CalledProcessError, FileNotFoundError) as e:
                    print(f"{name}: skipped ({e})", file=sys.stderr)
                    skipped.add(name)
                    results.pop(name, None)
    if not results:
        return 1
    workloads = list(next(iter(results.values())))
    cols = list(results)
    print(f"bench/fs.py at scale {args.scale}" + (f", best of {args.repeat} runs" if args.repeat > 1 else ""))
    print(f"{'workload':22}" + "".join(f"{c:>16}" for c in cols) + "  unit")
    for w in workloads:
        unit = next(iter(results.values()))[w][1]
        cells = "".join(f"{cell(results[c][w])}" if w in results[c] else f"{'-':>16}" for c in cols)
        print(f"{w:22}{cells}  {unit}")
    for mine in (c for c in ("kfs", "kfs-writeback") if c in results):
        print(f"\n{mine} / peer (>1: {mine} better)")
        for peer in (c for c in cols if not c.startswith("kfs")):
            ratios = []
            for w in workloads:
                k, p = results[mine][w][0], results[peer][w][0]
                better = k / p if results[mine][w][1] != "s" else p / k
                ratios.append(f"{w}={better:.2f}")
            print(f"  vs {peer}: " + ", ".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
