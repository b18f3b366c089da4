"""The test side of a write storm (backup_storm_writer.py runs it): start, stop, read its log,
and the `komputer` command line as a subprocess, for the backup and fsck-damage tests."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.hang import HANG

WRITER = Path(__file__).with_name("backup_storm_writer.py")
CRASHED = {134, 139, -6, -11, -7}  # SIGABRT, SIGSEGV, SIGBUS: as a shell or as Popen reports them


def komputer(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kshell.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


@dataclass(frozen=True)
class Write:
    """One completed write of the storm: its number, the file, when it had returned (ns)."""

    seq: int
    path: str
    done_ns: int


def read_log(log: Path) -> list[Write]:
    """The completed writes, in order (a line still being written is left out)."""
    text = log.read_text()
    lines = text.split("\n")[:-1]  # the part after the last newline is not a whole line yet
    writes = []
    for line in lines:
        seq, path, done = line.split()
        writes.append(Write(int(seq), path, int(done)))
    return writes


def wait_writes(child: subprocess.Popen[bytes], log: Path, enough: Callable[[list[Write]], bool]) -> None:
    """Returns once the storm's completed writes are `enough`: the wait for the storm to have
    moved on, not a sleep hoping it did."""
    deadline = time.monotonic() + HANG
    while not log.exists() or not enough(read_log(log)):
        assert child.poll() is None, (
            f"the storm writer died: {child.stderr.read().decode() if child.stderr else ''}"
        )
        assert time.monotonic() < deadline, "the storm writer made too little progress"
        time.sleep(0.02)


@contextmanager
def storm(state: Path, log: Path, *, warmup: int = 200, seed: int = 1) -> Iterator[subprocess.Popen[bytes]]:
    """A writer process storming `state` from before the block (`warmup` writes done) to its end."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    child = subprocess.Popen(
        [sys.executable, str(WRITER), str(state), str(log), str(seed)], env=env, stderr=subprocess.PIPE
    )
    try:
        wait_writes(child, log, lambda writes: len(writes) >= warmup)
        yield child
        assert child.poll() is None, "the storm writer stopped during the test"
    finally:
        child.terminate()
        child.wait(timeout=30)
