"""Fixtures of the delegation tests (helpers in delegation.py): the shared mounted server, and
servers of a test's own."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from delegation import config, mount, open_to_agents, unmount
from kserver import Bench, close_bench, make_bench


@pytest.fixture(scope="session")
def mounted() -> Iterator[Bench]:
    """The shared server: state mounted at ROOT/mnt, delegation with default settings."""
    base = open_to_agents()
    b = make_bench(base, config())
    mount(base / "state", base / "mnt")
    yield b
    close_bench(b)  # its programs and views first: then nothing holds the mount
    unmount(base / "mnt")
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
        close_bench(b)
        if where is not None:
            unmount(where)
        subprocess.run(["rm", "-rf", str(b.root)], check=False)
