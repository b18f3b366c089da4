"""bench/native.py: the native core against its pure-Python twin.

Prints, per operation, calls per second for native and twin and the speed ratio native/twin.
`run()` returns (name, native seconds per call, twin seconds per call) rows for bench/vfs.py.
Run: python bench/native.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # ahead of bench/, whose native.py (this file) would shadow the package

import native
from native import pytwin

CWD = b"/home/agent/projects/k"
HOME = b"/home/agent"
NAME_COUNT = 100_000


def _paths(count: int, seed: int = 1) -> list[bytes]:
    """Paths as a shell session produces them: relative, absolute, ~, with . and .. here and
    there."""
    rng = random.Random(seed)
    words = [b"src", b"lib", b"tests", b"docs", b"build", b"native", b"kfs", b"vfs", b"a", b"b"]
    files = [b"main.py", b"README.md", b"data.json", b"x.c", b"notes.txt"]
    out = []
    for _ in range(count):
        parts = [rng.choice(words) for _ in range(rng.randint(0, 5))]
        if rng.random() < 0.2:
            parts.insert(rng.randint(0, len(parts)), b"..")
        if rng.random() < 0.1:
            parts.insert(rng.randint(0, len(parts)), b".")
        parts.append(rng.choice(files))
        path = b"/".join(parts)
        roll = rng.random()
        if roll < 0.3:
            path = b"/home/agent/" + path
        elif roll < 0.4:
            path = b"~/" + path
        out.append(path)
    return out


def _names(count: int, seed: int = 2) -> list[bytes]:
    """A large directory listing: mixed stems, numbers, extensions and some dotfiles."""
    rng = random.Random(seed)
    stems = [b"alpha", b"beta", b"core", b"data", b"kernel", b"log", b"main", b"node", b"zeta"]
    exts = [b".py", b".txt", b".c", b".json", b".pyc", b""]
    out = []
    for i in range(count):
        name = b"%s_%d%s" % (rng.choice(stems), i % 997, rng.choice(exts))
        if rng.random() < 0.05:
            name = b"." + name
        out.append(name)
    return out


def _per_call(fn: Callable[[], object], calls: int, repeat: int) -> float:
    """Best-of-`repeat` seconds per call of fn, timed over `calls` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, time.perf_counter() - start)
    return best / calls


def run(quick: bool = False) -> list[tuple[str, float, float]]:
    """(operation, native seconds per call, twin seconds per call) for each benchmark."""
    paths = _paths(10_000 if quick else 100_000)
    names = _names(NAME_COUNT)
    rows = []

    def normalize_all(impl) -> Callable[[], object]:
        fn = impl.normalize
        return lambda: [fn(p, CWD, HOME) for p in paths]

    n_native = _per_call(normalize_all(native), 1, 3) / len(paths)
    n_twin = _per_call(normalize_all(pytwin), 1, 1 if quick else 2) / len(paths)
    rows.append(("normalize", n_native, n_twin))

    for pattern in (b"*.py", b"[a-m]*_[0-9]?.txt"):
        label = f"glob_filter {pattern.decode()} ({len(names) // 1000}k names)"
        rows.append(
            (
                label,
                _per_call(lambda p=pattern: native.glob_filter(p, names), 5, 3),
                _per_call(lambda p=pattern: pytwin.glob_filter(p, names), 1, 1 if quick else 2),
            )
        )

    word = b"{a,b,c}{1..100}{x,y}"
    assert native.brace_expand(word) == pytwin.brace_expand(word)
    rows.append(
        (
            "brace_expand {a,b,c}{1..100}{x,y}",
            _per_call(lambda: native.brace_expand(word), 200, 3),
            _per_call(lambda: pytwin.brace_expand(word), 20 if quick else 100, 2),
        )
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer paths and repeats")
    args = parser.parse_args()
    names = _names(NAME_COUNT)
    for pattern in (b"*.py", b"[a-m]*_[0-9]?.txt"):  # the two sides must agree before timing
        assert native.glob_filter(pattern, names) == pytwin.glob_filter(pattern, names)
    print(f"{'operation':<44}{'native ops/s':>14}{'twin ops/s':>14}{'native/twin':>13}")
    for name, native_s, twin_s in run(quick=args.quick):
        print(f"{name:<44}{1 / native_s:>14,.1f}{1 / twin_s:>14,.1f}{twin_s / native_s:>12,.1f}x")


if __name__ == "__main__":
    main()
