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


# -- agents, keys and the SSH server (kshell.server is imported only by serve and up) --------


def cmd_agent_add(args: argparse.Namespace) -> int:
    from kfs.agents import add_agent
    from kfs.kstate import KState
    from kfs.vfs import VFS

    with KState(_state_path(args), create=True) as state:
        try:
            agent = add_agent(VFS(state, by=f"cli:{os.getuid()}"), args.name)
        except (ValueError, FileExistsError) as e:
            print(f"{PROG} agent add: {e.args[-1] if isinstance(e, OSError) else e}", file=sys.stderr)
            return 1
    print(f"{PROG}: agent {agent.name} (uid {agent.uid}, gid {agent.gid}, home {agent.home})")
    return 0


def cmd_agent_list(args: argparse.Namespace) -> int:
    from kfs.agents import list_agents
    from kfs.kstate import KState

    with KState(_state_path(args)) as state:
        for agent in list_agents(state):
            print(f"{agent.name}\t{agent.uid}\t{agent.gid}\t{agent.home}")
    return 0


def cmd_keys_add(args: argparse.Namespace) -> int:
    from kfs.agents import add_key
    from kfs.kstate import KState

    text = sys.stdin.read() if args.pubkey_file == "-" else Path(args.pubkey_file).read_text()
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        print(f"{PROG} keys add: {args.pubkey_file}: no key in it", file=sys.stderr)
        return 1
    status = 0
    with KState(_state_path(args)) as state:
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

    with KState(_state_path(args)) as state:
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

    with KState(_state_path(args)) as state:
        try:
            removed = remove_key(state, args.name, args.key)
        except LookupError as e:
            print(f"{PROG} keys remove: {e}", file=sys.stderr)
            return 1
    for key in removed:
        print(f"{PROG}: {args.name}: removed {key.key_type} {key.fingerprint} {key.comment}".rstrip())
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from kshell.server.cli import serve_main

    return serve_main(_state_path(args), args.listen, args.config)


def cmd_up(args: argparse.Namespace) -> int:
    from kshell.server.cli import up_main

    return up_main(_state_path(args), args.listen, args.config, args.mountpoint, args.no_mount)


def cmd_sh(args: argparse.Namespace) -> int:
    """Run a K shell script on the state as root in /home/agent, with the host's real stdio."""
    from kfs.kstate import KState
    from kfs.vfs import ROOT, VFS, PathFS
    from kshell import Shell
    from kshell.exec.streams import InStream

    class HostStdin(InStream):
        def _fill(self) -> bytes:
            try:
                return os.read(0, 65536)
            except OSError:
                return b""

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
    home = "/home/agent"
    with KState(_state_path(args), create=True) as state:
        vfs = VFS(state, by="cli:sh")
        fs = PathFS(vfs, cred=ROOT, cwd="/", home=home)
        if not fs.exists(home):
            fs.mkdir(home, parents=True)
        fs = PathFS(vfs, cred=ROOT, cwd=home, home=home)
        out, err = sys.stdout.buffer, sys.stderr.buffer

        def write_out(data: bytes) -> None:
            out.write(data)
            out.flush()

        def write_err(data: bytes) -> None:
            err.write(data)
            err.flush()

        shell = Shell(fs, name="komputer" if shell_args is None else shell_args[0],
                      env={"HOME": home, "USER": "root", "LOGNAME": "root"})
        if args.command_string is None:
            shell.interp.dash_c = False
        return shell.run_streaming(source, stdout=write_out, stderr=write_err, stdin=stdin,
                                   args=shell_args[1:] if shell_args else None)


Command = Callable[[argparse.Namespace], int]


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--state",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="the KState directory (default: $KOMPUTER_STATE or the embedded default)",
    )
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
    p.add_argument(
        "-o", dest="options", action="append", default=[], metavar="OPT[,OPT...]",
        help="mount options: allow_other, ro, ...",
    )
    p.add_argument(
        "--foreground", "-f", action="store_true", help="stay in the foreground (default: daemonise once mounted)"
    )
    p.add_argument("--log", metavar="FILE", help="append the daemon's log to FILE")
    p.add_argument("--debug", action="store_true", help="log every request")
    p = add("agent", cmd_agent_add, "manage agents (the accounts that log in over SSH)")
    agent_sub = p.add_subparsers(dest="agent_command", metavar="ACTION", required=True)
    q = agent_sub.add_parser("add", parents=[common],
        help="create an agent: virtual uid/gid from 1000 up, home /home/NAME")
    q.set_defaults(fn=cmd_agent_add)
    q.add_argument("name", metavar="NAME")
    q = agent_sub.add_parser("list", parents=[common], help="list agents: name, uid, gid, home")
    q.set_defaults(fn=cmd_agent_list)
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
    p = add("serve", cmd_serve, "serve the K shell, SFTP and scp over SSH until SIGINT/SIGTERM")
    p.add_argument("--listen", default="127.0.0.1:2222", metavar="HOST:PORT",
        help="address to listen on (default 127.0.0.1:2222; port 0 picks one)")
    p.add_argument("--config", metavar="FILE",
        help="komputer.toml with an [ssh] section (default: STATE/komputer.toml if present)")
    p = add("up", cmd_up,
            "start K for a newcomer: state, agent 'agent' with your key, FUSE mount, SSH on 127.0.0.1:2222")
    p.add_argument("--listen", default="127.0.0.1:2222", metavar="HOST:PORT")
    p.add_argument("--config", metavar="FILE")
    p.add_argument("--mountpoint", metavar="DIR",
        help="where to mount the FUSE view (default /mnt/komputer for root, ~/komputer otherwise)")
    p.add_argument("--no-mount", action="store_true", help="do not mount the FUSE view")
    p = add("sh", cmd_sh, "run a K shell script on the state: sh -c SCRIPT [NAME ARGS...] | FILE [ARGS...] | stdin")
    p.add_argument("-c", dest="command_string", metavar="SCRIPT",
        help="run SCRIPT (then NAME is $0 and ARGS are $1...)")
    p.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS",
        help="FILE [ARGS...] on the host, or NAME ARGS... after -c")
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
