"""tar on VFS files, as GNU tar: create, extract and list (c x t) with -f -z (also -j -J, -a by
the archive's suffix) -v -C, old-style clusters (`tar czf out.tgz dir`), member operands on x
and t (patterns with --wildcards), --exclude/--exclude-vcs/-X, -T (with --null), -h,
--no-recursion, --remove-files, --owner/--group/--numeric-owner/--mtime/--sort/--format on
create; --strip-components, -O, -k/--skip-old-files/--overwrite, -m, -p/--no-same-owner on
extract; -r, -u, -A and --delete rewriting an uncompressed archive (--delete also on a pipe);
--transform (sed's s command, kshell.tools.sed) on names and link targets; -I PROG and --zstd
through a program the K shell runs;
GNU's messages and statuses (2 on errors, 64 for usage). Archives are written by Python's tarfile in GNU format
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
from kshell.exec.system import PROGRAM_BUILTINS
from kshell.core.options import NONE, REQUIRED, Usage, parse
from kshell.tools.sed.script import Subst
from kshell.tools.text.textio import message, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_HINT = "Try 'tar --help' or 'tar --usage' for more information.\n"
_LONG = {
    "create": ("c", NONE), "append": ("r", NONE), "update": ("u", NONE), "delete": ("delete", NONE),
    "concatenate": ("A", NONE), "catenate": ("A", NONE), "extract": ("x", NONE), "get": ("x", NONE), "list": ("t", NONE),
    "file": ("f", REQUIRED), "gzip": ("z", NONE), "gunzip": ("z", NONE), "ungzip": ("z", NONE),
    "bzip2": ("j", NONE), "xz": ("J", NONE), "verbose": ("v", NONE), "directory": ("C", REQUIRED),
    "auto-compress": ("a", NONE), "exclude": ("exclude", REQUIRED), "exclude-from": ("X", REQUIRED),
    "exclude-vcs": ("exclude-vcs", NONE), "files-from": ("T", REQUIRED), "null": ("null", NONE),
    "no-null": ("no-null", NONE), "strip-components": ("strip", REQUIRED), "to-stdout": ("O", NONE),
    "keep-old-files": ("k", NONE), "skip-old-files": ("skip-old", NONE), "overwrite": ("overwrite", NONE),
    "touch": ("m", NONE), "preserve-permissions": ("p", NONE), "same-permissions": ("p", NONE),
    "no-same-permissions": ("no-same-permissions", NONE), "same-owner": ("same-owner", NONE),
    "no-same-owner": ("no-same-owner", NONE), "dereference": ("h", NONE), "wildcards": ("wildcards", NONE),
    "no-wildcards": ("no-wildcards", NONE), "no-recursion": ("no-recursion", NONE),
    "recursion": ("recursion", NONE), "remove-files": ("remove-files", NONE), "owner": ("owner", REQUIRED),
    "group": ("group", REQUIRED), "numeric-owner": ("numeric-owner", NONE), "mtime": ("mtime", REQUIRED),
    "sort": ("sort", REQUIRED), "format": ("H", REQUIRED), "one-file-system": ("one-file-system", NONE),
    "transform": ("transform", REQUIRED), "xform": ("transform", REQUIRED),
    "show-transformed-names": ("show-transformed", NONE), "show-stored-names": ("show-stored", NONE),
    "use-compress-program": ("I", REQUIRED), "zstd": ("zstd", NONE),
}
_VCS = frozenset({"CVS", "RCS", "SCCS", ".git", ".gitignore", ".gitattributes", ".gitmodules", ".cvsignore",
                  ".svn", ".arch-ids", "{arch}", "=RELEASE-ID", "=meta-update", "=update", ".bzr", ".bzrignore",
                  ".bzrtags", ".hg", ".hgignore", ".hgtags", "_darcs", "_MTN", ".arch-inventory"})
_SUFFIXES = ((".tar.gz", "gz"), (".tgz", "gz"), (".taz", "gz"), (".tar.bz2", "bz2"), (".tbz", "bz2"),
             (".tbz2", "bz2"), (".tb2", "bz2"), (".tar.xz", "xz"), (".txz", "xz"), (".tar.zst", "zstd"),
             (".tzst", "zstd"))
_FORMATS = {"gnu": tarfile.GNU_FORMAT, "oldgnu": tarfile.GNU_FORMAT, "ustar": tarfile.USTAR_FORMAT,
            "posix": tarfile.PAX_FORMAT, "pax": tarfile.PAX_FORMAT}
_MODES = ("c", "t", "x", "r", "u", "A", "delete")
_UPDATES = ("r", "u", "A", "delete")  # modes that rewrite an existing archive
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", _ZSTD_MAGIC)  # gzip, bzip2, xz, zstd: GNU refuses to update these
_COMPRESSORS = ("z", "j", "J", "I", "zstd")  # the options that choose one
_BUILT_IN = {"gz", "bz2", "xz"}  # what tarfile compresses and reads itself; any other is a program


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
    def __init__(self, sh: ToolContext, verbose: int, directory: str | None) -> None:
        self.sh = sh
        self.verbose = verbose
        self.directory = directory
        self.failed = False
        self.info_fd = 1
        self.excludes: list[str] = []
        self.vcs = False
        self.strip = 0
        self.to_stdout = False
        self.old_files = ""  # "k" (keep, an error), "skip", or "" (replace)
        self.touch = False
        self.same_perms: bool | None = None  # None: as the user is root or not
        self.same_owner: bool | None = None
        self.dereference = False
        self.recursion = True
        self.remove_files = False
        self.wildcards: bool | None = None
        self.owner: tuple[str, int] | None = None
        self.group: tuple[str, int] | None = None
        self.numeric = False
        self.mtime: int | None = None
        self.format = tarfile.GNU_FORMAT
        self.added: list[str] = []
        self.archived: dict[str, int] | None = None  # -u: each member's newest mtime (ns)
        self.transforms: list[tuple[Subst, str]] = []  # --transform: (s command, what it applies to)
        self.show_transformed = False  # listings show the names stored unless told
        self.warned = False

    def excluded(self, name: str) -> bool:
        """GNU's --exclude: a pattern against the name and each tail of it that starts at a
        component (`*` matching `/` too); --exclude-vcs: a component of the VCS names."""
        from fnmatch import fnmatchcase

        parts = [p for p in name.rstrip("/").split("/") if p]
        if self.vcs and any(p in _VCS for p in parts):
            return True
        tails = ["/".join(parts[i:]) for i in range(len(parts))]
        return any(fnmatchcase(tail, pat.rstrip("/")) for pat in self.excludes for tail in tails)

    def renamed(self, name: str, kind: str) -> str:
        """A member's name (`r`), symlink's target (`s`) or hard link's target (`h`) after
        each --transform that applies to it, in order."""
        from kshell.tools.sed.run import expand

        if not self.transforms:
            return name
        name = name.encode("utf-8", "surrogateescape").decode("latin-1")  # sed's view: a byte a char
        for subst, scope in self.transforms:
            if kind not in scope:
                continue
            # as GNU tar 1.34's _transform_name_to_obstack: a match before the Nth is copied
            # after the text before it, which so comes twice (`s/a/N/2` makes `d/a` `d/d/a`);
            # searches after the first do not start a line (REG_NOTBOL)
            out, pos, count = [], 0, 0
            while pos < len(name):
                m = subst.regex.search(name, pos)
                if m is None:
                    break
                count += 1
                out.append(name[pos : m.start()])
                end = max(m.end(), pos + 1)  # an empty match: one character on
                if count < subst.nth:
                    out.append(name[pos:end])
                else:
                    out.append(expand(subst, m) + name[m.end() : end])
                pos = end
                if count >= subst.nth and not subst.glob:
                    break
            name = "".join(out) + name[pos:]
        return name.encode("latin-1").decode("utf-8", "surrogateescape")

    def transformed(self, info: tarfile.TarInfo) -> tarfile.TarInfo:
        """A member read from an archive as --transform names it (listing, extraction)."""
        if not self.transforms:
            return info
        info = info.replace(name=self.renamed(info.name, "r"), deep=False)
        if info.issym():
            info.linkname = self.renamed(info.linkname, "s")
        elif info.islnk():
            info.linkname = self.renamed(info.linkname, "h")
        return info

    def err(self, text: str, who: str = "tar") -> None:
        self.sh.write_err(f"{who}: {text}\n")

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

    def create(self, names: list[str], compress: str, existing: bytes | None = None) -> bytes:
        """A new archive of `names`, or (-r, -u) `existing` with them appended after its last
        member, ended and padded to whole records as tarfile and GNU tar do."""
        buf = io.BytesIO(existing or b"")
        mode = "a" if existing else "w:" + compress if compress else "w"
        with tarfile.open(fileobj=buf, mode=mode, format=self.format) as tf:
            for name in names:
                member = name
                if member.startswith("/"):
                    if not self.warned:
                        self.err("Removing leading `/' from member names")
                        self.warned = True
                    member = member.lstrip("/") or "."
                self.add(tf, self.path(name), member, name)
        return buf.getvalue()[: buf.tell()]

    def add(self, tf: tarfile.TarFile, path: str, member: str, shown: str, top: bool = True) -> None:
        fs = self.sh.fs
        if (self.excludes or self.vcs) and self.excluded(member):
            return
        try:
            inode = fs.stat(path) if self.dereference else fs.lstat(path)
        except OSError as e:
            self.err(f"{shown}: Cannot stat: {message(e)}")
            self.failed = True
            return
        if self.archived is not None and top and member.rstrip("/") in self.archived:
            # -u, as GNU's update_archive: an archived directory is not added again, its
            # entries are looked at one by one; a file only when newer than its newest copy
            if st.S_ISDIR(inode.mode):
                for child in self.children(path, member):
                    sep = "" if member.endswith("/") else "/"
                    self.add(tf, path.rstrip("/") + "/" + child, member + sep + child, member + sep + child)
                return
            if inode.mtime <= self.archived[member.rstrip("/")]:
                return
        info = tarfile.TarInfo(self.renamed(member, "r"))
        info.mode = inode.mode & 0o7777
        info.uid, info.gid = inode.uid, inode.gid
        state = fs.vfs.state  # unknown ids: empty names, as GNU tar writes them
        info.uname, info.gname = user_name(state, inode.uid) or "", group_name(state, inode.gid) or ""
        if self.owner is not None:
            info.uname, info.uid = self.owner[0], self.owner[1] if self.owner[1] >= 0 else info.uid
        if self.group is not None:
            info.gname, info.gid = self.group[0], self.group[1] if self.group[1] >= 0 else info.gid
        if self.numeric:
            info.uname = info.gname = ""
        info.mtime = inode.mtime // 1_000_000_000 if self.mtime is None else self.mtime
        data = None
        if st.S_ISDIR(inode.mode):
            info.type = tarfile.DIRTYPE
        elif st.S_ISLNK(inode.mode):
            info.type = tarfile.SYMTYPE
            info.linkname = self.renamed(fs.readlink(path), "s")
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
        if self.remove_files:
            self.added.append(path)
        if self.verbose:
            slash = "/" if info.isdir() and not member.endswith("/") else ""
            self.note(self.shown(info) if self.verbose > 1 else member + slash)
        if info.isdir() and self.recursion:
            for child in self.children(path, member):
                sep = "" if member.endswith("/") else "/"
                self.add(tf, path.rstrip("/") + "/" + child, member + sep + child, member + sep + child, False)

    def children(self, path: str, member: str) -> list[str]:
        """A directory's entries in name order (GNU tar: the directory's own order)."""
        try:
            names = sorted(self.sh.fs.readdir(path), key=lambda s: s.encode("utf-8", "surrogateescape"))
        except OSError as e:
            self.err(f"{member}: Cannot open: {message(e)}")
            self.failed = True
            return []
        return [n for n in names if n not in (".", "..")]

    def remove_added(self) -> None:
        """--remove-files: what was archived, files first, then the directories emptied."""
        fs = self.sh.fs
        for path in reversed(self.added):
            try:
                if fs.lstat(path).is_dir:
                    fs.rmdir(path)
                else:
                    fs.unlink(path)
            except OSError as e:
                self.err(f"{path}: Cannot unlink: {message(e)}")
                self.failed = True

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

    def spans(self, data: bytes) -> tuple[list[tuple[tarfile.TarInfo, bytes]], bool]:
        """Each member of an uncompressed archive with its bytes (headers, long names and data,
        as written), and whether the archive read as one (an empty one does)."""
        if not data.strip(b"\0"):
            return [], True
        try:
            tf = tarfile.open(fileobj=io.BytesIO(data), mode="r:")
            infos = tf.getmembers()
        except (tarfile.ReadError, EOFError, OSError, tarfile.HeaderError):
            return [], False
        ends = [info.offset for info in infos[1:]] + [tf.offset]
        return [(info, data[info.offset : end]) for info, end in zip(infos, ends)], True

    def delete(self, data: bytes, names: list[str]) -> bytes:
        """--delete: the archive without the members `names` select (every copy of each)."""
        if not names:
            return data
        spans, ok = self.spans(data)
        if not ok:
            self.fatal("This does not look like a tar archive")
        gone = {id(info) for info in self.members(iter(info for info, _ in spans), names, False)}
        return _ended(b"".join(raw for info, raw in spans if id(info) not in gone))

    def concatenate(self, data: bytes, others: list[str]) -> bytes:
        """-A: each archive `others` names copied whole after this one's last member, as GNU
        tar 1.34 does: the copy keeps its end-of-archive blocks, so readers stop after the
        first archive appended (GNU's own listing does too)."""
        spans, ok = self.spans(data)
        if not ok:
            self.fatal("This does not look like a tar archive")
        out = b"".join(raw for _, raw in spans)
        for other in others:
            try:
                out += read_all(self.sh, self.path(other))
            except OSError as e:
                self.err(f"{other}: Cannot open: {message(e)}")
                self.failed = True
        return _ended(out)

    def shown(self, info: tarfile.TarInfo) -> str:
        from kshell.core.clock import zone

        kind = _KINDS.get(info.type, st.S_IFREG)
        mode = st.filemode(kind | info.mode)
        if info.type == tarfile.LNKTYPE:
            mode = "h" + mode[1:]
        owner = f"{info.uid}/{info.gid}" if self.numeric else f"{info.uname or info.uid}/{info.gname or info.gid}"
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

    def members(self, tf, names: list[str], excluding: bool = True):
        """The members `names` select (all without names), GNU's "Not found in archive" for a
        name that selects none; --delete selects regardless of --exclude."""
        from fnmatch import fnmatchcase

        wanted = {n.rstrip("/"): False for n in names}

        def hits(w: str, name: str) -> bool:
            if self.wildcards and any(c in w for c in "*?["):  # None (not given) is False
                return fnmatchcase(name, w) or any(fnmatchcase(name[:i], w) for i, c in enumerate(name) if c == "/")
            return name == w or name.startswith(w + "/")

        try:
            for info in tf:
                if excluding and (self.excludes or self.vcs) and self.excluded(info.name):
                    continue
                if wanted:
                    hit = next((w for w in wanted if hits(w, info.name.rstrip("/"))), None)
                    if hit is None:
                        continue
                    wanted[hit] = True
                yield info
        except (tarfile.ReadError, EOFError, OSError, tarfile.HeaderError):
            self.err("Unexpected EOF in archive")
            self.failed = True
        for w, found in wanted.items():
            if not found:
                if self.wildcards is None and any(c in w for c in "*?["):
                    self.err("Pattern matching characters used in file names")
                    self.err("Use --wildcards to enable pattern matching, or --no-wildcards to suppress this warning")
                self.err(f"{w}: Not found in archive")
                self.failed = True

    def list(self, tf: tarfile.TarFile, names: list[str]) -> None:
        shown = self.transformed if self.show_transformed else (lambda info: info)
        for info in map(shown, self.members(tf, names)):
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
        same_perms = root if self.same_perms is None else self.same_perms
        same_owner = root if self.same_owner is None else self.same_owner and root
        dirs: list[tuple[str, tarfile.TarInfo]] = []
        for info in self.members(tf, names):
            original, info = info, self.transformed(info)
            name = info.name.lstrip("/")
            if self.strip:
                parts = [p for p in name.split("/") if p]
                if len(parts) <= self.strip:
                    continue
                name = "/".join(parts[self.strip:]) + ("/" if info.isdir() else "")
            if self.verbose:
                seen = info if self.show_transformed else original
                shown = self.shown(seen) if self.verbose > 1 else seen.name + ("/" if seen.isdir() else "")
                if self.to_stdout:  # the data has standard output
                    self.sh.write_err(shown + "\n")
                else:
                    self.note(shown)
            if ".." in name.split("/"):
                self.err(f"{info.name}: Member name contains '..'")
                self.failed = True
                continue
            if self.to_stdout:
                if info.isreg() or info.islnk():
                    f = tf.extractfile(original)
                    self.sh.out(f.read() if f is not None else b"")
                continue
            path = self.path(name)
            try:
                parent = path.rsplit("/", 1)[0] if "/" in path.rstrip("/") else None
                if parent and not fs.exists(parent):
                    fs.mkdir(parent, parents=True)
                mode = info.mode if same_perms else info.mode & ~fs.umask
                if info.isdir():
                    if not fs.exists(path):
                        fs.mkdir(path, 0o700)
                    dirs.append((path, info))
                    continue
                if fs.exists(path) or _is_link(fs, path):
                    if self.old_files == "skip":
                        continue
                    if self.old_files == "k":
                        self.err(f"{name}: Cannot open: File exists")
                        self.failed = True
                        continue
                    if fs.lstat(path).is_dir:
                        raise OSError(21, "Is a directory")
                    fs.unlink(path)
                if info.issym():
                    fs.symlink(info.linkname, path)
                    continue
                if info.islnk():
                    target = info.linkname
                    if self.strip:
                        target = "/".join([p for p in target.split("/") if p][self.strip:])
                    data = fs.read_file(self.path(target))
                else:
                    f = tf.extractfile(original)
                    data = f.read() if f is not None else b""
                fs.write_file(path, data)
                fs.chmod(path, mode & 0o7777)
                if same_owner:
                    fs.chown(path, info.uid, info.gid)
                if not self.touch:
                    t = info.mtime * 1_000_000_000
                    fs.utime(path, t, t)
            except OSError as e:
                self.err(f"{name}: Cannot open: {message(e)}")
                self.failed = True
        for path, info in reversed(dirs):
            try:
                fs.chmod(path, (info.mode if same_perms else info.mode & ~fs.umask) & 0o7777)
                if not self.touch:
                    t = info.mtime * 1_000_000_000
                    fs.utime(path, t, t)
            except OSError as e:
                self.err(f"{info.name}: Cannot change mode: {message(e)}")
                self.failed = True


def _ended(members: bytes) -> bytes:
    """Members followed by the two zero blocks that end an archive, padded to a whole record."""
    size = len(members) + 2 * tarfile.BLOCKSIZE
    return members + bytes(size - len(members) + (-size) % tarfile.RECORDSIZE)


def _read_list(sh: ToolContext, source: str, null: bool, what: str = "Cannot stat: ") -> list[str]:
    """The names -T or -X reads, a line each (NUL-separated with --null); `-` is stdin."""
    try:
        data = read_all(sh, source)
    except OSError as e:
        sh.write_err(f"tar: {source}: {what}{message(e)}\n")
        sh.write_err("tar: Error is not recoverable: exiting now\n")
        raise _Fatal from None
    text = data.decode("utf-8", "surrogateescape")
    return text.split("\0") if null else text.splitlines()


def _transform_option(value: str) -> tuple[Subst, str]:
    """--transform=s/REGEX/REPLACEMENT/FLAGS, as GNU tar reads it: sed's s command (a BRE, `x`
    for an ERE), flags g, i, a number, and r/s/h (R/S/H: not) for member names, symlink and
    hard link targets (all three by default)."""
    from kshell.tools.sed.pattern import RegexError, compile_posix
    from kshell.tools.sed.script import replacement

    if len(value) < 2 or value[0] != "s":
        raise Usage("Invalid transform expression")
    delim = value[1]
    fields: list[str] = []
    current: list[str] = []
    i = 2
    while i < len(value) and len(fields) < 2:
        c = value[i]
        if c == "\\" and i + 1 < len(value):
            current.append(value[i + 1] if value[i + 1] == delim else c + value[i + 1])
            i += 2
            continue
        if c == delim:
            fields.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    if len(fields) < 2:
        raise Usage("Invalid transform expression")
    regex, repl = fields
    glob = icase = extended = False
    nth = ""
    scope = set("rsh")
    for c in value[i:]:
        if c == "g":
            glob = True
        elif c == "i":
            icase = True
        elif c == "x":
            extended = True
        elif c.isdigit():
            nth += c
        elif c in "rsh":
            scope.add(c)
        elif c in "RSH":
            scope.discard(c.lower())
        else:
            raise Usage(f"Unknown flag in transform expression: {c}")
    try:
        compiled = compile_posix(regex, extended, icase)
    except RegexError:
        raise Usage("Invalid transform expression: Invalid regular expression") from None
    parts, cased, maxref = replacement(repl)
    if maxref > compiled.groups:
        raise Usage("Invalid transform replacement: back reference out of range")
    return Subst(compiled, parts, cased, glob, int(nth) if nth else 1), "".join(sorted(scope))


def _id_option(sh: ToolContext, value: str, kind: str) -> tuple[str, int]:
    """--owner/--group NAME, NAME:ID, or +ID / a number (no name)."""
    from kfs.format import accounts

    name, _, number = value.partition(":")
    if number:
        if not number.isdigit():
            raise Usage(f"{number}: Invalid {kind} ID")
        return name, int(number)
    if name.lstrip("+").isdigit():
        return "", int(name.lstrip("+"))
    table = accounts(sh.fs.vfs.state)
    ids = table.users if kind == "owner" else table.groups
    found = next((i for i, n in ids.items() if n == name), None)
    return name, -1 if found is None else found  # -1: the file's own id, under this name


def _mtime_option(sh: ToolContext, value: str) -> int:
    """--mtime=DATE, or the time of a file when it starts with `/` or `.` (GNU)."""
    import time

    from kshell.core.clock import zone
    from kshell.tools.system.datestr import parse as parse_string

    if value.startswith(("/", ".")):
        try:
            return sh.fs.stat(value).mtime // 1_000_000_000
        except OSError as e:
            sh.write_err(f"tar: {value}: Cannot stat: {message(e)}\n")
            raise _Fatal from None
    try:
        when, _ = parse_string(value, time.time_ns(), zone(sh))
    except (ValueError, OverflowError):
        raise Usage(f"Substituting 1970-01-01 00:00:00 for unknown date format '{value}'") from None
    return int(when.timestamp())


def _is_link(fs, path: str) -> bool:
    try:
        return st.S_ISLNK(fs.lstat(path).mode)
    except OSError:
        return False


def _update(sh: ToolContext, t: _Tar, mode: str, archive: str, operands: list[str]) -> None:
    """-r, -u, -A and --delete: the archive read whole (an absent one is empty, and made, as
    GNU opens it for update), changed, and written back; --delete also on a pipe (-f -)."""
    try:
        data = read_all(sh, archive)
    except OSError as e:
        if e.errno != 2 or archive == "-":
            t.fatal(f"{archive}: Cannot open: {message(e)}")
        data = b""
    if data.startswith(_MAGIC):
        t.fatal("Cannot update compressed archives")
    if mode == "delete":
        result = t.delete(data, operands)
    elif mode == "A":
        result = t.concatenate(data, operands)
    else:
        spans, ok = t.spans(data)
        if not ok:
            t.fatal("This does not look like a tar archive")
        if mode == "u":
            t.archived = {}
            for info, _ in spans:
                name = info.name.rstrip("/")
                t.archived[name] = max(t.archived.get(name, 0), info.mtime * 1_000_000_000)
        result = t.create(operands, "", _ended(b"".join(raw for _, raw in spans)) if spans else None)
        if t.warned:
            t.err("Removing leading `/' from hard link targets")
    if archive == "-":
        sh.out(result)
    else:
        devices.write_file(sh, archive, result)


def _runnable(sh: ToolContext, name: str) -> bool:
    """Whether `/bin/sh` or execvp would find `name`: a K tool, a program builtin or a file on PATH."""
    if sh.tool(name) is not None or name in PROGRAM_BUILTINS or "/" in name:
        return True
    from kshell.exec.scripts import find_in_path

    return find_in_path(sh, name)[0] is not None


def _filter(sh: ToolContext, t: _Tar, program: str, data: bytes, decompress: bool) -> bytes:
    """`data` through the compression program (-I PROG, --zstd), run by the K shell (K's own
    gzip, bzip2 and xz, or a delegated program), as GNU tar runs it: `sh -c PROG` to compress,
    PROG's words and -d executed to decompress, each with GNU's words when it cannot run or
    fails (then tar exits with 2)."""
    import shlex

    from kshell.exec.streams import BufferSink, BytesSource

    try:
        words = shlex.split(program) + (["-d"] if decompress else [])
    except ValueError:
        words = []
    if not words or not _runnable(sh, words[0]):
        if decompress:  # GNU names the whole program there, and sh its first word
            t.err(f"{program}: Cannot exec: No such file or directory", "tar (child)")
            t.err("Error is not recoverable: exiting now", "tar (child)")
            status = 2
        else:
            sh.write_err(f"/bin/sh: 1: {words[0] if words else program}: not found\n")
            status = 127
        t.fatal(f"Child returned status {status}")
    out = BufferSink(1 << 34, "compressed archive")
    status = sh.run_script(shlex.join(words) if decompress else program, "",
                           {**sh.fds, 0: BytesSource(data), 1: out})
    if status:
        t.fatal(f"Child returned status {status}")
    return bytes(out.data)


def tar(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, operands = parse(_expand(argv), "ctxruAvzjJaf:C:X:T:OkmphH:I:", _LONG)
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
    if mode in _UPDATES and any(k in _COMPRESSORS for k, _ in opts):
        sh.write_err(f"tar: Cannot update compressed archives\n{_HINT}")
        return 2
    if mode in ("r", "u", "A") and next((v for k, v in reversed(opts) if k == "f"), "-") == "-":
        sh.write_err(f"tar: Options '-Aru' are incompatible with '-f -'\n{_HINT}")
        return 2
    archive = "-"
    compress = ""
    directory = None
    verbose = 0
    t = _Tar(sh, verbose, directory)
    auto = False
    lists: list[str] = []
    null = False
    try:
        for k, v in opts:
            if k == "f":
                archive = v
            elif k in _COMPRESSORS:
                compress = {"z": "gz", "j": "bz2", "J": "xz", "zstd": "zstd", "I": v}[k]
            elif k == "a":
                auto = True
            elif k == "C":
                directory = v
            elif k == "v":
                verbose += 1
            elif k == "exclude":
                t.excludes.append(v)
            elif k == "exclude-vcs":
                t.vcs = True
            elif k == "X":
                t.excludes.extend(line for line in _read_list(sh, v, False, "") if line)
            elif k == "T":
                lists.append(v)
            elif k in ("null", "no-null"):
                null = k == "null"
            elif k == "strip":
                if not v.isdigit():
                    raise Usage(f"{v}: Invalid number of elements")
                t.strip = int(v)
            elif k == "O":
                t.to_stdout = True
            elif k in ("k", "skip-old", "overwrite"):
                t.old_files = {"k": "k", "skip-old": "skip", "overwrite": ""}[k]
            elif k == "m":
                t.touch = True
            elif k in ("p", "no-same-permissions"):
                t.same_perms = k == "p"
            elif k in ("same-owner", "no-same-owner"):
                t.same_owner = k == "same-owner"
            elif k == "h":
                t.dereference = True
            elif k in ("wildcards", "no-wildcards"):
                t.wildcards = k == "wildcards"
            elif k in ("recursion", "no-recursion"):
                t.recursion = k == "recursion"
            elif k == "remove-files":
                t.remove_files = True
            elif k in ("owner", "group"):
                setattr(t, k, _id_option(sh, v, k))
            elif k == "numeric-owner":
                t.numeric = True
            elif k == "mtime":
                t.mtime = _mtime_option(sh, v)
            elif k == "sort":
                if v not in ("none", "name", "inode"):
                    sh.write_err(f"tar: invalid argument '{v}' for '--sort'\nValid arguments are:\n"
                                 "  - 'none'\n  - 'name'\n  - 'inode'\n")
                    return 2
            elif k == "transform":
                t.transforms.append(_transform_option(v))
            elif k in ("show-transformed", "show-stored"):
                t.show_transformed = k == "show-transformed"
            elif k == "H":
                if v not in _FORMATS:
                    raise Usage(f"{v}: Invalid archive format")
                t.format = _FORMATS[v]
    except Usage as e:
        sh.write_err(f"tar: {e.message}\n{_HINT}")
        return 2
    except _Fatal:
        return 2
    if auto and mode == "c" and not compress:
        compress = next((c for suffix, c in _SUFFIXES if archive.endswith(suffix)), "")
    t.verbose, t.directory = verbose, directory
    for source in lists:
        try:
            operands.extend(name for name in _read_list(sh, source, null) if name)
        except _Fatal:
            return 2
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
            if compress and compress not in _BUILT_IN:
                data = _filter(sh, t, compress, t.create(operands, ""), False)
            else:
                data = t.create(operands, compress)
            if archive == "-":
                sh.out(data)
            else:
                devices.write_file(sh, archive, data)
            if t.remove_files:
                t.remove_added()
        elif mode in _UPDATES:
            _update(sh, t, mode, archive, operands)
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
            if not compress and data.startswith(_ZSTD_MAGIC):
                compress = "zstd"  # GNU tar knows it by its magic and runs zstd -d
            if compress and compress not in _BUILT_IN:
                data = _filter(sh, t, compress, data, True)
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
