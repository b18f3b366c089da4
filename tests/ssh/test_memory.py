"""The front end gives memory back once idle (kshell/server/memory.py): after the last
connection, what malloc freed goes back to the kernel and the state's pages it read are
unmapped from it (they stay in the page cache)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from kserver import Bench, need

from kshell.server import ServerConfig
from kshell.server.config import Penalties
from kshell.server.memory import MALLOC_TRIM, give_back, unmap_pages


def mapped_kib(path: Path) -> int:
    """KiB of `path` resident in this process's mappings of it (smaps' Rss)."""
    real, total, inside = os.path.realpath(path), 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5 and ":" not in head[0]:
                inside = len(head) >= 6 and head[5] == real
            elif inside and line.startswith("Rss:"):
                total += int(head[1])
    return total


def test_malloc_trim_is_found_on_glibc() -> None:
    assert MALLOC_TRIM is not None  # the server's libc is glibc (Debian): the trim must run
    assert give_back() is True


def test_unmapping_a_files_pages_keeps_its_content(tmp_path: Path) -> None:
    import mmap

    data = tmp_path / "data"
    data.write_bytes(os.urandom(8 << 20))
    with data.open("rb") as f, mmap.mmap(f.fileno(), 0, mmap.MAP_SHARED, mmap.PROT_READ) as m:
        first = bytes(m[:])
        assert mapped_kib(data) >= 8 << 10
        unmap_pages(data)
        assert mapped_kib(data) < 1 << 10
        assert m[:] == first  # mapped again from the page cache, unchanged


def test_an_idle_server_unmaps_the_state_it_read(make_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    b: Bench = make_server(ServerConfig(hostname="k", lease_ttl=1.5, penalties=Penalties(exempt=("127.0.0.1/32",))))
    need("sftp")
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(32 << 20))
    argv = [need("sftp"), *b.ssh_options(port_flag="-P"), "-b", "-", "alice@127.0.0.1"]
    done = subprocess.run(argv, input=f"put {big} big.bin\nget big.bin {tmp_path / 'back.bin'}\n",
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "back.bin").read_bytes() == big.read_bytes()
    state_file = Path(b.state.path) / "data.mdb"
    deadline = time.monotonic() + 30  # housekeeping runs every lease_ttl / 3 = 0.5 s
    while mapped_kib(state_file) >= 16 << 10 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert mapped_kib(state_file) < 16 << 10  # the 32 MiB it wrote and read: unmapped once idle
    again = subprocess.run(argv, input="ls -l big.bin\n", capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "33554432" in again.stdout, again.stderr
