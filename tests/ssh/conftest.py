"""Fixtures for the SSH tests: one K SSH server per test process on a loopback port, with
agents alice and bob; tests that change limits or penalties start their own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kserver import Bench, close_bench, make_bench

from kshell.server import ServerConfig
from kshell.server.config import Penalties

# the shared server never penalises the loopback address every other test connects from;
# the penalty tests bind other 127.0.0.x source addresses
SHARED = ServerConfig(hostname="k", penalties=Penalties(exempt=("127.0.0.1/32",)))


@pytest.fixture(scope="session")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    b = make_bench(tmp_path_factory.mktemp("ssh"), SHARED)
    yield b
    close_bench(b)


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[object]:
    """Start a server with a config of the test's own: `make_server(ServerConfig(...))`."""
    made: list[Bench] = []

    def start(config: ServerConfig) -> Bench:
        b = make_bench(tmp_path / f"s{len(made)}", config)
        made.append(b)
        return b

    yield start
    for b in made:
        close_bench(b)
