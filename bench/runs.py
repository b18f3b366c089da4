"""bench/runs.py: what a run costs K itself, measured in one run.

Rows (each prints K's figure and the goal):
- run creation to first model call: from `create_run_context` (the configuration resolved,
  the layout written: ten files, four folders, the index) through the worker's start (the
  agent's scope stored, run.json `running`, the agent's limited session logged in and moved to
  its workspace, the loop's conversation opened and its turn begun) to the scripted model's
  first call, median of N runs on one booted computer (goal: < 20 ms);
- the manifest of a 10,000-file workspace: `kshell.runs.guards.manifest` over 10,000 small
  files in 100 folders (path, size, sha256, media type each; one read transaction), median of
  N scans (goal: < 1 s).

No peer is measured: no other agent runtime lays out runs this way (the layout is the issue's
own), so the goals are the only yardstick.

    .venv/bin/python bench/runs.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # ahead of bench/, whose native.py would shadow the `native` package

from kshell.agent.models import ScriptedModel  # noqa: E402
from kshell.runs import create_run_context  # noqa: E402
from kshell.runs.guards import manifest  # noqa: E402
from kshell.runs.runner import run  # noqa: E402
from kshell.sdk import Komputer  # noqa: E402


def row(name: str, k: float, unit: str, goal: str) -> None:
    print(f"{name:<52} {k:>12.3f} {unit:<9} (goal {goal})")


async def creation_to_first_call(computer: Komputer, runs: int, prefix: str) -> tuple[list[float], list[float]]:
    """Wall and CPU (this process's) times from creation to the first model call."""
    times: list[float] = []
    cpu: list[float] = []
    for i in range(runs):
        first: dict[str, float] = {}

        def script(messages: list, first: dict[str, float] = first) -> str:
            first.setdefault("at", time.perf_counter())
            first.setdefault("cpu", time.process_time())
            return "done"

        start, start_cpu = time.perf_counter(), time.process_time()
        ctx = create_run_context({"agent": "bench"}, "Say done.", f"runs/{prefix}{i}", state=computer.state)
        await run(computer, ctx, ScriptedModel(script))
        times.append(first["at"] - start)
        cpu.append(first["cpu"] - start_cpu)
    return times, cpu


def workspace_manifest(computer: Komputer, files: int, scans: int) -> tuple[list[float], list[float]]:
    ctx = create_run_context({"agent": "bench-files"}, "Many files.", "runs/many", state=computer.state)
    fs = ctx.fs()
    for d in range(100):
        fs.mkdir(ctx.path(f"workspace/d{d:02}"))
    for n in range(files):
        fs.write_file(ctx.path(f"workspace/d{n % 100:02}/f{n:05}.txt"), f"file {n}\n")
    times, cpu = [], []
    for _ in range(scans):
        start, start_cpu = time.perf_counter(), time.thread_time()
        listed = manifest(computer.state, ctx.workspace, max_files=20_000, max_hash_bytes=64 << 20)
        times.append(time.perf_counter() - start)
        cpu.append(time.thread_time() - start_cpu)
        assert len(listed["files"]) == files and not listed["truncated"]
    return times, cpu


async def main(quick: bool) -> None:
    runs, scans = (5, 2) if quick else (30, 5)
    with tempfile.TemporaryDirectory(prefix="bench-runs-") as tmp:
        async with Komputer.boot(state=os.path.join(tmp, "state")) as computer:
            await creation_to_first_call(computer, 2, "warm")  # warm: the agent made, a worker started once
            times, cpu = await creation_to_first_call(computer, runs, "r")
            row(f"run creation to first model call (median of {runs})", statistics.median(times) * 1e3, "ms",
                "< 20 ms")
            print(f"{'  CPU time of this process (median)':<52} {statistics.median(cpu) * 1e3:>12.3f} ms")
            print(f"{'  min / max':<52} {min(times) * 1e3:>12.3f} {max(times) * 1e3:>9.3f} ms")
            times, cpu = await asyncio.to_thread(workspace_manifest, computer, 10_000, scans)
            row(f"manifest of a 10,000-file workspace (median of {scans})", statistics.median(times), "s", "< 1 s")
            print(f"{'  CPU time of the scanning thread (median)':<52} {statistics.median(cpu):>12.3f} s")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    asyncio.run(main(parser.parse_args().quick))
