"""`komputer`: the one command-line program, a module per family of subcommands.

`main` builds the parser and maps errors to exit statuses; `state` (init, fsck, import, export,
stat, cat, receipts), `mount`, `agents` (agent, keys), `server` (serve, up) and `shell` (sh)
each hold their commands and the options of those commands. Each imports what a command needs
only when the command runs, so `komputer --help` loads neither LMDB, FUSE nor asyncssh.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

PROG = "komputer"

Command = Callable[[argparse.Namespace], int]
"""A subcommand: runs on the parsed arguments and returns the exit status."""

AddCommand = Callable[[str, Command, str], argparse.ArgumentParser]
"""Adds a subcommand (name, command, one-line help) that takes --state; returns its parser."""
