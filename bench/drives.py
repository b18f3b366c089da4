"""Drive benchmark (kfs.drives.host): what counting an agent's host-drive bytes costs, in one run.

    .venv/bin/python bench/drives.py [--mib 16] [--runs 5]

Rows: a 64 KiB write appended to a file of a host drive, and the same write again in place,
as an agent (uid 100001), best of `--runs` passes over `--mib` MiB, on a drive with no count
(as outside a state) and on one whose writes are charged to the agent's quota in K's state
(kfs.drives.host's Ledger: an append is one LMDB write transaction more, an overwrite in
place none). The count is checked before anything is printed (a row's time means nothing if
its work was wrong): every pass's file is removed, and the agent must be charged nothing after.
Run as root (the drive acts as the agent).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # ahead of bench/, whose native.py would shadow the `native` package

from kfs.drives.host import HostBacking  # noqa: E402
from kfs.kstate import KState, quota  # noqa: E402
from kfs.runtime.drives import Drive  # noqa: E402
from kfs.vfs import Cred  # noqa: E402

AGENT = Cred(100_001, 100_001)
BLOCK = 64 << 10


def passes(backing: HostBacking, label: str, blocks: int, runs: int) -> tuple[float, float]:
    """Best seconds per 64 KiB write, appended and in place, over `runs` passes."""
    fs = backing.view(AGENT, 0o022)
    buf = b"x" * BLOCK
    append = overwrite = float("inf")
    for run in range(runs):
        name = f"/{label}-{run}"
        with fs.open(name, os.O_CREAT | os.O_WRONLY, 0o644) as f:
            t0 = time.perf_counter()
            for i in range(blocks):
                f.pwrite(buf, i * BLOCK)
            append = min(append, (time.perf_counter() - t0) / blocks)
            t0 = time.perf_counter()
            for i in range(blocks):
                f.pwrite(buf, i * BLOCK)
            overwrite = min(overwrite, (time.perf_counter() - t0) / blocks)
        fs.unlink(name)
    return append, overwrite


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mib", type=int, default=16, help="MiB written per pass (default 16)")
    parser.add_argument("--runs", type=int, default=5, help="passes; the best is shown (default 5)")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        parser.error("run as root: a host drive acts as the agent's uid")
    blocks = args.mib * (1 << 20) // BLOCK
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source"
        source.mkdir()
        source.chmod(0o777)
        state = KState(Path(tmp) / "state", create=True)
        try:
            drive = Drive("data", "/mnt/data", "host", source=str(source))
            plain = passes(HostBacking(drive, 0), "plain", blocks, args.runs)
            counted = passes(HostBacking(drive, 0, state), "counted", blocks, args.runs)
            with state.read() as txn:
                left = quota.usage(txn, AGENT.uid, quota.HOST)
        finally:
            state.close()
    if left:
        raise SystemExit(f"the agent is still charged {left} bytes after every file was removed")
    print(f"{'':40}{'no count':>12}{'counted':>12}{'ratio':>8}")
    for label, a, b in (("64 KiB appended (us)", plain[0], counted[0]), ("64 KiB in place (us)", plain[1], counted[1])):
        print(f"{label:40}{a * 1e6:>12.0f}{b * 1e6:>12.0f}{b / a:>8.2f}")
    load = os.getloadavg()
    print(f"(load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
