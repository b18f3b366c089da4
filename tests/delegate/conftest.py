"""A K server whose state is mounted with allow_other, so that agents' commands K does not have
run as real programs under bubblewrap (alice and bob, as in tests/ssh)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "ssh"))

from kserver import Bench, close_bench, make_bench, need  # noqa: E402

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
    subprocess.run(["fusermount3", "-u", str(where)], capture_output=True, check=False)


def config(**delegate) -> ServerConfig:  # noqa: ANN003
    return ServerConfig(hostname="k", penalties=Penalties(exempt=("127.0.0.1/32",)),
                        delegate=DelegateConfig(**delegate))


@pytest.fixture(scope="session")
def mounted() -> Iterator[Bench]:
    """The shared server: state mounted at ROOT/mnt, delegation with default settings."""
    base = open_to_agents()
    b = make_bench(base, config())
    mount(base / "state", base / "mnt")
    yield b
    unmount(base / "mnt")
    close_bench(b)
    subprocess.run(["rm", "-rf", str(base)], check=False)


@pytest.fixture
def make_mounted() -> Iterator[object]:
    """A server of the test's own: `make_mounted(mount=True, **delegate_settings)`."""
    made: list[tuple[Bench, Path | None]] = []

    def start(*, mounted: bool = True, **delegate) -> Bench:  # noqa: ANN003
        base = open_to_agents()
        b = make_bench(base, config(**delegate))
        where = base / "mnt" if mounted else None
        if where is not None:
            mount(base / "state", where)
        made.append((b, where))
        return b

    yield start
    for b, where in made:
        if where is not None:
            unmount(where)
        close_bench(b)
        subprocess.run(["rm", "-rf", str(b.root)], check=False)


def run(b: Bench, command: str, *, user: str = "alice", **kwargs) -> tuple[int, str, str]:  # noqa: ANN003
    done = b.ssh(command, user=user, **kwargs)
    return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")


os.environ.setdefault("LC_ALL", "C.UTF-8")
