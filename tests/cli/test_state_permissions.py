"""The state holds every agent's files: it is its owner's alone (directory 0700, data.mdb and
lock.mdb 0600) from `komputer init` on, and a state made looser before is tightened, saying so,
the next time K opens it for writing."""

from __future__ import annotations

import os
import shutil
import stat as st
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def komputer(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kshell.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def modes(state: Path) -> dict[str, int]:
    return {name: st.S_IMODE((state / name).stat().st_mode) for name in (".", "data.mdb", "lock.mdb")}


def read_as_nobody(path: Path) -> subprocess.CompletedProcess[str]:
    """Read `path` as uid/gid 65534: what any other user of the host could read."""
    head = shutil.which("head")
    if head is None:
        pytest.fail("install coreutils (head)")
    return subprocess.run([head, "-c1", str(path)], capture_output=True, text=True, user=65534, group=65534,
                          extra_groups=[])


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A temp directory every user may enter (pytest's own are root's alone), as /var/lib is."""
    path = Path(tempfile.mkdtemp(prefix="kstate-perms-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path)


def test_init_makes_the_state_its_owners_alone(open_dir: Path) -> None:
    state = open_dir / "state"
    made = komputer("init", "--state", str(state))
    assert made.returncode == 0, made.stderr
    assert modes(state) == {".": 0o700, "data.mdb": 0o600, "lock.mdb": 0o600}
    denied = read_as_nobody(state / "data.mdb")
    assert denied.returncode == 1 and "Permission denied" in denied.stderr


def test_a_looser_state_is_tightened_at_open_and_says_so(open_dir: Path) -> None:
    state = open_dir / "state"
    assert komputer("init", "--state", str(state)).returncode == 0
    os.chmod(state, 0o755)
    os.chmod(state / "data.mdb", 0o644)
    os.chmod(state / "lock.mdb", 0o644)
    assert read_as_nobody(state / "data.mdb").returncode == 0  # what a state from before showed everyone
    opened = komputer("agent", "add", "alice", "--state", str(state))
    assert opened.returncode == 0, opened.stderr
    assert opened.stderr == (f"komputer: the state holds every agent's files; made it its owner's alone: "
                             f"{state} 0755 -> 0700, {state / 'data.mdb'} 0644 -> 0600, "
                             f"{state / 'lock.mdb'} 0644 -> 0600\n")
    assert modes(state) == {".": 0o700, "data.mdb": 0o600, "lock.mdb": 0o600}
    assert read_as_nobody(state / "data.mdb").returncode == 1
    again = komputer("agent", "list", "--state", str(state))
    assert (again.returncode, again.stderr) == (0, "")
