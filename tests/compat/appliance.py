"""A served appliance for the adapters' remote tests: a real K SSH server (`komputer serve`'s
KServer) on loopback with agents alice and bob and their keys (tests/ssh/kserver.py, as
tests/sdk/test_remote.py starts one), and K_SANDBOX_KNOWN_HOSTS naming a file with its host key."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ssh"))
from kserver import close_bench, make_bench  # noqa: E402

from kshell.compat import core  # noqa: E402
from kshell.server import ServerConfig  # noqa: E402
from kshell.server.config import Penalties  # noqa: E402

CONFIG = ServerConfig(hostname="k", penalties=Penalties(exempt=("127.0.0.1/32",)))


def served(root: Path) -> Iterator[Any]:
    bench = make_bench(root, CONFIG)
    public = bench.server.host_key.export_public_key().decode().strip()
    known = root / "known_hosts"
    known.write_text(f"[127.0.0.1]:{bench.port} {public}\n")
    saved = os.environ.get(core.KNOWN_HOSTS_ENV)
    os.environ[core.KNOWN_HOSTS_ENV] = str(known)
    try:
        yield bench
    finally:
        for sandbox in list(core.sandboxes().values()):  # the adapters' connections end before the server
            if isinstance(sandbox, core.RemoteSandbox):
                core.run(sandbox.detach())
        close_bench(bench)
        if saved is None:
            os.environ.pop(core.KNOWN_HOSTS_ENV, None)
        else:
            os.environ[core.KNOWN_HOSTS_ENV] = saved
