"""bench/compat.py: the sandbox adapters (kshell.compat) measured the way public sandbox
benchmarks measure providers, in one run.

Rows (each prints K's median, the published figure or the goal, and the ratio K / that):
- create to first command output, cold: `Sandbox.create()` then `commands.run("echo ok")`,
  each on a new computer (its state, its session host, its first shell worker);
- the same with a warm spare (K_SANDBOX_WARM=1: a computer booted ahead, as providers keep
  warm pools), the spare's boot waited for between runs and not timed;
  published medians: Daytona 186 ms, E2B 491 ms; goal: under 50 ms;
- `commands.run("true")` round trip through the E2B adapter, through its async client
  (AsyncSandbox: the same call run in a pool thread and awaited), and `agent.exec("true")`
  through the SDK beneath them (goal: under 2 ms).

Every row checks the output before its time counts.

    .venv/bin/python bench/compat.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # ahead of bench/, whose native.py would shadow the `native` package

from kshell.compat import core  # noqa: E402
from kshell.compat.e2b import AsyncSandbox, Sandbox  # noqa: E402

PUBLISHED = {"Daytona": 186.0, "E2B": 491.0}  # ms, create to first command, medians
GOALS = {"create": 50.0, "run": 2.0}  # ms


def row(label: str, ms: float, versus: dict[str, float]) -> None:
    ratios = "  ".join(f"{ms / v:6.2f}x {name} ({v:g} ms)" for name, v in versus.items())
    print(f"{label:<46} {ms:9.2f} ms   {ratios}")


def create_to_first_output(runs: int) -> float:
    times = []
    for _ in range(runs):
        core.run(core.warm_up())  # a spare's boot (when kept) is not what is timed
        began = time.perf_counter()
        sandbox = Sandbox.create()
        out = sandbox.commands.run("echo ok").stdout
        times.append((time.perf_counter() - began) * 1000)
        assert out == "ok\n", out
        sandbox.kill()
    return statistics.median(times)


def round_trip(runs: int) -> tuple[float, float]:
    sandbox = Sandbox.create()
    try:
        assert sandbox.commands.run("echo ok").stdout == "ok\n"
        adapter = []
        for _ in range(runs):
            began = time.perf_counter()
            sandbox.commands.run("true")
            adapter.append((time.perf_counter() - began) * 1000)
        session = sandbox._sandbox.session  # noqa: SLF001 - the SDK session the adapter drives

        async def native() -> list[float]:
            times = []
            for _ in range(runs):
                began = time.perf_counter()
                result = await session.exec("true")
                times.append((time.perf_counter() - began) * 1000)
                assert result.status == 0
            return times

        sdk = core.run(native())
    finally:
        sandbox.kill()
    return statistics.median(adapter), statistics.median(sdk)


def async_round_trip(runs: int) -> float:
    import asyncio

    async def main() -> float:
        sandbox = await AsyncSandbox.create()
        try:
            assert (await sandbox.commands.run("echo ok")).stdout == "ok\n"
            times = []
            for _ in range(runs):
                began = time.perf_counter()
                await sandbox.commands.run("true")
                times.append((time.perf_counter() - began) * 1000)
        finally:
            await sandbox.kill()
        return statistics.median(times)

    return asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    args = parser.parse_args()
    cold_runs, warm_runs, calls = (2, 3, 100) if args.quick else (5, 10, 1000)
    goal_create = {**PUBLISHED, "goal": GOALS["create"]}
    print(f"bench/compat.py  ({os.cpu_count()} CPUs; medians)")
    os.environ.pop(core.WARM_ENV, None)
    row(f"create to first output, cold (n={cold_runs})", create_to_first_output(cold_runs), goal_create)
    os.environ[core.WARM_ENV] = "1"
    row(f"create to first output, warm spare (n={warm_runs})", create_to_first_output(warm_runs), goal_create)
    os.environ.pop(core.WARM_ENV, None)
    adapter, sdk = round_trip(calls)
    row(f'e2b commands.run("true") (n={calls})', adapter, {"goal": GOALS["run"]})
    row(f'e2b async commands.run("true") (n={calls})', async_round_trip(calls), {"goal": GOALS["run"]})
    row(f'sdk agent.exec("true") beneath it (n={calls})', sdk, {"goal": GOALS["run"]})


if __name__ == "__main__":
    main()
