"""`komputer agent` and `komputer keys`: the accounts that log in over SSH, and their keys."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from kshell.cli import PROG, AddCommand, state_path

NAME_IN_USE = 9  # useradd's "username already in use"


def cmd_agent_add(args: argparse.Namespace) -> int:
    from kfs.agents import add_agent
    from kfs.kstate import KState
    from kfs.vfs import VFS

    with KState(state_path(args), create=True) as state:
        try:
            agent = add_agent(VFS(state, by=f"cli:{os.getuid()}"), args.name)
        except ValueError as e:
            print(f"{PROG} agent add: {e}", file=sys.stderr)
            return 1
        except FileExistsError as e:  # the name is in use: useradd's exit status for it
            print(f"{PROG} agent add: {e.args[-1]}", file=sys.stderr)
            return NAME_IN_USE
    print(f"{PROG}: agent {agent.name} (uid {agent.uid}, gid {agent.gid}, home {agent.home})")
    return 0


def cmd_agent_remove(args: argparse.Namespace) -> int:
    """As userdel without -r: the record, its keys and settings go; the home stays."""
    from kfs.agents import remove_agent
    from kfs.kstate import KState
    from kfs.vfs import VFS

    with KState(state_path(args)) as state:
        try:
            agent = remove_agent(VFS(state, by=f"cli:{os.getuid()}"), args.name)
        except KeyError:
            print(f"{PROG} agent remove: no agent {args.name}", file=sys.stderr)
            return 1
    print(f"{PROG}: agent {agent.name} removed (its home {agent.home} stays, owned by uid {agent.uid})")
    return 0


def cmd_agent_list(args: argparse.Namespace) -> int:
    from kfs.agents import list_agents
    from kfs.agents.records import FIRST_UID, host_account
    from kfs.kstate import KState

    with KState(state_path(args)) as state:
        for agent in list_agents(state):
            print(f"{agent.name}\t{agent.uid}\t{agent.gid}\t{agent.home}")
            held = {host_account(agent.uid), host_account(agent.gid)} - {None}
            if held:
                print(f"{PROG} agent list: warning: {agent.name}'s id {agent.uid} is the host "
                      f"{' and '.join(sorted(held))}'s, who may reach the agent's files through the mount "
                      f"(it keeps its id; agents made now get ids from {FIRST_UID} up)", file=sys.stderr)
    return 0


def cmd_agent_set(args: argparse.Namespace) -> int:
    """Per-agent settings (delegation, restricted mode); they apply to the agent's next session."""
    from kfs.kstate import KState
    from kshell.cli.server import load_server_config
    from kshell.delegate.config import set_agent_overrides

    network = None if args.network is None else args.network == "on"
    try:  # the server's [delegate] is what the agent's settings complete (an ssh remote's host and root)
        delegate = load_server_config(state_path(args), args.config).delegate
    except (OSError, ValueError) as e:
        print(f"{PROG} agent set: {e}", file=sys.stderr)
        return 1
    with KState(state_path(args)) as state:
        try:
            scope = tuple(args.scope) if args.scope else None
            commands = tuple(args.allow_command) if args.allow_command else None
            hosts = tuple(args.allow_host) if args.allow_host else None
            disk = _disk_setting(args.disk)
            nfiles = _files_setting(args.files)
            now = set_agent_overrides(state, args.name, base=delegate, remote=args.remote, network=network,
                                      mode=args.mode, scope=scope, plan=args.plan, commands=commands, hosts=hosts)
            if args.disk is not None:
                now = {**now, "disk": _set_limit(state, args.name, disk, "disk")}
            if args.files is not None:
                now = {**now, "files": _set_limit(state, args.name, nfiles, "files")}
        except (LookupError, ValueError) as e:
            print(f"{PROG} agent set: {e.args[0]}", file=sys.stderr)
            return 1
    def text(v: Any) -> str:
        return "on" if v is True else "off" if v is False else ",".join(v) if isinstance(v, list | tuple) else str(v)

    shown = " ".join(f"{k}={text(v)}" for k, v in sorted(now.items()))
    print(f"{PROG}: agent {args.name}: {shown or 'server defaults'}")
    return 0


def _disk_setting(text: str | None) -> int | None:
    """--disk's size in bytes; None for "default" (or no --disk)."""
    from kshell.worker.limits import parse_size

    return None if text is None or text == "default" else parse_size(text, "--disk")


def _files_setting(text: str | None) -> int | None:
    """--files's count; None for "default" (or no --files)."""
    if text is None or text == "default":
        return None
    if not text.isdigit():
        raise ValueError(f"--files: {text!r} is not a number of files")
    return int(text)


def _set_limit(state: Any, name: str, size: int | None, what: str) -> str:
    """Store agent `name`'s own limit of bytes (`what` "disk") or files (None: the state's
    default again); how it reads now."""
    from kfs.agents.records import find_agent_in
    from kfs.kstate import quota
    from kshell.worker.limits import size_text

    kind = quota.BYTES if what == "disk" else quota.FILES

    def change(txn: Any) -> str:
        agent = find_agent_in(txn, name)
        if agent is None:
            raise LookupError(f"no agent {name}")
        quota.set_limit(txn, agent.uid, size, kind)
        bound = quota.limit(txn, agent.uid, kind)
        return "none" if bound is None else size_text(bound) if kind is quota.BYTES else str(bound)

    return state.write(change)


def cmd_keys_add(args: argparse.Namespace) -> int:
    from kfs.agents import add_key
    from kfs.kstate import KState

    text = sys.stdin.read() if args.pubkey_file == "-" else Path(args.pubkey_file).read_text()
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        print(f"{PROG} keys add: {args.pubkey_file}: no key in it", file=sys.stderr)
        return 1
    status = 0
    with KState(state_path(args)) as state:
        for line in lines:
            try:
                key = add_key(state, args.name, line)
            except (ValueError, LookupError, FileExistsError) as e:
                print(f"{PROG} keys add: {e.args[-1] if isinstance(e, OSError) else e}", file=sys.stderr)
                status = 1
                continue
            print(f"{PROG}: {args.name}: added {key.key_type} {key.fingerprint} {key.comment}".rstrip())
    return status


def cmd_keys_list(args: argparse.Namespace) -> int:
    from kfs.agents import list_keys
    from kfs.kstate import KState

    with KState(state_path(args)) as state:
        try:
            keys = list_keys(state, args.name)
        except LookupError as e:
            print(f"{PROG} keys list: {e}", file=sys.stderr)
            return 1
    for i, key in enumerate(keys, 1):
        options = f" [{key.options}]" if key.options else ""
        print(f"{i}\t{key.key_type}\t{key.fingerprint}\t{key.comment}{options}")
    return 0


def cmd_keys_remove(args: argparse.Namespace) -> int:
    from kfs.agents import remove_key
    from kfs.kstate import KState

    with KState(state_path(args)) as state:
        try:
            removed = remove_key(state, args.name, args.key)
        except LookupError as e:
            print(f"{PROG} keys remove: {e}", file=sys.stderr)
            return 1
    for key in removed:
        print(f"{PROG}: {args.name}: removed {key.key_type} {key.fingerprint} {key.comment}".rstrip())
    return 0


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    p = add("agent", cmd_agent_add, "manage agents (the accounts that log in over SSH)")
    agent_sub = p.add_subparsers(dest="agent_command", metavar="ACTION", required=True)
    q = agent_sub.add_parser("add", parents=[common],
        help="create an agent: uid/gid from 100000 up (none a host account's), home /home/NAME")
    q.set_defaults(fn=cmd_agent_add)
    q.add_argument("name", metavar="NAME")
    q = agent_sub.add_parser("remove", parents=[common],
        help="remove an agent, its keys and settings (its home stays, as userdel without -r)")
    q.set_defaults(fn=cmd_agent_remove)
    q.add_argument("name", metavar="NAME")
    q = agent_sub.add_parser("list", parents=[common], help="list agents: name, uid, gid, home")
    q.set_defaults(fn=cmd_agent_list)
    q = agent_sub.add_parser("set", parents=[common],
        help="an agent's own delegation settings (from its next session on)")
    q.set_defaults(fn=cmd_agent_set)
    q.add_argument("name", metavar="NAME")
    q.add_argument("--remote", choices=("local", "ssh", "none"),
                   help="where commands K does not have run: local (bubblewrap), ssh, none")
    q.add_argument("--network", choices=("on", "off"), help="whether delegated programs, curl and wget reach the real network")
    q.add_argument("--mode", choices=("readonly", "plan", "limited", "full"),
                   help="restrict the agent's writes: readonly, plan (only under --plan), limited (only under --scope)")
    q.add_argument("--scope", nargs="+", metavar="PATH", help="where a limited agent may write (paths or globs; ~/ is its home)")
    q.add_argument("--plan", metavar="DIR", help="a plan-mode agent's plan folder (default ~/.plan)")
    q.add_argument("--allow-command", nargs="+", metavar="PATTERN",
                   help="a limited agent may run only these tools and programs (names or command-line globs)")
    q.add_argument("--allow-host", nargs="+", metavar="PATTERN",
                   help="a limited agent's curl and wget reach only these hosts (globs); its delegated programs get no network")
    q.add_argument("--disk", metavar="SIZE",
                   help="the agent's disk quota (bytes, or with K, M, G, T; 0: none; default: the state's "
                        "default for agents, `komputer init --agent-disk`); past it writes fail with EDQUOT")
    q.add_argument("--files", metavar="N",
                   help="how many files the agent may own (0: none; default: the state's default for agents, "
                        "`komputer init --agent-files`)")
    q.add_argument("--config", metavar="FILE",
                   help="the server's komputer.toml (default STATE/komputer.toml): "
                        "its [delegate] completes the settings")
    p = add("keys", cmd_keys_list, "manage an agent's authorized keys (OpenSSH authorized_keys lines)")
    keys_sub = p.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    q = keys_sub.add_parser("add", parents=[common], help="add the keys in PUBKEY_FILE (- for stdin), options allowed")
    q.set_defaults(fn=cmd_keys_add)
    q.add_argument("name", metavar="NAME")
    q.add_argument("pubkey_file", metavar="PUBKEY_FILE")
    q = keys_sub.add_parser("list", parents=[common], help="list an agent's keys: index, type, fingerprint, comment")
    q.set_defaults(fn=cmd_keys_list)
    q.add_argument("name", metavar="NAME")
    q = keys_sub.add_parser("remove", parents=[common], help="remove keys by index, fingerprint or comment")
    q.set_defaults(fn=cmd_keys_remove)
    q.add_argument("name", metavar="NAME")
    q.add_argument("key", metavar="KEY")
