"""The `komputer` parser, the dispatch to a subcommand, and errors turned into exit statuses.

Every subcommand takes `--state DIR` (or KOMPUTER_STATE); without either it uses the
embedded default (/var/lib/komputer for root, ~/.local/share/komputer otherwise), created on
first use. Options may come before or after positional arguments.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kshell.cli import PROG, Command, agents, mount, runtime, server, shell, state


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--state",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="the KState directory (default: $KOMPUTER_STATE or the embedded default)",
    )
    parser = argparse.ArgumentParser(prog=PROG, description="K: a durable computer for AI agents.", parents=[common])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, fn: Command, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_, description=help_)
        p.set_defaults(fn=fn)
        return p

    for family in (state, mount, agents, server, shell, runtime):  # the order of `komputer --help`
        family.add_commands(add, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    args.state = getattr(args, "state", None)
    try:
        return args.fn(args)
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"{PROG} {args.command}: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    except Exception as e:  # a state that cannot be opened, and the like: no traceback for users
        from kfs.kstate.env import StateError

        if isinstance(e, StateError):
            print(f"{PROG} {args.command}: {e}", file=sys.stderr)
            return 1
        raise
