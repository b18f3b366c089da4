"""What runs and what happened: `komputer events` (the event stream, as `journalctl -o json`
prints a journal), `komputer ps` (the process table of every agent) and `komputer sessions`.
They read the state while a server runs; they never write it."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from kshell.cli import AddCommand


def _state(args: argparse.Namespace) -> Any:
    from kfs.kstate import KState
    from kshell.cli.state import state_path

    return KState(state_path(args), create=False)


def _matches(event: dict[str, Any], args: argparse.Namespace) -> bool:
    kind = event.get("type", "")
    return ((args.agent is None or event.get("agent") == args.agent)
            and (args.session is None or event.get("session") == args.session)
            and (not args.type or any(kind == t or kind.startswith(t + ".") for t in args.type)))


def cmd_events(args: argparse.Namespace) -> int:
    from kfs.journal import events_since, last_event

    state = _state(args)
    seq = args.since
    if seq is None:  # `--follow` alone: what happens from now on, as `tail -f -n 0`
        seq = last_event(state) if args.follow else 0
    try:
        while True:
            batch = events_since(state, seq, 10_000)
            for event in batch:
                seq = event["seq"]
                if _matches(event, args):
                    sys.stdout.write(json.dumps(event, separators=(",", ":")) + "\n")
            if batch:
                sys.stdout.flush()
                continue
            if not args.follow:
                return 0
            time.sleep(0.01)  # LMDB has no cross-process notification; a read is microseconds
    except (KeyboardInterrupt, BrokenPipeError):
        return 0


def _when(ns: int | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ns / 1e9)) if ns else "-"


def _state_word(row: dict[str, Any]) -> str:
    from kshell.exec.jobs import SIGNALS

    if row["state"] == "exited":
        return f"exited {row['status']}"
    if row["state"] == "killed":
        return f"killed SIG{SIGNALS.get(row['signal'], row['signal'])}"
    return row["state"]


def cmd_ps(args: argparse.Namespace) -> int:
    from kfs.runtime import procs

    found = procs.rows(_state(args), agent=args.agent, live=not args.all)
    if args.json:
        for row in found:
            print(json.dumps(row, separators=(",", ":")))
        return 0
    print(f"{'PID':>7} {'AGENT':<12} {'SESSION':<12} {'STATE':<14} {'STARTED':<19} CMD")
    for row in found:
        cmd = " ".join(row["cmd"].split())
        print(f"{row['pid']:>7} {row['agent']:<12} {row['session']:<12} {_state_word(row):<14} "
              f"{_when(row['started']):<19} {cmd[:200]}")
    return 0


def cmd_sessions(args: argparse.Namespace) -> int:
    from kfs.agents.sessions import lease_alive, list_sessions
    from kfs.runtime import procs

    state = _state(args)
    live = procs.rows(state, live=True)
    now = time.time_ns()
    print(f"{'AGENT':<12} {'SESSION':<14} {'HOLDER':<8} {'LEASE EXPIRES':<19} PROCESSES")
    for record, lease in list_sessions(state):
        held = lease is not None and lease_alive(lease, now)
        count = sum(1 for r in live if r["agent"] == record.agent and r["session"] == record.name)
        print(f"{record.agent:<12} {record.name:<14} {lease['pid'] if held else '-'!s:<8} "
              f"{_when(lease['expires']) if held else '-':<19} {count}")
    return 0


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    p = add("events", cmd_events, "print the event stream as JSON lines (sessions, processes, agents, keys)")
    p.add_argument("-f", "--follow", action="store_true", help="keep printing new events as they are committed")
    p.add_argument("--since", type=int, metavar="SEQ",
                   help="only events after sequence number SEQ (default: all; with --follow, from now on)")
    p.add_argument("--agent", metavar="A", help="only events of agent A")
    p.add_argument("--session", metavar="S", help="only events of session S")
    p.add_argument("--type", action="append", metavar="T",
                   help="only events of type T or its subtypes (proc: proc.start, proc.exit, ...); repeatable")
    p = add("ps", cmd_ps, "list the agents' processes: background jobs and SSH exec commands")
    p.add_argument("-a", "--all", action="store_true", help="ended and lost processes too")
    p.add_argument("--agent", metavar="A", help="only agent A's")
    p.add_argument("--json", action="store_true", help="one JSON object per process")
    add("sessions", cmd_sessions, "list the agents' sessions: holder, lease expiry, live processes")
