"""bench/tools.py: the K shell's tools on the VFS against bash + GNU tools on tmpfs.

An "agent probe" workload (issue 5): (1) ls -la of a 5,000-entry directory, (2) grep -rn over a
tree of 2,000 small text files, (3) find -name '*.txt' | xargs wc -l over that tree, (4) a for
loop running sed -n '1,20p' on 500 files, (5) awk field sums over a 50,000-line CSV, (6) jq over
a 5 MB JSON file, (7) sort | uniq -c over 200,000 lines.

Both sides are seeded once, outside the timings, with the same generated data (seeded RNG, the
same mtimes): K in a fresh KState/VFS under /home/agent, bash in a temp dir on /dev/shm. Each
case is one script: K runs it in-process (`kshell.Shell(...).run`, a new Shell per run, timed
around `.run`); bash runs it as `bash -c` (timed around the subprocess, start-up included).
Outputs are compared (as sorted lines where the traversal order is the file system's own, by
name, mode and size for ls -la), with the exit status: a mismatch stops the bench before that
row's ratio (bench/agree.py), since a ratio against a peer that did other work is no result.
Prints seconds for each side and K/bash (lower is better; the target is 1.5x or less overall).
Run: .venv/bin/python bench/tools.py [--quick] [--repeat N] [--only 1,4]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # ahead of bench/, whose native.py would shadow the `native` package

from agree import agree  # noqa: E402

import kshell  # noqa: E402
from kfs.kstate import KState  # noqa: E402
from kfs.vfs import ROOT as ROOT_CRED  # noqa: E402
from kfs.vfs import VFS, PathFS  # noqa: E402

HOME = "/home/agent"
SEED_MTIME = 1704164645  # 2024-01-02 03:04:05 UTC, on every seeded file and directory
ENV = {"LC_ALL": "C", "TZ": "UTC", "PATH": "/usr/local/bin:/usr/bin:/bin", "USER": "root"}

WORDS = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi",
    "psi", "omega", "error", "warning", "info", "debug", "request", "response", "cache", "token",
    "session", "socket", "buffer", "parser", "kernel", "module", "config", "value", "index",
    "vector", "matrix", "TODO", "FIXME", "handler", "client", "server", "worker", "queue",
    "thread", "import", "return", "yield",
]
REGIONS = ("north", "south", "east", "west", "central")


# --------------------------------------------------------------------------- the data


@dataclass
class Sizes:
    big_dir: int = 5_000
    tree_files: int = 2_000
    loop_files: int = 500
    csv_lines: int = 50_000
    json_bytes: int = 5_000_000
    sort_lines: int = 200_000


QUICK = Sizes(big_dir=1_000, tree_files=400, loop_files=100, csv_lines=10_000,
              json_bytes=1_000_000, sort_lines=40_000)


def generate(sizes: Sizes, seed: int = 5) -> tuple[dict[str, bytes], list[str], list[str]]:
    """({relative path: content}, directories parents first, the tree's .txt files in order)."""
    rng = random.Random(seed)
    files: dict[str, bytes] = {}
    dirs = ["big", "tree", "data"]

    for i in range(sizes.big_dir):
        ext = rng.choice((".py", ".txt", ".json", ".log", ".c", ""))
        files[f"big/entry_{i:05d}{ext}"] = b"x" * rng.randint(0, 300)

    txt: list[str] = []
    per_dir = 50
    for i in range(sizes.tree_files):
        d = f"tree/pkg{i // per_dir // 5:02d}/mod{i // per_dir % 5}"
        if d not in dirs:
            parts = d.split("/")
            for depth in range(2, len(parts) + 1):
                p = "/".join(parts[:depth])
                if p not in dirs:
                    dirs.append(p)
        ext = ".txt" if i % 10 else ".md"  # a tenth are not *.txt, for find -name to skip
        path = f"{d}/file{i:04d}{ext}"
        lines = []
        for _ in range(rng.randint(5, 40)):
            lines.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))))
        files[path] = ("\n".join(lines) + "\n").encode()
        if ext == ".txt":
            txt.append(path)

    rows = ["id,name,region,qty,price"]
    for i in range(sizes.csv_lines - 1):
        rows.append(f"{i},{rng.choice(WORDS)}_{rng.randint(0, 999)},{rng.choice(REGIONS)},"
                    f"{rng.randint(1, 100)},{rng.randint(100, 99999)}")
    files["data/sales.csv"] = ("\n".join(rows) + "\n").encode()

    items = []
    size = 0
    while size < sizes.json_bytes:
        item = {"id": len(items), "name": f"{rng.choice(WORDS)}-{rng.randint(0, 99999)}",
                "active": rng.random() < 0.6, "score": rng.randint(0, 1000),
                "tags": rng.sample(WORDS[:12], rng.randint(0, 3)),
                "owner": {"region": rng.choice(REGIONS), "level": rng.randint(1, 9)}}
        items.append(item)
        size += len(json.dumps(item)) + 2
    files["data/items.json"] = json.dumps({"count": len(items), "items": items}, indent=1).encode()

    vocab = [f"{rng.choice(WORDS)}_{n}" for n in range(4_000)]
    weights = [1.0 / (n + 1) for n in range(len(vocab))]  # Zipf-like, as real logs are
    lines = rng.choices(vocab, weights, k=sizes.sort_lines)
    files["data/words.txt"] = ("\n".join(lines) + "\n").encode()
    return files, dirs, txt


# --------------------------------------------------------------------------- the cases


@dataclass(frozen=True)
class Case:
    key: str
    title: str
    script: str
    compare: str = "exact"  # "exact", "lines" (sorted lines) or "ls"


def cases(sizes: Sizes, txt: list[str]) -> list[Case]:
    loop_list = " ".join(txt[: sizes.loop_files])
    return [
        Case("1", f"ls -la, {sizes.big_dir:,}-entry directory", "ls -la big", "ls"),
        Case("2", f"grep -rn over {sizes.tree_files:,} files", "grep -rn 'FIXME.*token' tree", "lines"),
        Case("3", "find -name '*.txt' | xargs wc -l", "find tree -name '*.txt' | xargs wc -l", "lines"),
        Case("4", f"for loop: sed -n '1,20p' x {sizes.loop_files}",
             f"for f in {loop_list}; do\n  sed -n '1,20p' \"$f\"\ndone\n"),
        Case("5", f"awk field sums, {sizes.csv_lines:,}-line CSV",
             "awk -F, 'NR > 1 { q += $4; p += $5; n[$3] += $4 }\n"
             "  END { print NR, q, p; print n[\"north\"], n[\"south\"], n[\"east\"], n[\"west\"],"
             " n[\"central\"] }' data/sales.csv"),
        Case("6", f"jq over a {sizes.json_bytes / 1e6:g} MB JSON",
             "jq '[.items[] | select(.active) | .score] | add' data/items.json\n"
             "jq -r '.items[] | select(.score > 990) | \"\\(.id) \\(.name) \\(.owner.region)\"'"
             " data/items.json\n"
             "jq '.count' data/items.json"),
        Case("7", f"sort | uniq -c, {sizes.sort_lines:,} lines", "sort data/words.txt | uniq -c"),
    ]


def normalise(out: bytes, how: str) -> bytes:
    if how == "lines":
        return b"\n".join(sorted(out.splitlines()))
    if how == "ls":  # mode, size and name of each entry; link counts, dir sizes, totals vary
        keep = []
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 9 and f[-1] not in (b".", b".."):
                keep.append(b" ".join((f[0][:10], f[4], f[-1])))
        return b"\n".join(keep)
    return out


def digest(out: bytes) -> str:
    return hashlib.sha256(out).hexdigest()[:10]


# --------------------------------------------------------------------------- the K side


class KSide:
    def __init__(self, files: dict[str, bytes], dirs: list[str]) -> None:
        self.state_dir = tempfile.mkdtemp(prefix="kbench-tools-")
        self.state = KState(os.path.join(self.state_dir, "state"), create=True)
        vfs = VFS(self.state, by="bench")
        root = PathFS(vfs, cred=ROOT_CRED, cwd="/", home=HOME, umask=0o022)
        root.mkdir(HOME, parents=True)
        root.mkdir("/tmp", 0o1777)
        root.chmod("/tmp", 0o1777)
        for d in dirs:
            root.mkdir(f"{HOME}/{d}", parents=True)
        for path, content in files.items():
            root.write_file(f"{HOME}/{path}", content)
        ns = SEED_MTIME * 1_000_000_000
        for path in [*files, *dirs, "."]:
            root.utime(f"{HOME}/{path}", ns, ns, follow=False)
        self.fs = PathFS(vfs, cred=ROOT_CRED, cwd=HOME, home=HOME, umask=0o022, tilde=False)

    def run(self, script: str) -> tuple[float, bytes, bytes, int]:
        shell = kshell.Shell(self.fs, name="bash", env=dict(ENV, HOME=HOME, PWD=HOME))
        start = time.perf_counter()
        result = shell.run(script)
        elapsed = time.perf_counter() - start
        return elapsed, result.stdout, result.stderr, result.status

    def close(self) -> None:
        self.state.close()
        shutil.rmtree(self.state_dir, ignore_errors=True)


# --------------------------------------------------------------------------- the bash side


class BashSide:
    def __init__(self, bash: str, files: dict[str, bytes], dirs: list[str]) -> None:
        self.bash = bash
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        if base is None:
            sys.stderr.write("warning: /dev/shm not writable; the bash side runs on the default temp dir\n")
        self.home = tempfile.mkdtemp(prefix="kbench-tools-", dir=base)
        for d in dirs:
            os.makedirs(os.path.join(self.home, d), exist_ok=True)
        for path, content in files.items():
            with open(os.path.join(self.home, path), "wb") as fh:
                fh.write(content)
        ns = SEED_MTIME * 1_000_000_000
        for path in [*files, *dirs, "."]:
            os.utime(os.path.join(self.home, path), ns=(ns, ns), follow_symlinks=False)

    def run(self, script: str) -> tuple[float, bytes, bytes, int]:
        start = time.perf_counter()
        proc = subprocess.run([self.bash, "-c", script], capture_output=True, cwd=self.home,
                              env=dict(ENV, HOME=self.home, PWD=self.home), stdin=subprocess.DEVNULL)
        elapsed = time.perf_counter() - start
        return elapsed, proc.stdout, proc.stderr, proc.returncode

    def close(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)


# --------------------------------------------------------------------------- main


def best_of(run: Callable[[str], tuple[float, bytes, bytes, int]], script: str, repeat: int,
            label: str) -> tuple[float, bytes, int]:
    runs = [run(script) for _ in range(repeat)]
    _, out, err, status = runs[0]
    if err or status != 0:
        sys.stderr.write(f"{label}: status {status}: {err.decode(errors='replace')[:300]}\n")
    return min(r[0] for r in runs), out, status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller data (about a fifth)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per side and case; the best is kept")
    parser.add_argument("--only", default="", help="comma-separated case numbers, e.g. 1,4")
    args = parser.parse_args()
    bash = shutil.which("bash")
    if bash is None:
        sys.exit("bash not found: install bash to run this benchmark")
    missing = [t for t in ("jq", "gawk") if shutil.which(t) is None]
    if missing:  # bash's side would fail those cases: nothing to compare with
        sys.exit(f"not installed: {', '.join(missing)}: install them (apt-get install -y {' '.join(missing)})")

    sizes = QUICK if args.quick else Sizes()
    files, dirs, txt = generate(sizes)
    wanted = set(args.only.split(",")) if args.only else None
    todo = [c for c in cases(sizes, txt) if not wanted or c.key in wanted]

    start = time.perf_counter()
    k_side = KSide(files, dirs)
    k_seed = time.perf_counter() - start
    start = time.perf_counter()
    b_side = BashSide(bash, files, dirs)
    b_seed = time.perf_counter() - start
    print(f"seeded {len(files):,} files, {sum(map(len, files.values())) / 1e6:.1f} MB: "
          f"K {k_seed:.2f} s, tmpfs {b_seed:.2f} s (not timed below)")

    width = 44
    print(f"{'case':<{width}}{'K s':>9}{'bash s':>9}{'K/bash':>9}  output")
    k_total = b_total = 0.0
    try:
        for case in todo:
            k_time, k_out, k_status = best_of(k_side.run, case.script, args.repeat, f"K ({case.key})")
            b_time, b_out, b_status = best_of(b_side.run, case.script, args.repeat, f"bash ({case.key})")
            b_out = b_out.replace(b_side.home.encode(), HOME.encode())
            k_norm, b_norm = normalise(k_out, case.compare), normalise(b_out, case.compare)
            title = f"({case.key}) {case.title}"
            agree(title, (digest(k_norm), k_status, k_norm), (digest(b_norm), b_status, b_norm), "bash")
            note = f"same ({len(k_out):,} B)"
            k_total += k_time
            b_total += b_time
            print(f"{title:<{width}}{k_time:>9.3f}{b_time:>9.3f}{k_time / b_time:>8.2f}x  {note}", flush=True)
    finally:
        k_side.close()
        b_side.close()
    print(f"{'total':<{width}}{k_total:>9.3f}{b_total:>9.3f}{k_total / max(b_total, 1e-9):>8.2f}x  all outputs agree")


if __name__ == "__main__":
    main()
