"""What runs and what happened: `komputer events` (the event stream, as `journalctl -o json`
prints a journal), `komputer ps` (the process table of every agent) and `komputer sessions`,
which read the state while a server runs; and what governs it: `komputer policy` (rules),
`komputer approvals` and `komputer decide` (what an `ask` rule paused)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from typing import Any

from kfs.terminal import printable
from kshell.cli import AddCommand


def _state(args: argparse.Namespace) -> Any:
    from kfs.kstate import KState
    from kshell.cli import state_path

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
        cmd = printable(row["cmd"])[:200]
        print(f"{row['pid']:>7} {row['agent']:<12} {printable(row['session']):<12} {_state_word(row):<14} "
              f"{_when(row['started']):<19} {cmd}")
    return 0


def cmd_sessions(args: argparse.Namespace) -> int:
    from kfs.agents.sessions import lease_alive, list_sessions
    from kfs.runtime import procs
    from kshell.cli import state_path
    from kshell.server.attach import list_terminals

    state = _state(args)
    live = procs.rows(state, live=True)
    now = time.time_ns()
    terminals = {(t["agent"], t["session"]): t for t in list_terminals(state_path(args)) or []}
    print(f"{'AGENT':<12} {'SESSION':<14} {'HOLDER':<8} {'LEASE EXPIRES':<19} {'PROCESSES':<9} TERMINAL")
    for record, lease in list_sessions(state):
        held = lease is not None and lease_alive(lease, now)
        count = sum(1 for r in live if r["agent"] == record.agent and r["session"] == record.name)
        terminal = terminals.pop((record.agent, record.name), None)
        print(f"{record.agent:<12} {printable(record.name):<14} {lease['pid'] if held else '-'!s:<8} "
              f"{_when(lease['expires']) if held else '-':<19} {count:<9} {_terminal_word(terminal)}".rstrip())
    for (agent, name), terminal in terminals.items():  # ended and ephemeral ones have no session record
        print(f"{agent:<12} {printable(name):<14} {'-':<8} {'-':<19} {0:<9} {_terminal_word(terminal)}")
    return 0


def _terminal_word(terminal: dict[str, Any] | None) -> str:
    """A persistent terminal as `komputer sessions` shows it: detached or attached (how many
    viewers) or ended (its status), and what runs in it."""
    if terminal is None:
        return "-"
    if not terminal["alive"]:
        state = f"ended ({terminal['status']})"
    else:
        state = f"attached ({terminal['viewers']})" if terminal["viewers"] else "detached"
    return f"{state}: {printable(str(terminal['command']))[:80]}"


DETACH_KEY = b"\x1d"  # Ctrl-]: leave the terminal running and go (as telnet's escape)


def cmd_attach(args: argparse.Namespace) -> int:
    """Attach this terminal to AGENT/SESSION's persistent terminal on the server running on the
    state (kshell.server.attach): its screen painted at once, keys to it, the window's size its
    size while attached; Ctrl-] detaches, leaving it running."""
    import os
    import select
    import signal
    import socket
    import termios
    import tty

    from kshell.cli import PROG, state_path
    from kshell.server.attach import FRAME, SIZE, socket_path

    agent, _, session = args.target.partition("/")
    if not agent or not session:
        print(f"{PROG} attach: {args.target}: expected AGENT/SESSION", file=sys.stderr)
        return 2
    path = socket_path(state_path(args))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError as e:
        print(f"{PROG} attach: no server runs on this state ({path}: {e.strerror})", file=sys.stderr)
        return 1
    interactive = os.isatty(0)
    size = os.get_terminal_size(0) if interactive else None
    hello = {"agent": agent, "session": session,
             "columns": size.columns if size else 0, "lines": size.lines if size else 0}
    sock.sendall(json.dumps(hello).encode() + b"\n")
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = sock.recv(1)
        if not chunk:
            break
        reply += chunk
    answer = json.loads(reply or b"{}")
    if not answer.get("ok"):
        print(f"{PROG} attach: {answer.get('error', 'the server closed the connection')}", file=sys.stderr)
        return 1

    def send(kind: bytes, payload: bytes) -> None:
        sock.sendall(FRAME.pack(kind, len(payload)) + payload)

    def winch(_signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            now = os.get_terminal_size(0)
            send(b"w", SIZE.pack(now.columns, now.lines))

    saved = termios.tcgetattr(0) if interactive else None
    if interactive:
        tty.setraw(0)
        signal.signal(signal.SIGWINCH, winch)
    detached = False
    try:
        while True:
            ready, _, _ = select.select([0, sock], [], [])
            if sock in ready:
                data = sock.recv(65536)
                if not data:
                    break
                os.write(1, data)
            if 0 in ready:
                keys = os.read(0, 65536)
                if not keys:
                    break
                if DETACH_KEY in keys:
                    keys = keys[:keys.index(DETACH_KEY)]
                    if keys:
                        send(b"d", keys)
                    detached = True
                    break
                send(b"d", keys)
    finally:
        if saved is not None:
            termios.tcsetattr(0, termios.TCSADRAIN, saved)
            signal.signal(signal.SIGWINCH, signal.SIG_DFL)
        sock.close()
    print(f"\r\n[{'detached from' if detached else 'ended:'} {agent}/{session}]", file=sys.stderr)
    return 0


def cmd_sessions_close(args: argparse.Namespace) -> int:
    """End AGENT/SESSION: its lease goes (the connection closes at the server's next renewal),
    its processes get SIGHUP, then SIGKILL, then their worker is killed; an event says so."""
    import os
    import signal

    from kfs.agents.sessions import close_session
    from kfs.runtime import procs
    from kshell.worker.procs import send

    agent, _, name = args.target.partition("/")
    if not agent or not name:
        print(f"komputer sessions close: {args.target}: expected AGENT/SESSION", file=sys.stderr)
        return 2
    state = _state(args)

    def live() -> list[dict[str, Any]]:
        return [r for r in procs.rows(state, agent=agent, live=True) if r["session"] == name]

    if not close_session(state, agent, name, by=f"cli:{os.getuid()}") and not live():
        print(f"komputer sessions close: {args.target}: no such session", file=sys.stderr)
        return 1
    ended = len(live())
    for sig, grace in ((signal.SIGHUP, 2.0), (signal.SIGKILL, 1.0)):
        for row in live():
            send(state, row["pid"], sig, agent)
        deadline = time.monotonic() + grace
        while live() and time.monotonic() < deadline:
            time.sleep(0.05)
    for owner in {r["owner"]["pid"] for r in live() if procs.owner_alive(r["owner"])}:
        with contextlib.suppress(ProcessLookupError):
            os.kill(owner, signal.SIGKILL)  # a worker that honoured neither: it ends, and its rows are sealed
        procs.recover(state, gone=owner)
    print(f"closed {agent}/{name}: {ended} process{'es' if ended != 1 else ''} ended")
    return 0


def cmd_sessions_detach(args: argparse.Namespace) -> int:
    """Detach AGENT/SESSION: its lease goes (its connection closes at the server's next
    renewal), the session and what it keeps stay, to be resumed with K_SESSION."""
    import os

    from kfs.agents.sessions import detach_session

    agent, _, name = args.target.partition("/")
    if not agent or not name:
        print(f"komputer sessions detach: {args.target}: expected AGENT/SESSION", file=sys.stderr)
        return 2
    if not detach_session(_state(args), agent, name, by=f"cli:{os.getuid()}"):
        print(f"komputer sessions detach: {printable(args.target)}: no such session", file=sys.stderr)
        return 1
    print(f"detached {printable(agent)}/{printable(name)}")
    return 0


def cmd_sessions_detach_idle(args: argparse.Namespace) -> int:
    """Detach sessions idle past --idle seconds that run no process (their connections close;
    named ones can be resumed)."""
    import os

    from kfs.agents.sessions import detach_idle
    from kfs.runtime import procs

    state = _state(args)
    busy = {(r["agent"], r["session"]) for r in procs.rows(state, live=True)}
    for agent, name in detach_idle(state, args.idle, busy, by=f"cli:{os.getuid()}"):
        print(f"detached {agent}/{printable(name)}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    """One look at the appliance: sessions held, processes by state, mounts of this state,
    events, receipts, and the state's size."""
    import os

    from kfs.agents.sessions import lease_alive, list_sessions
    from kfs.runtime import procs
    from kshell.cli import state_path

    state = _state(args)
    now = time.time_ns()
    sessions = list_sessions(state)
    by_state: dict[str, int] = {}
    for row in procs.rows(state):
        by_state[row["state"]] = by_state.get(row["state"], 0) + 1
    with state.read() as txn:
        counts = {db: txn.stat(db)["entries"] for db in ("events", "receipts", "changes")}
    where = os.path.realpath(state_path(args))
    mounts = []
    with contextlib.suppress(OSError), open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
        for line in f:
            fields = line.split()
            dash = fields.index("-")
            if fields[dash + 2] == f"kfs:{where}":
                mounts.append(fields[4])
    data = os.path.join(where, "data.mdb")
    stats = {
        "sessions": len(sessions), "sessions_held": sum(1 for _, lease in sessions if lease and lease_alive(lease, now)),
        "processes": by_state, "mounts": mounts, "events": counts["events"], "receipt_rows": counts["receipts"],
        "changes": counts["changes"], "state_bytes": os.path.getsize(data) if os.path.exists(data) else 0,
    }
    if args.json:
        print(json.dumps(stats, separators=(",", ":")))
        return 0
    print(f"sessions      {stats['sessions']} ({stats['sessions_held']} held)")
    print("processes     " + (", ".join(f"{n} {s}" for s, n in sorted(by_state.items())) or "none"))
    print("mounts        " + (" ".join(mounts) or "none"))
    print(f"events        {stats['events']}")
    print(f"receipt rows  {stats['receipt_rows']}")
    print(f"state size    {stats['state_bytes'] / 2**20:.1f} MiB")
    return 0


def _rule_line(rule: Any) -> str:
    """ID ACTION AGENT PATTERN; a path or host rule's pattern says which (path:/srv/*, host:*.com)."""
    pattern = rule.pattern if rule.on == "command" else f"{rule.on}:{rule.pattern}"
    return f"{rule.id} {rule.action} {rule.agent or '*'} {pattern}"


def cmd_policy_list(args: argparse.Namespace) -> int:
    from kfs.runtime.rules import rules

    for rule in rules(_state(args), getattr(args, "agent", None)):
        print(_rule_line(rule))
    return 0


def cmd_policy_add(args: argparse.Namespace) -> int:
    import os

    from kfs.agents.records import find_agent
    from kfs.runtime.rules import add_rule

    state = _state(args)
    if args.agent is not None and find_agent(state, args.agent) is None:
        print(f"komputer policy add: no agent {args.agent!r}", file=sys.stderr)
        return 1
    try:
        rule = add_rule(state, args.action, args.pattern, args.agent, by=f"cli:{os.getuid()}", on=args.on)
    except ValueError as e:
        print(f"komputer policy add: {e}", file=sys.stderr)
        return 1
    print(_rule_line(rule))
    return 0


def _approval_line(record: dict[str, Any]) -> str:
    """ID AGENT/SESSION KIND AGE ACTION [(WHY)]: one pending approval (ID first, for scripts);
    WHY is what the image hook that asked said."""
    age = max(0, int(time.time() - record["asked"]))
    why = f"  ({printable(record['why'])})" if record.get("why") else ""
    return (f"{record['id']} {record['agent']}/{printable(record['session'])} {record['kind']} {age}s "
            f"{printable(record['action'])}{why}")


def cmd_approvals(args: argparse.Namespace) -> int:
    """The pending approvals, oldest first; --follow keeps printing new ones as they are asked."""
    from kfs.journal import events_since, last_event
    from kfs.runtime import approvals

    state = _state(args)
    statuses = ("pending", "allowed", "rejected", "expired", "withdrawn", "applied") if args.all else ("pending",)
    seq = last_event(state)
    for record in approvals.listing(state, statuses):
        if args.agent is None or record["agent"] == args.agent:
            _print_approval(record, args)
    if not args.follow:
        return 0
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        while True:
            batch = events_since(state, seq, 10_000)
            for event in batch:
                if event["type"] == "approval.ask" and args.agent in (None, event.get("agent")):
                    record = approvals.get(state, event["approval"])
                    if record is not None:
                        _print_approval(record, args)
            seq = batch[-1]["seq"] if batch else seq
            sys.stdout.flush()
            time.sleep(0.2)
    return 0


def _print_approval(record: dict[str, Any], args: argparse.Namespace) -> None:
    if args.json:
        print(json.dumps({k: v for k, v in record.items() if k not in ("replay", "waiter")}, sort_keys=True))
    elif args.all:
        print(_approval_line(record) + f"  [{record['status']}]")
    else:
        print(_approval_line(record))


def cmd_decide(args: argparse.Namespace) -> int:
    import os

    from kfs.runtime import approvals

    by = os.environ.get("SUDO_USER") or f"cli:{os.getuid()}"
    try:
        record = approvals.decide(_state(args), args.id, args.decision == "allow", by=by, reason=args.reason or "")
    except (LookupError, ValueError) as e:
        print(f"komputer decide: {e.args[0]}", file=sys.stderr)
        return 1
    print(f"{record['id']} {record['status']}: {printable(record['action'])}")
    return 0


def cmd_policy_remove(args: argparse.Namespace) -> int:
    import os

    from kfs.runtime.rules import remove_rule

    if not remove_rule(_state(args), args.id, by=f"cli:{os.getuid()}"):
        print(f"komputer policy remove: no rule {args.id}", file=sys.stderr)
        return 1
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
    p.add_argument("-a", "--all", action="store_true",
                   help="ended and lost processes too (each agent's most recent, [ssh] procs_keep_ended)")
    p.add_argument("--agent", metavar="A", help="only agent A's")
    p.add_argument("--json", action="store_true", help="one JSON object per process")
    p = add("attach", cmd_attach, "attach this terminal to AGENT/SESSION's persistent terminal (Ctrl-] detaches)")
    p.add_argument("target", metavar="AGENT/SESSION")
    p = add("sessions", cmd_sessions, "list the agents' sessions: holder, lease expiry, live processes")
    sessions_sub = p.add_subparsers(dest="sessions_command", metavar="ACTION")
    q = sessions_sub.add_parser("list", parents=[common], help="list the sessions (the default)")
    q.set_defaults(fn=cmd_sessions)
    q = sessions_sub.add_parser("close", parents=[common],
                                help="end AGENT/SESSION: SIGHUP then SIGKILL to its processes, its connection closed")
    q.set_defaults(fn=cmd_sessions_close)
    q.add_argument("target", metavar="AGENT/SESSION")
    q = sessions_sub.add_parser("detach", parents=[common],
                                help="detach AGENT/SESSION: its connection closed, the session kept to resume")
    q.set_defaults(fn=cmd_sessions_detach)
    q.add_argument("target", metavar="AGENT/SESSION")
    q = sessions_sub.add_parser("detach-idle", parents=[common],
                                help="detach sessions idle for --idle seconds (those running processes stay)")
    q.set_defaults(fn=cmd_sessions_detach_idle)
    q.add_argument("--idle", type=float, required=True, metavar="SECONDS")
    p = add("approvals", cmd_approvals, "list pending approvals, one per line: ID AGENT/SESSION KIND AGE ACTION")
    p.add_argument("-f", "--follow", action="store_true", help="keep printing approvals as agents ask them")
    p.add_argument("--all", action="store_true", help="decided, withdrawn and applied ones too, with their status")
    p.add_argument("--agent", metavar="NAME", help="only NAME's")
    p.add_argument("--json", action="store_true", help="one JSON object per approval")
    p = add("decide", cmd_decide, "decide a pending approval: allow (the action runs) or reject (it fails, 126)")
    p.add_argument("id", type=int, metavar="ID")
    p.add_argument("decision", choices=("allow", "reject"))
    p.add_argument("--reason", metavar="TEXT", help="why: the agent reads it with a rejection; the event keeps it")
    p = add("policy", cmd_policy_list, "rules on agents' commands, written paths and hosts: allow, deny or ask (first match decides)")
    policy_sub = p.add_subparsers(dest="policy_command", metavar="ACTION")
    q = policy_sub.add_parser("list", parents=[common], help="the rules, oldest first: ID ACTION AGENT PATTERN")
    q.set_defaults(fn=cmd_policy_list)
    q.add_argument("--agent", metavar="NAME", help="only the rules in force for NAME")
    q = policy_sub.add_parser("add", parents=[common],
                              help="add a rule: allow|deny|ask PATTERN (ask: the action waits for komputer decide)")
    q.set_defaults(fn=cmd_policy_add, on="command")
    q.add_argument("--agent", metavar="NAME", help="for this agent only (default: every agent)")
    on = q.add_mutually_exclusive_group()
    on.add_argument("--path", dest="on", action="store_const", const="path",
                    help="PATTERN is a path that writes reach (absolute or ~/..., a glob or a directory)")
    on.add_argument("--host", dest="on", action="store_const", const="host",
                    help="PATTERN is a host that curl and wget reach (a glob)")
    q.add_argument("action", choices=("allow", "deny", "ask"))
    q.add_argument("pattern", metavar="PATTERN",
                   help="a shell glob matched against the command's words joined by spaces (or a path, a host)")
    q = policy_sub.add_parser("remove", parents=[common], help="remove rule ID")
    q.set_defaults(fn=cmd_policy_remove)
    q.add_argument("id", type=int, metavar="ID")
    p = add("stats", cmd_stats, "sessions held, processes by state, mounts, events, receipts, state size")
    p.add_argument("--json", action="store_true", help="one JSON object")
