"""`komputer mount`: the state as a FUSE filesystem, run by `kfs.fuse.mount`."""

from __future__ import annotations

import argparse
from pathlib import Path

from kshell.cli import AddCommand
from kshell.cli.state import state_path


def cmd_mount(args: argparse.Namespace) -> int:
    from kfs.fuse.mount import main as mount_main

    return mount_main(
        state_path(args), Path(args.mountpoint), args.options,
        foreground=args.foreground, log_file=args.log, debug=args.debug,
    )


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    p = add("mount", cmd_mount, "serve the state as a FUSE filesystem at MOUNTPOINT (fusermount3 -u to stop)")
    p.add_argument("mountpoint", metavar="MOUNTPOINT")
    p.add_argument(
        "-o", dest="options", action="append", default=[], metavar="OPT[,OPT...]",
        help="mount options: allow_other, ro, ...",
    )
    p.add_argument(
        "--foreground", "-f", action="store_true", help="stay in the foreground (default: daemonise once mounted)"
    )
    p.add_argument("--log", metavar="FILE", help="append the daemon's log to FILE")
    p.add_argument("--debug", action="store_true", help="log every request")
