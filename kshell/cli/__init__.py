"""`komputer`: the one command-line program, a module per family of subcommands.

`main` builds the parser and maps errors to exit statuses; `state` (init, fsck, import, export,
stat, cat, receipts), `mount`, `agents` (agent, keys), `server` (serve, up) and `shell` (sh)
each hold their commands and the options of those commands. Each imports what a command needs
only when the command runs, so `komputer --help` loads neither LMDB, FUSE nor asyncssh.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse  # noqa: F401 - not at run time: `komputer sh -c` starts without it

PROG = "komputer"

Command = Callable[[Any], int]
"""A subcommand: runs on the parsed arguments (an argparse.Namespace) and returns the exit status."""

AddCommand = Callable[[str, Command, str], "argparse.ArgumentParser"]
"""Adds a subcommand (name, command, one-line help) that takes --state; returns its parser."""


def state_path(args: Any) -> Path:
    """`--state`, else KOMPUTER_STATE, else the embedded default."""
    from kfs.kstate import default_state_dir

    return Path(args.state) if args.state else default_state_dir()
