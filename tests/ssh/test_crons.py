"""Crons of the image run by a real `komputer serve`: a command every second, as a process of
its agent (proc.* events, a row), its schedule in KState, so that a server killed with SIGKILL
and started again goes on with it."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kserver import poll
from test_process_recovery import free_port, serve

from kfs.journal import events_since
from kfs.kstate import KState
from kfs.runtime import procs
from kfs.runtime.crons import PREFIX
from kfs.vfs import VFS, PathFS

ROOT = Path(__file__).resolve().parents[2]


def komputer(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kshell.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def ticks(state: KState) -> list[str]:
    fs = PathFS(VFS(state, by="test"))
    try:
        return fs.read_file("/home/alice/ticks").decode().split()
    except FileNotFoundError:
        return []


def wait_for(state: KState, count: int) -> list[str]:
    poll(lambda: len(ticks(state)) >= count, f"fewer than {count} ticks")
    return ticks(state)


def last_start(state: KState) -> float:
    """When the cron last started (s since the epoch), as its schedule in KState says."""
    with state.read() as txn:
        raw = txn.get("keys", PREFIX + b"tick")
    assert raw is not None
    return float(json.loads(raw)["last"])


def test_a_cron_every_second_survives_a_server_restart() -> None:
    base = Path(tempfile.mkdtemp(prefix="k-cron-", dir="/tmp"))
    state_dir, folder = base / "state", base / "img"
    try:
        folder.mkdir()
        (folder / "komputer.toml").write_text(
            '[[crons]]\nname = "tick"\nevery = "1s"\nagent = "alice"\ncommand = "date +%s >> ~/ticks"\n')
        assert komputer("init", "--state", str(state_dir), "--image", str(folder)).returncode == 0
        assert komputer("agent", "add", "alice", "--state", str(state_dir)).returncode == 0
        state = KState(state_dir)
        try:
            server = serve(state_dir, free_port())
            first = wait_for(state, 2)
            server.send_signal(signal.SIGKILL)
            server.wait()
            missed = last_start(state) + 1  # a run falls due while nothing serves
            poll(lambda: time.time() > missed, "the clock never passed the next run's time")
            server = serve(state_dir, free_port())
            seen = wait_for(state, len(first) + 3)

            def ended_well() -> int:
                return sum(e["type"] == "cron.done" and e["status"] == 0 for e in events_since(state, 0, 1 << 30))

            # a run writes its tick before its end is recorded: the server stops once the runs seen
            # have ended (all but the one the kill cut short), not while the last one still runs
            poll(lambda: ended_well() >= len(seen) - 1, "the runs that ticked never recorded their end")
            server.send_signal(signal.SIGTERM)
            server.communicate(timeout=60)
            runs = [e for e in events_since(state, 0, 1 << 30) if e["type"] == "cron.run"]
            done = [e for e in events_since(state, 0, 1 << 30) if e["type"] == "cron.done"]
            rows = procs.rows(state)
        finally:
            state.close()
        stamps = [int(t) for t in seen]
        assert stamps == sorted(stamps) and len(seen) >= 5
        assert [e["run"] for e in runs] == list(range(1, len(runs) + 1))
        assert all(e["cron"] == "tick" and e["agent"] == "alice" for e in runs)
        assert sum(e["status"] == 0 for e in done) >= len(seen) - 1  # the one the kill cut short may lack it
        # the restart did not stop the schedule: the restarted server ran 3 more (how soon after
        # its start a loaded machine gets there is no claim; the hang bound of wait_for holds it)
        cron_rows = [r for r in rows if r.get("session") == "cron-tick"]
        assert len(cron_rows) >= len(seen) - 1 and all(r["agent"] == "alice" for r in cron_rows)
        assert komputer("fsck", "--state", str(state_dir)).returncode == 0
    finally:
        shutil.rmtree(base, ignore_errors=True)
