"""The scripts in examples/ run as a new user would run them, and print what docs/sdk.md says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def example(name: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / name)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_quickstart() -> None:
    assert example("quickstart.py").splitlines() == [
        "0 13 note.txt", "hello from K", "true", "/home/alice/work", "note.txt", "plan.md",
        "readonly fork: 1 rm: cannot remove 'work/plan.md': Read-only file system"]


def test_blocking() -> None:
    assert example("blocking.py").splitlines() == ["15", "['1', '2', '3', '4', '5']", "first command exited with 0"]


def test_pool() -> None:
    assert example("pool.py").splitlines() == ["['task 0', 'task 1', 'task 2']", "boots: 1",
                                               "swept: {'detached': 0, 'closed': 1}"]
