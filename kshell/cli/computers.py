"""`komputer computers list|create|rm|stats`: the computers a host serves by key, under one root.

The root is `--root DIR`, else `[computers] root` of `--config FILE`. Each computer is an
ordinary state directory (`ROOT/KEY`): its agents and keys are managed with the usual commands,
`komputer --state ROOT/KEY agent add NAME` and `keys add NAME FILE`, or at creation
(`create --agent NAME --key FILE KEY...`: a platform makes thousands in one command).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kshell.cli import PROG, AddCommand

if TYPE_CHECKING:
    from kshell.server.computers import Computers


def _computers(args: argparse.Namespace) -> Computers:
    from kshell.server.computers import Computers
    from kshell.server.config import load_config

    if args.root:
        return Computers(args.root)
    if args.config:
        if not Path(args.config).exists():
            raise FileNotFoundError(2, "No such file or directory", args.config)
        root = load_config(Path(args.config)).computers.root
        if root:
            return Computers(root)
    raise ValueError("no root: give --root DIR, or --config FILE with a [computers] root")


def _key_lines(path: str) -> list[str]:
    """The authorized_keys lines of a public key file, as `keys add` reads it."""
    text = Path(path).read_text()
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise ValueError(f"{path}: no key in it")
    return lines


def cmd_computers(args: argparse.Namespace) -> int:
    from kshell.server.computers import ComputerOpen

    what = f"{PROG} computers {args.computers_command}"
    try:
        computers = _computers(args)
        if args.computers_command == "list":
            for key in computers.keys():  # noqa: SIM118 - a method, not a dict
                print(key)
        elif args.computers_command == "create":
            if args.key and not args.agent:
                raise ValueError("--key needs --agent NAME (the agent the key lets in)")
            lines = _key_lines(args.key) if args.key else None
            for key in args.keys:
                print(f"{PROG}: computer {key} at {computers.create(key, agent=args.agent, keys=lines)}")
        elif args.computers_command == "rm":
            for key in args.keys:
                computers.remove(key)
        else:
            for key in args.keys or computers.keys():
                s = computers.stats(key)
                print(f"{s['key']}\tdisk {s['disk_bytes']}\t{'open' if s['open'] else 'closed'}\t{s['path']}")
    except ComputerOpen as e:
        print(f"{what}: {e.filename}: {e.strerror}; stop serving it first", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{what}: {e.filename}: {e.strerror}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"{what}: {e}", file=sys.stderr)
        return 2
    return 0


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    p = add("computers", cmd_computers, "manage the computers a host serves by key (ssh AGENT+KEY@host)")
    sub = p.add_subparsers(dest="computers_command", metavar="ACTION", required=True)
    for name, help_, nargs in (("list", "list the computers' keys", None),
                               ("create", "make computers (empty states) with these keys", "+"),
                               ("rm", "delete computers and all they hold (refused while one is served)", "+"),
                               ("stats", "disk used and whether a host has it open (all: no KEY)", "*")):
        q = sub.add_parser(name, parents=[common], help=help_)
        q.set_defaults(fn=cmd_computers)
        q.add_argument("--root", metavar="DIR", help="where the computers live (ROOT/KEY each)")
        q.add_argument("--config", metavar="FILE", help="komputer.toml whose [computers] root to use")
        if nargs is not None:
            q.add_argument("keys", nargs=nargs, metavar="KEY")
        if name == "create":
            q.add_argument("--agent", metavar="NAME", help="add this agent to each new computer")
            q.add_argument("--key", metavar="FILE", help="and let in the agent with this public key file")
