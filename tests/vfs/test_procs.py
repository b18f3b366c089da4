"""The process table in KState (kfs.runtime.procs) and event retention: rows, receipts and
events written together; signals queued for an owner; recovery of rows a dead owner left."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kfs.journal import (
    append_event,
    events_since,
    last_event,
    prune_events,
    prune_receipts,
    receipt_rows,
    receipts_since,
)
from kfs.journal.events import agent_counts
from kfs.kstate import KState
from kfs.runtime import procs
from tests.hang import clock_past


@pytest.fixture
def state(tmp_path: Path) -> KState:
    with KState(tmp_path / "state", create=True) as s:
        yield s


def dead_owner() -> dict[str, int]:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    owner = procs.owner_id(child.pid)
    child.wait()
    return owner


def start(state: KState, cmd: str, **kwargs) -> int:  # noqa: ANN003
    return procs.start(state, agent=kwargs.pop("agent", "a"), session="s", front="ssh exec", cmd=cmd, cwd="/home/a",
                       **kwargs)


def test_a_process_has_an_uncertain_receipt_then_the_same_id_committed_or_failed(state: KState) -> None:
    ok, bad = start(state, "true"), start(state, "false")
    procs.end(state, ok, 0)
    procs.end(state, bad, 1)
    for pid, final in ((ok, "committed"), (bad, "failed")):
        row = procs.get(state, pid)
        assert row is not None and row["state"] == "exited"
        assert [r["status"] for r in receipt_rows(state, row["receipt"])] == ["uncertain", final]
    types = [(e["type"], e["pid"]) for e in events_since(state)]
    assert types == [("proc.start", ok), ("proc.start", bad), ("proc.exit", ok), ("proc.exit", bad)]


def test_pids_are_shared_and_never_reused(state: KState) -> None:
    pids = [start(state, "true") for _ in range(3)]
    assert pids == [procs.PID_BASE + 1, procs.PID_BASE + 2, procs.PID_BASE + 3]


def test_a_signal_is_queued_for_the_owner_of_the_agents_process_only(state: KState) -> None:
    pid = start(state, "sleep 100")
    assert procs.request_signal(state, pid, 15, "b") == (False, None)  # another agent's: no such process
    assert procs.request_signal(state, pid, 15, "a") == (True, os.getpid())
    assert procs.take_signals(state, procs.owner_id()) == [(pid, 15)]
    assert procs.take_signals(state, procs.owner_id()) == []
    procs.end(state, pid, 143, 15)
    assert procs.request_signal(state, pid, 15, "a") == (False, None)  # it has ended


def test_recovery_resumes_a_plain_sleep_and_seals_the_rest_lost(state: KState) -> None:
    owner = dead_owner()
    sleeper = start(state, "sleep 1m 30", owner=owner)
    script = start(state, "while :; do :; done", owner=owner)
    program = start(state, "sleep 5", owner=owner, kind="delegated")
    alive = start(state, "sleep 5")  # this process owns it: untouched
    resumed = procs.recover(state)
    assert [r["pid"] for r in resumed] == [sleeper]
    row = procs.get(state, sleeper)
    assert row is not None and row["until"] - row["started"] == 90 * 10**9 and row["owner"] == procs.owner_id()
    for pid in (script, program):
        row = procs.get(state, pid)
        assert row is not None and row["state"] == "lost"
        assert [r["status"] for r in receipt_rows(state, row["receipt"])] == ["uncertain"]
    lost = [e for e in events_since(state) if e["type"] == "proc.lost"]
    assert [(e["pid"], e["receipt"]) for e in lost] == [(p, procs.get(state, p)["receipt"]) for p in (script, program)]
    assert procs.get(state, alive)["state"] == "running"  # type: ignore[index]
    assert {r["pid"] for r in procs.rows(state, live=True)} == {sleeper, alive}


def test_a_resumed_sleep_ends_when_killed_or_at_its_deadline(state: KState) -> None:
    owner = dead_owner()
    a, b = start(state, "sleep 60", owner=owner), start(state, "sleep 60", owner=owner)
    procs.recover(state)
    assert procs.request_signal(state, a, 9, "a") == (True, None)  # no computation to wake: ended here
    assert procs.get(state, a)["state"] == "killed"  # type: ignore[index]
    procs.finish_resumed(state, b, procs.owner_id())
    row = procs.get(state, b)
    assert row is not None and (row["state"], row["status"]) == ("exited", 0)


def test_recovery_of_one_gone_worker_leaves_other_owners_alone(state: KState) -> None:
    owner = dead_owner()
    other = dead_owner()
    mine = start(state, "x", owner=owner)
    theirs = start(state, "y", owner=other)
    procs.recover(state, gone=owner["pid"])
    assert procs.get(state, mine)["state"] == "lost"  # type: ignore[index]
    assert procs.get(state, theirs)["state"] == "running"  # type: ignore[index]


@pytest.mark.parametrize(("command", "seconds"), [("sleep 2", 2.0), ("sleep 1.5m", 90.0), ("sleep 1d 1", 86401.0),
                                                  ("sleep .5", 0.5), ("sleep", None), ("sleep 1; echo", None),
                                                  ("sleep x", None), ("sleep 1 &", None)])
def test_which_commands_are_a_plain_sleep(command: str, seconds: float | None) -> None:
    assert procs.sleep_seconds(command) == seconds


def test_pruning_keeps_the_newest_events_and_sequence_numbers_never_repeat(state: KState) -> None:
    for n in range(25):
        state.write(lambda txn, n=n: append_event(txn, "t", n=n))
    assert prune_events(state, 10, batch=4) == 15
    assert [e["n"] for e in events_since(state)] == list(range(15, 25))
    assert prune_events(state, 0) == 0  # no bound by count
    assert prune_events(state, 0, before=time.time_ns() + 10**12) == 9  # all are old: the newest stays
    state.write(lambda txn: append_event(txn, "t", n=25))
    assert [e["seq"] for e in events_since(state)] == [25, 26]
    assert last_event(state) == 26


def test_pruning_by_age_stops_at_the_first_young_event(state: KState) -> None:
    for n in range(3):
        state.write(lambda txn, n=n: append_event(txn, "t", n=n))
    cut = time.time_ns()
    clock_past(cut)
    for n in range(3, 5):
        state.write(lambda txn, n=n: append_event(txn, "t", n=n))
    assert prune_events(state, 0, before=cut) == 3
    assert [e["n"] for e in events_since(state)] == [3, 4]


def flood(state: KState, agent: str, n: int, batch: int = 1000) -> None:
    for first in range(0, n, batch):
        state.write(lambda txn, first=first: [append_event(txn, "proc.start", agent=agent, n=i)
                                              for i in range(first, min(first + batch, n))])


def kept(state: KState, agent: str) -> list[int]:
    return [e["n"] for e in events_since(state, 0, 1 << 30) if e.get("agent") == agent]


def test_an_agents_flood_drops_its_own_oldest_events_not_anothers(state: KState) -> None:
    flood(state, "alice", 20)  # alice's history first, then eve floods
    state.write(lambda txn: append_event(txn, "lease.renew"))  # the appliance's own: no agent
    flood(state, "eve", 5000)
    assert agent_counts(state) == {"alice": 20, "": 1, "eve": 5000}
    assert prune_events(state, 0, batch=700, per_agent=100) == 4900
    assert kept(state, "alice") == list(range(20)) and kept(state, "eve") == list(range(4900, 5000))
    flood(state, "eve", 300)
    assert prune_events(state, 61) == 360  # the whole log's bound: shared out, the biggest loses
    assert kept(state, "alice") == list(range(20)) and kept(state, "eve") == list(range(260, 300))
    assert agent_counts(state) == {"alice": 20, "": 1, "eve": 40}
    counted: dict[str, int] = {}
    for e in events_since(state, 0, 1 << 30):
        counted[e.get("agent", "")] = counted.get(e.get("agent", ""), 0) + 1
    assert counted == agent_counts(state)  # the counts are the log's, kept in the appends' transactions


def test_pruning_a_log_from_before_the_agent_index_goes_oldest_first(state: KState) -> None:
    flood(state, "alice", 10)
    flood(state, "eve", 10)

    def forget(txn) -> None:  # noqa: ANN001 - a state written before the index had none
        for key in txn.scan_keys("byagent"):
            txn.delete("byagent", key)

    state.write(forget)
    flood(state, "eve", 5)
    assert prune_events(state, 12, per_agent=3) == 13 + 2  # 13 old ones oldest first, then eve's bound
    assert kept(state, "alice") == [] and kept(state, "eve") == [3, 4, 5, 6, 7, 8, 9, 2, 3, 4]


def jobs(state: KState, agent: str, n: int, **kwargs) -> list[int]:  # noqa: ANN003
    pids = [start(state, f"job {i}", agent=agent, **kwargs) for i in range(n)]
    for pid in pids:
        procs.end(state, pid, 0)
    return pids


def test_compaction_drops_a_flooding_agents_oldest_ended_rows_not_anothers(state: KState) -> None:
    alices = jobs(state, "alice", 5)
    running = start(state, "sleep 100", agent="alice")
    long_job = start(state, "make", agent="eve")  # started first, ended last
    eves = jobs(state, "eve", 300)
    procs.end(state, long_job, 0)
    eve_live = start(state, "sleep 100", agent="eve")
    assert procs.compact(state, keep=50, batch=40) == 251
    assert [r["pid"] for r in procs.rows(state, agent="alice")] == [*alices, running]
    kept = [r["pid"] for r in procs.rows(state, agent="eve")]
    assert kept == [long_job, *eves[-49:], eve_live]  # the 50 that ended last, and the live one
    assert [r["pid"] for r in procs.rows(state, live=True)] == [running, eve_live]
    assert procs.get(state, eves[0]) is None and procs.get(state, alices[0])["state"] == "exited"  # type: ignore[index]
    receipt = {pid: pid - procs.PID_BASE for pid in [*alices, *eves]}  # receipts numbered as the rows here
    assert receipt_rows(state, receipt[eves[0]]) == []  # a dropped row's receipt went with it
    assert [r["status"] for r in receipt_rows(state, receipt[eves[-1]])] == ["uncertain", "committed"]
    assert [r["proc"] for r in receipt_rows(state, receipt[alices[0]])] == [alices[0], alices[0]]
    assert procs.compact(state, keep=50) == 0
    procs.end(state, eve_live, 0)
    assert procs.compact(state, keep=50) == 1  # ended now: counted, and the oldest of eve's goes
    assert [r["pid"] for r in procs.rows(state, agent="eve")][:2] == [long_job, eves[-48]]


def test_a_lost_processs_uncertain_receipt_outlives_its_compacted_row(state: KState) -> None:
    lost = start(state, "make", agent="eve", owner=dead_owner())
    procs.recover(state)
    receipt = procs.get(state, lost)["receipt"]  # type: ignore[index]
    jobs(state, "eve", 3)
    assert procs.compact(state, keep=2) == 2
    assert procs.get(state, lost) is None
    assert [r["status"] for r in receipt_rows(state, receipt)] == ["uncertain"]


def test_receipt_rows_pruned_by_count_and_age_the_newest_stays(state: KState) -> None:
    pids = jobs(state, "alice", 5)  # ten rows: two per process
    assert prune_receipts(state, 6, batch=3) == 4
    assert [r["proc"] for r in receipts_since(state)] == [pids[2], pids[2], pids[3], pids[3], pids[4], pids[4]]
    assert prune_receipts(state, 0) == 0  # no bound
    assert prune_receipts(state, 0, before=time.time_ns() + 10**12) == 5  # all are old: the newest stays
    start(state, "next")
    assert [r["id"] for r in receipts_since(state)] == [5, 6]


def test_a_process_table_from_before_the_indexes_is_indexed_by_its_first_compaction(state: KState) -> None:
    alices, eves = jobs(state, "alice", 3), jobs(state, "eve", 30)
    lost = start(state, "make", agent="eve", owner=dead_owner())
    procs.recover(state)  # sealed lost: ended too

    def forget(txn) -> None:  # noqa: ANN001 - the keys a state written before them lacks
        for prefix in (b"a", b"e", b"n", b"i"):
            for key in txn.scan_keys("procs", prefix):
                txn.delete("procs", key)

    state.write(forget)
    assert [r["pid"] for r in procs.rows(state, agent="alice")] == alices  # read the long way
    assert procs.compact(state, keep=10) == 21
    assert [r["pid"] for r in procs.rows(state, agent="eve")] == [*eves[-9:], lost]
    assert [r["pid"] for r in procs.rows(state, agent="alice")] == alices


def test_komputer_ps_and_events_read_a_state(state: KState, tmp_path: Path) -> None:
    pid = start(state, "sleep 100")
    root = Path(__file__).resolve().parents[2]
    cli = [sys.executable, "-m", "kshell.cli"]
    listing = subprocess.run([*cli, "ps", "--state", str(state.path)], cwd=root, capture_output=True, text=True,
                             timeout=60)
    lines = listing.stdout.splitlines()
    assert lines[0].split() == ["PID", "AGENT", "SESSION", "STATE", "STARTED", "CMD"]
    assert lines[1].split()[:4] == [str(pid), "a", "s", "running"] and lines[1].endswith("sleep 100")
    procs.end(state, pid, 0)
    assert len(subprocess.run([*cli, "ps", "--state", str(state.path)], cwd=root, capture_output=True,
                              text=True, timeout=60).stdout.splitlines()) == 1
    events = subprocess.run([*cli, "events", "--state", str(state.path), "--type", "proc.exit"], cwd=root,
                            capture_output=True, text=True, timeout=60)
    assert [line for line in events.stdout.splitlines() if '"proc.exit"' in line] == events.stdout.splitlines()
    assert len(events.stdout.splitlines()) == 1


def test_komputer_ps_all_after_a_flood_lists_the_kept_rows_and_another_agents(state: KState) -> None:
    alices = jobs(state, "alice", 2)
    eves = jobs(state, "eve", 40)
    procs.compact(state, keep=5)
    root = Path(__file__).resolve().parents[2]

    def ps(*args: str) -> list[int]:
        done = subprocess.run([sys.executable, "-m", "kshell.cli", "ps", "-a", *args, "--state", str(state.path)],
                              cwd=root, capture_output=True, text=True, timeout=60, check=True)
        return [int(line.split()[0]) for line in done.stdout.splitlines()[1:]]

    assert ps("--agent", "alice") == alices
    assert ps() == [*alices, *eves[-5:]]


def test_policy_rules_first_match_decides_per_agent_or_for_all(state: KState) -> None:
    from kfs.runtime.rules import add_rule, first, remove_rule, rules

    allow = add_rule(state, "allow", "rm -rf build", agent="a")
    deny = add_rule(state, "deny", "rm -r*")
    assert [r.id for r in rules(state, "a")] == [allow.id, deny.id] and [r.id for r in rules(state, "b")] == [deny.id]
    assert first(rules(state, "a"), "rm -rf build") == allow
    assert first(rules(state, "b"), "rm -rf build") == deny
    assert first(rules(state, "a"), "ls -l") is None
    path = add_rule(state, "ask", "/srv/*", on="path")
    assert first(rules(state, "a"), "/srv/x", "path") == path and first(rules(state, "a"), "/srv/x") is None
    with pytest.raises(ValueError, match="expected allow, deny or ask"):
        add_rule(state, "maybe", "curl *")
    with pytest.raises(ValueError, match="a command, a path or a host"):
        add_rule(state, "deny", "x", on="file")
    assert remove_rule(state, deny.id) and not remove_rule(state, deny.id)
    assert [e["type"] for e in events_since(state)] == ["policy.add", "policy.add", "policy.add", "policy.remove"]


def test_a_pattern_without_a_space_also_matches_the_commands_name() -> None:
    from kfs.runtime.rules import Rule

    assert Rule(1, "deny", "rm").matches("rm -rf x") and Rule(1, "deny", "rm").matches("/bin/rm x")
    assert not Rule(1, "deny", "rm x").matches("rm -rf x") and not Rule(1, "deny", "r").matches("rm x")
