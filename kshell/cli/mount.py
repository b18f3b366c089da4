"""`komputer mount`: the state as a FUSE filesystem, run by `kfs.fuse.mount`."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import Any

from kshell.cli import AddCommand, state_path


def cmd_mount(args: argparse.Namespace) -> int:
    import sys

    from kfs.fuse.mount import main as mount_main

    if args.mode is not None and args.agent is None:
        print("komputer mount: --mode needs --agent NAME (the plain mount is the administrator's, unrestricted)",
              file=sys.stderr)
        return 2

    if args.session is not None:
        number = args.session.removeprefix("fork-")
        if not number.isdigit() or args.fork not in (None, int(number)):
            print(f"komputer mount: --session {args.session}: only a fork's session (fork-N) has a tree of its own",
                  file=sys.stderr)
            return 2
        args.fork = int(number)
    configured = None
    if args.configured is not None:  # the server's own reading, handed over by the server
        import json

        configured = json.loads(args.configured)
    elif args.agent is not None:  # what komputer.toml says of the agent, as the SSH server reads it
        from kshell.cli.server import load_server_config

        try:
            configured = load_server_config(state_path(args), args.config).configured(args.agent)
        except (OSError, ValueError) as e:
            print(f"komputer mount: {e}", file=sys.stderr)
            return 1
    return mount_main(
        state_path(args), Path(args.mountpoint), args.options,
        foreground=args.foreground, log_file=args.log, debug=args.debug, agent=args.agent,
        view_of=None if args.agent is None else functools.partial(_agent_view, args.agent, args.mode, configured),
        fork=args.fork,
    )


def _agent_view(name: str, mode: str | None, configured: dict | None, state: Any, fork: int | None) -> Any:
    """`--agent NAME [--mode M] [--fork N]`: the agent's session view (kshell.view), opened in
    the mount's daemon on its own state: the agent's credentials, the stricter of its mode, M
    and the fork's, the path rules in force (`configured`: what komputer.toml says of it) and
    the image's write hooks, which the mount runs as the shell and SFTP do, so that a program
    (a container's, or a delegated one's through its view) writes what a hook lets the shell
    write."""
    from kfs.fuse.mount import MountError
    from kfs.fuse.operations import AgentView
    from kfs.vfs.policy import MODES
    from kshell.sdk.types import AgentNotFound
    from kshell.view import SessionSpec, open_view

    if mode is not None and mode not in MODES:
        raise MountError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
    try:
        view = open_view(state, SessionSpec(name, "mount", "mount", mode=mode or "full", fork=fork,
                                            configured=configured, drives=False))
    except (AgentNotFound, PermissionError) as e:
        raise MountError(str(e)) from None
    return AgentView(name, view.fs.cred, view.policy)


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    p = add("mount", cmd_mount, "serve the state as a FUSE filesystem at MOUNTPOINT (fusermount3 -u to stop)")
    p.add_argument("mountpoint", metavar="MOUNTPOINT")
    p.add_argument(
        "-o", dest="options", action="append", default=[], metavar="OPT[,OPT...]",
        help="mount options: allow_other, ro, writeback (the kernel's writeback cache: faster small writes, "
             "sizes kept by the kernel), ...",
    )
    p.add_argument(
        "--foreground", "-f", action="store_true", help="stay in the foreground (default: daemonise once mounted)"
    )
    p.add_argument("--log", metavar="FILE", help="append the daemon's log to FILE")
    p.add_argument("--agent", metavar="NAME",
                   help="serve one agent's view: every request as that agent (its uid), under its restricted mode")
    p.add_argument("--mode", choices=("readonly", "plan", "limited", "full"),
                   help="with --agent: a mode for this mount (the stricter of it and the agent's own)")
    p.add_argument("--config", metavar="FILE",
                   help="with --agent: komputer.toml with the agent's settings and [[policy]] rules "
                        "(default: STATE/komputer.toml if present)")
    # what the server's configuration says of the agent (ServerConfig.configured, as JSON): the
    # server passes it when it mounts an agent's view for its delegated programs
    p.add_argument("--configured", metavar="JSON", help=argparse.SUPPRESS)
    p.add_argument("--fork", type=int, metavar="N", help="serve fork N's tree (komputer fork)")
    p.add_argument("--session", metavar="fork-N", help="the same, by the fork's session name (K_SESSION=fork-N)")
    p.add_argument("--debug", action="store_true", help="log every request")
