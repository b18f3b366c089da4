"""bench/sdk.py: the Python SDK against the same appliance over SSH, measured in one run.

Rows (each prints K's figure, the peer's or the goal, and the ratio K / peer):
- `agent.exec("true")` latency, median of N, against an exec of `true` over one already open
  asyncssh connection to `komputer serve` (goal: <= 1 ms);
- 1,000 `true` execs one after another in one SDK session, against 1,000 over one SSH
  connection (goal: <= 0.3x SSH's time);
- `login` of a new session, median (goal: <= 5 ms);
- `boot` of an existing state holding 100,000 files, median of 5 (goal: <= 50 ms);
- "create to first `python3 -V` output": a new agent, its session and a delegated `python3 -V`
  on a booted computer with `local_remote()` (published medians: Daytona 186 ms, E2B 491 ms;
  goal: <= 50 ms). Needs FUSE and bubblewrap: the row says why when it cannot run.

Every row checks that both sides printed the same output before timing counts.

    .venv/bin/python bench/sdk.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # ahead of bench/, whose native.py would shadow the `native` package

from kfs.kstate import KState  # noqa: E402
from kfs.vfs import ROOT as ROOT_CRED  # noqa: E402
from kfs.vfs import VFS, PathFS  # noqa: E402
from kshell.sdk import Komputer, local_remote  # noqa: E402


def _ssh_bench():  # the SSH bench's server and client helpers, not copied here
    spec = importlib.util.spec_from_file_location("ssh_bench", os.path.join(ROOT, "bench", "ssh.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["ssh_bench"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def row(name: str, k: float, peer: float, unit: str, peer_name: str) -> None:
    ratio = k / peer if peer else float("nan")
    print(f"{name:<44} {k:>10.3f} {unit:<3} {peer:>10.3f} {unit:<3} ({peer_name:<11}) {ratio:>7.2f}x")


async def exec_rows(tmp: Path, runs: int, many: int) -> None:
    ssh = _ssh_bench()
    key = ssh.client_key(tmp)
    target = ssh.start_k(tmp, key, 8)
    try:
        async with Komputer.boot(state=tmp / "sdk-state") as computer:
            await computer.add_agent("bench")
            agent = await computer.login("bench")
            async with await ssh.connect(target) as conn:
                k_out = (await agent.exec("echo same")).stdout
                s_out = (await conn.run("echo same")).stdout.encode()
                assert k_out == s_out, (k_out, s_out)
                k_times, s_times = [], []
                for _ in range(runs):
                    t0 = time.perf_counter()
                    await agent.exec("true")
                    k_times.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    await conn.run("true", check=True)
                    s_times.append(time.perf_counter() - t0)
                row('agent.exec("true") median (goal <= 1 ms)', statistics.median(k_times) * 1e3,
                    statistics.median(s_times) * 1e3, "ms", "ssh exec")
                t0 = time.perf_counter()
                for _ in range(many):
                    await agent.exec("true")
                k_many = time.perf_counter() - t0
                t0 = time.perf_counter()
                for _ in range(many):
                    await conn.run("true", check=True)
                s_many = time.perf_counter() - t0
                row(f"{many} execs in one session (goal <= 0.3x)", k_many, s_many, "s", "one ssh conn")
            logins = []
            for _ in range(runs):
                t0 = time.perf_counter()
                session = await computer.login("bench")
                logins.append(time.perf_counter() - t0)
                await session.detach()
            row("login median (goal <= 5 ms)", statistics.median(logins) * 1e3, 5.0, "ms", "goal")
    finally:
        target.stop()


def make_files(path: Path, count: int) -> None:
    with KState(path, create=True) as state:
        fs = PathFS(VFS(state, by="bench"), cred=ROOT_CRED, cwd="/", home="/")
        per_dir = 1000
        for d in range(count // per_dir):
            fs.mkdir(f"/data/d{d}", parents=True)
            for i in range(per_dir):
                fs.write_file(f"/data/d{d}/f{i}", b"x")


async def boot_row(tmp: Path, files: int) -> None:
    where = tmp / "big-state"
    await asyncio.to_thread(make_files, where, files)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        computer = await Komputer.boot(state=where)
        times.append(time.perf_counter() - t0)
        await computer.close()
    row(f"boot of a {files:,}-file state, median (goal <= 50 ms)", statistics.median(times) * 1e3, 50.0, "ms",
        "goal")


async def python_row(tmp: Path) -> None:
    remote = local_remote()
    if not remote.sandboxed:
        print(f"{'create to first python3 -V output':<44} not measured: {remote.why_not}")
        return
    try:
        computer = await Komputer.boot(state=tmp / "py-state", remotes={"local": remote})
    except OSError as e:
        print(f"{'create to first python3 -V output':<44} not measured: {e}")
        return
    async with computer:
        await computer.add_agent("warm")
        warm = await computer.login("warm")
        await warm.exec("python3 -V")  # the worker zygote and the first view are loaded once
        times = []
        for n in range(5):
            t0 = time.perf_counter()
            await computer.add_agent(f"fresh{n}")
            session = await computer.login(f"fresh{n}")
            result = await session.exec("python3 -V")
            times.append(time.perf_counter() - t0)
            assert result.stdout.startswith(b"Python 3"), result
            await session.detach()
        row("create to first python3 -V output, median", statistics.median(times) * 1e3, 186.0, "ms",
            "Daytona")
        row("  (goal <= 50 ms)", statistics.median(times) * 1e3, 50.0, "ms", "goal")


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer runs and files (a smoke run)")
    args = parser.parse_args(argv)
    runs, many, files = (20, 100, 10_000) if args.quick else (200, 1000, 100_000)
    print(f"{'row':<44} {'K':>14} {'peer':>14} {'':<13} {'K/peer':>8}")
    with tempfile.TemporaryDirectory(prefix="k-bench-sdk-") as tmp:
        await exec_rows(Path(tmp), runs, many)
        await boot_row(Path(tmp), files)
        await python_row(Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
