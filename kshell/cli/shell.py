"""`komputer sh`: a K shell script run on the state as root in /home/agent, with the host's
real stdio."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kshell.cli import PROG, AddCommand, state_path

if TYPE_CHECKING:
    import argparse


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
    with KState(state_path(args), create=True) as state:
        vfs = VFS(state if getattr(args, "fork", None) is None else _fork(state, args.fork), by="cli:sh")
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

        # the caller's locale and time zone, as bash inherits them: `LC_ALL=C.UTF-8 komputer sh`
        # counts characters, a plain C locale bytes
        inherited = {k: v for k, v in os.environ.items() if k in ("LANG", "LANGUAGE", "TZ") or k.startswith("LC_")}
        shell = Shell(fs, name="komputer" if shell_args is None else shell_args[0],
                      env={**inherited, "HOME": home, "USER": "root", "LOGNAME": "root"})
        from kfs.runtime import image

        record = image.current(state)
        if record is not None:  # its hosts, network, commands and secrets' handles, for root too
            from kshell.tools.image_session import bind_image, image_network

            bind_image(shell, state, record, "root", image_network(record, "root"))
        if args.command_string is None:
            shell.interp.dash_c = False
            if not rest:
                shell.interp.opts.add("s")  # commands read from stdin: $- shows it, as bash's
        return shell.run_streaming(source, stdout=write_out, stderr=write_err, stdin=stdin,
                                   args=shell_args[1:] if shell_args else None)


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    import argparse

    p = add("sh", cmd_sh, "run a K shell script on the state: sh -c SCRIPT [NAME ARGS...] | FILE [ARGS...] | stdin")
    p.add_argument("--fork", type=int, metavar="N", help="run in fork N's tree (komputer fork)")
    p.add_argument("-c", dest="command_string", metavar="SCRIPT",
        help="run SCRIPT (then NAME is $0 and ARGS are $1...)")
    p.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS",
        help="FILE [ARGS...] on the host, or NAME ARGS... after -c")
