"""mkdir (-p -m -v), rmdir and mkfifo (-m): directories one component at a time and named pipes
(kshell.exec.fifos), with GNU's messages."""

from __future__ import annotations

import contextlib
import errno
import stat as st
from typing import TYPE_CHECKING

from kshell.tools.files.modes import apply_mode
from kshell.tools.files.names import fail
from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kshell.core.context import ToolContext


@tool("mkdir")
def mkdir(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "pm:v", {"parents": ("p", NONE), "mode": ("m", REQUIRED), "verbose": ("v", NONE)})
    given = dict(opts)
    if not operands:
        raise Usage("missing operand")
    fs = sh.fs
    mode_text = given.get("m")
    mode: int | None = None
    if mode_text is not None:
        mode = apply_mode(mode_text, 0o777 & ~fs.umask, True, fs.umask)
        if mode is None:
            sh.write_err(f"mkdir: invalid mode {shell_quote(mode_text)}\n")
            return 1
    parents, verbose = "p" in given, "v" in given
    status = 0
    for path in operands:
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
                            sh.out(f"mkdir: created directory {shell_quote(sub)}\n")
                        continue
                    if not inode.is_dir:
                        raise OSError(errno.EEXIST if last else errno.ENOTDIR, "", sub)
            else:
                fs.mkdir(path, 0o777)
                if mode is not None:
                    fs.chmod(path, mode)
                if verbose:
                    sh.out(f"mkdir: created directory {shell_quote(path)}\n")
        except OSError as e:
            shown = e.filename if parents and isinstance(e.filename, str) else path
            fail(sh, "mkdir", f"cannot create directory {shell_quote(shown)}", e)
            status = 1
    return status


@tool("rmdir")
def rmdir(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "pv", {"parents": ("p", NONE), "verbose": ("v", NONE),
                                        "ignore-fail-on-non-empty": ("i", NONE)})
    given = dict(opts)
    if not operands:
        raise Usage("missing operand")
    status = 0
    for path in operands:
        targets = [path]
        if "p" in given:
            parts = path.rstrip("/").split("/")
            targets = ["/".join(parts[:i]) for i in range(len(parts), 0, -1) if "/".join(parts[:i])]
        for target in targets:
            if "v" in given:  # GNU announces each removal before trying it
                sh.out(f"rmdir: removing directory, {shell_quote(target)}\n")
            try:
                sh.fs.rmdir(target)
            except OSError as e:
                if not (e.errno == errno.ENOTEMPTY and "i" in given):
                    # GNU names a parent (-p) "directory"; `link/` to a directory is not followed
                    what = "directory " if target != targets[0] else ""
                    err: OSError | str = e
                    if e.errno == errno.ENOTDIR and target.endswith("/"):
                        with contextlib.suppress(OSError):
                            if sh.fs.lstat(target.rstrip("/")).is_lnk and sh.fs.stat(target).is_dir:
                                err = "Symbolic link not followed"
                    if isinstance(err, str):
                        sh.write_err(f"rmdir: failed to remove {shell_quote(target)}: {err}\n")
                    else:
                        fail(sh, "rmdir", f"failed to remove {what}{shell_quote(target)}", e)
                    status = 1
                break
    return status


@tool("mkfifo")
def mkfifo(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "m:Z", {"mode": ("m", REQUIRED), "context": ("Z", OPTIONAL),
                                         "help": ("help", NONE), "version": ("version", NONE)})
    given = dict(opts)
    if "help" in given:
        sh.out("Usage: mkfifo [OPTION]... NAME...\nCreate named pipes (FIFOs) with the given NAMEs.\n")
        return 0
    if "version" in given:
        sh.out("mkfifo (GNU coreutils) 9.1\n")
        return 0
    if given.get("Z"):
        sh.write_err("mkfifo: warning: ignoring --context; it requires an SELinux/SMACK-enabled kernel\n")
    if not operands:
        raise Usage("missing operand")
    fs = sh.fs
    mode: int | None = None  # -m: set exactly, past the umask, as GNU's lchmod after mkfifo
    if "m" in given:
        mode = apply_mode(given["m"], 0o666, False, fs.umask)
        if mode is None:
            raise Fail("invalid mode")
        if mode & ~0o777:
            raise Fail("mode must specify only file permission bits")
    status = 0
    for path in operands:
        try:
            fs.mknod(path, st.S_IFIFO | 0o666)
        except OSError as e:
            fail(sh, "mkfifo", f"cannot create fifo {shell_quote(path)}", e)
            status = 1
            continue
        if mode is not None:
            try:
                fs.chmod(path, mode)
            except OSError as e:
                fail(sh, "mkfifo", f"cannot set permissions of {shell_quote(path)}", e)
                status = 1
    return status
