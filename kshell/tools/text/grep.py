"""grep (-G -E -F -P, -e -f -i -v -w -x -c -l -L -o -q -s -h -H -n -b -A -B -C -m -r -R -z -Z
-a, --include --exclude --exclude-dir --label --color=never), as GNU grep 3.8 in the C locale.

Exit status 0 when a line was selected, 1 when none, 2 on error (0 with -q once a line matched).
Each block of whole lines is first searched as a unit, so files without a match cost one
regex scan.
"""

from __future__ import annotations

import fnmatch
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kshell.exec import devices, regexes
from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.regex import RegexError, check_class_syntax, translate
from kshell.tools.text.textio import READ_SIZE, Output, blocks, message, open_chunks, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {
    "regexp": ("e", REQUIRED), "file": ("f", REQUIRED), "ignore-case": ("i", NONE),
    "no-ignore-case": ("no-i", NONE), "invert-match": ("v", NONE), "word-regexp": ("w", NONE),
    "line-regexp": ("x", NONE), "count": ("c", NONE), "files-with-matches": ("l", NONE),
    "files-without-match": ("L", NONE), "only-matching": ("o", NONE), "quiet": ("q", NONE),
    "silent": ("q", NONE), "no-messages": ("s", NONE), "byte-offset": ("b", NONE),
    "line-number": ("n", NONE), "no-line-number": ("no-n", NONE), "with-filename": ("H", NONE),
    "no-filename": ("h", NONE), "label": ("label", REQUIRED), "after-context": ("A", REQUIRED),
    "before-context": ("B", REQUIRED), "context": ("C", REQUIRED), "max-count": ("m", REQUIRED),
    "null": ("Z", NONE), "null-data": ("z", NONE), "recursive": ("r", NONE),
    "dereference-recursive": ("R", NONE), "include": ("include", REQUIRED),
    "exclude": ("exclude", REQUIRED), "exclude-dir": ("exclude-dir", REQUIRED),
    "color": ("color", OPTIONAL), "colour": ("color", OPTIONAL), "text": ("a", NONE),
    "binary-files": ("binary-files", REQUIRED), "extended-regexp": ("E", NONE),
    "fixed-strings": ("F", NONE), "basic-regexp": ("G", NONE), "perl-regexp": ("P", NONE),
    "directories": ("d", REQUIRED), "devices": ("D", REQUIRED), "line-buffered": ("U", NONE),
    "initial-tab": ("T", NONE), "help": ("help", NONE), "version": ("V", NONE),
    "no-group-separator": ("no-group", NONE), "group-separator": ("group", REQUIRED),
}
_SHORT = "A:B:C:D:EFGHILPTUVZabcd:e:f:hilLm:noqRrsuvwxyz"
TREE_READ_BUDGET = 8 * READ_SIZE  # bytes of a directory's files read with its listing


class _Cfg:
    """The parsed command line."""

    def __init__(self) -> None:
        self.syntax = "G"
        self.patterns: list[str] | None = None
        self.icase = False
        self.invert = False
        self.word = False
        self.line = False
        self.count = False
        self.list = ""  # "l" or "L"
        self.only = False
        self.quiet = False
        self.nomsg = False
        self.byte = False
        self.number = False
        self.names: bool | None = None
        self.label = "(standard input)"
        self.after = 0
        self.before = 0
        self.max = -1
        self.null = False
        self.zdata = False
        self.recurse = ""  # "r" or "R"
        self.include: list[str] = []
        self.exclude: list[str] = []
        self.exclude_dir: list[str] = []
        self.text = False
        self.binary = "binary"
        self.directories = "read"
        self.group = b"--"
        self.tab = False


def _num(value: str, what: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 0:
        raise Fail(f"{value}: invalid {what} length argument" if what == "context"
                   else "invalid max count", 2)
    return n


def _config(sh: ToolContext, argv: list[str]) -> tuple[_Cfg, list[str]]:
    opts, operands = parse(argv, _SHORT, _LONG, digits="C")
    cfg = _Cfg()
    files_patterns: list[str] = []
    for key, value in opts:
        if key in "EFGP" and len(key) == 1:
            cfg.syntax = key
        elif key == "e":
            cfg.patterns = (cfg.patterns or []) + value.split("\n")
        elif key == "f":
            try:
                data = read_all(sh, value)
            except OSError as e:
                raise Fail(f"{value}: {message(e)}", 2) from None
            text = data.decode("utf-8", "surrogateescape")
            pats = text.split("\n")
            if pats and pats[-1] == "":
                pats.pop()
            cfg.patterns = (cfg.patterns or []) + pats
            files_patterns.append(value)
        elif key in ("i", "y"):
            cfg.icase = True
        elif key == "no-i":
            cfg.icase = False
        elif key == "v":
            cfg.invert = True
        elif key == "w":
            cfg.word = True
        elif key == "x":
            cfg.line = True
        elif key == "c":
            cfg.count = True
        elif key in ("l", "L"):
            cfg.list = key
        elif key == "o":
            cfg.only = True
        elif key == "q":
            cfg.quiet = True
        elif key == "s":
            cfg.nomsg = True
        elif key == "b":
            cfg.byte = True
        elif key == "n":
            cfg.number = True
        elif key == "no-n":
            cfg.number = False
        elif key == "H":
            cfg.names = True
        elif key == "h":
            cfg.names = False
        elif key == "label":
            cfg.label = value
        elif key == "A":
            cfg.after = _num(value, "context")
        elif key == "B":
            cfg.before = _num(value, "context")
        elif key == "C":
            cfg.after = cfg.before = _num(value, "context")
        elif key == "m":
            try:
                cfg.max = int(value)
            except ValueError:
                raise Fail("invalid max count", 2) from None
        elif key == "Z":
            cfg.null = True
        elif key == "z":
            cfg.zdata = True
        elif key in ("r", "R"):
            cfg.recurse = key
        elif key == "include":
            cfg.include.append(value)
        elif key == "exclude":
            cfg.exclude.append(value)
        elif key == "exclude-dir":
            cfg.exclude_dir.append(value)
        elif key == "color":
            if value not in (None, "never", "always", "auto", "none", "no", "yes", "force",
                             "tty", "if-tty"):
                raise Usage(f"invalid argument ‘{value}’ for ‘--color’\nValid arguments are:\n"
                            "  - ‘always’, ‘yes’, ‘force’\n  - ‘never’, ‘no’, ‘none’\n"
                            "  - ‘auto’, ‘tty’, ‘if-tty’")
        elif key == "a":
            cfg.text = True
        elif key == "binary-files":
            if value not in ("binary", "text", "without-match"):
                raise Fail("unknown binary-files type", 2)
            cfg.binary = value
        elif key == "d":
            if value not in ("read", "skip", "recurse"):
                raise Usage(f"invalid argument ‘{value}’ for ‘--directories’\nValid arguments are:\n"
                            "  - ‘read’\n  - ‘recurse’\n  - ‘skip’")
            cfg.directories = value
            if value == "recurse":
                cfg.recurse = cfg.recurse or "r"
        elif key == "no-group":
            cfg.group = b""
        elif key == "group":
            cfg.group = value.encode("utf-8", "surrogateescape")
        elif key == "T":
            cfg.tab = True
        elif key == "help":
            raise _Help()
        elif key == "V":
            raise _Version()
    if cfg.patterns is None:
        if not operands:
            raise _NoPattern()
        cfg.patterns = operands[0].split("\n")
        operands = operands[1:]
    if cfg.text:
        cfg.binary = "text"
    return cfg, operands


class _NoPattern(Exception):
    pass


class _Help(Exception):
    pass


class _Version(Exception):
    pass


@dataclass(frozen=True)
class _Matcher:
    """The compiled patterns, in the forms the scans use."""

    search: Callable[[bytes], object]  # a line's first match (None: no match)
    block: Callable[[bytes], object] | None  # a prefilter over blocks of whole lines
    finders: list  # patterns whose finditer gives -o's matches
    # (start, end) of the first match at or after a position in a block of lines, as `block`
    # finds it (it may span lines); None when there is no such search (-P, -z, back-references
    # with several patterns)
    locate: Callable[[bytes, int], tuple[int, int] | None] | None


def _compile(cfg: _Cfg, sh: ToolContext) -> _Matcher:
    flags = re.IGNORECASE if cfg.icase else 0
    pats = [p.encode("utf-8", "surrogateescape").decode("latin-1") for p in cfg.patterns]
    if cfg.syntax == "F":
        sources = [re.escape(p) for p in pats]
    elif cfg.syntax == "P":
        if len(pats) > 1:
            raise Fail("the -P option only supports a single pattern", 2)
        sources = pats
    else:
        sources = []
        for p in pats:
            try:
                check_class_syntax(p)
                src, warnings = translate(p, cfg.syntax == "E")
            except RegexError as e:
                raise Fail(e.message, 2) from None
            for w in warnings:
                sh.write_err(f"grep: warning: {w}\n")
            sources.append(src)
    if cfg.line:
        sources = [f"^(?:{s})$" for s in sources]
    elif cfg.word:
        sources = [rf"(?<!\w)(?:{s})(?!\w)" for s in sources]
    has_backref = any(re.search(r"\\[1-9]", s) for s in sources) and len(sources) > 1
    try:
        if has_backref:
            compiled = [regexes.compile(s.encode("latin-1"), flags) for s in sources]

            def search(line: bytes):
                for rx in compiled:
                    m = rx.search(line)
                    if m:
                        return m
                return None
            return _Matcher(search, None, compiled, None)
        joined = "|".join(f"(?:{s})" for s in sources) if len(sources) > 1 else sources[0]
        rx = regexes.compile(joined.encode("latin-1"), flags)
        if cfg.syntax == "P" or cfg.zdata:
            return _Matcher(rx.search, None, [rx], None)
        block_rx = regexes.compile(joined.encode("latin-1"), flags | re.MULTILINE)
        lit = pats[0].encode("latin-1")
        if cfg.syntax == "F" and not cfg.icase and not cfg.word and not cfg.line and len(pats) == 1 and lit:
            def find_literal(data: bytes, pos: int) -> tuple[int, int] | None:
                at = data.find(lit, pos)
                return None if at < 0 else (at, at + len(lit))
            return _Matcher(lambda line: True if lit in line else None,
                            lambda b: True if lit in b else None, [rx], find_literal)

        def locate(data: bytes, pos: int) -> tuple[int, int] | None:
            m = block_rx.search(data, pos)
            return None if m is None else m.span()
        return _Matcher(rx.search, block_rx.search, [rx], locate)
    except regexes.error as e:
        if cfg.syntax == "P":
            raise Fail(str(e), 2) from None
        raise Fail("Invalid regular expression", 2) from None
    except OverflowError:
        raise Fail("regular expression too big", 2) from None


@tool("grep", usage_status=2, usage="Usage: grep [OPTION]... PATTERNS [FILE]...")
def grep(sh: ToolContext, argv: list[str]) -> int:
    try:
        cfg, operands = _config(sh, argv)
    except _Help:
        sh.out(b"Usage: grep [OPTION]... PATTERNS [FILE]...\n")
        return 0
    except _NoPattern:
        sh.write_err("Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n")
        return 2
    except _Version:
        sh.out(b"grep (GNU grep) 3.8\n")
        return 0
    run = _Run(sh, cfg, _compile(cfg, sh))
    if not operands:
        operands = ["."] if cfg.recurse else ["-"]
        run.implicit_dot = bool(cfg.recurse)
    run.show_names = cfg.names if cfg.names is not None else (len(operands) > 1 or bool(cfg.recurse))
    try:
        for name in operands:
            run.operand(name)
            if run.done:
                break
    finally:
        run.out.flush()
    if cfg.quiet and run.matched:
        return 0
    if run.error:
        return 2
    return 0 if run.matched else 1


class _Stop(Exception):
    pass


class _Run:
    def __init__(self, sh: ToolContext, cfg: _Cfg, matcher: _Matcher) -> None:
        self.sh = sh
        self.cfg = cfg
        self.search = matcher.search
        self.block_search = matcher.block
        self.finders = matcher.finders
        self.locate = matcher.locate
        self.out = Output(sh)
        self.matched = False
        self.error = False
        self.done = False
        self.show_names = False
        self.implicit_dot = False
        self.sep = b"\0" if cfg.zdata else b"\n"
        # what scan_whole does not do: context, -v, -o, and patterns with no block search
        self.whole = self.locate is not None and not (cfg.invert or cfg.only or cfg.after or cfg.before)

    def err(self, text: str) -> None:
        self.error = True
        if not self.cfg.nomsg:
            self.out.flush()
            self.sh.write_err(f"grep: {text}\n")

    # ------------------------------------------------------------------ operands

    def operand(self, name: str) -> None:
        cfg = self.cfg
        if name == "-":
            self.file("-", cfg.label)
            return
        try:
            inode = devices.stat(self.sh, name)
        except OSError as e:
            self.err(f"{name}: {message(e)}")
            return
        if inode.is_dir:
            if cfg.recurse:
                if self._excluded_dir(name, command_line=True):
                    return
                self.tree(name)
                return
            if cfg.directories == "skip":
                return
            self.err(f"{name}: Is a directory")
            return
        if self._excluded_file(name, command_line=True):
            return
        self.file(name, name, inode)

    def _excluded_file(self, path: str, command_line: bool = False) -> bool:
        base = path.rstrip("/").rsplit("/", 1)[-1]
        cfg = self.cfg
        if (cfg.include and not any(fnmatch.fnmatchcase(base, g) for g in cfg.include)
                and (not cfg.exclude or not command_line)):
            return True
        return any(fnmatch.fnmatchcase(base, g) or (command_line and fnmatch.fnmatchcase(path, g))
                   for g in cfg.exclude)

    def _excluded_dir(self, path: str, command_line: bool = False) -> bool:
        base = path.rstrip("/").rsplit("/", 1)[-1]
        return any(fnmatch.fnmatchcase(base, g) for g in self.cfg.exclude_dir) and \
            not (command_line and path in (".", ".."))

    def tree(self, top: str) -> None:
        fs = self.sh.fs
        prefix = "" if self.implicit_dot and top == "." else (top if top.endswith("/") else top + "/")
        cfg = self.cfg
        if cfg.include or cfg.exclude:
            def wanted(name: str, _: object) -> bool:
                return not self._excluded_file(prefix + name)
        else:
            def wanted(name: str, _: object) -> bool:
                return True
        try:  # the directory's small files are read with its listing, in one transaction
            entries = fs.scandir_contents(top, wanted, TREE_READ_BUDGET)
        except OSError as e:
            self.err(f"{top}: {message(e)}")
            return
        for name, inode, content in sorted(entries, key=lambda e: e[0].encode("utf-8", "surrogateescape")):
            if self.done:
                return
            path = prefix + name
            if inode.is_lnk:
                if self.cfg.recurse != "R":
                    continue
                try:
                    inode = fs.stat(path)
                except OSError as e:
                    self.err(f"{path}: {message(e)}")
                    continue
            if inode.is_dir:
                if not self._excluded_dir(path):
                    self.tree(path)
                continue
            if not inode.is_reg or (content is None and self._excluded_file(path)):
                continue
            self.file(path, path, inode, content)

    # ------------------------------------------------------------------ one input

    def file(self, name: str, shown: str, inode=None, content: bytes | OSError | None = None) -> None:
        """Search one file; `content` is what the tree walk already read of it (its bytes,
        or the error reading it gave), None when this reads it."""
        try:
            if isinstance(content, OSError):
                raise content
            if content is None and inode is not None and inode.is_reg and inode.size <= READ_SIZE:
                # a small file is one chunk either way: read it in one read transaction
                content = devices.read_file(self.sh, name)
            if content is None:
                count = self.scan(open_chunks(self.sh, name), shown)
            elif self.whole:
                count = self.scan_whole(content, shown)
            else:
                count = self.scan(iter([content] if content else []), shown)
        except _Stop:
            self.done = True
            return
        except OSError as e:
            self.err(f"{shown}: {message(e)}")
            return
        cfg = self.cfg
        label = shown.encode("utf-8", "surrogateescape")
        if cfg.quiet:
            return
        if cfg.count:
            if self.show_names:
                self.out.write(label + (b"\0" if cfg.null else b":"))
            self.out.write(b"%d\n" % count)
        if cfg.list == "l" and count or cfg.list == "L" and not count:
            self.out.write(label + (b"\0" if cfg.null else b"\n"))

    def scan(self, chunks, shown: str) -> int:
        """Search one input; returns the number of selected lines."""
        cfg = self.cfg
        sep = self.sep
        search = self.search
        block_search = self.block_search
        invert = cfg.invert
        quiet = cfg.quiet
        summary = bool(cfg.count or cfg.list)
        context = cfg.after or cfg.before
        max_count = cfg.max
        binary_checked = cfg.binary == "text"
        binary = False
        count = 0
        lineno = 0
        offset = 0
        label = shown.encode("utf-8", "surrogateescape")
        name_prefix = label + (b"\0" if cfg.null else b":") if self.show_names else b""
        name_ctx = label + (b"\0" if cfg.null else b"-") if self.show_names else b""
        out = self.out
        before: deque = deque(maxlen=cfg.before or 1)
        after_left = 0
        last_printed = 0
        stopping = False
        if max_count == 0:
            return 0
        for block in blocks(chunks, sep):
            if not binary_checked:
                binary_checked = True
                if b"\0" in block and not cfg.zdata:
                    binary = True
                    if cfg.binary == "without-match":
                        return 0
            if not invert and block_search is not None and not context \
                    and block_search(block) is None:
                if cfg.number:
                    lineno += block.count(sep)
                offset += len(block)
                continue
            parts = block.split(sep)
            tail = parts.pop()
            if tail:
                parts.append(tail)
            for line in parts:
                lineno += 1
                if stopping:
                    if not after_left:
                        return count
                    self._emit(line, lineno, offset, name_ctx, b"-")
                    after_left -= 1
                    offset += len(line) + 1
                    continue
                hit = (search(line) is not None) != invert
                if not hit:
                    if after_left and not summary and not quiet and not binary:
                        self._emit(line, lineno, offset, name_ctx, b"-")
                        last_printed = lineno
                        after_left -= 1
                    elif cfg.before:
                        before.append((line, lineno, offset))
                    offset += len(line) + 1
                    continue
                count += 1
                self.matched = True
                if quiet:
                    raise _Stop()
                if binary and not summary:
                    out.flush()
                    self.sh.write_err(f"grep: {shown}: binary file matches\n")
                    return count
                if cfg.list == "l" and not cfg.count:
                    return count
                if not summary:
                    if context:
                        first = before[0][1] if before and cfg.before else lineno
                        if last_printed and first > last_printed + 1 and self.cfg.group:
                            out.write(self.cfg.group + b"\n")
                        if cfg.before:
                            for bline, bno, boff in before:
                                if bno > last_printed:
                                    self._emit(bline, bno, boff, name_ctx, b"-")
                            before.clear()
                        after_left = cfg.after
                        last_printed = lineno
                    if cfg.only and not invert:
                        self._only(line, lineno, offset, name_prefix)
                    elif not cfg.only:
                        self._emit(line, lineno, offset, name_prefix, b":")
                offset += len(line) + 1
                if max_count > 0 and count >= max_count:
                    if not after_left or summary:
                        return count
                    stopping = True
        return count

    def scan_whole(self, data: bytes, shown: str) -> int:
        """`scan` of an input held whole, for the usual options (`whole`): the block pattern
        runs over all of it, and only the lines its matches fall in are cut out and, when a
        match spans lines (`[^a]` takes a newline), checked alone. Line numbers are counted
        between matches, not line by line."""
        cfg = self.cfg
        if not data or cfg.max == 0:
            return 0
        binary = cfg.binary != "text" and b"\0" in data
        if binary and cfg.binary == "without-match":
            return 0
        locate = self.locate
        span = locate(data, 0)
        if span is None:
            return 0
        search = self.search
        summary = bool(cfg.count or cfg.list)
        name_prefix = b""
        if self.show_names:
            name_prefix = shown.encode("utf-8", "surrogateescape") + (b"\0" if cfg.null else b":")
        end = len(data)
        count = 0
        lineno = 1
        counted = 0  # newlines before `counted` are in lineno
        while span is not None:
            first, last = span
            start = data.rfind(b"\n", 0, first) + 1
            if start == end:  # the empty place after the last newline is no line
                break
            stop = data.find(b"\n", first)
            if stop < 0:
                stop = end
            if last <= stop or search(data[start:stop]) is not None:
                count += 1
                self.matched = True
                if cfg.quiet:
                    raise _Stop()
                if binary and not summary:
                    self.out.flush()
                    self.sh.write_err(f"grep: {shown}: binary file matches\n")
                    return count
                if cfg.list == "l" and not cfg.count:
                    return count
                if not summary:
                    if cfg.number:
                        lineno += data.count(b"\n", counted, start)
                        counted = start
                    self._emit(data[start:stop], lineno, start, name_prefix, b":")
                if 0 < cfg.max <= count:
                    return count
            if stop >= end:
                break
            span = locate(data, stop + 1)
        return count

    def _emit(self, line: bytes, lineno: int, offset: int, name: bytes, mark: bytes) -> None:
        cfg = self.cfg
        parts = [name] if name else []
        if cfg.number:
            parts.append(b"%d" % lineno + mark)
        if cfg.byte:
            parts.append(b"%d" % offset + mark)
        if cfg.tab and parts:
            parts.append(b"\t")
        parts.append(line)
        parts.append(self.sep)
        self.out.write(b"".join(parts))

    def _only(self, line: bytes, lineno: int, offset: int, name: bytes) -> None:
        cfg = self.cfg
        for rx in self.finders:
            for m in rx.finditer(line):
                if m.end() == m.start():
                    continue
                parts = [name] if name else []
                if cfg.number:
                    parts.append(b"%d:" % lineno)
                if cfg.byte:
                    parts.append(b"%d:" % (offset + m.start()))
                parts.append(m.group())
                parts.append(self.sep)
                self.out.write(b"".join(parts))


def egrep(sh: ToolContext, argv: list[str]) -> int:
    return grep(sh, ["grep", "-E", *argv[1:]])


def fgrep(sh: ToolContext, argv: list[str]) -> int:
    return grep(sh, ["grep", "-F", *argv[1:]])
