"""`komputer`: the one command-line program, with a subcommand per job.

Every subcommand takes `--state DIR` (or KOMPUTER_STATE); without either it uses the
embedded default (/var/lib/komputer for root, ~/.local/share/komputer otherwise), created on
first use. Options may come before or after positional arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

PROG = "komputer"


def _state_path(args: argparse.Namespace) -> Path:
    from kfs.kstate import default_state_dir

    return Path(args.state) if args.state else default_state_dir()


def _open_fs(args: argparse.Namespace, *, create: bool = True):  # -> PathFS
    from kfs.kstate import KState
    from kfs.vfs import VFS, PathFS

    state = KState(_state_path(args), create=create)
    return PathFS(VFS(state, by=f"cli:{os.getuid()}"))


def cmd_init(args: argparse.Namespace) -> int:
    from kfs.kstate import KState
    from kfs.kstate.schema import U64
    from kfs.vfs import VFS

    path = _state_path(args)
    existed = (path / "data.mdb").exists()
    with KState(path, create=True) as state:
        VFS(state)
        if args.max_bytes is not None:
            state.write(lambda txn: txn.put("meta", b"max_bytes", U64.pack(args.max_bytes)))
        print(f"{PROG}: {'using existing' if existed else 'initialised'} state at {path} (uuid {state.fs_uuid})")
    return 0


def cmd_fsck(args: argparse.Namespace) -> int:
    from kfs.fsck import check
    from kfs.kstate import KState

    with KState(_state_path(args)) as state:
        report = check(state, repair=args.repair)
    for line in report.problems:
        print(f"{PROG} fsck: {line}")
    print(f"{PROG} fsck: {report.summary()}")
    if report.clean:
        return 0
    return 1 if args.repair else 4  # e2fsck's codes: corrected / left uncorrected


def cmd_import(args: argparse.Namespace) -> int:
    from kfs.hostcopy import import_tree

    count = import_tree(_open_fs(args), args.hostdir, args.kpath)
    print(f"{PROG}: imported {count} entries into {args.kpath}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from kfs.hostcopy import export_tree

    count = export_tree(_open_fs(args), args.kpath, args.hostdir)
    print(f"{PROG}: exported {count} entries to {args.hostdir}")
    return 0


def cmd_stat(args: argparse.Namespace) -> int:
    from kfs.format import stat_text

    fs = _open_fs(args)
    status = 0
    for path in args.kpath:
        try:
            inode = fs.lstat(path)
            target = fs.readlink(path) if inode.is_lnk else None
        except OSError as e:
            print(f"{PROG}: cannot stat '{path}': {e.strerror}", file=sys.stderr)
            status = 1
            continue
        sys.stdout.write(stat_text(path, inode, f"'{target}'" if target is not None else None))
    return status


def cmd_cat(args: argparse.Namespace) -> int:
    fs = _open_fs(args)
    status = 0
    for path in args.kpath:
        try:
            sys.stdout.buffer.write(fs.read_file(path))
        except OSError as e:
            print(f"{PROG}: {path}: {e.strerror}", file=sys.stderr)
            status = 1
    sys.stdout.flush()
    return status


def cmd_receipts(args: argparse.Namespace) -> int:
    from kfs.journal import receipts_since

    fs = _open_fs(args)
    for row in receipts_since(fs.vfs.state, args.since, args.limit):
        print(json.dumps(row, separators=(",", ":")))
    return 0


def cmd_mount(args: argparse.Namespace) -> int:
    from kfs.fuse.mount import main as mount_main

    return mount_main(
        _state_path(args), Path(args.mountpoint), args.options,
        foreground=args.foreground, log_file=args.log, debug=args.debug,
    )


Command = Callable[[argparse.Namespace], int]


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--state", metavar="DIR", default=argparse.SUPPRESS, help="the KState directory (default: $KOMPUTER_STATE or the embedded default)")
    parser = argparse.ArgumentParser(prog=PROG, description="K: a durable computer for AI agents.", parents=[common])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, fn: Command, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_, description=help_)
        p.set_defaults(fn=fn)
        return p

    p = add("init", cmd_init, "create the state (if missing) with its root directory")
    p.add_argument("--max-bytes", type=int, metavar="N", help="quota for stored file data in bytes (0: none)")
    p = add("fsck", cmd_fsck, "check every invariant of the state; exit 0 clean, 1 repaired, 4 problems left")
    p.add_argument("--repair", action="store_true", help="repair what is found, in one transaction")
    p = add("import", cmd_import, "copy a host file or directory tree into the state (modes, links, times kept)")
    p.add_argument("hostdir", metavar="HOSTDIR")
    p.add_argument("kpath", metavar="KPATH")
    p = add("export", cmd_export, "copy a tree out of the state to a host directory (modes, links, times kept)")
    p.add_argument("kpath", metavar="KPATH")
    p.add_argument("hostdir", metavar="HOSTDIR")
    p = add("stat", cmd_stat, "show a file's attributes as GNU stat does")
    p.add_argument("kpath", metavar="KPATH", nargs="+")
    p = add("cat", cmd_cat, "write files' contents to standard output")
    p.add_argument("kpath", metavar="KPATH", nargs="+")
    p = add("receipts", cmd_receipts, "print receipts as JSON lines, oldest first")
    p.add_argument("--since", type=int, default=0, metavar="ID", help="only receipts after this id")
    p.add_argument("--limit", type=int, default=1000, metavar="N")
    p = add("mount", cmd_mount, "serve the state as a FUSE filesystem at MOUNTPOINT (fusermount3 -u to stop)")
    p.add_argument("mountpoint", metavar="MOUNTPOINT")
    p.add_argument("-o", dest="options", action="append", default=[], metavar="OPT[,OPT...]", help="mount options: allow_other, ro, ...")
    p.add_argument("--foreground", "-f", action="store_true", help="stay in the foreground (default: daemonise once mounted)")
    p.add_argument("--log", metavar="FILE", help="append the daemon's log to FILE")
    p.add_argument("--debug", action="store_true", help="log every request")
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


if __name__ == "__main__":
    sys.exit(main())
