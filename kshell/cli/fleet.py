"""`komputer fleet status|move`: the operator's view of a fleet on etcd, and moving a computer.

The fleet is the one `--config FILE`'s `[fleet]` names (or `--etcd HOST:PORT,...` and
`--prefix`). `status` reads etcd alone: the live hosts and their leases, each computer's
placement (owner and fencing token) and the host that has it open. `move KEY HOST` swaps the
placement to HOST by compare-and-swap and waits until the old owner has closed the computer
(kshell.server.fleet, `Member.move`): from then on only HOST serves it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from kshell.cli import PROG, AddCommand


def _fleet(args: argparse.Namespace) -> tuple[list[str], str]:
    """The etcd endpoints and the fleet's prefix, from --etcd/--prefix or --config's [fleet]."""
    from kshell.server.config import load_config
    from kshell.server.fleet import PREFIX

    if args.etcd:
        return [e for e in args.etcd.split(",") if e], args.prefix or PREFIX
    if args.config:
        if not Path(args.config).exists():
            raise FileNotFoundError(2, "No such file or directory", args.config)
        fleet = load_config(Path(args.config)).fleet
        if fleet.etcd:
            return list(fleet.etcd), args.prefix or fleet.prefix
    raise ValueError("no fleet: give --etcd HOST:PORT[,HOST:PORT...], or --config FILE with a [fleet] etcd")


async def _status(member: Any, keys: list[str]) -> None:
    leases = await member.leases()
    members = await member.members()
    placements = {p.key: p for p in await member.placements()}
    opened = await member.opened()
    rows = [("HOST", "ADDRESS", "LEASE", "TTL", "PLACED", "OPEN")]
    for name in sorted(members):
        lease, ttl = leases.get(name, (0, -1))
        rows.append((name, members[name], f"{lease:x}", f"{ttl} s",
                     str(sum(p.owner == name for p in placements.values())),
                     str(sum(h == name for h, _ in opened.values()))))
    _table(rows)
    print()
    rows = [("KEY", "PLACED-ON", "TOKEN", "OPEN-ON")]
    for key in keys or sorted(set(placements) | set(opened)):
        p = placements.get(key)
        host = p.owner if p is not None else "-"
        if p is not None and p.owner not in members:
            host += " (gone: placed again at its next login)"
        where = opened.get(key)
        rows.append((key, host, str(p.token) if p else "-", f"{where[0]}" if where else "-"))
    _table(rows)


def _table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


async def _run(args: argparse.Namespace) -> int:
    from kshell.server.computers import check_key
    from kshell.server.fleet import Member, connect

    endpoints, prefix = _fleet(args)
    member = Member(connect(endpoints), f"{PROG}-fleet", "", prefix=prefix)
    try:
        if args.fleet_command == "status":
            await _status(member, [check_key(k) for k in args.keys])
            return 0
        before, after, closed = await member.move(check_key(args.key), args.host, wait=args.wait)
        if before is not None and before.owner == after.owner:
            print(f"{PROG} fleet move: {args.key} is already on {args.host}")
            return 0
        was = f"from {before.owner} " if before is not None else ""
        if not closed:
            print(f"{PROG} fleet move: {args.key}: placed on {args.host} (token {after.token}), but "
                  f"{before.owner if before else 'its old host'} still has it open after {args.wait:g} s; "
                  f"{args.host} serves it once that host lets go (at the latest when its lease lapses)",
                  file=sys.stderr)
            return 1
        print(f"{PROG} fleet move: {args.key} moved {was}to {args.host} (token {after.token})")
        return 0
    finally:
        await member.client.close()


def cmd_fleet(args: argparse.Namespace) -> int:
    from aetcd.exceptions import ConnectionFailedError, ConnectionTimeoutError

    what = f"{PROG} fleet {args.fleet_command}"
    try:
        return asyncio.run(_run(args))
    except (ConnectionFailedError, ConnectionTimeoutError) as e:
        print(f"{what}: cannot reach etcd: {e or type(e).__name__}", file=sys.stderr)
        return 1
    except LookupError as e:  # no such live host
        print(f"{what}: {e.args[0]}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"{what}: {e}", file=sys.stderr)
        return 2 if "no fleet" in str(e) or "invalid computer key" in str(e) else 1


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    p = add("fleet", cmd_fleet, "see a fleet of hosts on etcd, and move a computer to another host")
    sub = p.add_subparsers(dest="fleet_command", metavar="ACTION", required=True)
    status = sub.add_parser("status", parents=[common],
                            help="live hosts and their leases; each computer's host, token and where it is open")
    status.add_argument("keys", nargs="*", metavar="KEY", help="only these computers")
    move = sub.add_parser("move", parents=[common],
                          help="move a computer to another live host, once its old host has closed it")
    move.add_argument("key", metavar="KEY")
    move.add_argument("host", metavar="HOST", help="a live host's name in the fleet")
    move.add_argument("--wait", type=float, default=30.0, metavar="SECONDS",
                      help="how long to wait for the old host to close it (default 30)")
    for q in (status, move):
        q.set_defaults(fn=cmd_fleet)
        q.add_argument("--config", metavar="FILE", help="komputer.toml whose [fleet] to use")
        q.add_argument("--etcd", metavar="HOST:PORT,...", help="the etcd members' client endpoints")
        q.add_argument("--prefix", metavar="PREFIX", help="the fleet's keys on etcd (default /k/)")
