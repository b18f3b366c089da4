"""The event stream against its peer, in one run.

  follow    50 writer processes append events (20 each, a few ms apart); `komputer events
            --follow` prints them. Latency from commit to print, p50 and p99 (goal p99 <= 50 ms),
            against the same writers appending JSON lines to a file that `tail -F` prints
            (ratio K / tail). Both must print every event, the same ones, or the bench stops
            before the ratio (bench/agree.py).
  journal   what the journal costs inside a VFS operation: 4 KiB `write_file` calls, and the
            same number of receipt + change-row appends, as a share of the operation (goal
            <= 15%); and a process's start + end (its row, receipt rows and events).
  store     N events (default 10,000,000) appended in transactions of 100,000: the rate, the
            size on disk, and retention (`prune_events` down to N/10) speed.
  procs     N background jobs of one agent (default 100,000) started and ended, then
            `komputer ps`, `ps -a` and `ps -a --agent` of another agent: their times.

    .venv/bin/python bench/events.py [--events N] [--procs N] [--only MEASURE]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from agree import agree  # noqa: E402

from kfs.journal import ChangeKind, append_change, append_event, append_receipt, prune_events  # noqa: E402
from kfs.kstate import KState  # noqa: E402
from kfs.runtime import procs  # noqa: E402
from kfs.vfs import VFS, PathFS  # noqa: E402

WRITERS = 50
PER_WRITER = 20


def _k_writer(state_dir: str, n: int) -> None:
    state = KState(state_dir)
    for i in range(n):
        state.write(lambda txn, i=i: append_event(txn, "bench.tick", t=time.time_ns(), i=i))
        time.sleep(0.005)
    state.close()


def _file_writer(path: str, n: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    for i in range(n):
        os.write(fd, (json.dumps({"type": "bench.tick", "t": time.time_ns(), "i": i}) + "\n").encode())
        time.sleep(0.005)
    os.close(fd)


def _collect(proc: subprocess.Popen[bytes], want: int, latencies: list[float], seen: list[int]) -> None:
    assert proc.stdout is not None
    while len(latencies) < want:
        line = proc.stdout.readline()
        if not line:
            return
        now = time.time_ns()
        event = json.loads(line)
        if event.get("type") == "bench.tick":
            latencies.append((now - event["t"]) / 1e6)
            seen.append(event["i"])


def _run_writers(target, arg: str) -> None:  # noqa: ANN001
    ctx = multiprocessing.get_context("fork")
    writers = [ctx.Process(target=target, args=(arg, PER_WRITER)) for _ in range(WRITERS)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def follow(tmp: Path) -> None:
    want = WRITERS * PER_WRITER
    state_dir = tmp / "follow"
    KState(state_dir, create=True).close()
    k = subprocess.Popen([sys.executable, "-m", "kshell.cli", "events", "--follow", "--state", str(state_dir)],
                         cwd=ROOT, stdout=subprocess.PIPE)
    log = tmp / "events.jsonl"
    log.write_bytes(b"")
    tail = subprocess.Popen(["tail", "-n", "0", "-F", str(log)], stdout=subprocess.PIPE)
    time.sleep(1.5)  # both followers are up
    results = {}
    printed: dict[str, list[int]] = {}
    for name, proc, target, arg in (("K", k, _k_writer, str(state_dir)), ("tail", tail, _file_writer, str(log))):
        latencies: list[float] = []
        seen: list[int] = []
        reader = threading.Thread(target=_collect, args=(proc, want, latencies, seen), daemon=True)
        reader.start()
        _run_writers(target, arg)
        reader.join(30)
        proc.kill()
        proc.wait()
        results[name] = (len(latencies), *_percentiles(latencies))
        printed[name] = sorted(seen)
    agree("follow: the events printed", printed["K"], printed["tail"], "tail -F")
    agree("follow: every event printed", len(printed["K"]), want, "the writers")
    (kn, k50, k99), (tn, t50, t99) = results["K"], results["tail"]
    print(f"follow   {WRITERS} writers x {PER_WRITER}: K {kn}/{want} printed, p50 {k50:.1f} ms, p99 {k99:.1f} ms"
          f" (goal p99 <= 50 ms); tail -F {tn}/{want}, p50 {t50:.1f} ms, p99 {t99:.1f} ms;"
          f" ratio p50 {k50 / t50:.2f}x, p99 {k99 / t99:.2f}x")


def journal(tmp: Path, n: int = 5000) -> None:
    """A VFS operation journals a receipt and a change-feed row in its own transaction; events
    are per process and session, not per operation (their cost: a process's start and end)."""
    with KState(tmp / "journal", create=True) as state:
        fs = PathFS(VFS(state, by="bench"))
        fs.mkdir("/d")
        data = os.urandom(4096)
        start = time.perf_counter()
        for i in range(n):
            fs.write_file(f"/d/f{i % 100}", data)
        op = (time.perf_counter() - start) / n

        def appends(txn) -> None:  # noqa: ANN001
            for i in range(n):
                append_receipt(txn, "vfs.write", "ssh exec alice/ssh-1", path=f"/d/f{i % 100}", nbytes=4096)
                append_change(txn, 1, ChangeKind.DATA, 1000 + i % 100)

        start = time.perf_counter()
        state.write(appends)
        journal_cost = (time.perf_counter() - start) / n
        start = time.perf_counter()
        for _ in range(n // 10):
            pid = procs.start(state, agent="alice", session="ssh-1", front="ssh exec", cmd="make", cwd="/home/alice")
            procs.end(state, pid, 0)
        process = (time.perf_counter() - start) / (n // 10)
    print(f"journal  4 KiB write_file {op * 1e6:.1f} us, of which its receipt + change row {journal_cost * 1e6:.1f} us"
          f" = {journal_cost / op * 100:.1f}% (goal <= 15%); a process's start + end (row, receipt, events,"
          f" two transactions) {process * 1e6:.0f} us")


def store(tmp: Path, n: int) -> None:
    path = tmp / "store"
    batch = 100_000
    with KState(path, create=True) as state:
        start = time.perf_counter()
        for first in range(0, n, batch):
            count = min(batch, n - first)

            def body(txn, first=first, count=count) -> None:  # noqa: ANN001
                for i in range(first, first + count):
                    append_event(txn, "proc.start", agent="alice", session="ssh-1", front="ssh exec", pid=100000 + i,
                                 cmd="make test", cwd="/home/alice", kind="local")

            state.write(body)
        took = time.perf_counter() - start
        size = os.path.getsize(path / "data.mdb")
        start = time.perf_counter()
        removed = prune_events(state, n // 10)
        pruned = time.perf_counter() - start
    print(f"store    {n:,} events appended in {took:.1f} s ({n / took:,.0f}/s); data.mdb {size / 2**20:,.0f} MiB"
          f" ({size / n:.0f} B/event); retention removed {removed:,} in {pruned:.1f} s ({removed / pruned:,.0f}/s)")


def process_table(tmp: Path, n: int) -> None:
    """`komputer ps` (live), `ps -a` and `ps -a --agent` with `n` ended rows of one agent (eve),
    a few of another's (alice) and some live ones: what a flood of background jobs leaves;
    then again once the server's compaction kept each agent's newest 1,000 ended rows."""
    path = tmp / "procs"
    with KState(path, create=True) as state:
        start = time.perf_counter()
        for i in range(n):
            procs.end(state, procs.start(state, agent="eve", session="s", front="ssh exec", cmd=f"true {i}",
                                         cwd="/home/eve"), 0)
        made = time.perf_counter() - start
        for i in range(20):
            pid = procs.start(state, agent="alice", session="w", front="ssh exec", cmd=f"make {i}", cwd="/home/alice")
            if i % 2:
                procs.end(state, pid, 0)

    def ps_times() -> str:
        times = []
        for args in ([], ["-a"], ["-a", "--agent", "alice"]):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "kshell.cli", "ps", *args, "--state", str(path)], cwd=ROOT,
                           stdout=subprocess.DEVNULL, check=True)
            times.append(time.perf_counter() - start)
        reads = []  # the table's part of it, without the interpreter's start
        with KState(path) as state:
            for kwargs in ({"live": True}, {}, {"agent": "alice"}):
                start = time.perf_counter()
                procs.rows(state, **kwargs)  # type: ignore[arg-type]
                reads.append((time.perf_counter() - start) * 1e3)
        return (f"komputer ps {times[0]:.2f} s, ps -a {times[1]:.2f} s, ps -a --agent (another) {times[2]:.2f} s"
                f" (their reads {reads[0]:.1f}, {reads[1]:.0f}, {reads[2]:.1f} ms)")

    flooded = ps_times()
    with KState(path) as state:
        start = time.perf_counter()
        dropped = procs.compact(state)
        took = time.perf_counter() - start
    print(f"procs    {n:,} ended jobs of one agent ({n / made:,.0f} start+end/s): {flooded}; compaction dropped"
          f" {dropped:,} in {took:.2f} s, then {ps_times()}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=10_000_000, help="events for the store measure")
    parser.add_argument("--procs", type=int, default=100_000, help="ended jobs for the process table measure")
    parser.add_argument("--only", choices=("follow", "journal", "store", "procs"), help="one measure only")
    args = parser.parse_args()
    if shutil.which("tail") is None:
        sys.exit("bench/events.py needs tail (coreutils)")
    tmp = Path(tempfile.mkdtemp(prefix="k-bench-events-"))
    try:
        if args.only in (None, "follow"):
            follow(tmp)
        if args.only in (None, "journal"):
            journal(tmp)
        if args.only in (None, "store"):
            store(tmp, args.events)
        if args.only in (None, "procs"):
            process_table(tmp, args.procs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
