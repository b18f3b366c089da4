"""A real 3-member etcd cluster (Debian's etcd-server) on loopback ports, in temp dirs, stopped
by the test session."""

from __future__ import annotations

import asyncio
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "ssh"))  # kserver: the SSH tests' client helpers

HANG = 60.0  # a hang bound, never a timing assertion


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Etcd:
    """The cluster: its members' processes and client endpoints."""

    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    endpoints: list[str] = field(default_factory=list)

    def kill(self, i: int) -> None:
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait(HANG)


@pytest.fixture(scope="session")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Etcd]:
    binary = shutil.which("etcd")
    if binary is None:
        pytest.fail("etcd is missing: install etcd-server (apt-get install -y etcd-server; make test-deps)")
    root = tmp_path_factory.mktemp("etcd")
    names = ["e0", "e1", "e2"]
    clients = [free_port() for _ in names]
    peers = [free_port() for _ in names]
    initial = ",".join(f"{n}=http://127.0.0.1:{p}" for n, p in zip(names, peers))
    cluster = Etcd(endpoints=[f"127.0.0.1:{c}" for c in clients])
    for name, c, p in zip(names, clients, peers):
        log = (root / f"{name}.log").open("wb")
        cluster.procs.append(subprocess.Popen(
            [binary, "--name", name, "--data-dir", str(root / name),
             "--listen-client-urls", f"http://127.0.0.1:{c}", "--advertise-client-urls", f"http://127.0.0.1:{c}",
             "--listen-peer-urls", f"http://127.0.0.1:{p}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{p}",
             "--initial-cluster", initial, "--initial-cluster-state", "new", "--initial-cluster-token", "k-test",
             "--heartbeat-interval", "50", "--election-timeout", "500"],
            stdout=log, stderr=subprocess.STDOUT))
    try:
        asyncio.run(_healthy(cluster.endpoints))
        yield cluster
    finally:
        for proc in cluster.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in cluster.procs:
            proc.wait(HANG)


async def _healthy(endpoints: list[str]) -> None:
    from kshell.server.fleet import connect

    deadline = time.monotonic() + HANG
    for endpoint in endpoints:
        client = connect([endpoint], timeout=2.0)
        while True:
            try:
                await client.put(b"/k-test/health", b"ok")
                break
            except Exception:  # noqa: BLE001 - not up yet
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)
        await client.close()
