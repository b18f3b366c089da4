"""The `komputer` parser, the dispatch to a subcommand, and errors turned into exit statuses.

Every subcommand takes `--state DIR` (or KOMPUTER_STATE); without either it uses the
embedded default (/var/lib/komputer for root, ~/.local/share/komputer otherwise), created on
first use. Options may come before or after positional arguments.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from kshell.cli import PROG, Command

if TYPE_CHECKING:
    import argparse

# the order of `komputer --help`
FAMILIES = ("state", "mount", "agents", "server", "computers", "fleet", "shell", "runtime", "image", "forks", "chat",
            "runs")


def _parser(families: Sequence[str] = FAMILIES) -> argparse.ArgumentParser:
    import argparse

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

    for family in families:
        importlib.import_module(f"kshell.cli.{family}").add_commands(add, common)
    return parser


def _plain_sh(argv: list[str]) -> Any:
    """`[--state DIR] sh [--state DIR] [-c SCRIPT] [ARGS...]` read without argparse, whose help
    formatter and translations cost a fifth of a `komputer sh -c true` (what agents run over and
    over); None for anything else (other commands, options argparse must judge, `--help`)."""
    state = None
    if argv[:1] == ["--state"] and len(argv) > 2:
        state, argv = argv[1], argv[2:]
    if argv[:1] != ["sh"]:
        return None
    from kshell.cli.shell import cmd_sh

    rest, command = argv[1:], None
    while rest and rest[0] in ("--state", "-c") and len(rest) > 1:
        if rest[0] == "--state":
            state = rest[1]
        else:
            command = rest[1]
        rest = rest[2:]
    if rest and rest[0].startswith("-"):
        return None
    return SimpleNamespace(command="sh", fn=cmd_sh, state=state, command_string=command, args=rest,
                           fork=None, agent=None, session=None, mode=None)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _plain_sh(argv)
    if args is None:  # `komputer sh ...` with unusual options: its parser alone, not every family's
        args = _parser(("shell",) if argv[:1] == ["sh"] else FAMILIES).parse_args(argv)
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
