"""mkdir (-p -m -v) and rmdir: directories one component at a time, with GNU's messages."""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

from kshell.tools.files.args import NO, REQUIRED, Usage, fail, missing_operand, parse, quote, usage_error
from kshell.tools.files.modes import apply_mode

if TYPE_CHECKING:
    from kshell.exec.interp import Interp


def mkdir(sh: Interp, argv: list[str]) -> int:
    try:
        opts = parse(argv, "pm:v", {"parents": ("p", NO), "mode": ("m", REQUIRED), "verbose": ("v", NO)})
    except Usage as e:
        return usage_error(sh, "mkdir", e)
    if not opts.operands:
        return missing_operand(sh, "mkdir")
    fs = sh.fs
    mode_text = opts.last("m")
    mode: int | None = None
    if mode_text is not None:
        mode = apply_mode(mode_text, 0o777 & ~fs.umask, True, fs.umask)
        if mode is None:
            sh.write_err(f"mkdir: invalid mode {quote(mode_text)}\n")
            return 1
    parents, verbose = opts.has("p"), opts.has("v")
    status = 0
    for path in opts.operands:
        try:
            if parents:
                parts = [p for p in path.split("/") if p]
                prefix = "/" if path.startswith("/") else ""
                for i in range(len(parts)):
                    sub = prefix + "/".join(parts[: i + 1])
                    last = i == len(parts) - 1
                    try:
                        inode = fs.stat(sub)
                    except OSError as e:
                        if e.errno != errno.ENOENT:
                            raise OSError(e.errno, e.strerror, sub) from e
                        try:
                            fs.mkdir(sub, 0o777)
                        except OSError as e2:
                            raise OSError(e2.errno, e2.strerror, sub) from e2
                        if last and mode is not None:
                            fs.chmod(sub, mode)
                        elif not last:
                            fs.chmod(sub, (0o777 & ~fs.umask) | 0o300)
                        if verbose:
                            sh.out(f"mkdir: created directory {quote(sub)}\n")
                        continue
                    if not inode.is_dir:
                        raise OSError(errno.EEXIST if last else errno.ENOTDIR, "", sub)
            else:
                fs.mkdir(path, 0o777)
                if mode is not None:
                    fs.chmod(path, mode)
                if verbose:
                    sh.out(f"mkdir: created directory {quote(path)}\n")
        except OSError as e:
            shown = e.filename if parents and isinstance(e.filename, str) else path
            fail(sh, "mkdir", f"cannot create directory {quote(shown)}", e)
            status = 1
    return status


def rmdir(sh: Interp, argv: list[str]) -> int:
    try:
        opts = parse(argv, "pv", {"parents": ("p", NO), "verbose": ("v", NO), "ignore-fail-on-non-empty": ("i", NO)})
    except Usage as e:
        return usage_error(sh, "rmdir", e)
    if not opts.operands:
        return missing_operand(sh, "rmdir")
    status = 0
    for path in opts.operands:
        targets = [path]
        if opts.has("p"):
            parts = path.rstrip("/").split("/")
            targets = ["/".join(parts[:i]) for i in range(len(parts), 0, -1) if "/".join(parts[:i])]
        for target in targets:
            try:
                sh.fs.rmdir(target)
                if opts.has("v"):
                    sh.out(f"rmdir: removing directory, {quote(target)}\n")
            except OSError as e:
                if not (e.errno == errno.ENOTEMPTY and opts.has("i")):
                    fail(sh, "rmdir", f"failed to remove {quote(target)}", e)
                    status = 1
                break
    return status
