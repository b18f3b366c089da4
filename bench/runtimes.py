"""bench/runtimes.py: the `komputer` runtime against tmux (and a plain process), in one run.

Rows (K's figure, the peer's or the goal, and the ratio K / peer):
- create to first output: `create` of a session running `python3 -q` until its `>>>` prompt
  is in `get_output`, median of N, `komputer` against `tmux` (goal: within 1.2x of tmux);
  `process` printed for reference;
- `get_output(50)` latency on a live REPL, median of N (goal: < 2 ms), each runtime;
- memory per detached terminal that printed 1,000 lines (its scrollback full): the server's
  own memory for it (the screen and scrollback, traced by tracemalloc) against tmux's server
  RSS growth per session (goal: < 256 KiB); the session's cgroup (worker and program) printed
  for reference beside the program's own RSS under tmux;
- the emulator's throughput: MB/s of plain lines a terminal's screen takes in (pure Python:
  what a program printing without pause costs the server's CPU), printed without a peer.

Needs FUSE, bubblewrap and tmux; a row says why when it cannot run.

    .venv/bin/python bench/runtimes.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # ahead of bench/, whose native.py would shadow the `native` package

from kshell.runtimes import RuntimeCreateConfig  # noqa: E402
from kshell.runtimes.process import ProcessRuntime  # noqa: E402
from kshell.runtimes.tmux import TmuxRuntime  # noqa: E402
from kshell.sdk import Komputer, local_remote, memory_state  # noqa: E402

LINES = 1000
PRINTER = ["python3", "-c", f"import sys\nfor i in range({LINES}): print('line', i, 'of the output of an agent')\n"
           "sys.stdin.read()"]


def row(name: str, k: float, peer: float, unit: str, peer_name: str) -> None:
    ratio = k / peer if peer else float("nan")
    print(f"{name:<44} {k:>10.3f} {unit:<3} {peer:>10.3f} {unit:<3} ({peer_name:<11}) {ratio:>7.2f}x")


async def until_output(rt: Any, handle: Any, text: str, bound: float = 60.0) -> None:
    deadline = time.monotonic() + bound
    while text not in await rt.get_output(handle, 50):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{rt.name}: {text!r} not shown within {bound:g} s")
        await asyncio.sleep(0.001)


async def first_output(rt: Any, runs: int, tmp: Path) -> list[float]:
    times = []
    for i in range(runs):
        started = time.perf_counter()
        handle = await rt.create(RuntimeCreateConfig(f"first-{i}", "" if rt.name == "komputer" else str(tmp),
                                                     ["python3", "-q"]))
        await until_output(rt, handle, ">>>")
        times.append(time.perf_counter() - started)
        await rt.destroy(handle)
    return times


async def output_latency(rt: Any, runs: int, tmp: Path) -> list[float]:
    workspace = "" if rt.name == "komputer" else str(tmp)
    handle = await rt.create(RuntimeCreateConfig("latency", workspace, ["python3", "-q"]))
    await until_output(rt, handle, ">>>")
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await rt.get_output(handle, 50)
        times.append(time.perf_counter() - started)
    await rt.destroy(handle)
    return times


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def tmux_memory(rt: TmuxRuntime, count: int, tmp: Path) -> tuple[float, float]:
    """tmux server RSS growth per detached session that printed LINES lines, and the
    program's own RSS."""
    first = await rt.create(RuntimeCreateConfig("mem-base", str(tmp), ["sleep", "1000"]))
    server = int((await rt._tmux("display-message", "-p", "-t", "=mem-base:", "#{pid}")).strip())  # noqa: SLF001
    before = rss(server)
    handles = []
    for i in range(count):
        handles.append(await rt.create(RuntimeCreateConfig(f"mem-{i}", str(tmp), PRINTER)))
    for handle in handles:
        await until_output(rt, handle, f"line {LINES - 1} ")
    per = (rss(server) - before) / count
    program = statistics.mean([rss(int(await rt._pane(h, "#{pane_pid}"))) for h in handles])  # noqa: SLF001
    for handle in [first, *handles]:
        await rt.destroy(handle)
    return per, program


async def komputer_memory(computer: Komputer, count: int) -> tuple[float, float]:
    """The server's memory per detached terminal that printed LINES lines (tracemalloc of the
    server process, the screen and scrollback), and its cgroup's memory (worker and program)."""
    rt = computer.runtime("komputer", agent="bench")
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    handles = []
    for i in range(count):
        handles.append(await rt.create(RuntimeCreateConfig(f"mem-{i}", "", PRINTER)))
    for handle in handles:
        await until_output(rt, handle, f"line {LINES - 1} ")
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    terminals = [computer.server.terminals.get("bench", h.id) for h in handles]
    assert all(len(t.screen.scrollback) >= LINES - 24 for t in terminals)  # the scrollback is full
    per = sum(stat.size_diff for stat in after.compare_to(before, "filename")) / count
    cgroup = statistics.mean([(await rt.get_metrics(h)).memory_bytes or 0 for h in handles])
    for handle in handles:
        await rt.destroy(handle)
    return per, cgroup


def emulator_throughput(megabytes: float) -> float:
    """MB/s of 50-column lines fed to one screen with its scrollback."""
    from kshell.screen import VTScreen

    screen = VTScreen(80, 24)
    data = b"".join(b"line %7d of the output of an agent, some words\r\n" % i for i in range(int(megabytes * 2e4)))
    started = time.perf_counter()
    for start in range(0, len(data), 4096):
        screen.feed(data[start:start + 4096])
    return len(data) / 1e6 / (time.perf_counter() - started)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    args = parser.parse_args(argv)
    runs, latency_runs, count = (5, 200, 5) if args.quick else (15, 1000, 20)
    remote = local_remote()
    if not remote.sandboxed:
        print(f"not measured: {remote.why_not}")
        return 1
    print(f"{'row':<44} {'K':>14} {'peer':>14} {'':<13} {'K/peer':>8}")
    with tempfile.TemporaryDirectory(prefix="k-bench-rt-", dir="/tmp") as where:
        tmp = Path(where)
        tmux = TmuxRuntime(socket=f"k-bench-{os.getpid()}")
        process = ProcessRuntime()
        async with Komputer.boot(state=memory_state(256 << 20), remotes={"local": remote}) as computer:
            await computer.add_agent("bench")
            komputer = computer.runtime("komputer", agent="bench")
            await first_output(komputer, 1, tmp)  # the zygote and the agent's view are loaded once per boot
            try:
                k = statistics.median(await first_output(komputer, runs, tmp))
                t = statistics.median(await first_output(tmux, runs, tmp))
                p = statistics.median(await first_output(process, runs, tmp))
                row("create to first output (python3 -q), ms", k * 1e3, t * 1e3, "ms", "tmux")
                row("  process runtime, for reference", p * 1e3, t * 1e3, "ms", "tmux")
                for rt in (komputer, tmux, process):
                    n = latency_runs if rt.name != "tmux" else 100  # tmux's is a process each
                    figure = statistics.median(await output_latency(rt, n, tmp))
                    row(f"get_output(50) latency, {rt.name}, ms", figure * 1e3, 2.0, "ms", "goal")
                k_mem, k_cgroup = await komputer_memory(computer, count)
                t_mem, t_program = await tmux_memory(tmux, count, tmp)
                row(f"memory per detached terminal, {LINES} lines, KiB", k_mem / 1024, t_mem / 1024, "KiB",
                    "tmux server")
                row("  goal", k_mem / 1024, 256.0, "KiB", "goal")
                row("  session cgroup (worker+program) / program RSS", k_cgroup / 1024, t_program / 1024, "KiB",
                    "tmux prog")
                figure = emulator_throughput(0.5 if args.quick else 2.0)
                print(f"{'emulator throughput, plain lines, MB/s':<44} {figure:>10.3f} MB/s")
            finally:
                await tmux._tmux("kill-server", check=False)  # noqa: SLF001
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
