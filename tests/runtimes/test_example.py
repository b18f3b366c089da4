"""examples/runtime_repl.py, as docs/runtimes.md shows it, on each runtime."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["komputer", "tmux", "process"])
def test_runtime_repl_example(name: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "runtime_repl.py"), name], cwd="/tmp",
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["sum 45", "alive: True", "alive: False"]
