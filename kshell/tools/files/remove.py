"""rm (-r -R -f -d -v, `--`): removal with GNU's refusals and per-file messages."""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

from kshell.tools.files.names import fail, join, lexists
from kshell.core.options import NONE, Usage, parse, tool
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

LONG = {
    "recursive": ("r", NONE),
    "force": ("f", NONE),
    "dir": ("d", NONE),
    "verbose": ("v", NONE),
    "no-preserve-root": ("npr", NONE),
    "preserve-root": ("pr", NONE),
}


class Remover:
    def __init__(self, sh: ToolContext, flags: set[str]) -> None:
        self.sh = sh
        self.fs = sh.fs
        self.flags = flags

    def say(self, text: str) -> None:
        if "v" in self.flags:
            self.sh.out(text)

    def remove(self, path: str, top: bool) -> bool:
        fs = self.fs
        try:
            inode = fs.lstat(path)
        except OSError as e:
            if e.errno == errno.ENOENT and "f" in self.flags:
                return True
            fail(self.sh, "rm", f"cannot remove {shell_quote(path)}", e)
            return False
        if not inode.is_dir:
            try:
                fs.unlink(path)
            except OSError as e:
                fail(self.sh, "rm", f"cannot remove {shell_quote(path)}", e)
                return False
            self.say(f"removed {shell_quote(path)}\n")
            return True
        if "r" not in self.flags:
            if "d" in self.flags:
                return self.rmdir(path)
            fail(self.sh, "rm", f"cannot remove {shell_quote(path)}", errno.EISDIR)
            return False
        try:
            names = sorted(name for name, _ in fs.scandir(path))
        except OSError as e:
            # an unreadable directory may still be removable when empty
            try:
                fs.rmdir(path)
                self.say(f"removed directory {shell_quote(path)}\n")
                return True
            except OSError:
                fail(self.sh, "rm", f"cannot remove {shell_quote(path)}", e)
                return False
        ok = True
        for name in names:
            ok = self.remove(join(path, name), False) and ok
        return self.rmdir(path) if ok else False

    def rmdir(self, path: str) -> bool:
        try:
            self.fs.rmdir(path)
        except OSError as e:
            fail(self.sh, "rm", f"cannot remove {shell_quote(path)}", e)
            return False
        self.say(f"removed directory {shell_quote(path)}\n")
        return True


@tool("rm")
def rm(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, operands = parse(argv, "rRfdviI", LONG)
    except Usage as e:
        sh.write_err(f"rm: {e.message}\n")
        for arg in argv[1:]:
            if arg.startswith("-") and arg != "--" and sh.fs.exists(arg) or arg.startswith("-") and lexists(sh.fs, arg):
                sh.write_err(f"Try 'rm ./{arg}' to remove the file {shell_quote(arg)}.\n")
                break
        sh.write_err("Try 'rm --help' for more information.\n")
        return 1
    flags = {"r" if k == "R" else k for k, _ in opts}
    if not operands:
        if "f" in flags:
            return 0
        raise Usage("missing operand")
    remover = Remover(sh, flags)
    status = 0
    for path in operands:
        last = path.rstrip("/").rsplit("/", 1)[-1]
        if "r" in flags and last in (".", ".."):
            sh.write_err(f"rm: refusing to remove '.' or '..' directory: skipping {shell_quote(path)}\n")
            status = 1
            continue
        if "r" in flags and path.strip("/") == "" and "npr" not in flags:
            sh.write_err(
                "rm: it is dangerous to operate recursively on '/'\n"
                "rm: use --no-preserve-root to override this failsafe\n"
            )
            status = 1
            continue
        if not remover.remove(path, True):
            status = 1
    return status
