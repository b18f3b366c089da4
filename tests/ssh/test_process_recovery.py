"""Crash recovery of the process table: rounds of SIGKILL of a real `komputer serve` while
K-local and delegated background jobs run, each followed by a restart. After every restart no
row is left running without a live owner; a plain `sleep` ends at its original deadline (or at
once when it passed while the server was down); the others are sealed lost with their receipt
left uncertain and a `proc.lost` event naming it; every `proc.start` has its end; fsck is clean."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kserver import HANG, keygen, need, poll

from kfs.journal import events_since, receipts_since
from kfs.kstate import KState
from kfs.runtime import procs
from tests.leftovers import naming

ROOT = Path(__file__).resolve().parents[2]
SLEEP = 3.0


def komputer(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kshell.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(state: Path, port: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "kshell.cli", "serve", "--state", str(state), "--listen",
                             f"127.0.0.1:{port}"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    assert proc.stdout is not None
    seen = []
    while (line := proc.stdout.readline()) and "listening on" not in line:
        seen.append(line)
    assert line, "".join(seen)
    return proc


def ssh(key: Path, port: int, command: str) -> str:
    done = subprocess.run([need("ssh"), "-p", str(port), "-i", str(key), "-o", "StrictHostKeyChecking=no",
                           "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "BatchMode=yes",
                           "-F", "/dev/null", "alice@127.0.0.1", command],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout


def check_rows(state: KState, starts: list[tuple[int, int]]) -> None:
    """Every row ended, or live under a live owner; a sleep ends at its deadline, never before
    it (a resumed one records its deadline, or its recovery when the deadline passed while no
    server ran, and commits its `proc.exit` then). How late past the deadline a loaded
    machine gets there is no claim: only a hang bound. `starts`: each server's spawn and
    listening times."""
    rows = procs.rows(state)  # before the events: a row that ends between the two reads has its event
    exits = {e["pid"]: e["ts"] for e in events_since(state, 0, 1 << 30) if e["type"] == "proc.exit"}
    for row in rows:
        if row["state"] in procs.LIVE:
            assert procs.owner_alive(row["owner"]), row
        if "until" in row and row["state"] == "exited":
            until, ended = row["until"], row["ended"]
            if "resumed" in row:
                assert ended == max(until, row["resumed"]), row
                assert any(spawn <= row["resumed"] <= listen for spawn, listen in starts), row
                assert exits[row["pid"]] - ended < HANG * 1e9, row
            else:
                assert until - 50_000_000 <= ended < until + HANG * 1e9, ((ended - until) / 1e9, row)


def sandboxes(base: Path) -> list[int]:
    """The bwrap sandboxes still binding something under `base` (a delegated program's)."""
    return [p.pid for p in naming(str(base)) if os.path.basename(p.cmdline.split()[0]) == "bwrap"]


def check_journal(state: KState) -> None:
    events = events_since(state, 0, 1 << 30)
    assert [e["seq"] for e in events] == sorted({e["seq"] for e in events})
    ends = {e["pid"]: e for e in events if e["type"] in ("proc.exit", "proc.lost")}
    receipts: dict[int, list[str]] = {}
    for r in receipts_since(state, 0, 1 << 30):
        if r["op"] == "proc":
            receipts.setdefault(r["id"], []).append(r["status"])
    for e in events:
        if e["type"] != "proc.start":
            continue
        row = procs.get(state, e["pid"])
        assert row is not None
        if row["state"] in procs.LIVE:
            assert procs.owner_alive(row["owner"])
            continue
        end = ends[e["pid"]]
        statuses = receipts[row["receipt"]]
        assert statuses[0] == "uncertain"
        if row["state"] == "lost":
            assert end["type"] == "proc.lost" and end["receipt"] == row["receipt"] and statuses == ["uncertain"]
        else:
            assert end["type"] == "proc.exit" and statuses[1:] == ["committed" if row["status"] == 0 else "failed"]


def test_sigkill_rounds_leave_every_process_accounted_for() -> None:
    need("bwrap")
    base = Path(tempfile.mkdtemp(prefix="k-recover-", dir="/tmp"))
    base.chmod(0o755)  # the agent's delegated programs reach the mount through it
    state_dir, mnt, port = base / "state", base / "mnt", free_port()
    try:
        assert komputer("init", "--state", str(state_dir)).returncode == 0
        assert komputer("agent", "add", "alice", "--state", str(state_dir)).returncode == 0
        key = keygen(base / "key", "alice@test")
        assert komputer("keys", "add", "alice", str(base / "key.pub"), "--state", str(state_dir)).returncode == 0
        mnt.mkdir()
        done = komputer("mount", "-o", "allow_other", "--state", str(state_dir), str(mnt))
        assert done.returncode == 0, done.stderr
        state = KState(state_dir)
        kinds: dict[int, str] = {}
        rng = random.Random(7)
        starts: list[tuple[int, int]] = []
        for _ in range(10):
            spawned = time.time_ns()
            server = serve(state_dir, port)
            starts.append((spawned, time.time_ns()))
            try:
                check_rows(state, starts)
                out = ssh(key, port, f"sleep {SLEEP} & echo $!; (while :; do sleep 0.05; done) & echo $!; "
                                     "python3 -c 'import time; time.sleep(600)' & echo $!")
                for pid, kind in zip(map(int, out.split()), ("sleep", "loop", "program"), strict=True):
                    kinds[pid] = kind
                time.sleep(rng.uniform(0.05, 0.5))
            finally:
                server.send_signal(signal.SIGKILL)
                server.wait()
        spawned = time.time_ns()
        server = serve(state_dir, port)
        starts.append((spawned, time.time_ns()))
        try:
            sleeps = [pid for pid, kind in kinds.items() if kind == "sleep"]
            poll(lambda: all(procs.get(state, pid)["state"] not in procs.LIVE for pid in sleeps),  # type: ignore[index]
                 "a sleep never ended")
            check_rows(state, starts)
            check_journal(state)
            final = {pid: procs.get(state, pid) for pid in kinds}
            for pid, kind in kinds.items():
                row = final[pid]
                assert row is not None
                assert row["state"] == ("exited" if kind == "sleep" else "lost"), (kind, row)
                assert (row["kind"] == "delegated") == (kind == "program"), row
            resumed = {e["pid"] for e in events_since(state, 0, 1 << 30) if e["type"] == "proc.resume"}
            assert resumed & {pid for pid, kind in kinds.items() if kind == "sleep"}, "no sleep was resumed"
            exits = {e["pid"]: e["ts"] for e in events_since(state, 0, 1 << 30) if e["type"] == "proc.exit"}
            print(f"{len(resumed)} sleeps resumed after a SIGKILL; each one's exit committed after its deadline"
                  " (s):", sorted(round((exits[p] - final[p]["until"]) / 1e9, 3)  # type: ignore[index]
                                  for p, k in kinds.items() if k == "sleep"))
            listing = komputer("ps", "--state", str(state_dir), "--json")
            assert not [json.loads(line) for line in listing.stdout.splitlines()]  # nothing live is left
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(60)
        state.close()
        # a killed server's workers took their sandboxes with them (the program would sleep for
        # 600 s): none binds the mount now
        poll(lambda: not sandboxes(base), "sandboxes outlived the servers that ran them")
        subprocess.run(["fusermount3", "-u", str(mnt)], check=True)
        fsck = komputer("fsck", "--state", str(state_dir))
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    finally:
        for pid in sandboxes(base):  # this test's own, should it have failed above
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        subprocess.run(["fusermount3", "-u", str(mnt)], check=False, capture_output=True)
        if not os.path.ismount(mnt):  # never remove through a mount that is still there
            shutil.rmtree(base, ignore_errors=True)
