"""The image and what it declares: `komputer image` (apply a folder, list versions, show one,
roll back), `komputer hosts` (the virtual hosts an agent sees), `komputer drives` (the paths
mounted from memory or host directories) and `komputer secrets` (set a value from stdin or a
file, list handles, remove)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from kshell.cli import PROG, AddCommand


def _state(args: argparse.Namespace, create: bool = False) -> Any:
    from kfs.kstate import KState
    from kshell.cli import state_path

    return KState(state_path(args), create=create)


def _by() -> str:
    return f"cli:{os.getuid()}"


def apply_folder(state: Any, folder: str, command: str, *, unless_current: bool = False) -> int:
    """Check and apply the image in `folder`; the message names the file and line of a mistake
    (and the image in force stays). `unless_current`: nothing to do when the image in force is
    this very folder's content."""
    from kfs.runtime import image

    try:
        loaded = image.load(folder, state_dir=state.path)
    except image.ImageError as e:
        print(f"{PROG} {command}: {e}", file=sys.stderr)
        print(f"{PROG} {command}: nothing applied; the image in force is unchanged", file=sys.stderr)
        return 1
    in_force = image.current(state)
    if unless_current and in_force is not None and in_force.get("digest") == loaded.digest():
        print(f"{PROG} {command}: image {loaded.spec['name']!r} (version {in_force['version']}) is in force")
        return 0
    version = image.apply(state, loaded, by=_by())
    spec = loaded.spec
    parts = [f"{len(spec[k])} {k}" for k in ("hosts", "commands", "hooks", "crons", "drives") if spec[k]]
    parts += [f"{len(spec['secrets'])} secret handles"] if spec["secrets"] else []
    print(f"{PROG} {command}: applied image {spec['name']!r} as version {version} "
          f"({', '.join(parts + [f'{len(loaded.files)} files'])})")
    return 0


def cmd_image_apply(args: argparse.Namespace) -> int:
    return apply_folder(_state(args, create=True), args.folder, "image apply")


def cmd_image_list(args: argparse.Namespace) -> int:
    from kfs.runtime import image

    records, in_force = image.versions(_state(args))
    for r in records:
        mark = "*" if r["version"] == in_force else " "
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r["applied"]))
        print(f"{mark} {r['version']} {when} {r['spec']['name']} {r['source']} ({r['by']})")
    return 0


def cmd_image_show(args: argparse.Namespace) -> int:
    from kfs.runtime import image

    records, in_force = image.versions(_state(args))
    wanted = in_force if args.version is None else args.version
    record = next((r for r in records if r["version"] == wanted), None)
    if record is None:
        print(f"{PROG} image show: " + ("no image applied" if wanted is None else f"no image version {wanted}"),
              file=sys.stderr)
        return 1
    print(json.dumps(record, indent=2, sort_keys=True))
    return 0


def cmd_image_rollback(args: argparse.Namespace) -> int:
    from kfs.runtime import image

    try:
        version = image.rollback(_state(args), args.version, by=_by())
    except LookupError as e:
        print(f"{PROG} image rollback: {e.args[0]}", file=sys.stderr)
        return 1
    print(f"{PROG} image rollback: version {version} is in force")
    return 0


def _in_force(args: argparse.Namespace, command: str) -> dict[str, Any] | None:
    """The record of the image in force, or None after saying there is none."""
    from kfs.runtime import image

    record = image.current(_state(args))
    if record is None:
        print(f"{PROG} {command}: no image applied (`{PROG} image apply DIR`)", file=sys.stderr)
    return record


def cmd_hosts(args: argparse.Namespace) -> int:
    from kshell.image.session import image_network

    record = _in_force(args, "hosts")
    if record is None:
        return 1
    spec = record["spec"]
    visible = spec["agents"].get(args.agent, {}).get("hosts") if args.agent else None
    for name, host in sorted(spec["hosts"].items()):
        if visible is None or name in visible:
            paths = sorted(host["routes"]) + (["*"] if "handler" in host else [])
            print(f"{name} {' '.join(paths)}" + (f" (handler {host['handler']})" if "handler" in host else ""))
    network = image_network(record, args.agent) if args.agent else spec["network"]
    print("network: " + ("all" if network is True else ", ".join(network) if network else "none"))
    return 0


def cmd_drives(args: argparse.Namespace) -> int:
    from kfs.runtime.drives import of_image

    record = _in_force(args, "drives")
    if record is None:
        return 1
    rows = [(d.name, d.kind, d.path, d.describe(), "ro" if d.readonly else "rw") for d in of_image(record)]
    rows.insert(0, ("NAME", "KIND", "PATH", "BACKING", "MODE"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print(" ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]))
    return 0


def cmd_secrets_set(args: argparse.Namespace) -> int:
    from kfs.runtime import secrets

    if args.file is not None:
        with open(args.file, "rb") as f:
            value = f.read()
    else:
        if sys.stdin.isatty():
            print(f"{PROG} secrets set: type the value, then Ctrl-D", file=sys.stderr)
        value = sys.stdin.buffer.read()
        if value.endswith(b"\n"):  # `echo TOKEN | komputer secrets set NAME`
            value = value[:-1]
    try:
        secrets.put(_state(args), args.name, value, by=_by(), agents=args.agent or None)
    except secrets.SecretError as e:
        print(f"{PROG} secrets set: {e}", file=sys.stderr)
        return 1
    print(f"{PROG} secrets set: {args.name} stored ({len(value)} bytes, key {secrets.key_path(_state(args))})")
    return 0


def cmd_secrets_list(args: argparse.Namespace) -> int:
    from kfs.runtime import secrets

    for h in secrets.handles(_state(args), args.agent):
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(h["set"]))
        print(f"{h['name']} {','.join(h['agents']) if h['agents'] else '*'} {when} {h['by']}")
    return 0


def cmd_secrets_rm(args: argparse.Namespace) -> int:
    from kfs.runtime import secrets

    try:
        secrets.remove(_state(args), args.name, by=_by())
    except secrets.SecretError as e:
        print(f"{PROG} secrets rm: {e}", file=sys.stderr)
        return 1
    return 0


class _NoValue(argparse.Action):
    """A value given on the command line is refused: it would stay in the shell's history and
    in every process listing."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if values is not None:  # argparse calls an optional positional's action when it is absent too
            parser.error("the value is read from stdin or --file FILE, never from the command line")


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    p = add("image", cmd_image_list, "the image: what the computer boots with (hosts, network, secrets, drives, commands, hooks, crons)")
    sub = p.add_subparsers(dest="image_command", metavar="ACTION")
    q = sub.add_parser("apply", parents=[common], help="check the image in FOLDER and put it in force as a new version")
    q.set_defaults(fn=cmd_image_apply)
    q.add_argument("folder", metavar="FOLDER", help="a folder holding komputer.toml")
    q = sub.add_parser("list", parents=[common], help="the applied versions, oldest first (* in force)")
    q.set_defaults(fn=cmd_image_list)
    q = sub.add_parser("show", parents=[common], help="a version's record as JSON (default: the one in force)")
    q.set_defaults(fn=cmd_image_show)
    q.add_argument("version", type=int, nargs="?", metavar="VERSION")
    q = sub.add_parser("rollback", parents=[common],
                       help="put VERSION back in force (default: the version applied before the one in force)")
    q.set_defaults(fn=cmd_image_rollback)
    q.add_argument("version", type=int, nargs="?", metavar="VERSION")
    p = add("hosts", cmd_hosts, "the virtual hosts of the image in force, and the real network allowed")
    p.add_argument("--agent", metavar="NAME", help="what agent NAME sees")
    add("drives", cmd_drives, "the drives of the image in force: NAME KIND PATH, what backs each, ro/rw")
    p = add("secrets", cmd_secrets_list, "secrets for the image's trusted code: handles are listed, values never")
    sub = p.add_subparsers(dest="secrets_command", metavar="ACTION")
    q = sub.add_parser("set", parents=[common],
                       help="store NAME's value, read from stdin (one trailing newline dropped) or --file")
    q.set_defaults(fn=cmd_secrets_set)
    q.add_argument("name", metavar="NAME")
    q.add_argument("value", nargs="?", action=_NoValue, help=argparse.SUPPRESS)
    q.add_argument("--file", metavar="FILE", help="read the value from FILE, as is")
    q.add_argument("--agent", action="append", metavar="A",
                   help="only agent A may know of the handle (repeatable; default: every agent)")
    q = sub.add_parser("list", parents=[common], help="the handles: NAME AGENTS SET BY")
    q.set_defaults(fn=cmd_secrets_list)
    q.add_argument("--agent", metavar="A", help="only those agent A may know of")
    q = sub.add_parser("rm", parents=[common], help="remove NAME")
    q.set_defaults(fn=cmd_secrets_rm)
    q.add_argument("name", metavar="NAME")
