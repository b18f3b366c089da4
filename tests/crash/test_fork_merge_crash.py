"""`komputer fork merge` SIGKILLed at several points: the parent is either the old one with the
fork still there, or the new one with the fork gone, never a mix; fsck is clean each time."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from kfs import forks
from kfs.fsck import check
from kfs.kstate import KState
from kfs.vfs import VFS, PathFS

ROOT = Path(__file__).resolve().parents[2]
FILES = 6000
HANG = 300.0


def _komputer(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "kshell.cli", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_a_merge_killed_at_any_point_is_all_or_nothing(tmp_path: Path) -> None:
    outcomes = set()
    # killed after each delay; the last one is left to finish (a hang bound, never a speed claim):
    # however slow the machine, the rounds see both sides of the commit
    for round_, delay in enumerate((0.05, 0.3, 0.6, 0.9, 1.2, None)):
        where = tmp_path / f"s{round_}"
        with KState(where, create=True) as state:
            parent = PathFS(VFS(state, by="test"))
            parent.mkdir("/w")
            parent.write_file("/w/kept", b"the parent's\n")
            number = forks.create(state)
            fork = PathFS(VFS(forks.view(state, number), by="test"))
            for i in range(FILES):
                fork.write_file(f"/w/f{i}", b"%d\n" % i * 500)
            fork.unlink("/w/kept")
        child = _komputer("--state", str(where), "fork", "merge", str(number))
        try:
            child.wait(timeout=delay if delay is not None else HANG)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGKILL)
            child.wait()
            assert delay is not None, "the merge did not finish"
        with KState(where) as state:
            assert check(state).clean
            parent = PathFS(VFS(state, by="test"))
            names = set(parent.readdir("/w"))
            if forks.forks(state):  # not merged: the parent as it was
                assert names == {"kept"}
                outcomes.add("before")
            else:  # merged: all of it
                assert names == {f"f{i}" for i in range(FILES)}
                assert parent.read_file("/w/f7") == b"7\n" * 500
                outcomes.add("after")
    assert outcomes == {"before", "after"}  # the kills landed on both sides of the commit
