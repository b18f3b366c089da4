"""A process doing thousands of VFS mutations is SIGKILLed at random points, 20 times.

After each kill the state must open, fsck must be clean, and every operation must be wholly
present or wholly absent: no torn file, no half-made tree, no file in two places.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from kfs.fsck import check
from kfs.kstate import KState
from kfs.vfs import VFS, PathFS

sys.path.insert(0, str(Path(__file__).parent))
from crash_worker import expected_content  # noqa: E402

WORKER = Path(__file__).with_name("crash_worker.py")
KILLS = 20


def _run_and_kill(state: Path, round_: int, delay: float) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    child = subprocess.Popen(
        [sys.executable, str(WORKER), str(state), str(round_)], stdout=subprocess.PIPE, env=env
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == b"ready", "crash worker did not start"
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL


def _check_invariants(fs: PathFS) -> int:
    """Every file written by one operation holds exactly that operation's bytes."""
    seen = 0
    w, r = set(fs.readdir("/w")), set(fs.readdir("/r"))
    assert not w & r, f"renamed files present in both places: {sorted(w & r)[:5]}"
    for d, names in (("/w", w), ("/r", r)):
        for name in names:
            op_id = int(name[1:])
            assert fs.read_file(f"{d}/{name}") == expected_content(op_id), f"torn file {d}/{name}"
            seen += 1
    for tree in fs.readdir("/t"):
        # `mkdir -p` of the whole chain is one operation, the leaf's write another
        assert fs.readdir(f"/t/{tree}/x/y") == ["z"], f"half-made tree /t/{tree}"
        if fs.readdir(f"/t/{tree}/x/y/z"):
            assert fs.read_file(f"/t/{tree}/x/y/z/leaf") == expected_content(int(tree))
            seen += 1
    for name in fs.readdir("/a"):
        lines = fs.read_file(f"/a/{name}").split(b"\n")
        assert lines[-1] == b"", f"torn append in /a/{name}"
        assert all(line.isdigit() for line in lines[:-1])
    return seen


def test_sigkill_mid_mutation_leaves_every_operation_whole_or_absent(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    KState(state_dir, create=True).close()
    rng = random.Random(1234)
    total_ops = 0
    for round_ in range(1, KILLS + 1):
        _run_and_kill(state_dir, round_, rng.uniform(0.02, 0.4))
        with KState(state_dir) as state:
            fs = PathFS(VFS(state))  # opening reclaims the dead worker's open-but-unlinked files
            report = check(state)
            assert report.clean, report.problems
            with state.read() as txn:
                assert txn.last("orphans") is None, "orphans of a dead process were not reclaimed"
                assert txn.last("holders") is None
            total_ops += _check_invariants(fs)
    assert total_ops > 200, f"the worker did too little work to test anything ({total_ops} files)"
