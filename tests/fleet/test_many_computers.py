"""Many computers on one host (`komputer serve --computers`): logins to many more keys than
`max_warm` keep at most `max_warm` computers open, and the host's memory and open files stay
under a bound that does not grow with the keys; a computer closed when idle holds no file, no
mapping and no process: it costs its disk alone. Counted from /proc, never timed.

The test uses 240 keys and 6 warm (a CI run); bench/many_computers.py measures 10,000 and 100."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import asyncssh
from conftest import HANG
from kserver import komputer, start_host
from procfs import fd_count, fds, holding, pss_kib, tree

KEYS = 240
MAX_WARM = 6
COMMANDS_EVERY = 60  # every 60th login runs a command: that computer starts its worker zygote
# the bounds stated: what one open computer may hold at most, its zygote and workers included
FDS_PER_WARM = 40
KIB_PER_WARM = 96 * 1024
# what the host may keep once every computer is closed: over the first half's keys, no more
# memory after the second half's than this (Python's heap), and no open file over its at-rest count
KIB_DRIFT = 24 * 1024
FD_DRIFT = 2


async def logins(port: int, key: asyncssh.SSHKey, keys: list[str]) -> None:
    for i, k in enumerate(keys):
        async with asyncssh.connect("127.0.0.1", port, username=f"alice+{k}", client_keys=[key], known_hosts=None,
                                    agent_path=None, config=None) as conn:
            if i % COMMANDS_EVERY == 0:
                result = await asyncio.wait_for(conn.run("echo hi > f; cat f"), HANG)
                assert result.stdout == "hi\n", result.stderr


def open_computers(pid: int, root: Path) -> set[str]:
    """The computers the host's tree has open: by the state files it holds."""
    return {Path(f).relative_to(root).parts[0] for held in holding(pid, root).values() for f in held} - {".locks"}


def test_many_keys_keep_max_warm_open_and_memory_and_files_bounded(tmp_path: Path) -> None:
    root = tmp_path / "root"
    private = asyncssh.generate_private_key("ssh-ed25519")
    (tmp_path / "key.pub").write_bytes(private.export_public_key())
    keys = [f"k{i:04d}" for i in range(KEYS)]
    komputer("computers", "create", "--root", str(root), "--agent", "alice", "--key", str(tmp_path / "key.pub"), *keys)
    config = tmp_path / "komputer.toml"
    config.write_text(f'[computers]\nroot = "{root}"\nmax_warm = {MAX_WARM}\nidle_for = 2.0\n')
    proc, port = start_host(config)
    try:
        pid = proc.pid
        assert tree(pid) == [pid]  # no computer open: no process but the host
        fds0, kib0 = fd_count(pid), pss_kib(pid)

        async def held_open() -> tuple[set[str], list[int]]:
            async with asyncssh.connect("127.0.0.1", port, username=f"alice+{keys[1]}", client_keys=[private],
                                        known_hosts=None, agent_path=None, config=None):
                return open_computers(pid, root), tree(pid)

        # a login that runs nothing opens its computer (held while the connection lasts), no process
        assert asyncio.run(held_open()) == ({keys[1]}, [pid])
        busy: list[tuple[int, int]] = []  # (fds, KiB) right after each half's logins
        rest: list[tuple[int, int]] = []  # (fds, KiB) once each half's computers are all closed
        for half in (keys[:KEYS // 2], keys[KEYS // 2:]):
            asyncio.run(logins(port, private, half))
            warm = open_computers(pid, root)
            assert len(warm) <= MAX_WARM, warm
            busy.append((fd_count(pid), pss_kib(pid)))
            deadline = time.monotonic() + HANG
            while open_computers(pid, root) or tree(pid) != [pid]:  # idle_for passes: every one closed
                assert time.monotonic() < deadline, f"still open: {open_computers(pid, root)}, {tree(pid)}"
                time.sleep(0.2)
            assert not [f for f in fds(pid) if f.startswith(str(root))]  # not even an open-lock
            rest.append((fd_count(pid), pss_kib(pid)))
        print(f"{KEYS} keys, max_warm {MAX_WARM}: at rest {fds0} fds, {kib0} KiB; after each half's logins "
              f"{busy}; once closed {rest}")
        for fds_, kib in busy:
            assert fds_ <= fds0 + MAX_WARM * FDS_PER_WARM
            assert kib <= kib0 + MAX_WARM * KIB_PER_WARM
        (fds1, kib1), (fds2, kib2) = rest
        assert fds1 <= fds0 + FD_DRIFT and fds2 <= fds0 + FD_DRIFT  # a closed computer keeps no file open
        assert kib2 - kib1 <= KIB_DRIFT  # nor memory: 120 more keys opened and closed cost nothing more
    finally:
        proc.terminate()
        proc.wait(HANG)
