"""gzip, gunzip, zcat on VFS files (zlib's deflate): -c -d -k -f -q, GNU gzip's messages and
statuses (1 for errors, 2 for warnings such as an existing output or an unknown suffix). The
compressed bytes need not equal GNU gzip's (a different deflate), only decompress alike."""

from __future__ import annotations

import gzip as gz
import zlib
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.tools.files.names import lexists
from kshell.core.options import NONE, Usage, parse
from kshell.tools.text.textio import read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"stdout": ("c", NONE), "to-stdout": ("c", NONE), "decompress": ("d", NONE), "uncompress": ("d", NONE),
         "keep": ("k", NONE), "force": ("f", NONE), "test": ("t", NONE), "quiet": ("q", NONE), "verbose": ("v", NONE),
         "fast": ("1", NONE), "best": ("9", NONE), "help": ("help", NONE)}


def _decompress(data: bytes, passthrough: bool = False) -> tuple[bytes, tuple[str, int] | None]:
    """(the bytes decompressed, None or (the message, its status: 1 an error, 2 a warning)): a
    truncated stream yields what it had; `passthrough` (-f with -c) copies non-gzip data as is."""
    out = []
    if not data and not passthrough:
        return b"", ("unexpected end of file", 1)
    first = True
    while data:
        if data[:2] != b"\x1f\x8b":
            if passthrough:
                out.append(data)
                break
            if first:
                return b"".join(out), ("not in gzip format", 1)
            return b"".join(out), ("decompression OK, trailing garbage ignored", 2)
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out.append(d.decompress(data))
        except zlib.error:
            return b"".join(out), ("invalid compressed data--format violated", 1)
        if not d.eof:
            return b"".join(out), ("unexpected end of file", 1)
        data = d.unused_data
        first = False
    return b"".join(out), None




def run(sh: ToolContext, argv: list[str], prog: str, decompress: bool, to_stdout: bool) -> int:
    try:
        opts, files = parse(argv, "cdkfqtv123456789", _LONG)
    except Usage as e:
        sh.write_err(f"{prog}: {e.message}\nTry `{prog} --help' for more information.\n")
        return 1
    keys = {k for k, _ in opts}
    test = "t" in keys  # decompress to nowhere
    decompress = decompress or "d" in keys or test
    to_stdout = to_stdout or "c" in keys or test
    keep = "k" in keys or to_stdout
    force = "f" in keys
    quiet = "q" in keys
    level = 6
    for k, _ in opts:
        if k.isdigit():
            level = int(k)
    status = 0

    def warn(text: str) -> None:
        nonlocal status
        if not quiet:
            sh.write_err(f"{prog}: {text}\n")
        status = max(status, 2) if status != 1 else 1

    for name in files or ["-"]:
        if name != "-":
            if decompress and not name.endswith(".gz") and not lexists(sh.fs, name):
                name += ".gz"  # gzip -d looks for the compressed name
            try:
                inode = devices.stat(sh, name)
            except OSError as e:
                sh.write_err(f"{prog}: {name}: {e.strerror}\n")
                status = 1
                continue
            if inode.is_dir:
                warn(f"{name} is a directory -- ignored")
                continue
            if not decompress and name.endswith(".gz") and not to_stdout:
                if not quiet:
                    sh.write_err(f"{prog}: {name} already has .gz suffix -- unchanged\n")
                continue
            if decompress and not to_stdout and not name.endswith(".gz"):
                warn(f"{name}: unknown suffix -- ignored")
                continue
        try:
            data = read_all(sh, name)
        except OSError as e:
            sh.write_err(f"{prog}: {name}: {e.strerror}\n")
            status = 1
            continue
        shown = "stdin" if name == "-" else name
        if decompress:
            result, err = _decompress(data, force and to_stdout)
            if err is not None and err[1] == 1:
                if (to_stdout or name == "-") and not test:
                    sh.out(result)
                sh.write_err(f"\n{prog}: {shown}: {err[0]}\n")
                status = 1
                continue
            if err is not None:  # a warning (status 2) that -q silences
                if not quiet:
                    sh.write_err(f"\n{prog}: {shown}: {err[0]}\n")
                status = max(status, 2) if status != 1 else 1
            if test:
                if "v" in keys:
                    sh.write_err(f"{shown}:\t OK\n")
                continue
            target = name[:-3]
        else:
            mtime = 0 if name == "-" else devices.stat(sh, name).mtime // 1_000_000_000
            result = gz.compress(data, compresslevel=level, mtime=mtime)
            target = name + ".gz"
        if to_stdout or name == "-":
            sh.out(result)
            continue
        if sh.fs.exists(target) and not force:
            sh.write_err(f"{prog}: {target} already exists;\tnot overwritten\n")
            status = max(status, 2) if status != 1 else 1
            continue
        try:
            sh.fs.write_file(target, result)
            sh.fs.chmod(target, inode.perm)
            sh.fs.utime(target, inode.atime, inode.mtime)
            if not keep:
                sh.fs.unlink(name)
        except OSError as e:
            sh.write_err(f"{prog}: {target}: {e.strerror}\n")
            status = 1
    return status


def gzip(sh: ToolContext, argv: list[str]) -> int:
    return run(sh, argv, "gzip", False, False)


def gunzip(sh: ToolContext, argv: list[str]) -> int:
    return run(sh, argv, "gzip", True, False)


def zcat(sh: ToolContext, argv: list[str]) -> int:
    return run(sh, argv, "gzip", True, True)
