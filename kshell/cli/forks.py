"""`komputer fork`: copy-on-write twins of the state's tree (kfs.forks): create one, list them,
see what one changed, merge it into its parent or discard it. `komputer sh --fork N` and
`komputer mount --fork N` work in one; an agent logs into one with `K_FORK=N`."""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from typing import Any

from kfs.terminal import printable
from kshell.cli import PROG, AddCommand


def _state(args: argparse.Namespace) -> Any:
    from kfs.kstate import KState
    from kshell.cli import state_path

    return KState(state_path(args))


def _by() -> str:
    return f"cli:{os.getuid()}"


def _failed(e: Exception) -> int:
    print(f"{PROG} fork: {e}", file=sys.stderr)
    return 1


def cmd_fork_create(args: argparse.Namespace) -> int:
    from kfs import forks

    limit = 0
    if args.agent is not None:  # an agent's forks are bounded however they are made (docs/forks.md)
        from kshell.cli import state_path
        from kshell.cli.server import load_server_config

        try:
            limit = load_server_config(state_path(args), args.config).forks_max_per_agent
        except (OSError, ValueError) as e:
            return _failed(e)
    with _state(args) as state:
        if args.agent is not None:
            from kfs.agents.records import find_agent

            if find_agent(state, args.agent) is None:
                return _failed(ValueError(f"no agent {args.agent!r} (komputer agent list shows them)"))
        try:
            number = forks.create(state, parent=args.parent, mode=args.mode, disk=args.disk, hooks=args.hooks,
                                  scope=tuple(args.scope or ()), agent=args.agent, by=_by(), limit=limit)
        except forks.ForkError as e:
            return _failed(e)
    print(number)
    return 0


def cmd_fork_list(args: argparse.Namespace) -> int:
    from kfs import forks

    with _state(args) as state:
        records = forks.forks(state)
    if records:
        print(f"{'FORK':>4} {'PARENT':>6} {'DISK':<7} {'MODE':<8} {'AGENT':<10} CREATED")
    for r in records:
        when = datetime.datetime.fromtimestamp(r["created"]).strftime("%Y-%m-%d %H:%M:%S")
        print(f"{r['id']:>4} {r['parent'] or '-':>6} {r['disk']:<7} {r['mode']:<8} {r.get('agent') or '-':<10} {when}")
    return 0


def _print_changes(found: Any) -> None:
    marks = {"added": "A", "changed": "M", "removed": "D"}
    for kind, path in found.changes:
        print(f"{marks[kind]} {printable(path)}")  # as git status quotes an odd name


def cmd_fork_diff(args: argparse.Namespace) -> int:
    from kfs import forks

    with _state(args) as state:
        try:
            found = forks.diff(state, args.fork)
        except forks.ForkError as e:
            return _failed(e)
    _print_changes(found)
    for path in found.conflicts:
        print(f"{PROG} fork: {printable(path)}: changed in the parent too since the fork", file=sys.stderr)
    return 0


def cmd_fork_merge(args: argparse.Namespace) -> int:
    from kfs import forks

    with _state(args) as state:
        try:
            found = forks.merge(state, args.fork, by=_by())
        except forks.ForkError as e:
            return _failed(e)
    _print_changes(found)
    print(f"{PROG} fork: merged fork {args.fork} ({len(found.changes)} changes) into "
          + (f"fork {found.parent}" if found.parent else "the state"), file=sys.stderr)
    return 0


def cmd_fork_discard(args: argparse.Namespace) -> int:
    from kfs import forks

    with _state(args) as state:
        try:
            gone = forks.discard(state, args.fork, by=_by())
        except forks.ForkError as e:
            return _failed(e)
    print(f"{PROG} fork: discarded " + ", ".join(f"fork {n}" for n in gone), file=sys.stderr)
    return 0


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    from kfs.vfs.policy import MODES

    p = add("fork", cmd_fork_list, "copy-on-write twins of the tree: create, list, diff, merge, discard")
    sub = p.add_subparsers(dest="fork_command", metavar="ACTION")
    q = sub.add_parser("create", parents=[common], help="a new fork (made in O(1)); prints its number")
    q.set_defaults(fn=cmd_fork_create)
    q.add_argument("--parent", type=int, default=0, metavar="N", help="fork the fork N (default: the state)")
    q.add_argument("--mode", choices=MODES, default="full", help="the mode of sessions in the fork (default full)")
    q.add_argument("--disk", choices=("overlay", "shared"), default="overlay",
                   help="overlay: its writes stay in the fork (default); shared: they go to the parent")
    q.add_argument("--no-hooks", dest="hooks", action="store_false", help="the image's hooks do not apply in it")
    q.add_argument("--scope", action="append", metavar="PATH", help="with --mode limited: a path it may write")
    q.add_argument("--agent", metavar="NAME", help="the agent that may log into it (ssh with K_FORK=N)")
    q.add_argument("--config", metavar="FILE",
                   help="the server's komputer.toml, for forks_max_per_agent (default: the state's)")
    q = sub.add_parser("list", parents=[common], help="the forks: number, parent, disk, mode, agent, when made")
    q.set_defaults(fn=cmd_fork_list)
    for name, fn, text in (
        ("diff", cmd_fork_diff, "what fork N changed: A added, M changed, D removed (as git status --short)"),
        ("merge", cmd_fork_merge, "bring fork N's changes into its parent in one transaction, then close it "
                                  "(refused, naming them, when the parent changed the same paths)"),
        ("discard", cmd_fork_discard, "drop fork N and the forks made of it, with what they wrote"),
    ):
        q = sub.add_parser(name, parents=[common], help=text)
        q.set_defaults(fn=fn)
        q.add_argument("fork", type=int, metavar="N")
