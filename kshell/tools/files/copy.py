"""cp (-r -R -a -p -P -d -n -f -T -v -t -u -b -S -l -s, --backup, --parents, --preserve,
--no-preserve, --remove-destination) and mv (-f -n -T -v -t -u -b -S, --backup): copying and
moving on the VFS with GNU's target rules (into a directory, -T, -t), refusals and messages. A FIFO is read
like a file, but copied as a FIFO under -R, as GNU cp does. mv between filesystems (K and a
drive: EXDEV) copies and removes, as GNU mv does."""

from __future__ import annotations

import contextlib
import errno
import stat as st
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.tools.files.names import fail, join, target_pairs
from kshell.tools.files.paths import canonical
from kshell.core.options import NONE, OPTIONAL, REQUIRED, Usage, parse, tool
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kfs.vfs.inode import Inode
    from kfs.vfs.paths import PathFS
    from kshell.core.context import ToolContext

_BACKUP_LONG = {"backup": ("backup", OPTIONAL), "suffix": ("S", REQUIRED), "update": ("u", NONE),
                "strip-trailing-slashes": ("strip", NONE)}
CP_LONG = {
    **_BACKUP_LONG,
    "recursive": ("r", NONE),
    "archive": ("a", NONE),
    "preserve": ("preserve", OPTIONAL),
    "no-preserve": ("no-preserve", REQUIRED),
    "parents": ("parents", NONE),
    "link": ("l", NONE),
    "symbolic-link": ("s", NONE),
    "remove-destination": ("remove-destination", NONE),
    "one-file-system": ("x", NONE),
    "reflink": ("reflink", OPTIONAL),
    "sparse": ("sparse", REQUIRED),
    "no-dereference": ("P", NONE),
    "dereference": ("L", NONE),
    "no-clobber": ("n", NONE),
    "force": ("f", NONE),
    "no-target-directory": ("T", NONE),
    "target-directory": ("t", REQUIRED),
    "verbose": ("v", NONE),
    "interactive": ("i", NONE),
}
MV_LONG = {
    **_BACKUP_LONG,
    "force": ("f", NONE),
    "no-clobber": ("n", NONE),
    "no-target-directory": ("T", NONE),
    "target-directory": ("t", REQUIRED),
    "verbose": ("v", NONE),
    "interactive": ("i", NONE),
}


def _lstat(fs: PathFS, path: str) -> Inode | None:
    try:
        return fs.lstat(path)
    except OSError:
        return None


def _stat(fs: PathFS, path: str) -> Inode | None:
    try:
        return fs.stat(path)
    except OSError:
        return None


def _clobber_mode(opts: list[tuple[str, str]]) -> str:
    """The last of -f, -i and -n: "f" overwrite, "i" ask, "n" never overwrite."""
    picked = [k for k, _ in opts if k in ("f", "i", "n")]
    return picked[-1] if picked else "f"


def confirm(sh: ToolContext, prog: str, dst: str) -> bool:
    """Ask `prog: overwrite 'dst'? ` and read one answer line from standard input."""
    sh.write_err(f"{prog}: overwrite {shell_quote(dst)}? ")
    stream = sh.fds.get(0)
    if stream is None:
        return False
    try:
        answer = stream.read_until(b"\n")
    except OSError:
        return False
    return answer.lstrip()[:1] in (b"y", b"Y")


_ATTRS = ("mode", "timestamps", "ownership", "links", "context", "xattr", "all")
_CONTROLS = {"none": "none", "off": "none", "numbered": "numbered", "t": "numbered", "existing": "existing",
             "nil": "existing", "simple": "simple", "never": "simple"}


def backup_setting(sh: ToolContext, prog: str, opts: list[tuple[str, str]]) -> tuple[str, str]:
    """(control, suffix) from -b/--backup[=CONTROL] and -S (VERSION_CONTROL and
    SIMPLE_BACKUP_SUFFIX otherwise, as GNU): control "" when no backup is made."""
    env = sh.exported_env()
    suffix = env.get("SIMPLE_BACKUP_SUFFIX") or "~"
    control = ""
    for k, v in opts:
        if k == "S":
            suffix = v
        elif k in ("b", "backup"):
            word = v if k == "backup" and v else env.get("VERSION_CONTROL") or "existing"
            names = [c for c in _CONTROLS if c.startswith(word)]
            if word not in _CONTROLS and len({_CONTROLS[c] for c in names}) != 1:
                raise Usage(f"invalid argument {shell_quote(word)} for 'backup type'\nValid arguments are:\n"
                            "  - 'none', 'off'\n  - 'simple', 'never'\n  - 'existing', 'nil'\n  - 'numbered', 't'")
            control = _CONTROLS[word if word in _CONTROLS else names[0]]
    if any(k == "S" for k, _ in opts) and not control:
        control = _CONTROLS.get(env.get("VERSION_CONTROL") or "existing", "existing")
    return ("" if control == "none" else control), suffix


def make_backup(fs: PathFS, dst: str, control: str, suffix: str) -> str:
    """Rename `dst` to its backup name (GNU's: `dst~`, or `dst.~N~` numbered); returns it."""
    parent, _, base = dst.rpartition("/")
    numbers = []
    with contextlib.suppress(OSError):
        for name, _ in fs.scandir(parent or "."):
            if name.startswith(base + ".~") and name.endswith("~") and name[len(base) + 2 : -1].isdigit():
                numbers.append(int(name[len(base) + 2 : -1]))
    if control == "numbered" or (control == "existing" and numbers):
        backup = f"{dst}.~{max(numbers, default=0) + 1}~"
    else:
        backup = dst + suffix
    fs.rename(dst, backup)
    return backup


def _newer_or_same(fs: PathFS, src: str, dst: str) -> bool:
    """-u: the destination exists and is not older than the source."""
    a, b = _stat(fs, src), _stat(fs, dst)
    return a is not None and b is not None and b.mtime >= a.mtime


def _inside(fs: PathFS, src: str, dst: str) -> bool:
    """Whether `dst` lies in the directory `src` (or is it)."""
    try:
        top = canonical(fs, src, "e")
        where = canonical(fs, dst, "m")
    except OSError:
        return False
    return where == top or where.startswith(top.rstrip("/") + "/")


class Copier:
    def __init__(self, sh: ToolContext, opts: list[tuple[str, str]], prog: str = "cp") -> None:
        self.sh = sh
        self.fs = sh.fs
        self.prog = prog  # whose messages: cp's, or mv's when it copies across filesystems
        flags = {k for k, _ in opts}
        self.recursive = bool(flags & {"r", "R", "a"})
        self.attrs: set[str] = set()  # what --preserve keeps: mode, ownership, timestamps
        for k, v in opts:
            if k in ("p", "a") or (k == "preserve" and not v):
                self.attrs |= {"mode", "ownership", "timestamps"}
            elif k in ("preserve", "no-preserve"):
                for word in v.split(","):
                    if word not in _ATTRS:
                        option = "--preserve" if k == "preserve" else "--no-preserve"
                        raise Usage(f"invalid argument {shell_quote(word)} for {shell_quote(option)}\n"
                                    "Valid arguments are:\n" + "".join(f"  - '{a}'\n" for a in _ATTRS).rstrip("\n"))
                    named = {"mode", "ownership", "timestamps"} if word == "all" else {word}
                    self.attrs = self.attrs | named if k == "preserve" else self.attrs - named
        self.preserve = bool(self.attrs)
        # --no-preserve=mode: a new file gets 0666 less the umask, not the source's mode
        self.plain_mode = any(k == "no-preserve" and ("mode" in v.split(",") or "all" in v.split(","))
                              for k, v in opts)
        self.update = "u" in flags
        self.link = "l" if "l" in flags else "s" if "s" in flags else ""
        self.remove_first = "remove-destination" in flags
        self.backup, self.suffix = backup_setting(sh, prog, opts)
        self.deref = "L" in flags or not (self.recursive or flags & {"P", "d", "a"})
        if "L" in flags:
            self.deref = True
        self.clobber = _clobber_mode(opts)
        self.force = "f" in flags
        self.verbose = "v" in flags

    def copy(self, src: str, dst: str, top: bool) -> bool:
        fs, sh = self.fs, self.sh
        try:
            inode = devices.stat(sh, src, follow=self.deref)
        except OSError as e:
            fail(sh, self.prog, f"cannot stat {shell_quote(src)}", e)
            return False
        if inode.is_dir and not self.recursive:
            sh.write_err(f"{self.prog}: -r not specified; omitting directory {shell_quote(src)}\n")
            return False
        existing = _lstat(fs, dst)
        target = _stat(fs, dst) if existing is not None else None
        if existing is not None:
            followed = _stat(fs, src)
            if target is not None and followed is not None and target.ino == followed.ino:
                sh.write_err(f"{self.prog}: {shell_quote(src)} and {shell_quote(dst)} are the same file\n")
                return False
            if inode.is_dir and not (target and target.is_dir):
                sh.write_err(f"{self.prog}: cannot overwrite non-directory {shell_quote(dst)}"
                             f" with directory {shell_quote(src)}\n")
                return False
            if not inode.is_dir and target is not None and target.is_dir:
                sh.write_err(f"{self.prog}: cannot overwrite directory {shell_quote(dst)} with non-directory\n")
                return False
            if self.clobber == "n" and not inode.is_dir:
                return True
            if self.clobber == "i" and not inode.is_dir and not confirm(sh, self.prog, dst):
                return True
            if self.update and not inode.is_dir and _newer_or_same(fs, src, dst):
                return True
            backup = None
            try:
                if self.backup and not inode.is_dir:
                    backup = make_backup(fs, dst, self.backup, self.suffix)
                    existing = None
                elif self.remove_first and not inode.is_dir:
                    fs.unlink(dst)
                    existing = None
            except OSError as e:
                fail(sh, self.prog, f"cannot backup {shell_quote(dst)}", e)
                return False
            self.backed_up = backup
        if self.link and not inode.is_dir:
            try:
                if existing is not None:
                    fs.unlink(dst)
                if self.link == "l":
                    fs.link(src, dst)
                else:
                    fs.symlink(src, dst)
            except OSError as e:
                what = "hard link" if self.link == "l" else "symbolic link"
                fail(sh, self.prog, f"cannot create {what} {shell_quote(dst)}", e)
                return False
            self.say(src, dst)
            return True
        if inode.is_dir:
            if _inside(fs, src, dst):
                sh.write_err(f"{self.prog}: cannot copy a directory, {shell_quote(src)}, into itself, "
                             f"{shell_quote(dst)}\n")
                return False
            return self.copy_dir(src, dst, inode, existing is None)
        if inode.is_lnk:
            try:
                if existing is not None:
                    fs.unlink(dst)
                fs.symlink(fs.readlink(src), dst)
            except OSError as e:
                fail(sh, self.prog, f"cannot create symbolic link {shell_quote(dst)}", e)
                return False
            self.say(src, dst)
            return True
        if self.recursive and inode.kind == st.S_IFIFO:  # -R copies a FIFO as one (reading it would wait)
            try:
                if existing is not None:
                    fs.unlink(dst)
                fs.mknod(dst, st.S_IFIFO | inode.perm)
            except OSError as e:
                fail(sh, self.prog, f"cannot create fifo {shell_quote(dst)}", e)
                return False
            self.say(src, dst)
            self.keep(dst, inode)
            return True
        try:
            content = devices.read_file(sh, src)
        except OSError as e:
            fail(sh, self.prog, f"cannot open {shell_quote(src)} for reading", e)
            return False
        try:
            devices.write_file(sh, dst, content, mode=0o666 & ~fs.umask if self.plain_mode else inode.perm)
        except OSError as e:
            if e.errno == errno.EISDIR and existing is None and dst.endswith("/"):
                e = OSError(errno.ENOTDIR, "", dst)
            if not (self.force and e.errno == errno.EACCES and existing is not None):
                fail(sh, self.prog, f"cannot create regular file {shell_quote(dst)}", e)
                return False
            try:
                fs.unlink(dst)
                fs.write_file(dst, content, mode=inode.perm)
            except OSError as e2:
                fail(sh, self.prog, f"cannot remove {shell_quote(dst)}", e2)
                return False
        self.say(src, dst)
        self.keep(dst, inode)
        return True

    def copy_dir(self, src: str, dst: str, inode: Inode, new: bool) -> bool:
        fs, sh = self.fs, self.sh
        try:
            names = sorted(name for name, _ in fs.scandir(src))
        except OSError as e:
            fail(sh, self.prog, f"cannot access {shell_quote(src)}", e)
            return False
        if new:
            try:
                fs.mkdir(dst, 0o700)
            except OSError as e:
                fail(sh, self.prog, f"cannot create directory {shell_quote(dst)}", e)
                return False
            self.say(src, dst)
        ok = True
        for name in names:
            ok = self.copy(join(src, name), join(dst, name), False) and ok
        with contextlib.suppress(OSError):
            if self.preserve:
                self.keep(dst, inode)
            elif new:
                fs.chmod(dst, inode.perm & ~fs.umask)
        return ok

    def keep(self, dst: str, inode: Inode) -> None:
        if not self.preserve:
            return
        fs = self.fs
        actions = {
            "ownership": lambda: fs.chown(dst, inode.uid, inode.gid),
            "mode": lambda: fs.chmod(dst, inode.perm),
            "timestamps": lambda: fs.utime(dst, inode.atime, inode.mtime),
        }
        for name in ("ownership", "mode", "timestamps"):
            if name in self.attrs:
                with contextlib.suppress(OSError):
                    actions[name]()

    backed_up: str | None = None

    def say(self, src: str, dst: str) -> None:
        if self.verbose:
            backup = f" (backup: {shell_quote(self.backed_up)})" if self.backed_up else ""
            self.sh.out(f"{shell_quote(src)} -> {shell_quote(dst)}{backup}\n")
        self.backed_up = None


@tool("cp")
def cp(sh: ToolContext, argv: list[str]) -> int:
    opts, ops = parse(argv, "rRapPdLnfTt:viubS:lsx", CP_LONG)
    keys = dict(opts)  # --strip-trailing-slashes changes nothing K's paths need
    copier = Copier(sh, opts)
    if "parents" in keys:
        return _copy_parents(sh, copier, keys, ops)
    pairs = target_pairs(sh, keys, ops)
    status = 0
    for src, dst in pairs:
        if not copier.copy(src, dst, True):
            status = 1
    return status


def _copy_parents(sh: ToolContext, copier: Copier, keys: dict[str, str], ops: list[str]) -> int:
    """--parents: each source's path made under the target directory, its directories
    created as GNU makes them (`d -> e/d` with -v)."""
    target = keys.get("t")
    if target is None:
        if len(ops) < 2:
            raise Usage("missing destination file operand after " + shell_quote(ops[0]) if ops
                        else "missing file operand")
        *ops, target = ops
    inode = _stat(sh.fs, target)
    if inode is None or not inode.is_dir:
        raise Usage("with --parents, the destination must be a directory")
    status = 0
    for src in ops:
        parts = [p for p in src.split("/") if p]
        made = target
        for k, part in enumerate(parts[:-1]):
            made = join(made, part)
            here = "/".join(parts[: k + 1])
            if _stat(sh.fs, made) is None:
                try:
                    sh.fs.mkdir(made, 0o755)
                except OSError as e:
                    fail(sh, "cp", f"cannot make directory {shell_quote(made)}", e)
                    status = 1
                    break
                if copier.verbose:
                    sh.out(f"{here} -> {made}\n")
        else:
            if not copier.copy(src, join(target, "/".join(parts)), True):
                status = 1
    return status


def _move_across(sh: ToolContext, src: str, dst: str, existing: Inode | None) -> bool:
    """mv between filesystems (K and a drive, two drives), as GNU mv does it: the target
    replaced (an empty directory only), the source copied as `cp -a` copies, then removed."""
    fs = sh.fs
    try:
        if existing is not None and existing.is_dir:
            fs.rmdir(dst)
        elif existing is not None:
            fs.unlink(dst)
    except OSError as e:
        fail(sh, "mv", f"cannot move {shell_quote(src)} to {shell_quote(dst)}", e)
        return False
    if not Copier(sh, [("a", "")], "mv").copy(src, dst, True):
        return False
    try:
        fs.rm(src, recursive=True)
    except OSError as e:
        fail(sh, "mv", f"cannot remove {shell_quote(src)}", e)
        return False
    return True


@tool("mv")
def mv(sh: ToolContext, argv: list[str]) -> int:
    opts, ops = parse(argv, "fnTt:viubS:", MV_LONG)
    keys = dict(opts)
    if "strip" in keys:
        ops = [op.rstrip("/") or "/" for op in ops]
    pairs = target_pairs(sh, keys, ops)
    fs = sh.fs
    clobber = _clobber_mode(opts)
    verbose = "v" in keys
    control, suffix = backup_setting(sh, "mv", opts)
    status = 0
    for src, dst in pairs:
        try:
            inode = fs.lstat(src)
        except OSError as e:
            fail(sh, "mv", f"cannot stat {shell_quote(src)}", e)
            status = 1
            continue
        existing = _lstat(fs, dst)
        if existing is not None:
            if existing.ino == inode.ino:
                sh.write_err(f"mv: {shell_quote(src)} and {shell_quote(dst)} are the same file\n")
                status = 1
                continue
            if clobber == "n" or clobber == "i" and not confirm(sh, "mv", dst):
                continue
            if "u" in keys and not inode.is_dir and _newer_or_same(fs, src, dst):
                continue
            if inode.is_dir and not existing.is_dir:
                sh.write_err(f"mv: cannot overwrite non-directory {shell_quote(dst)}"
                             f" with directory {shell_quote(src)}\n")
                status = 1
                continue
            if not inode.is_dir and existing.is_dir:
                sh.write_err(f"mv: cannot overwrite directory {shell_quote(dst)} with non-directory\n")
                status = 1
                continue
        if inode.is_dir and _inside(fs, src, dst):
            sh.write_err(f"mv: cannot move {shell_quote(src)} to a subdirectory of itself, {shell_quote(dst)}\n")
            status = 1
            continue
        backup = None
        if control and existing is not None:
            try:
                backup = make_backup(fs, dst, control, suffix)
                existing = None
            except OSError as e:
                fail(sh, "mv", f"cannot backup {shell_quote(dst)}", e)
                status = 1
                continue
        try:
            fs.rename(src, dst)
        except OSError as e:
            if e.errno != errno.EXDEV:
                fail(sh, "mv", f"cannot move {shell_quote(src)} to {shell_quote(dst)}", e)
                status = 1
                continue
            if not _move_across(sh, src, dst, existing):
                status = 1
                continue
        if verbose:
            shown = f" (backup: {shell_quote(backup)})" if backup else ""
            sh.out(f"renamed {shell_quote(src)} -> {shell_quote(dst)}{shown}\n")
    return status
