"""Helpers of the delegation tests: a server whose state is mounted with allow_other, so that
agents' commands K does not have run as real programs under bubblewrap (alice and bob, as in
tests/ssh). A module of its own name: `conftest` is also tests/ssh's."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "ssh"))

from kserver import Bench, need, poll  # noqa: E402

from kshell.delegate.config import DelegateConfig  # noqa: E402
from kshell.server import ServerConfig  # noqa: E402
from kshell.server.config import Penalties  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def komputer(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:  # noqa: ANN003
    return subprocess.run([sys.executable, "-m", "kshell.cli", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, **kwargs)


def open_to_agents() -> Path:
    """A directory agents' programs can reach: pytest's own temp dirs are 0700 (root's)."""
    need("bwrap")
    need("fusermount3")
    base = Path(tempfile.mkdtemp(prefix="k-delegate-", dir="/tmp"))
    base.chmod(0o755)
    return base


def mount(state: Path, where: Path) -> None:
    where.mkdir()
    done = komputer("mount", "-o", "allow_other", "--state", str(state), str(where))
    assert done.returncode == 0, done.stderr


def unmount(where: Path) -> None:
    """Unmount `where` and wait until it is gone: something of the test still ending (a program,
    a view) may hold it busy a moment, and a mount given up on keeps its daemon running after
    the run (the suite's end names it) and would take a `rm -rf` of the test's directory
    through to the state it serves."""
    def gone() -> bool:
        if os.path.ismount(where):
            subprocess.run(["fusermount3", "-u", str(where)], capture_output=True, check=False)
        return not os.path.ismount(where)

    poll(gone, f"{where} still mounted (busy)")


def config(**delegate) -> ServerConfig:  # noqa: ANN003
    return ServerConfig(hostname="k", penalties=Penalties(exempt=("127.0.0.1/32",)),
                        delegate=DelegateConfig(**delegate))


def run(b: Bench, command: str, *, user: str = "alice", **kwargs) -> tuple[int, str, str]:  # noqa: ANN003
    done = b.ssh(command, user=user, **kwargs)
    return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")


os.environ.setdefault("LC_ALL", "C.UTF-8")
