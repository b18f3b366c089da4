"""`komputer sh`: a K shell script run on the state as root in /home/agent, with the host's
real stdio."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kshell.cli import PROG, AddCommand, state_path

if TYPE_CHECKING:
    import argparse

    from kshell import Shell

LEASE_TTL = 10 * 365 * 86400.0  # seconds: the lease is this process's while it lives (lease_alive)


def _fork(state: Any, number: int) -> Any:
    from kfs import forks

    try:
        return forks.view(state, number)
    except forks.ForkError as e:
        raise SystemExit(f"{PROG} sh: {e}") from None


def cmd_sh(args: argparse.Namespace) -> int:
    """Run a K shell script on the state as root in /home/agent, with the host's real stdio."""
    gc.disable()  # loading the shell makes some 15,000 objects that nearly all stay: collecting would find little
    from kfs.kstate import KState
    from kfs.vfs import ROOT, VFS, PathFS
    from kshell import Shell
    from kshell.exec.streams import InStream

    # What is loaded lives until the program ends: frozen, it is left out of every collection,
    # the interpreter's at exit too, where walking and freeing it would cost a tenth of a
    # `komputer sh -c true`.
    gc.freeze()
    gc.enable()

    class HostStdin(InStream):
        def _fill(self) -> bytes:
            try:
                return os.read(0, 65536)
            except OSError:
                return b""

    if args.agent is None and (args.session is not None or args.mode is not None):
        print(f"{PROG} sh: --session and --mode need --agent NAME (without it the script runs as root)",
              file=sys.stderr)
        return 2
    rest = list(args.args)
    if args.command_string is not None:
        source, shell_args = args.command_string, rest or None
        stdin: bytes | InStream = HostStdin()
    elif rest:
        try:
            source = Path(rest[0]).read_bytes().decode("utf-8", "surrogateescape")
        except OSError as e:
            print(f"{PROG} sh: {rest[0]}: {e.strerror}", file=sys.stderr)
            return 127
        shell_args, stdin = rest, HostStdin()
    else:
        source, shell_args, stdin = sys.stdin.buffer.read().decode("utf-8", "surrogateescape"), None, b""
    out, err = sys.stdout.buffer, sys.stderr.buffer

    def write_out(data: bytes) -> None:
        out.write(data)
        out.flush()

    def write_err(data: bytes) -> None:
        err.write(data)
        err.flush()

    # the caller's locale and time zone, as bash inherits them: `LC_ALL=C.UTF-8 komputer sh`
    # counts characters, a plain C locale bytes
    inherited = {k: v for k, v in os.environ.items() if k in ("LANG", "LANGUAGE", "TZ") or k.startswith("LC_")}
    name = "komputer" if shell_args is None else shell_args[0]

    def run(shell: Shell) -> int:
        if args.command_string is None:
            shell.interp.dash_c = False
            if not rest:
                shell.interp.opts.add("s")  # commands read from stdin: $- shows it, as bash's
        return shell.run_streaming(source, stdout=write_out, stderr=write_err, stdin=stdin,
                                   args=shell_args[1:] if shell_args else None)

    if args.agent is not None:
        return _as_agent(args, name, inherited, run, write_err)
    home = "/home/agent"
    with KState(state_path(args), create=True) as state:
        vfs = VFS(state if args.fork is None else _fork(state, args.fork), by="cli:sh")
        fs = PathFS(vfs, cred=ROOT, cwd="/", home=home)
        if not fs.exists(home):
            fs.mkdir(home, parents=True)
        fs = PathFS(vfs, cred=ROOT, cwd=home, home=home)
        shell = Shell(fs, name=name, env={**inherited, "HOME": home, "USER": "root", "LOGNAME": "root"})
        from kfs.runtime import image

        record = image.current(state)
        if record is not None:  # its hosts, network, commands and secrets' handles, for root too
            from kshell.image.session import bind_image, image_network

            bind_image(shell, state, record, "root", image_network(record, "root"))
        return run(shell)


def _as_agent(args: argparse.Namespace, name: str, inherited: dict[str, str], run: Callable[[Any], int],
              write_err: Callable[[bytes], None]) -> int:
    """`--agent NAME`: the script runs in that agent's session view (kshell.view, front
    "cli:sh"): its credentials, home and cwd, its mode (the stricter of its own, komputer.toml's
    `[ssh] mode`, `--mode` and the fork's), the rules in force and the image's hooks. With
    `--session ID` it resumes the named session (cwd, exported variables, functions), holding
    its lease while it runs, and saves them back at the end, as an SSH session does."""
    from kfs import forks
    from kfs.agents.sessions import (
        BadSessionName,
        LeaseHeld,
        acquire_session,
        holder_id,
        keep_session,
        release_session,
        resumed_env,
    )
    from kfs.kstate import KState
    from kfs.vfs.policy import stricter
    from kshell import Shell
    from kshell.cli.server import load_server_config
    from kshell.sdk.types import AgentNotFound
    from kshell.view import SessionSpec, govern_shell, open_view, resumable, session_network, start_refusal
    from kshell.worker.approvals import SessionApprovals

    try:
        config = load_server_config(state_path(args), None)
    except (OSError, ValueError) as e:
        print(f"{PROG} sh: {e}", file=sys.stderr)
        return 1
    with KState(state_path(args), create=False) as state:
        from kfs.agents.records import find_agent

        agent = find_agent(state, args.agent)
        if agent is None:
            print(f"{PROG} sh: no agent {args.agent!r} (komputer agent list shows them)", file=sys.stderr)
            return 1
        record = holder = None
        if args.session is not None:
            holder = holder_id(0)
            try:  # held while this process lives: a holder that died frees it at once (lease_alive)
                record = acquire_session(state, agent.name, args.session, agent.home, holder, LEASE_TTL, "cli:sh")
            except (LeaseHeld, BadSessionName) as e:
                print(f"{PROG} sh: {e}", file=sys.stderr)
                return 1
        try:
            session = args.session or "-"
            spec = SessionSpec(agent.name, "cli:sh", session, mode=stricter(config.mode, args.mode or "full"),
                               fork=args.fork, configured=config.configured(agent.name),
                               cwd=record.cwd if record is not None else None)
            try:
                view = open_view(state, spec)
            except (AgentNotFound, PermissionError, forks.ForkError) as e:
                print(f"{PROG} sh: {e}", file=sys.stderr)
                return 1
            env = {**(resumed_env(record) if record is not None else {}), **inherited,
                   "HOME": agent.home, "USER": agent.name, "LOGNAME": agent.name}
            if spec.mode != "full":
                env["K_MODE"] = spec.mode
            shell = Shell(view.fs, name=name, env=env, drives=view.drives)
            if record is not None and (record.shell or {}).get("functions"):
                shell.run_streaming(record.shell["functions"], stdout=_discard, stderr=_discard, script=False)
            approvals = SessionApprovals(
                state, {"agent": agent.name, "session": session, "ephemeral": record is None}, "cli:sh", view.policy,
                tell=lambda text: write_err(text.encode("utf-8", "surrogateescape")), pause=lambda paused: None,
                stop=lambda: False, hung_up=lambda: False, shell=lambda: shell.interp)
            govern_shell(state, view, shell, approvals, session_network(view))
            refused = start_refusal(view, approvals, shell.interp)
            if refused:
                write_err(refused.encode())
                return 1
            try:
                return run(shell)
            finally:
                with contextlib.suppress(Exception):
                    shell.hangup()
                if view.hooks is not None and view.hooks.has("session_end"):
                    view.hooks.decide("session_end")
                if record is not None:
                    keep_session(state, record, resumable(shell.interp))
        finally:
            if record is not None and holder is not None:
                release_session(state, record, holder, "cli:sh")


def _discard(data: bytes) -> None:
    pass


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    import argparse

    p = add("sh", cmd_sh, "run a K shell script on the state: sh -c SCRIPT [NAME ARGS...] | FILE [ARGS...] | stdin")
    p.add_argument("--fork", type=int, metavar="N", help="run in fork N's tree (komputer fork)")
    p.add_argument("--agent", metavar="NAME",
                   help="run as agent NAME, in its session view: its home, mode, rules and the image's hooks")
    p.add_argument("--session", metavar="ID",
                   help="with --agent: resume the agent's session ID (cwd, exported variables) and save it back")
    p.add_argument("--mode", choices=("readonly", "plan", "limited", "full"),
                   help="with --agent: a mode for this run (the stricter of it and the agent's own)")
    p.add_argument("-c", dest="command_string", metavar="SCRIPT",
        help="run SCRIPT (then NAME is $0 and ARGS are $1...)")
    p.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS",
        help="FILE [ARGS...] on the host, or NAME ARGS... after -c")
