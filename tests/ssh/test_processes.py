"""Durable processes over real ssh: background jobs outlive the channel as under sshd, a later
login sees them (`ps`) and reaches them (`kill`, `wait`); a terminal session's logout hangs up
its jobs but not `nohup` or disowned ones; every job and exec command is a process row with a
receipt (uncertain, then committed or failed under the same id) and start/exit events."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from pathlib import Path

from kserver import HANG, Bench, need, poll
from ptyclient import PtySession

from kfs.agents.sessions import list_sessions
from kfs.journal import events_since, receipts_since
from kfs.runtime import procs

ROOT = Path(__file__).resolve().parents[2]


def sh(b: Bench, command: str, user: str = "alice") -> str:
    done = b.ssh(command, user=user)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


def home_file(b: Bench, user: str, name: str) -> bytes | None:
    from kfs.vfs import ROOT as ROOT_CRED
    from kfs.vfs import VFS, PathFS

    fs = PathFS(VFS(b.state), cred=ROOT_CRED)
    try:
        return fs.read_file(f"/home/{user}/{name}")
    except FileNotFoundError:
        return None


def eventually(check) -> None:  # noqa: ANN001
    poll(check, "never held")


def test_a_background_job_outlives_the_exec_that_started_it(bench: Bench) -> None:
    sh(bench, "rm -f bg.txt; (sleep 3; echo done > ~/bg.txt) &")
    assert home_file(bench, "alice", "bg.txt") is None  # the exec returned before its job ended, as under sshd
    eventually(lambda: home_file(bench, "alice", "bg.txt") == b"done\n")


def test_nohup_and_disown_jobs_run_on_after_logout(bench: Bench) -> None:
    sh(bench, "rm -f n.txt d.txt; nohup sh -c 'sleep 0.5; echo n > n.txt' & "
              "sh -c 'sleep 0.5; echo d > d.txt' & disown")
    eventually(lambda: home_file(bench, "alice", "n.txt") == b"n\n" and home_file(bench, "alice", "d.txt") == b"d\n")


def test_a_later_login_sees_the_job_and_can_kill_and_wait_for_it(bench: Bench) -> None:
    pid = int(sh(bench, "sleep 30 & echo $!"))
    listing = sh(bench, "ps")
    assert any(line.split()[0] == str(pid) and line.split()[-1] == "sleep" for line in listing.splitlines()[1:]), listing
    assert sh(bench, f"kill {pid}; wait {pid}; echo $?") == "143\n"
    assert str(pid) not in sh(bench, "ps")
    assert bench.ssh(f"kill {pid}").stderr.decode() == f"k: line 1: kill: ({pid}) - No such process\n"
    row = procs.get(bench.state, pid)
    assert row is not None and (row["state"], row["status"], row["signal"]) == ("killed", 143, 15)


def test_wait_across_logins_returns_the_exit_status(bench: Bench) -> None:
    pid = int(sh(bench, "(sleep 0.5; exit 7) & echo $!"))
    assert sh(bench, f"wait {pid}; echo $?") == "7\n"


def test_an_agent_cannot_see_or_signal_another_agents_processes(bench: Bench) -> None:
    pid = int(sh(bench, "sleep 30 & echo $!"))
    try:
        assert str(pid) not in sh(bench, "ps", user="bob")
        assert bench.ssh(f"kill {pid}", user="bob").returncode == 1
        assert procs.get(bench.state, pid)["state"] == "running"  # type: ignore[index]
    finally:
        sh(bench, f"kill {pid}")


def test_a_terminal_logout_hangs_up_its_jobs_but_not_nohup_ones(bench: Bench) -> None:
    s = PtySession([need("ssh"), "-tt", *bench.ssh_options(), "alice@127.0.0.1"])
    try:
        s.expect(b"$ ")
        s.send(b"rm -f hup.txt nohup.txt; (sleep 30; echo bad > hup.txt) &\r")
        s.expect(b"$ ")
        s.send(b"nohup sh -c 'sleep 1; echo ok > nohup.txt' > /dev/null &\r")
        s.expect(b"$ ")
        s.send(b"exit\r")
        s.wait()
    finally:
        s.close()
    eventually(lambda: home_file(bench, "alice", "nohup.txt") == b"ok\n")

    def hup() -> list[tuple[str, int]]:  # the plain job's row: its 30 s sleep outlasts the hang bound
        rows = procs.rows(bench.state, agent="alice")
        return [(r["state"], r["signal"]) for r in rows if r["cmd"] == "( sleep 30; echo bad > hup.txt )"][-1:]

    eventually(lambda: hup() == [("killed", 1)])  # ended by the logout's hang-up
    assert home_file(bench, "alice", "hup.txt") is None


def test_receipts_and_events_follow_each_process(bench: Bench) -> None:
    last_event = events_since(bench.state, 0, 1 << 30)[-1]["seq"]
    last_receipt = max((r["id"] for r in receipts_since(bench.state, 0, 1 << 30)), default=0)
    pid = int(sh(bench, "(exit 3) & echo $!"))
    eventually(lambda: procs.get(bench.state, pid)["state"] == "exited")  # type: ignore[index]
    row = procs.get(bench.state, pid)
    assert row is not None and row["status"] == 3 and row["agent"] == "alice"
    receipt = [r for r in receipts_since(bench.state, last_receipt, 1 << 30) if r["id"] == row["receipt"]]
    assert [r["status"] for r in receipt] == ["uncertain", "failed"]
    assert receipt[0]["by"].startswith("ssh exec alice/")
    events = [e for e in events_since(bench.state, last_event, 1 << 30) if e.get("pid") == pid]
    assert [e["type"] for e in events] == ["proc.start", "proc.exit"]
    assert events[0]["session"] == row["session"] and events[1]["status"] == 3


def test_komputer_events_filters_and_follows(bench: Bench) -> None:
    base = [sys.executable, "-m", "kshell.cli", "events", "--state", str(bench.root / "state")]
    since = events_since(bench.state, 0, 1 << 30)[-1]["seq"]  # from here, whenever the follower starts
    follow = subprocess.Popen([*base, "--follow", "--since", str(since), "--type", "proc", "--agent", "bob"],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        sh(bench, "true", user="bob")
        ready, _, _ = select.select([follow.stdout], [], [], HANG)  # a hang fails, never blocks the suite
        assert ready, "komputer events --follow printed nothing"
        line = follow.stdout.readline()  # type: ignore[union-attr]
        event = json.loads(line)
        assert event["type"] == "proc.start" and event["agent"] == "bob" and event["cmd"] == "true"
    finally:
        follow.kill()
        follow.wait()
    done = subprocess.run([*base, "--type", "session.close", "--agent", "bob"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout
    assert {json.loads(line)["type"] for line in done.stdout.splitlines()} == {"session.close"}


def test_a_jobs_output_is_kept_in_its_events_even_after_its_channel_closed(bench: Bench) -> None:
    last = events_since(bench.state, 0, 1 << 30)[-1]["seq"]
    pid = int(sh(bench, "(sleep 0.3; seq 1 5000; echo oops >&2) & echo $!"))  # printed after the exec is gone
    eventually(lambda: procs.get(bench.state, pid)["state"] == "exited")  # type: ignore[index]
    events = [e for e in events_since(bench.state, last, 1 << 30) if e.get("pid") == pid]
    assert [e["type"] for e in events] == ["proc.start", "proc.output", "proc.output", "proc.exit"]
    out = next(e for e in events if e.get("stream") == "stdout")
    full = "".join(f"{i}\n" for i in range(1, 5001))
    assert out["bytes"] == len(full) and out["head"] == full[:4096] and out["tail"] == full[-4096:]
    assert out["omitted"] == len(full) - 8192
    err = next(e for e in events if e.get("stream") == "stderr")
    assert err == {**err, "head": "oops\n", "bytes": 5} and "tail" not in err


def test_an_admin_closes_a_session_its_processes_and_its_connection(make_server) -> None:  # noqa: ANN001
    from kshell.server import ServerConfig
    from kshell.server.config import Penalties

    b = make_server(ServerConfig(lease_ttl=1.5, penalties=Penalties(exempt=("127.0.0.1/32",))))
    named = ["-o", "SetEnv=K_SESSION=work"]
    pid = int(b.ssh("sleep 60 & echo $!", extra=named).stdout)
    s = PtySession([need("ssh"), "-tt", *b.ssh_options(), *named, "alice@127.0.0.1"])
    try:
        s.expect(b"$ ")
        done = subprocess.run([sys.executable, "-m", "kshell.cli", "sessions", "close", "alice/work", "--state",
                               str(b.root / "state")], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "closed alice/work: 1 process ended\n"
        row = procs.get(b.state, pid)
        assert row is not None and (row["state"], row["signal"]) == ("killed", 1)
        assert s.wait(timeout=15) == 255  # the server closed the connection at its next renewal
    finally:
        s.close()
    closes = [e for e in events_since(b.state, 0, 1 << 30) if e["type"] == "session.close" and "by" in e]
    assert [(e["agent"], e["session"]) for e in closes] == [("alice", "work")] and closes[0]["by"].startswith("cli:")


def test_detach_idle_closes_idle_sessions_but_not_ones_running_processes(make_server) -> None:  # noqa: ANN001
    from kshell.server import ServerConfig
    from kshell.server.config import Penalties

    b = make_server(ServerConfig(lease_ttl=1.5, penalties=Penalties(exempt=("127.0.0.1/32",))))
    idle = PtySession([need("ssh"), "-tt", *b.ssh_options(), "-o", "SetEnv=K_SESSION=idle", "alice@127.0.0.1"])
    busy = PtySession([need("ssh"), "-tt", *b.ssh_options(), "-o", "SetEnv=K_SESSION=busy", "alice@127.0.0.1"])
    try:
        idle.expect(b"$ ")
        busy.expect(b"$ ")
        busy.send(b"sleep 30 &\r")
        busy.expect(b"$ ")

        def idle_for_a_second() -> bool:  # as a renewal recorded the connection's last activity
            lease = next((lease for r, lease in list_sessions(b.state) if (r.agent, r.name) == ("alice", "idle")), None)
            return lease is not None and "active" in lease and time.time_ns() - lease["active"] >= 1_000_000_000

        poll(idle_for_a_second, "the idle session's lease never recorded a second of idleness")
        done = subprocess.run([sys.executable, "-m", "kshell.cli", "sessions", "detach-idle", "--idle", "1",
                               "--state", str(b.root / "state")], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout) == (0, "detached alice/idle\n"), done.stderr
        assert idle.wait(timeout=15) == 255
        assert busy.proc.poll() is None
        busy.send(b"echo still-here\r")
        busy.expect(b"still-here")
    finally:
        idle.close()
        busy.close()


def test_sessions_and_leases_are_events_that_name_the_front_end(bench: Bench) -> None:
    last = events_since(bench.state, 0, 1 << 30)[-1]["seq"]
    sh(bench, "true", user="bob")

    def bobs() -> list[dict]:
        return [e for e in events_since(bench.state, last, 1 << 30) if e.get("agent") == "bob"]

    eventually(lambda: any(e["type"] == "session.close" for e in bobs()))  # released as the connection ends
    events = bobs()
    kinds = [e["type"] for e in events]
    assert kinds.index("session.create") < kinds.index("lease.take") < kinds.index("proc.start") \
        < kinds.index("proc.exit") < kinds.index("session.close")
    session = events[kinds.index("lease.take")]["session"]
    assert all(e["session"] == session for e in events if e["type"].startswith(("session.", "lease.", "proc.")))
    assert all(e["front"] in ("ssh", "ssh exec") for e in events if e["type"].startswith(("session.", "lease.")))
