"""SIGKILL the mount daemon in the middle of a write storm, 20 times.

After each kill: the next `komputer mount` clears the stale mount (with a message), `komputer
fsck` is clean, and every file whose fsync returned before the kill is byte-identical.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

from kfs_mounts import Mount, child_env, komputer
from storm_writer import expected_content

KILLS = 20
WRITERS = 3
WORKER = Path(__file__).with_name("storm_writer.py")


def _fsck_clean(state: Path) -> None:
    result = komputer("fsck", "--state", str(state), check=False)
    assert result.returncode == 0, f"fsck after a daemon crash:\n{result.stdout}{result.stderr}"


def _check_fsynced(mount: Mount, journal: Path) -> int:
    names = journal.read_text().split() if journal.exists() else []
    for name in names:
        path = mount.path / "storm" / name
        assert path.read_bytes() == expected_content(name), f"{name} was fsynced but is not intact"
    return len(names)


def test_sigkill_of_the_daemon_mid_storm_loses_nothing_fsynced(tmp_path: Path) -> None:
    state, journal = tmp_path / "state", tmp_path / "fsynced"
    komputer("init", "--state", str(state))
    mount = Mount(state, tmp_path / "mnt")
    rng = random.Random(4321)
    try:
        for round_ in range(KILLS):
            mount.start()
            if round_:
                assert "cleared a stale mount" in mount.last_output, mount.last_output
            _fsck_clean(state)
            _check_fsynced(mount, journal)
            (mount.path / "storm").mkdir(exist_ok=True)
            writers = [
                subprocess.Popen(
                    [sys.executable, str(WORKER), str(mount.path / "storm"), f"r{round_}w{k}", str(journal)],
                    env=child_env(),
                )
                for k in range(WRITERS)
            ]
            time.sleep(rng.uniform(0.3, 0.8))
            mount.kill()
            for writer in writers:
                try:
                    writer.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    writer.kill()
                    writer.wait()
                    raise AssertionError("a writer hung on the dead mount") from None
        mount.start()
        _fsck_clean(state)
        survivors = _check_fsynced(mount, journal)
        assert survivors >= KILLS, f"the storm fsynced too little to test anything ({survivors} files)"
    finally:
        mount.stop()
        assert not os.path.ismount(mount.path)
