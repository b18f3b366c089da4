"""tar on VFS files, as GNU tar: create, extract and list (c x t) with -f -z (also -j -J) -v -C,
old-style clusters (`tar czf out.tgz dir`), member operands on x and t, GNU's messages and
statuses (2 on errors, 64 for usage). Archives are written by Python's tarfile in GNU format
from VFS bytes and read by it (any compression, as GNU tar detects it), so real tar reads what
this writes and the other way round. Directories are archived in name order (GNU tar uses the
directory's order, which on a real disk is arbitrary).
"""

from __future__ import annotations

import io
import stat as st
import tarfile
from datetime import datetime
from typing import TYPE_CHECKING

from kfs.format import group_name, user_name
from kshell.exec import devices
from kshell.tools.options import NONE, REQUIRED, Usage, parse
from kshell.tools.text.textio import message, read_all

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_HINT = "Try 'tar --help' or 'tar --usage' for more information.\n"
_LONG = {
    "create": ("c", NONE), "extract": ("x", NONE), "get": ("x", NONE), "list": ("t", NONE),
    "file": ("f", REQUIRED), "gzip": ("z", NONE), "gunzip": ("z", NONE), "ungzip": ("z", NONE),
    "bzip2": ("j", NONE), "xz": ("J", NONE), "verbose": ("v", NONE), "directory": ("C", REQUIRED),
}
_MODES = "ctx"


_KINDS = {tarfile.DIRTYPE: st.S_IFDIR, tarfile.SYMTYPE: st.S_IFLNK, tarfile.CHRTYPE: st.S_IFCHR,
          tarfile.BLKTYPE: st.S_IFBLK, tarfile.FIFOTYPE: st.S_IFIFO}


class _Fatal(Exception):
    pass


def _expand(argv: list[str]) -> list[str]:
    """The old-style first argument (`czf a.tgz`) as separate options."""
    if len(argv) < 2 or argv[1].startswith("-"):
        return argv
    out = [argv[0]]
    rest = argv[2:]
    for c in argv[1]:
        out.append("-" + c)
        if c in "fC" and rest:
            out.append(rest.pop(0))
    return out + rest


class _Tar:
    def __init__(self, sh: Interp, verbose: int, directory: str | None) -> None:
        self.sh = sh
        self.verbose = verbose
        self.directory = directory
        self.failed = False
        self.info_fd = 1

    def err(self, text: str) -> None:
        self.sh.write_err(f"tar: {text}\n")

    def fatal(self, text: str) -> None:
        self.err(text)
        self.err("Error is not recoverable: exiting now")
        raise _Fatal

    def path(self, name: str) -> str:
        if self.directory is None or name.startswith("/"):
            return name
        return self.directory.rstrip("/") + "/" + name if self.directory != "/" else "/" + name

    def note(self, text: str) -> None:
        self.sh.out(text + "\n", self.info_fd)

    # ------------------------------------------------------------------ create

    def create(self, names: list[str], compress: str) -> bytes:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:" + compress if compress else "w", format=tarfile.GNU_FORMAT) as tf:
            warned = False
            for name in names:
                member = name
                if member.startswith("/"):
                    if not warned:
                        self.err("Removing leading `/' from member names")
                        warned = True
                    member = member.lstrip("/") or "."
                self.add(tf, self.path(name), member, name)
        return buf.getvalue()

    def add(self, tf: tarfile.TarFile, path: str, member: str, shown: str) -> None:
        fs = self.sh.fs
        try:
            inode = fs.lstat(path)
        except OSError as e:
            self.err(f"{shown}: Cannot stat: {message(e)}")
            self.failed = True
            return
        info = tarfile.TarInfo(member)
        info.mode = inode.mode & 0o7777
        info.uid, info.gid = inode.uid, inode.gid
        state = fs.vfs.state  # unknown ids: empty names, as GNU tar writes them
        info.uname, info.gname = user_name(state, inode.uid) or "", group_name(state, inode.gid) or ""
        info.mtime = inode.mtime // 1_000_000_000
        data = None
        if st.S_ISDIR(inode.mode):
            info.type = tarfile.DIRTYPE
        elif st.S_ISLNK(inode.mode):
            info.type = tarfile.SYMTYPE
            info.linkname = fs.readlink(path)
        elif st.S_ISREG(inode.mode):
            try:
                data = fs.read_file(path)
            except OSError as e:
                self.err(f"{member}: Cannot open: {message(e)}")
                self.failed = True
                return
            info.size = len(data)
        else:
            self.err(f"{member}: socket ignored")
            return
        tf.addfile(info, io.BytesIO(data) if data is not None else None)
        if self.verbose:
            slash = "/" if info.isdir() and not member.endswith("/") else ""
            self.note(self.shown(info) if self.verbose > 1 else member + slash)
        if info.isdir():
            try:
                children = sorted(fs.readdir(path), key=lambda s: s.encode("utf-8", "surrogateescape"))
            except OSError as e:
                self.err(f"{member}: Cannot open: {message(e)}")
                self.failed = True
                return
            for child in children:
                if child in (".", ".."):
                    continue
                sep = "" if member.endswith("/") else "/"
                self.add(tf, path.rstrip("/") + "/" + child, member + sep + child, member + sep + child)

    # ------------------------------------------------------------------ list and extract

    def open(self, data: bytes) -> tarfile.TarFile | None:
        try:
            if not data:
                raise tarfile.ReadError("empty")
            return tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
        except (tarfile.ReadError, EOFError, OSError):
            self.err("This does not look like a tar archive")
            self.failed = True
            return None

    def shown(self, info: tarfile.TarInfo) -> str:
        from kshell.tools.clock import zone

        kind = _KINDS.get(info.type, st.S_IFREG)
        mode = st.filemode(kind | info.mode)
        if info.type == tarfile.LNKTYPE:
            mode = "h" + mode[1:]
        owner = f"{info.uname or info.uid}/{info.gname or info.gid}"
        size = str(info.size if info.isreg() else 0)
        pad = len(owner) + 1 + len(size)
        self.width = max(getattr(self, "width", 19), pad)
        when = datetime.fromtimestamp(info.mtime, zone(self.sh)).strftime("%Y-%m-%d %H:%M")
        name = info.name + ("/" if info.isdir() and not info.name.endswith("/") else "")
        text = f"{mode} {owner} {size.rjust(self.width - len(owner) - 1)} {when} {name}"
        if info.issym():
            text += f" -> {info.linkname}"
        elif info.islnk():
            text += f" link to {info.linkname}"
        return text

    def members(self, tf: tarfile.TarFile, names: list[str]):
        wanted = {n.rstrip("/"): False for n in names}
        try:
            for info in tf:
                if wanted:
                    hit = next((w for w in wanted if info.name == w or info.name.startswith(w + "/")), None)
                    if hit is None:
                        continue
                    wanted[hit] = True
                yield info
        except (tarfile.ReadError, EOFError, OSError, tarfile.HeaderError):
            self.err("Unexpected EOF in archive")
            self.failed = True
        for w, found in wanted.items():
            if not found:
                self.err(f"{w}: Not found in archive")
                self.failed = True

    def list(self, tf: tarfile.TarFile, names: list[str]) -> None:
        for info in self.members(tf, names):
            if self.verbose:
                self.sh.out(self.shown(info) + "\n")
            else:
                self.sh.out(info.name + ("/" if info.isdir() else "") + "\n")

    def extract(self, tf: tarfile.TarFile, names: list[str]) -> None:
        fs = self.sh.fs
        if self.directory is not None:
            try:
                if not fs.stat(self.directory).is_dir:
                    raise OSError(20, "Not a directory")
            except OSError as e:
                self.fatal(f"{self.directory}: Cannot open: {message(e)}")
        root = fs.cred.uid == 0
        dirs: list[tuple[str, tarfile.TarInfo]] = []
        for info in self.members(tf, names):
            name = info.name.lstrip("/")
            if self.verbose:
                self.note(self.shown(info) if self.verbose > 1 else info.name + ("/" if info.isdir() else ""))
            if ".." in name.split("/"):
                self.err(f"{info.name}: Member name contains '..'")
                self.failed = True
                continue
            path = self.path(name)
            try:
                parent = path.rsplit("/", 1)[0] if "/" in path.rstrip("/") else None
                if parent and not fs.exists(parent):
                    fs.mkdir(parent, parents=True)
                mode = info.mode if root else info.mode & ~fs.umask
                if info.isdir():
                    if not fs.exists(path):
                        fs.mkdir(path, 0o700)
                    dirs.append((path, info))
                    continue
                if fs.exists(path) or _is_link(fs, path):
                    if fs.lstat(path).is_dir:
                        raise OSError(21, "Is a directory")
                    fs.unlink(path)
                if info.issym():
                    fs.symlink(info.linkname, path)
                    continue
                if info.islnk():
                    data = fs.read_file(self.path(info.linkname))
                else:
                    f = tf.extractfile(info)
                    data = f.read() if f is not None else b""
                fs.write_file(path, data)
                fs.chmod(path, mode & 0o7777)
                if root:
                    fs.chown(path, info.uid, info.gid)
                t = info.mtime * 1_000_000_000
                fs.utime(path, t, t)
            except OSError as e:
                self.err(f"{name}: Cannot open: {message(e)}")
                self.failed = True
        for path, info in reversed(dirs):
            try:
                fs.chmod(path, (info.mode if root else info.mode & ~fs.umask) & 0o7777)
                t = info.mtime * 1_000_000_000
                fs.utime(path, t, t)
            except OSError as e:
                self.err(f"{info.name}: Cannot change mode: {message(e)}")
                self.failed = True


def _is_link(fs, path: str) -> bool:
    try:
        return st.S_ISLNK(fs.lstat(path).mode)
    except OSError:
        return False


def tar(sh: Interp, argv: list[str]) -> int:
    try:
        opts, operands = parse(_expand(argv), "ctxvzjJf:C:", _LONG)
    except Usage as e:
        sh.write_err(f"tar: {e.message}\n{_HINT}")
        return 64
    modes = {k for k, _ in opts if k in _MODES}
    if not modes:
        sh.write_err(f"tar: You must specify one of the '-Acdtrux', '--delete' or '--test-label' options\n{_HINT}")
        return 2
    if len(modes) > 1:
        what = "'-Acdtrux', '--delete' or  '--test-label' option"
        sh.write_err(f"tar: You may not specify more than one {what}\n{_HINT}")
        return 2
    mode = modes.pop()
    archive = "-"
    compress = ""
    directory = None
    verbose = 0
    for k, v in opts:
        if k == "f":
            archive = v
        elif k == "z":
            compress = "gz"
        elif k == "j":
            compress = "bz2"
        elif k == "J":
            compress = "xz"
        elif k == "C":
            directory = v
        elif k == "v":
            verbose += 1
    t = _Tar(sh, verbose, directory)
    try:
        if mode == "c":
            if not operands:
                sh.write_err(f"tar: Cowardly refusing to create an empty archive\n{_HINT}")
                return 2
            if archive == "-":
                t.info_fd = 2
            else:
                try:
                    devices.write_file(sh, archive, b"")
                except OSError as e:
                    t.fatal(f"{archive}: Cannot open: {message(e)}")
            data = t.create(operands, compress)
            if archive == "-":
                sh.out(data)
            else:
                devices.write_file(sh, archive, data)
        else:
            try:
                data = read_all(sh, archive)
            except OSError as e:
                if e.errno == 21:
                    t.fatal(f"{archive}: Cannot read: Is a directory")
                t.fatal(f"{archive}: Cannot open: {message(e)}")
            if compress == "gz" and data and data[:2] != b"\x1f\x8b":
                sh.write_err("\ngzip: stdin: not in gzip format\n")
                t.fatal("Child returned status 1")
            tf = t.open(data)
            if tf is not None:
                with tf:
                    if mode == "t":
                        t.list(tf, operands)
                    else:
                        t.extract(tf, operands)
    except _Fatal:
        return 2
    except OSError as e:
        sh.write_err(f"tar: {archive}: Cannot write: {message(e)}\n")
        return 2
    if t.failed:
        sh.write_err("tar: Exiting with failure status due to previous errors\n")
        return 2
    return 0
