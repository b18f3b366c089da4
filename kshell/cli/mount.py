"""`komputer mount`: the state as a FUSE filesystem, run by `kfs.fuse.mount`."""

from __future__ import annotations

import argparse
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
        foreground=args.foreground, log_file=args.log, debug=args.debug, agent=args.agent, mode=args.mode,
        configured=configured, fork=args.fork, write_hooks=_write_hooks,
    )


def _write_hooks(state: Any, agent: str, home: str, policy: Any) -> Any:
    """An agent's mount (a container's, or a delegated program's view) runs the image's write
    hooks as the shell and SFTP do, so a program writes what a hook lets the shell write."""
    from kfs.runtime import image
    from kshell.worker.hooks import judged, session_hooks

    return judged(policy, session_hooks(state, image.current(state), agent, "mount"), home)


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
