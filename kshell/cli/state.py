"""Where the state is (`--state`), and the commands on it as a whole: init, fsck, backup,
import, export, stat, cat, receipts."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kshell.cli import PROG, AddCommand, state_path

if TYPE_CHECKING:
    from kfs.vfs import PathFS


def _open_fs(args: argparse.Namespace, *, create: bool = True) -> PathFS:
    from kfs.kstate import KState
    from kfs.vfs import VFS, PathFS

    state = KState(state_path(args), create=create)
    return PathFS(VFS(state, by=f"cli:{os.getuid()}"))


def cmd_init(args: argparse.Namespace) -> int:
    from kfs.kstate import KState
    from kfs.kstate.schema import U64
    from kfs.vfs import VFS

    path = state_path(args)
    existed = (path / "data.mdb").exists()
    with KState(path, create=True) as state:
        VFS(state)
        if args.max_bytes is not None:
            state.write(lambda txn: txn.put("meta", b"max_bytes", U64.pack(args.max_bytes)))
        if args.agent_disk is not None:
            from kfs.kstate import quota
            from kshell.worker.limits import parse_size

            size = None if args.agent_disk == "default" else parse_size(args.agent_disk, "--agent-disk")
            state.write(lambda txn: quota.set_agent_default(txn, size))
        if args.agent_files is not None:
            from kfs.kstate import quota

            count = None if args.agent_files == "default" else int(args.agent_files)
            state.write(lambda txn: quota.set_agent_default(txn, count, quota.FILES))
        print(f"{PROG}: {'using existing' if existed else 'initialised'} state at {path} (uuid {state.fs_uuid})")
        if args.image is not None:
            from kshell.cli.image import apply_folder

            return apply_folder(state, args.image, "init")
    return 0


def cmd_fsck(args: argparse.Namespace) -> int:
    from kfs.fsck_guard import Damaged, guarded_check

    report = guarded_check(state_path(args), repair=args.repair)
    if isinstance(report, Damaged):  # below KState: LMDB's own pages; --repair cannot help
        print(f"{PROG} fsck: damaged: {report.reason}")
        print(f"{PROG} fsck: --repair cannot fix damage to the LMDB file itself: restore the state from a backup "
              f"(see `{PROG} backup --help`)")
        return 4
    for line in report.problems:
        print(f"{PROG} fsck: {line}")
    print(f"{PROG} fsck: {report.summary()}")
    if report.clean:
        return 0
    return 1 if args.repair else 4  # e2fsck's codes: corrected / left uncorrected


def cmd_backup(args: argparse.Namespace) -> int:
    from kfs.kstate.backup import backup

    done = backup(state_path(args), Path(args.dest), compact=args.compact)
    beside = "".join(f" and {name}" for name in done.beside)
    how = "compacted, " if args.compact else ""
    checked = "structure verified" if done.verified else "structure not verified (py-lmdb < 3)"
    print(f"{PROG} backup: wrote {done.data} ({done.size} bytes, {how}{checked}){beside} in {done.seconds:.2f} s")
    return 0


BACKUP_EPILOG = """\
The copy is LMDB's own (one read transaction's snapshot): consistent while the services keep
running and writing, and it holds them up only while the two meta pages are copied (while
it reads, writers cannot reuse freed pages, so the state's file may grow by what they write).

Copied: data.mdb, the whole state (files, agents and their keys, receipts, events, and the
SSH host key, which lives in the state: keep backups private; DEST is created 0700, its
files 0600), and komputer.toml if the state directory has one.
Not copied: lock.mdb (LMDB's table of live readers; the first process to open the copy makes
a new one) and client/ (the key pair `komputer up` may have generated to log in with: a
credential of yours, not state; `up` makes a new one).

DEST is created (its parent must exist); an existing DEST is used only if it holds no
data.mdb: a backup never overwrites. The copy's structure is verified before success is
reported.

Restore: stop the services using the state, move DEST into the state's place (or point
--state / KOMPUTER_STATE at it), then run `komputer fsck` on it.
"""


def cmd_import(args: argparse.Namespace) -> int:
    from kfs.hostcopy import import_tree

    count = import_tree(_open_fs(args), args.hostdir, args.kpath)
    print(f"{PROG}: imported {count} entries into {args.kpath}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from kfs.hostcopy import export_tree

    count, stripped = export_tree(_open_fs(args), args.kpath, args.hostdir, keep_setuid=args.keep_setuid)
    if stripped:
        print(f"{PROG}: export: removed setuid/setgid bits from {stripped} file{'s' if stripped != 1 else ''}"
              " (--keep-setuid keeps them)", file=sys.stderr)
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
        sys.stdout.write(stat_text(path, inode, f"'{target}'" if target is not None else None,
                                   state=fs.vfs.state))
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


def cmd_compact(args: argparse.Namespace) -> int:
    from kfs.kstate.compact import compact

    done = compact(state_path(args))
    print(f"{PROG} compact: data.mdb {done.before} -> {done.after} bytes "
          f"({max(done.before - done.after, 0)} given back to the host)")
    return 0


def cmd_quota(args: argparse.Namespace) -> int:
    """Every owner's use and limits (bytes in KiB, files), as repquota lists them (names from
    K's agent records)."""
    from kfs.agents import list_agents
    from kfs.kstate import KState, quota

    with KState(state_path(args)) as state:
        if args.recount_drives:
            from kfs.drives.host import recount
            from kfs.runtime import image
            from kfs.runtime.drives import of_image

            recount(state, of_image(image.current(state)))
        agents = {a.uid: a.name for a in list_agents(state)}
        with state.read() as txn:
            used, owned = quota.charged(txn), quota.charged(txn, quota.FILES)
            for uid, host in quota.charged(txn, quota.HOST).items():  # its host-drive files too
                used[uid] = used.get(uid, 0) + host
            rows = [(uid, used.get(uid, 0), quota.limit(txn, uid), owned.get(uid, 0),
                     quota.limit(txn, uid, quota.FILES)) for uid in sorted({*agents, *used, *owned})]
    print(f"{'User':<20} {'used':>12} {'limit':>12} {'files':>10} {'limit':>10}")
    for uid, use, bound, count, most in rows:
        name = "root" if uid == 0 else agents.get(uid, f"#{uid}")
        print(f"{name:<20} {-(-use // 1024):>11}K {'none' if bound is None else f'{bound // 1024}K':>12} "
              f"{count:>10} {'none' if most is None else most:>10}")
    return 0


def cmd_receipts(args: argparse.Namespace) -> int:
    from kfs.journal import receipts_since

    fs = _open_fs(args)
    for row in receipts_since(fs.vfs.state, args.since, args.limit):
        print(json.dumps(row, separators=(",", ":")))
    return 0


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    p = add("init", cmd_init, "create the state (if missing) with its root directory")
    p.add_argument("--max-bytes", type=int, metavar="N", help="quota for stored file data in bytes (0: none)")
    p.add_argument("--agent-disk", metavar="SIZE",
                   help="each agent's disk quota unless `agent set --disk` gives it its own (bytes, or with K, M, "
                        "G, T; 0: none; default: 4G)")
    p.add_argument("--agent-files", metavar="N",
                   help="how many files each agent may own unless `agent set --files` says (0: none; default: "
                        "1000000)")
    p.add_argument("--image", metavar="FOLDER", help="apply the image in FOLDER (see `image apply`)")
    p = add("compact", cmd_compact, "give the host back the disk deleted files left in data.mdb (the state "
                                    "must not be served or mounted meanwhile)")
    p = add("quota", cmd_quota, "each agent's disk use and quota (KiB: K's files and the host drives' together) "
                                "and files and their limit, as repquota")
    p.add_argument("--recount-drives", action="store_true",
                   help="count the agents' files on the image's host drives again first (what the host changed "
                        "there itself)")
    p = add("fsck", cmd_fsck, "check every invariant of the state; exit 0 clean, 1 repaired, 4 problems left")
    p.add_argument("--repair", action="store_true", help="repair what is found, in one transaction")
    p = add("backup", cmd_backup, "copy the state, even while it runs, into a new directory DEST")
    p.epilog = BACKUP_EPILOG
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("dest", metavar="DEST", help="the directory to create for the copy")
    p.add_argument("--compact", action="store_true",
        help="leave free pages out and renumber the rest: a smaller file, more CPU")
    p = add("import", cmd_import, "copy a host file or directory tree into the state (modes, links, times kept)")
    p.add_argument("hostdir", metavar="HOSTDIR")
    p.add_argument("kpath", metavar="KPATH")
    p = add("export", cmd_export, "copy a tree out of the state to a host directory (modes, links, times kept; "
                                  "setuid/setgid bits dropped unless --keep-setuid)")
    p.add_argument("kpath", metavar="KPATH")
    p.add_argument("hostdir", metavar="HOSTDIR")
    p.add_argument("--keep-setuid", action="store_true",
                   help="keep setuid and setgid bits (the files belong to agents' uids on the host)")
    p = add("stat", cmd_stat, "show a file's attributes as GNU stat does")
    p.add_argument("kpath", metavar="KPATH", nargs="+")
    p = add("cat", cmd_cat, "write files' contents to standard output")
    p.add_argument("kpath", metavar="KPATH", nargs="+")
    p = add("receipts", cmd_receipts, "print receipts as JSON lines, oldest first")
    p.add_argument("--since", type=int, default=0, metavar="ID", help="only receipts after this id")
    p.add_argument("--limit", type=int, default=1000, metavar="N")
