"""patch on VFS files, as GNU patch applies unified diffs (those `diff -u` and `git diff`
write), context diffs (`diff -c`: rejects in their format), normal diffs and ed scripts (`diff`,
`diff -e`: with a file operand only, as GNU; an ed script run as GNU's `ed -` runs it): -p N, -R, --dry-run, -i FILE, standard input, an explicit file operand, -d DIR, -N, -f,
-t, -s, -o FILE (or -), -r FILE (or -), -E, -F N, -l, -b with -z/-B, -u and --binary (no-ops);
offsets and fuzz (up to 2 lines, or -F's) with GNU's messages, backups (`.orig`) when a hunk did not match exactly,
rejects (`.rej`), file creation and deletion, the reversed-patch check answered "no" as GNU
patch does without a terminal. Statuses: 0 applied, 1 hunks failed, 2 trouble.
Without -p a name is reduced to its last component (GNU's default), except in git diffs (-p1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.textio import Output, message, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_HUNK = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_CONTEXT_OLD = re.compile(rb"\*\*\* (\d+)(?:,(\d+))? \*\*\*\*\n?$")
_CONTEXT_NEW = re.compile(rb"--- (\d+)(?:,(\d+))? ----\n?$")
_NORMAL = re.compile(rb"(\d+)(?:,(\d+))?([acd])(\d+)(?:,(\d+))?\n?$")
_ED = re.compile(rb"(?:(\d+)(,\d+)?)?([acdi])[ \t]*\n$|s/\.//[ \t]*\n$")  # GNU's get_ed_command_letter
_LONG = {"strip": ("p", REQUIRED), "reverse": ("R", NONE), "dry-run": ("dry-run", NONE),
         "input": ("i", REQUIRED), "no-backup-if-mismatch": ("nobackup", NONE), "backup": ("b", NONE),
         "directory": ("d", REQUIRED), "forward": ("N", NONE), "silent": ("s", NONE), "quiet": ("s", NONE),
         "force": ("f", NONE), "batch": ("t", NONE), "output": ("o", REQUIRED), "reject-file": ("r", REQUIRED),
         "remove-empty-files": ("E", NONE), "fuzz": ("F", REQUIRED), "ignore-whitespace": ("l", NONE),
         "suffix": ("z", REQUIRED), "prefix": ("B", REQUIRED), "unified": ("u", NONE), "binary": ("binary", NONE),
         "backup-if-mismatch": ("backup-if-mismatch", NONE), "context": ("c", NONE), "normal": ("n", NONE),
         "ed": ("e", NONE), "version-control": ("V", REQUIRED), "ifdef": ("D", REQUIRED),
         "merge": ("merge", OPTIONAL)}
# -V's methods (and $PATCH_VERSION_CONTROL's, $VERSION_CONTROL's), as GNU patch 2.7 takes them:
# `none` makes numbered backups there too
_METHODS = {"none": "numbered", "off": "numbered", "simple": "simple", "never": "simple",
            "existing": "existing", "nil": "existing", "numbered": "numbered", "t": "numbered"}
_METHODS_HELP = ("Valid arguments are:\n  - 'none', 'off'\n  - 'simple', 'never'\n  - 'existing', 'nil'\n"
                 "  - 'numbered', 't'")


@dataclass
class Hunk:
    old_start: int
    new_start: int
    lines: list[tuple[bytes, bytes]]  # (tag, text with its terminator)
    raw: list[bytes]
    changed: list[bool] | None = None  # a context diff's `!` lines (per line), for its rejects
    function: bytes = b""  # what follows `***************` (diff -p)

    def gnu_first(self, reverse: bool) -> int:
        """GNU's pch_first: the old side's first line, or the line an insertion goes before."""
        old, _, first, _ = self.sides(reverse)
        return first if old else first + 1

    def gnu_newfirst(self, reverse: bool) -> int:
        _, new, _, first = self.sides(reverse)
        return first if new else first + 1

    def sides(self, reverse: bool) -> tuple[list[bytes], list[bytes], int, int]:
        old = [t for tag, t in self.lines if tag in b" -"]
        new = [t for tag, t in self.lines if tag in b" +"]
        if reverse:
            return new, old, self.new_start, self.old_start
        return old, new, self.old_start, self.new_start

    def context(self) -> tuple[int, int]:
        pre = 0
        while pre < len(self.lines) and self.lines[pre][0] == b" ":
            pre += 1
        suf = 0
        while suf < len(self.lines) - pre and self.lines[-1 - suf][0] == b" ":
            suf += 1
        return pre, suf


@dataclass
class FilePatch:
    old: str | None = None
    new: str | None = None
    git: bool = False
    header: list[bytes] = field(default_factory=list)
    header_line: int = 0
    hunks: list[Hunk] = field(default_factory=list)
    diff_lines: list[bytes] = field(default_factory=list)
    absent: tuple[bool, bool] = (False, False)
    kind: str = "unified"  # or "context", "normal"


def _name(line: bytes) -> str | None:
    """The file name of a `---`/`+++` line: None for /dev/null."""
    text = line[4:].rstrip(b"\n").decode("utf-8", "surrogateescape")
    text, _, when = text.partition("\t")
    if text.startswith('"') and text.endswith('"'):
        text = text[1:-1]
    return None if text == "/dev/null" else text


def _absent(line: bytes) -> bool:
    """Whether a `---`/`+++` line names no file: /dev/null, or the epoch's time stamp that
    diff -N writes for a file that does not exist."""
    text = line[4:].rstrip(b"\n").decode("utf-8", "surrogateescape")
    name, _, when = text.partition("\t")
    return name == "/dev/null" or _epoch(when)


def _epoch(when: str) -> bool:
    m = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.\d+)? ([+-]\d{4})$", when.strip())
    if not m:
        return False
    try:
        return datetime.strptime(f"{m.group(1)} {m.group(2)}", "%Y-%m-%d %H:%M:%S %z").timestamp() == 0
    except ValueError:
        return False


def parse_patch(data: bytes) -> list[FilePatch]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    lines = [x + b"\n" for x in lines]
    if data and not data.endswith(b"\n"):
        lines[-1] = lines[-1][:-1]
    out: list[FilePatch] = []
    pending: list[bytes] = []
    git = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(b"diff --git "):
            pending = []
            git = True
        if line.startswith(b"--- ") and i + 1 < len(lines) and lines[i + 1].startswith(b"+++ ") \
                and i + 2 < len(lines) and lines[i + 2].startswith(b"@@ "):
            fp = FilePatch(_name(line), _name(lines[i + 1]), git, pending + [line, lines[i + 1]], i + 3,
                           diff_lines=[line, lines[i + 1]], absent=(_absent(line), _absent(lines[i + 1])))
            git = False
            pending = []
            i += 2
            while i < len(lines) and lines[i].startswith(b"@@ "):
                m = _HUNK.match(lines[i])
                if not m:
                    break
                o_start = int(m.group(1))
                o_len = int(m.group(2)) if m.group(2) is not None else 1
                n_start = int(m.group(3))
                n_len = int(m.group(4)) if m.group(4) is not None else 1
                raw = [lines[i]]
                i += 1
                hl: list[tuple[bytes, bytes]] = []
                o = n = 0
                while i < len(lines) and (o < o_len or n < n_len):
                    text = lines[i]
                    tag = text[:1]
                    if text in (b"\n", b""):
                        tag, text = b" ", b" \n"
                    if tag == b" ":
                        o += 1
                        n += 1
                    elif tag == b"-":
                        o += 1
                    elif tag == b"+":
                        n += 1
                    elif tag == b"\\":
                        if hl:
                            hl[-1] = (hl[-1][0], hl[-1][1].rstrip(b"\n"))
                        raw.append(lines[i])
                        i += 1
                        continue
                    else:
                        break
                    hl.append((tag, text[1:] if text.endswith(b"\n") else text[1:] + b"\n"))
                    raw.append(lines[i])
                    i += 1
                while i < len(lines) and lines[i].startswith(b"\\"):
                    if hl:
                        hl[-1] = (hl[-1][0], hl[-1][1].rstrip(b"\n"))
                    raw.append(lines[i])
                    i += 1
                fp.hunks.append(Hunk(o_start, n_start, hl, raw))
            out.append(fp)
            continue
        if line.startswith(b"*** ") and i + 2 < len(lines) and lines[i + 1].startswith(b"--- ") \
                and lines[i + 2].startswith(b"***************"):
            fp = FilePatch(_name(line), _name(lines[i + 1]), git, pending + [line, lines[i + 1]], i + 3,
                           diff_lines=[line, lines[i + 1]], absent=(_absent(line), _absent(lines[i + 1])),
                           kind="context")
            git = False
            pending = []
            i = _context_hunks(lines, i + 2, fp)
            out.append(fp)
            continue
        if _NORMAL.match(line) and i + 1 < len(lines) and lines[i + 1][:2] in (b"< ", b"> "):
            fp = FilePatch(header=pending, header_line=i + 1, kind="normal")
            pending = []
            i = _normal_hunks(lines, i, fp)
            out.append(fp)
            continue
        pending.append(line)
        i += 1
    return out


def _no_newline(side: list[tuple[bytes, bytes]], lines: list[bytes], i: int) -> int:
    """A `\\ No newline at end of file` line after a hunk line: that line loses its newline."""
    while i < len(lines) and lines[i].startswith(b"\\"):
        if side:
            side[-1] = (side[-1][0], side[-1][1].rstrip(b"\n"))
        i += 1
    return i


def _context_hunks(lines: list[bytes], i: int, fp: FilePatch) -> int:
    """The hunks of a context diff (`***************`, `*** a,b ****` and its lines, `--- c,d ----`
    and its lines), as unified lines; a side diff left out (only context there) is the other
    side's context, as GNU fills it in. Returns the index after the last hunk."""
    while i < len(lines) and lines[i].startswith(b"***************"):
        start = i
        function = lines[i][15:].rstrip(b"\n")
        m = _CONTEXT_OLD.match(lines[i + 1]) if i + 1 < len(lines) else None
        if not m:
            break
        i += 2
        old: list[tuple[bytes, bytes]] = []
        while i < len(lines) and not _CONTEXT_NEW.match(lines[i]):
            text = lines[i]
            if text.startswith(b"\\"):
                i = _no_newline(old, lines, i)
                continue
            if text in (b"\n", b""):
                text = b"  \n"
            if text[:2] not in (b"  ", b"- ", b"! "):
                break
            old.append((text[:1], text[2:] if text.endswith(b"\n") else text[2:] + b"\n"))
            i += 1
        n = _CONTEXT_NEW.match(lines[i]) if i < len(lines) else None
        if not n:
            break
        i += 1
        new: list[tuple[bytes, bytes]] = []
        while i < len(lines):
            text = lines[i]
            if text.startswith(b"\\"):
                i = _no_newline(new, lines, i)
                continue
            if text == b"\n" and i + 1 < len(lines) and lines[i + 1][:2] in (b"  ", b"+ ", b"! "):
                text = b"  \n"
            if text[:2] not in (b"  ", b"+ ", b"! "):
                break
            new.append((text[:1], text[2:] if text.endswith(b"\n") else text[2:] + b"\n"))
            i += 1
        o_start, n_start = int(m.group(1)), int(n.group(1))
        if not old:  # left out (nothing but context on this side), or truly empty (no context)
            old = [(b" ", t) for c, t in new if c == b" "]
        if not new:
            new = [(b" ", t) for c, t in old if c == b" "]
        merged, changed = _merge_sides(old, new)
        fp.hunks.append(Hunk(o_start, n_start, merged, lines[start:i], changed, function))
    return i


def _merge_sides(old: list[tuple[bytes, bytes]], new: list[tuple[bytes, bytes]]
                 ) -> tuple[list[tuple[bytes, bytes]], list[bool]]:
    """A context hunk's two sides as one unified list: context lines paired, `-` and `+` where
    they stand, each run of `!` lines as its old lines then its new ones."""
    out: list[tuple[bytes, bytes]] = []
    changed: list[bool] = []
    i = j = 0
    while i < len(old) or j < len(new):
        if i < len(old) and old[i][0] == b"-":
            out.append((b"-", old[i][1]))
            changed.append(False)
            i += 1
        elif j < len(new) and new[j][0] == b"+":
            out.append((b"+", new[j][1]))
            changed.append(False)
            j += 1
        elif (i < len(old) and old[i][0] == b"!") or (j < len(new) and new[j][0] == b"!"):
            while i < len(old) and old[i][0] == b"!":
                out.append((b"-", old[i][1]))
                changed.append(True)
                i += 1
            while j < len(new) and new[j][0] == b"!":
                out.append((b"+", new[j][1]))
                changed.append(True)
                j += 1
        elif i < len(old) and j < len(new):
            out.append((b" ", old[i][1]))
            changed.append(False)
            i += 1
            j += 1
        else:  # a side with context lines the other lacks: mangled; keep what there is
            rest = old[i:] if i < len(old) else new[j:]
            out.extend((b"-" if i < len(old) else b"+", t) for _, t in rest)
            changed.extend(False for _ in rest)
            break
    return out, changed


def _normal_hunks(lines: list[bytes], i: int, fp: FilePatch) -> int:
    """The hunks of a normal diff (`2a3`, `5c6`, `8d7` with `<` and `>` lines) as unified lines
    (an insertion's old start is the line it follows, as `@@ -2,0`)."""
    while i < len(lines):
        m = _NORMAL.match(lines[i])
        if not m:
            break
        start = i
        o1, o2 = int(m.group(1)), int(m.group(2) or m.group(1))
        kind = m.group(3)
        n1, n2 = int(m.group(4)), int(m.group(5) or m.group(4))
        i += 1
        side: list[tuple[bytes, bytes]] = []
        if kind in b"cd":
            for _ in range(o2 - o1 + 1):
                if i >= len(lines) or not lines[i].startswith(b"< "):
                    break
                text = lines[i][2:]
                side.append((b"-", text if text.endswith(b"\n") else text + b"\n"))
                i = _no_newline(side, lines, i + 1)
        if kind == b"c":
            if i >= len(lines) or lines[i].rstrip(b"\n") != b"---":
                break
            i += 1
        if kind in b"ca":
            for _ in range(n2 - n1 + 1):
                if i >= len(lines) or not lines[i].startswith(b"> "):
                    break
                text = lines[i][2:]
                side.append((b"+", text if text.endswith(b"\n") else text + b"\n"))
                i = _no_newline(side, lines, i + 1)
        fp.hunks.append(Hunk(o1, n1, side, lines[start:i]))
    return i


def parse_ed(data: bytes) -> list[tuple[bytes, list[bytes]]] | None:
    """An ed script as GNU patch reads one (do_ed_script): from the first line that is one of
    the commands diff -e writes (`Na`, `Ni`, `N,Mc`, `N,Md`, `s/.//`), each command with its
    text up to `.`, until a line that is none; None when there is no command."""
    lines = _split(data)
    i = next((k for k, line in enumerate(lines) if _ED.match(line)), None)
    if i is None:
        return None
    script: list[tuple[bytes, list[bytes]]] = []
    while i < len(lines) and _ED.match(lines[i]):
        command = lines[i]
        i += 1
        text: list[bytes] = []
        if _ED.match(command).group(3) in (b"a", b"c", b"i"):
            while i < len(lines) and lines[i] != b".\n":
                text.append(lines[i])
                i += 1
            i += 1
        script.append((command, text))
    return script


class EdError(Exception):
    """A command GNU ed refuses (an address out of range): ed prints `?` and exits."""


def run_ed(data: bytes, script: list[tuple[bytes, list[bytes]]]) -> tuple[bytes, bool]:
    """The file `data` after the ed script, as `ed -` edits it, and whether ed appended a
    newline to a last line without one (it says `Newline appended`)."""
    buf = _split(data)
    appended = bool(buf) and not buf[-1].endswith(b"\n")
    if appended:
        buf[-1] += b"\n"
    cur = len(buf)
    for command, text in script:
        m = _ED.match(command)
        letter = m.group(3)
        if letter is None:  # s/.//: the current line's first character goes
            if cur < 1 or buf[cur - 1] == b"\n":
                raise EdError
            buf[cur - 1] = buf[cur - 1][1:]
            continue
        first = int(m.group(1)) if m.group(1) else cur
        last = int(m.group(2)[1:]) if m.group(2) else first
        if last > len(buf) or first > last or (letter in b"cd" and first < 1):
            raise EdError
        if letter == b"a":
            buf[first:first] = text
            cur = first + len(text)
        elif letter == b"i":
            at = max(first - 1, 0)
            buf[at:at] = text
            cur = at + len(text) if text else min(max(first, 1), len(buf))
        else:
            buf[first - 1 : last] = text if letter == b"c" else []
            cur = first - 1 + len(text) if text else min(first, len(buf))
    return b"".join(buf), appended


def _split(data: bytes) -> list[bytes]:
    if not data:
        return []
    parts = data.split(b"\n")
    last = parts.pop()
    out = [p + b"\n" for p in parts]
    if last:
        out.append(last)
    return out


def _match_lines(lines: list[bytes], at: int, pat: list[bytes], pre: int, suf: int, loose: bool = False) -> bool:
    if at < 0 or at + len(pat) > len(lines):
        return False
    if loose:  # -l: a run of blanks matches any other run, trailing blanks are ignored (GNU's similar())
        return all(_blanks(lines[at + k]) == _blanks(pat[k]) for k in range(pre, len(pat) - suf))
    return all(lines[at + k] == pat[k] for k in range(pre, len(pat) - suf))


def _blanks(line: bytes) -> bytes:
    return re.sub(rb"[ \t]+", b" ", line.rstrip(b"\n").rstrip(b" \t"))


def _locate(lines: list[bytes], hunk: Hunk, reverse: bool, fuzz: int, offset: int, low: int = 0,
            loose: bool = False) -> int | None:
    """Where the hunk's old side starts (0-based), GNU's locate_hunk: None when not found.
    `offset` moves the hunk's own line number; nothing before `low` (what earlier hunks wrote)
    is matched."""
    def _match(lines: list[bytes], at: int, pat: list[bytes], pre: int, suf: int) -> bool:
        return _match_lines(lines, at, pat, pre, suf, loose)

    old, _, first, _ = hunk.sides(reverse)
    pre_ctx, suf_ctx = hunk.context()
    context = max(pre_ctx, suf_ctx)
    pre_fuzz = fuzz + pre_ctx - context
    suf_fuzz = fuzz + suf_ctx - context
    guess = (first - 1 if old else first) + offset
    n = len(lines)
    if pre_fuzz < 0 and first <= 1:
        if suf_fuzz < 0 and len(old) != n:
            return None
        return 0 if low == 0 and _match(lines, 0, old, 0, max(suf_fuzz, 0)) else None
    pre_fuzz = max(pre_fuzz, 0)
    if suf_fuzz < 0:
        at = n - len(old)
        return at if at >= low and _match(lines, at, old, pre_fuzz, 0) else None
    if guess < low:
        guess = low
    if _match(lines, guess, old, pre_fuzz, suf_fuzz):
        return guess
    k = 1
    while True:
        after = guess + k <= n - len(old)
        before = guess - k >= low
        if after and _match(lines, guess + k, old, pre_fuzz, suf_fuzz):
            return guess + k
        if before and _match(lines, guess - k, old, pre_fuzz, suf_fuzz):
            return guess - k
        if not after and not before:
            return None
        k += 1


class _Patcher:
    def __init__(self, sh: ToolContext, out: Output, strip: int | None, reverse: bool, dry: bool,
                 backup: bool) -> None:
        self.sh = sh
        self.out = out
        self.strip = strip
        self.reverse = reverse
        self.dry = dry
        self.backup = backup
        self.always = False
        self.directory: str | None = None
        self.forward = False
        self.force = ""  # "f" (never reversed), "t" (reversed when it looks so), "" (ask: no)
        self.silent = False
        self.output: str | None = None
        self.reject: str | None = None  # "-": none
        self.remove_empty = False
        self.fuzz = 2
        self.loose = False
        self.suffix = ".orig"
        self.prefix = ""
        self.method = "simple"  # -V: how backups are named (simple, numbered, existing)
        self.ifdef: str | None = None  # -D NAME: both versions kept, under #ifdef NAME
        self.merge: str | None = None  # --merge: a hunk that fails is merged ("merge" or "diff3" markers)
        self.shown_offset = 0  # merge_hunk's: GNU's out_offset after the hunk

    def at(self, path: str) -> str:
        """A path as seen from -d's directory."""
        if self.directory is None or path.startswith("/") or path == "-":
            return path
        return self.directory.rstrip("/") + "/" + path

    def say(self, text: str, always: bool = False) -> None:
        if self.silent and not always:
            return
        if self.output == "-":  # the patched text has standard output
            self.sh.write_err(text)
            return
        self.out.write(text.encode("utf-8", "surrogateescape"))

    def stripped(self, name: str | None, git: bool) -> str | None:
        if name is None:
            return None
        strip = self.strip if self.strip is not None else (1 if git else None)
        if strip is None:
            return name.rsplit("/", 1)[-1]
        parts = name.split("/")
        if strip == 0:
            return name
        while parts and parts[0] == "" and strip:
            parts.pop(0)
        if len(parts) <= strip:
            return None
        return "/".join(parts[strip:])

    def rej_name(self, target: str) -> str | None:
        return None if self.reject == "-" else self.reject or target + ".rej"

    def apply(self, fp: FilePatch, explicit: str | None, turned: bool = False) -> int:
        old, new = fp.old, fp.new
        gone_old, gone_new = fp.absent[::-1] if self.reverse else fp.absent
        creating = gone_old and all(not h.sides(self.reverse)[0] and h.sides(self.reverse)[2] == 0 for h in fp.hunks)
        deleting = gone_new and all(not h.sides(self.reverse)[1] and h.sides(self.reverse)[3] == 0 for h in fp.hunks)
        nhunks = len(fp.hunks)
        plural = "hunk" if nhunks == 1 else "hunks"
        if explicit is not None:
            target = explicit
        else:
            cands = [self.stripped(n, fp.git) for n in (old, new) if n is not None]
            target = next((c for c in cands if c is not None and self.sh.fs.exists(self.at(c))), None)
            if target is None and (creating or deleting):
                order = cands[::-1] if creating else cands
                target = next((c for c in order if c is not None), None)
            if target is None:
                if self.strip is not None:
                    hint = "Perhaps you used the wrong -p or --strip option?"
                else:
                    hint = "Perhaps you should have used the -p or --strip option?"
                lines = "".join("|" + h.decode("utf-8", "surrogateescape") for h in fp.header)
                self.say(
                    f"can't find file to patch at input line {fp.header_line}\n{hint}\n"
                    f"The text leading up to this was:\n--------------------------\n{lines}"
                    f"--------------------------\nFile to patch: \nSkip this patch? [y] \n"
                    f"Skipping patch.\n{nhunks} out of {nhunks} {plural} ignored\n"
                )
                return 1
        exists = self.sh.fs.exists(self.at(target))
        if creating and exists and self.sh.fs.stat(self.at(target)).size > 0:
            self.say(
                f"The next patch would create the file {target},\nwhich already exists!  Assume -R? [n] \n"
                f"Apply anyway? [n] \nSkipping patch.\n{nhunks} out of {nhunks} {plural} ignored\n"
            )
            return 1
        if deleting and not exists:
            self.say(
                f"The next patch would delete the file {target},\nwhich does not exist!  Assume -R? [n] \n"
                f"Apply anyway? [n] \nSkipping patch.\n{nhunks} out of {nhunks} {plural} ignored\n"
            )
            return 1
        shown = target if self.output is None else f"{self.output} (read from {target})"
        if not turned:
            self.say(f"{'checking' if self.dry else 'patching'} file {shown}\n")
        try:
            data = read_all(self.sh, self.at(target)) if exists else b""
        except OSError as e:
            raise Fail(f"**** Can't open file {target} : {message(e)}", 2) from None
        lines = _split(data)
        offset = 0
        delta = 0
        low = 0
        failed: list[tuple[Hunk, int]] = []  # with GNU's out_offset when it failed
        mismatch = False
        merged_badly = False  # --merge left conflict markers
        shown_offset = 0  # GNU's out_offset under --merge, which counts added lines only (its reports use it)
        for number, hunk in enumerate(fp.hunks, 1):
            where = None
            fuzz = 0
            pre_ctx, suf_ctx = hunk.context()
            maxfuzz = 0 if self.merge is not None else min(self.fuzz, max(pre_ctx, suf_ctx))  # GNU merges instead
            while True:
                where = _locate(lines, hunk, self.reverse, fuzz, offset + delta, low, self.loose)
                if where is None and number == 1 and self.force != "f" and self.merge is None and \
                        _locate(lines, hunk, not self.reverse, fuzz, offset + delta, low, self.loose) is not None:
                    detected = "Unreversed patch detected!" if self.reverse \
                        else "Reversed (or previously applied) patch detected!"
                    if self.force == "t" and not self.forward:
                        self.say(f"{detected}  {'Ignoring' if self.reverse else 'Assuming'} -R.\n")
                        self.reverse = not self.reverse
                        try:
                            return self.apply(fp, explicit, turned=True)
                        finally:
                            self.reverse = not self.reverse
                    rej = self.rej_name(target)
                    saving = "" if self.dry or rej is None else f" -- saving rejects to file {rej}"
                    if self.forward:
                        self.say(f"{detected}  Skipping patch.\n{nhunks} out of {nhunks} {plural} ignored{saving}\n")
                    else:
                        what = "Ignore -R? [n] " if self.reverse else "Assume -R? [n] "
                        self.say(f"{detected}  {what}\nApply anyway? [n] \nSkipping patch.\n"
                                 f"{nhunks} out of {nhunks} {plural} ignored{saving}\n")
                    if not self.dry:
                        self.write_rej(target, fp, [(h, 0) for h in fp.hunks])
                    return 1
                if where is not None or fuzz >= maxfuzz:
                    break
                fuzz += 1
            old_side, new_side, first, new_first = hunk.sides(self.reverse)
            if where is None and self.merge is not None:
                mismatch = True
                at = self.merge_at(hunk, lines, first + offset, low - delta, len(_split(data)), delta)
                region, said, conflicts = self.merge_hunk(number, hunk, lines, at, delta, shown_offset)
                shown_offset = self.shown_offset
                start = at[0] - 1 + delta
                lines[start : start + at[1]] = region
                delta += len(region) - at[1]
                low = start + len(region)
                merged_badly = merged_badly or conflicts
                if said:
                    self.say(said)
                continue
            if where is None:
                failed.append((hunk, delta))
                mismatch = True
                self.say(f"Hunk #{number} FAILED at {hunk.gnu_first(self.reverse) + delta}.\n")
                continue
            offset = where - delta - (first - 1 if old_side else first)
            if (fuzz or offset) and self.merge is not None:
                mismatch = True  # GNU says nothing of it under --merge
            elif fuzz or offset:
                mismatch = True
                text = f"Hunk #{number} succeeded at {where + 1}"  # GNU's where + out_offset
                if fuzz:
                    text += f" with fuzz {fuzz}"
                if offset:
                    text += f" (offset {offset} line{'' if abs(offset) == 1 else 's'})"
                self.say(text + ".\n")
            # keep the file's own lines where fuzz ignored context
            pre_f, suf_f = _fuzz_split(hunk, fuzz)
            repl = list(new_side) if self.ifdef is None else self.ifdef_lines(hunk, lines, where)
            if self.loose:  # context lines are the file's, as GNU copies them from its input
                o = n = 0
                for tag, _ in hunk.lines:
                    if tag == b" ":
                        repl[n] = lines[where + o]
                    o += tag in (b" ", b"+" if self.reverse else b"-")
                    n += tag in (b" ", b"-" if self.reverse else b"+")
            if pre_f:
                repl[:pre_f] = lines[where : where + pre_f]
            if suf_f:
                repl[len(repl) - suf_f :] = lines[where + len(old_side) - suf_f : where + len(old_side)]
            lines[where : where + len(old_side)] = repl
            shown_offset += sum(tag == (b"-" if self.reverse else b"+") for tag, _ in hunk.lines)
            delta += len(repl) - len(old_side)
            low = where + len(repl)
        if failed:
            rej = self.rej_name(target)
            saving = "" if self.dry or rej is None else f" -- saving rejects to file {rej}"
            self.say(f"{len(failed)} out of {nhunks} {plural} FAILED{saving}\n", always=True)
        if self.dry:
            return 1 if failed or merged_badly else 0
        result = b"".join(lines)
        fs = self.sh.fs
        path = self.at(target)
        try:
            if self.output is not None:
                if self.output == "-":
                    self.out.write(result)
                else:
                    fs.write_file(self.at(self.output), result)
            else:
                if (self.always or (mismatch or turned) and self.backup) and exists:
                    backup = self.at(self.backup_name(target))
                    if "/" in backup:
                        fs.mkdir(backup.rsplit("/", 1)[0], parents=True)
                    fs.write_file(backup, data)
                if (deleting or self.remove_empty) and not result:
                    fs.unlink(path)
                else:
                    if not exists and "/" in path:
                        fs.mkdir(path.rsplit("/", 1)[0], parents=True)
                    fs.write_file(path, result)
            if failed:
                self.write_rej(target, fp, failed)
        except OSError as e:
            raise Fail(f"**** Can't create file {target} : {message(e)}", 2) from None
        return 1 if failed or merged_badly else 0

    def merge_at(self, hunk: Hunk, lines: list[bytes], first_guess: int, frozen: int, input_lines: int,
                 delta: int) -> tuple[int, int]:
        """GNU patch's locate_merge: where (an input line, 1-based) a hunk that does not apply
        matches the file best, closest to where it was expected, and how many of the file's
        lines it spans there; at most its context lines may be replaced."""
        tags = [tag for tag, _ in hunk.lines if tag in (b" ", b"+" if self.reverse else b"-")]
        pattern = [text for tag, text in hunk.lines if tag in (b" ", b"+" if self.reverse else b"-")]
        pat_lines = len(pattern)
        context_lines = tags.count(b" ")
        max_where = input_lines - pat_lines + context_lines + 1
        min_where = frozen + 1
        max_pos, max_neg = max_where - first_guess, first_guess - min_where
        max_offset = max(max_pos, max_neg)
        where, max_matched = first_guess, 0

        def equal(x: int, y: int) -> bool:  # pattern line x and input line y, both 1-based
            return 1 <= y <= input_lines and pattern[x - 1] == lines[y - 1 + delta]

        if context_lines:
            most, least = 2 * context_lines, pat_lines - context_lines
            pre, suf = hunk.context()
            if suf - pre > 0 and hunk.gnu_first(self.reverse) <= 1:
                max_pos = 0
            until_eof = suf - pre < 0
            if first_guess <= max_neg:
                max_neg = first_guess - 1
            for off in range(max_offset + 1):
                for guess in ([first_guess + off] if off <= max_pos else []) + \
                        ([first_guess - off] if 0 < off <= max_neg else []):
                    changes, last = _bestmatch(equal, 1, pat_lines + 1, guess, input_lines + 1,
                                               input_lines - guess + 1 if until_eof else least, most)
                    if changes <= most and max_matched < last - guess:
                        max_matched, where = last - guess, guess
                        if changes == 0:
                            break
                        least, most = last - guess, changes - 1
                else:
                    continue
                break
        return max(where, min_where), max_matched

    def merge_hunk(self, number: int, hunk: Hunk, lines: list[bytes], at: tuple[int, int], delta: int,
                   shown: int) -> tuple[list[bytes], str, bool]:
        """GNU patch's merge_hunk for a hunk that did not apply: the file's lines `at` and the
        hunk's old lines compared (diff's algorithm); changes the file's side leaves alone are
        made, the others written between conflict markers (`<<<<<<<` the file's, `|||||||` the
        hunk's old lines with --merge=diff3, `=======` its new ones, `>>>>>>>`). Returns the
        region's new lines, GNU's report (`Hunk #1 NOT MERGED at 2-6, merged at 13-14.`) and
        whether a conflict was left. The report's line numbers are GNU's: input lines moved by
        `shown`, its out_offset, which grows by lines added and never shrinks by lines deleted
        (self.shown_offset is what it is after this hunk)."""
        from kshell.tools.data.diff import changed_lines

        removed = b"+" if self.reverse else b"-"
        old = [(b"-" if tag == removed else b" ", text) for tag, text in hunk.lines if tag in (b" ", removed)]
        new = [(b" " if tag == b" " else b"+", text) for tag, text in hunk.lines if tag != removed]
        where, matched = at
        y = lines[where - 1 + delta : where - 1 + delta + matched]
        ot = [tag for tag, _ in old] + [b"="]
        nt = [tag for tag, _ in new] + [b"^"]
        deleted, inserted = changed_lines([text for _, text in old], y)
        xm = [b"-" if c else b" " for c in deleted] + [b"="]
        ym = [b"+" if c else b" " for c in inserted] + [b"^"]
        out: list[bytes] = []
        said: list[str] = []
        last_what: list[str] = []
        conflicts = False

        def result(what: str, start: int, end: int) -> None:
            span = f"{start}" if end <= start else f"{start}-{end}"
            if not said:
                said.append(f"Hunk #{number} {what} at {span}")
            elif last_what[0] == what:  # GNU compares with the first report's word only
                said.append(f",{span}")
            else:
                said.append(f", {what} at {span}")
            last_what.append(what)

        # o, n, i: the next old line, new line and file line of the comparison; w: GNU's
        # `where` (the file line its reports and copies go by), done: the file lines written
        # or skipped (its last_frozen_line); the two part where a hunk was already applied
        o = n = i = w = done = 0

        def copy_to(end: int) -> None:
            nonlocal done
            if end > done:
                out.extend(y[done:end])
                done = end

        def same(k: int, line: bytes) -> bool:
            return 0 <= k < len(y) and y[k] == line

        while True:
            fo, fn, fi = o, n, i
            conflict = False
            if ot[o] == b"-" or nt[n] == b"+":
                while ot[o] == b"-":
                    if xm[o] == b"-" or ym[i] == b"+":
                        conflict = True
                        break
                    if xm[o] == b" ":
                        i += 1
                    o += 1
                if not conflict and (xm[o] == b"-" or ym[i] == b"+"):
                    conflict = True
                if not conflict:
                    while nt[n] == b"+":
                        n += 1
                    pos = where + w + shown
                    result("merged", pos, pos + n - fn - 1)
                    done += o - fo  # the old lines, gone
                    w += o - fo
                    shown += n - fn
                    out.extend(text for _, text in new[fn:n])
                    continue
            elif ot[o] == b" ":
                if xm[o] == b"-":
                    while ot[o] == b" " and xm[o] == b"-":
                        if nt[n] == b"+":
                            conflict = True
                            break
                        o += 1
                        n += 1
                    if not conflict and (ot[o] == b"-" or nt[n] == b"+"):
                        conflict = True
                elif ym[i] == b"+":
                    while ym[i] == b"+":
                        i += 1
                    w += i - fi
                    copy_to(w)
                elif xm[o] == b" ":
                    while ot[o] == b" " and xm[o] == b" " and nt[n] == b" " and ym[i] == b" ":
                        o += 1
                        n += 1
                        i += 1
                    w += i - fi
                    copy_to(w)
                if not conflict:
                    if (o, n, i) == (fo, fn, fi):  # no step made: GNU asserts it never happens
                        raise Fail(f"**** merging hunk #{number} went wrong", 2)
                    continue
            else:
                break
            while True:  # the end of the conflict
                if ot[o] == b"-":
                    while ym[i] == b"+":
                        i += 1
                    if xm[o] == b" ":
                        i += 1
                    o += 1
                elif xm[o] == b"-":
                    while nt[n] == b"+":
                        n += 1
                    if ot[o] == b" ":
                        n += 1
                    o += 1
                elif nt[n] == b"+":
                    while nt[n] == b"+":
                        n += 1
                elif ym[i] == b"+":
                    while ym[i] == b"+":
                        i += 1
                else:
                    break
            prefix = 0  # the new lines the file already has
            while fi + prefix < i and fn + prefix < n and same(w + prefix, new[fn + prefix][1]):
                prefix += 1
            applied = fi + prefix == i and fn + prefix == n
            if applied:
                pos = where + w + shown
                result("already applied", pos, pos + prefix - 1)
            if self.merge == "diff3":
                prefix = 0
            fi, fn = fi + prefix, fn + prefix
            w += prefix
            copy_to(w)
            if applied:
                continue
            suffix = 0
            if self.merge == "merge":
                end = w + (i - fi)
                while fi < i - suffix and fn < n - suffix and same(end - suffix - 1, new[n - suffix - 1][1]):
                    suffix += 1
            i, n = i - suffix, n - suffix
            count = 3 + (i - fi) + (n - fn) + (1 + (o - fo) if self.merge == "diff3" else 0)
            pos = where + w + shown
            result("NOT MERGED", pos, pos + count - 1)
            shown += count - (i - fi)
            out.append(b"<<<<<<<\n")
            w += i - fi
            copy_to(w)
            if self.merge == "diff3":
                out.append(b"|||||||\n")
                out.extend(text for _, text in old[fo:o])
            out.append(b"=======\n")
            out.extend(text for _, text in new[fn:n])
            out.append(b">>>>>>>\n")
            w += suffix
            copy_to(w)
            i, n = i + suffix, n + suffix
            conflicts = True
        out.extend(y[done:])  # the rest of the file's lines, as GNU copies them after
        self.shown_offset = shown
        return out, "".join(said) + ".\n" if said else "", conflicts

    def backup_name(self, target: str) -> str:
        """The backup's name: -B's prefix, or -V's method (numbered `f.~N~` one past the
        highest there, `existing` numbered when one is there, else `f` and the suffix)."""
        if self.prefix:
            return self.prefix + target
        if self.method != "simple":
            folder, _, base = target.rpartition("/")
            numbers = [int(m.group(1)) for name in self.sh.fs.readdir(self.at(folder or "."))
                       if (m := re.fullmatch(re.escape(base) + r"\.~([1-9][0-9]*)~", name))]
            if self.method == "numbered" or numbers:
                return f"{target}.~{max(numbers, default=0) + 1}~"
        return target + self.suffix

    def ifdef_lines(self, hunk: Hunk, lines: list[bytes], where: int) -> list[bytes]:
        """-D NAME: the hunk's span with both versions, as GNU's apply_hunk writes them: lines
        only removed under `#ifndef NAME`, only added under `#ifdef NAME`, changed as
        `#ifndef NAME`, old, `#else`, new, `#endif`; context as the file has it."""
        name = self.ifdef
        removed = b"+" if self.reverse else b"-"
        out: list[bytes] = []
        old: list[bytes] = []
        new: list[bytes] = []

        def flush() -> None:
            if old:
                out.append(f"#ifndef {name}\n".encode())
                out.extend(old)
                if new:
                    out.append(b"#else\n")
            elif new:
                out.append(f"#ifdef {name}\n".encode())
            out.extend(new)
            if old or new:
                out.append(b"#endif\n")
            old.clear()
            new.clear()

        at = where
        for tag, text in hunk.lines:
            if tag == b" ":
                flush()
                out.append(lines[at])
                at += 1
            elif tag == removed:  # a run's old lines come first, whatever the diff's order
                old.append(lines[at])
                at += 1
            else:
                new.append(text)
        flush()
        return out

    def header_line(self, tag: bytes, line: bytes, git: bool) -> bytes:
        """A reject's file line, as GNU's print_header_line: the name as -p left it (or
        /dev/null), then the patch's time stamp."""
        text = line[4:]
        name, tab, when = text.partition(b"\t")
        stripped = self.stripped(_name(line), git)
        shown = b"/dev/null" if stripped is None else stripped.encode("utf-8", "surrogateescape")
        return tag + b" " + shown + tab + when if tab else tag + b" " + shown + b"\n"

    def write_rej(self, target: str, fp: FilePatch, hunks: list[tuple[Hunk, int]]) -> None:
        """The rejected hunks, in the patch's format (context rejects for normal diffs), their
        line numbers moved by what the hunks before them added, as GNU's abort_hunk."""
        rej = self.rej_name(target)
        if rej is None:
            return
        if fp.kind == "unified":
            out = [self.header_line(tag, line, fp.git) for tag, line in zip((b"---", b"+++"), fp.diff_lines)]
            for hunk, delta in hunks:
                out.extend([_unified_header(hunk, delta), *hunk.raw[1:]] if delta else hunk.raw)
        else:
            out = [b"*** /dev/null\n", b"--- /dev/null\n"]
            if fp.kind == "context":
                old, new = fp.diff_lines[::-1] if self.reverse else fp.diff_lines
                out = [self.header_line(b"***", old, fp.git), self.header_line(b"---", new, fp.git)]
            for hunk, delta in hunks:
                out.extend(_context_reject(hunk, delta, self.reverse, fp.kind == "context"))
        self.sh.fs.write_file(self.at(rej), b"".join(out))


def _unified_header(hunk: Hunk, delta: int) -> bytes:
    """A rejected unified hunk's `@@` line (as the patch has it: its lines are copied as they
    are), its starts moved by `delta` (print_unidiff_range)."""
    reverse = False
    old, new, _, _ = hunk.sides(reverse)

    def span(start: int, count: int) -> str:
        return f"{start - 1},0" if count == 0 else str(start) if count == 1 else f"{start},{count}"

    head = hunk.raw[0].rstrip(b"\n")
    tail = head[head.index(b" @@", 3) + 3 :] if b" @@" in head[3:] else b""
    text = f"@@ -{span(hunk.gnu_first(reverse) + delta, len(old))} +{span(hunk.gnu_newfirst(reverse) + delta, len(new))} @@"
    return text.encode() + tail + b"\n"


def _context_reject(hunk: Hunk, delta: int, reverse: bool, context: bool) -> list[bytes]:
    """A rejected hunk in context format, as GNU's abort_hunk_context writes it: both sides
    whole, `!` for a context diff's changed lines, ` ****`/` ----` after the ranges of a
    context diff's and ` -----` after the new range of a normal diff's."""
    old, new, _, _ = hunk.sides(reverse)
    changed = hunk.changed or [False] * len(hunk.lines)
    drop, add = (b"+", b"-") if reverse else (b"-", b"+")
    old_side = [(b"!" if bang else b"-" if tag == drop else b" ", text)
                for (tag, text), bang in zip(hunk.lines, changed) if tag in (b" ", drop)]
    new_side = [(b"!" if bang else b"+" if tag == add else b" ", text)
                for (tag, text), bang in zip(hunk.lines, changed) if tag in (b" ", add)]

    def span(first: int, count: int) -> str:
        last = first + count - 1
        return "0" if last < first else str(first) if last == first else f"{first},{last}"

    stars, minuses = (" ****", " ----") if context else ("", " -----")
    out = [b"***************" + hunk.function + b"\n",
           f"*** {span(hunk.gnu_first(reverse) + delta, len(old))}{stars}\n".encode()]
    out.extend(c + b" " + t for c, t in old_side)
    out.append(f"--- {span(hunk.gnu_newfirst(reverse) + delta, len(new))}{minuses}\n".encode())
    out.extend(c + b" " + t for c, t in new_side)
    return out


def _fuzz_split(hunk: Hunk, fuzz: int) -> tuple[int, int]:
    pre_ctx, suf_ctx = hunk.context()
    context = max(pre_ctx, suf_ctx)
    return max(0, fuzz + pre_ctx - context), max(0, fuzz + suf_ctx - context)


def _ed_patch(p: _Patcher, script: list[tuple[bytes, list[bytes]]], target: str) -> int:
    """An ed script applied as GNU patch applies one: silently, forwards even under -R, not at
    all under --dry-run; ed's `?` (and `Newline appended`) on standard output, then `ed FAILED`
    (status 2) and the file as it was when a command is out of range."""
    if p.dry:
        return 0
    sh, path = p.sh, p.at(target)
    try:
        data = read_all(sh, path) if sh.fs.exists(path) else None
    except OSError as e:
        raise Fail(f"**** Can't open file {target} : {message(e)}", 2) from None
    try:
        result, appended = run_ed(data or b"", script)
    except EdError:
        if data and not data.endswith(b"\n"):
            sh.out(b"Newline appended\n")
        sh.out(b"?\n")
        raise Fail("**** ed FAILED", 2) from None
    if appended:
        sh.out(b"Newline appended\n")
    try:
        if p.output == "-":
            sh.out(result)
        elif p.output is not None:
            sh.fs.write_file(p.at(p.output), result)
        else:
            if p.always and data is not None:
                sh.fs.write_file(p.at(p.prefix + target + (p.suffix if not p.prefix else "")), data)
            sh.fs.write_file(path, result)
    except OSError as e:
        raise Fail(f"**** Can't create file {target} : {message(e)}", 2) from None
    return 0


def _bestmatch(equal, xoff: int, xlim: int, yoff: int, ylim: int, least: int, most: int) -> tuple[int, int]:
    """GNU patch's bestmatch (Myers' greedy search): the fewest insertions and deletions,
    at most `most`, that turn x[xoff:xlim] into a prefix of y[yoff:ylim] matching at least
    `least` elements, and where that prefix ends (most + 1 and -1: none)."""
    fmid = xoff - yoff
    dmin, dmax = xoff - ylim, xlim - yoff
    fmin = fmax = fmid
    ymax = -1
    if least:
        fmid_2min = fmid + 2 * least
        least += yoff
        if least > ylim:
            return most + 1, -1
    else:
        fmid_2min = 0
    while xoff < xlim and yoff < ylim and equal(xoff, yoff):
        xoff += 1
        yoff += 1
    if xoff == xlim and yoff >= least and xoff + yoff >= fmid_2min:
        return 0, yoff
    fd: dict[int, int] = {fmid: xoff}
    for c in range(1, most + 1):
        if fmin > dmin:
            fmin -= 1
            fd[fmin - 1] = -1
        else:
            fmin += 1
        if fmax < dmax:
            fmax += 1
            fd[fmax + 1] = -1
        else:
            fmax -= 1
        for d in range(fmax, fmin - 1, -2):
            x = fd[d + 1] if fd.get(d - 1, -1) < fd.get(d + 1, -1) else fd.get(d - 1, -1) + 1
            y = x - d
            while x < xlim and y < ylim and equal(x, y):
                x += 1
                y += 1
            fd[d] = x
            if x == xlim and y >= least and x + y - c >= fmid_2min:
                ymax = max(ymax, y)
                if y == ylim:
                    return c, ymax
        if ymax != -1:
            return c, ymax
    return most + 1, ymax


def _method(value: str, where: str) -> str:
    """A backup method's name (unambiguous prefixes too, as GNU's argmatch), or GNU's error."""
    if value in _METHODS:
        return _METHODS[value]
    found = {_METHODS[name] for name in _METHODS if name.startswith(value)} if value else set()
    if len(found) == 1:
        return found.pop()
    what = "ambiguous" if found else "invalid"
    raise Fail(f"{what} argument '{value}' for '{where}'\n{_METHODS_HELP}", 2)


@tool("patch", 2)
def patch(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, operands = parse(argv, "p:Ri:bd:Nsfto:r:EF:lz:B:ucneV:D:", _LONG)
    except Usage as e:
        raise Usage(e.message + "\npatch: Try 'patch --help' for more information.", hint=False) from None
    strip: int | None = None
    reverse = dry = False
    source: str | None = None
    backup = True
    always = False
    ed = False
    settings: dict[str, object] = {}
    for k, v in opts:
        if k == "p":
            if not v.isdigit():
                raise Fail(f"**** strip count {v} is not a number", 2)
            strip = int(v)
        elif k == "R":
            reverse = True
        elif k == "dry-run":
            dry = True
        elif k == "i":
            source = v
        elif k == "nobackup":
            backup = False
        elif k == "b":
            always = True
        elif k == "backup-if-mismatch":
            backup = True
        elif k == "d":
            settings["directory"] = v
        elif k == "N":
            settings["forward"] = True
        elif k == "s":
            settings["silent"] = True
        elif k in ("f", "t"):
            settings["force"] = k
        elif k == "o":
            settings["output"] = v
        elif k == "r":
            settings["reject"] = v
        elif k == "E":
            settings["remove_empty"] = True
        elif k == "F":
            if not v.isdigit():
                raise Fail(f"**** fuzz factor {v} is not a number", 2)
            settings["fuzz"] = int(v)
        elif k == "l":
            settings["loose"] = True
        elif k == "z":
            settings["suffix"] = v
        elif k == "B":
            settings["prefix"] = v
        elif k == "e":
            ed = True
        elif k == "V":
            settings["method"] = _method(v, "--version-control or -V option")
        elif k == "D":
            settings["ifdef"] = v
        elif k == "merge":
            if v not in (None, "merge", "diff3"):  # GNU says no more than that
                raise Fail("Try 'patch --help' for more information.", 2)
            settings["merge"] = v or "merge"
    if "method" not in settings:
        for var in ("PATCH_VERSION_CONTROL", "VERSION_CONTROL"):
            value = sh.get_param_or_none(var)
            if value:
                settings["method"] = _method(value, "$" + var)
                break
    if "suffix" in settings or "prefix" in settings:
        settings["method"] = "simple"  # -z and -B name the backup themselves
    elif sh.get_param_or_none("SIMPLE_BACKUP_SUFFIX"):
        settings["suffix"] = sh.get_param_or_none("SIMPLE_BACKUP_SUFFIX")
    directory = settings.get("directory")
    if directory is not None:
        try:
            if not sh.fs.stat(directory).is_dir:
                raise OSError(20, "Not a directory")
        except OSError as e:
            raise Fail(f"**** Can't change to directory {directory} : {message(e)}", 2) from None
    explicit = operands[0] if operands else None
    if len(operands) > 1:
        source = operands[1]
    if len(operands) > 2:
        raise Usage(f"{operands[2]}: extra operand\npatch: Try 'patch --help' for more information.", hint=False)
    name = source or "-"
    if directory is not None and name != "-" and not name.startswith("/"):
        name = directory.rstrip("/") + "/" + name  # -d comes first, as GNU's chdir
    try:
        data = read_all(sh, name)
    except OSError as e:
        raise Fail(f"**** Can't open patch file {name} : {message(e)}", 2) from None
    patches = [] if ed else parse_patch(data)
    if explicit is None:  # normal diffs and ed scripts name no file: GNU takes them for garbage
        patches = [fp for fp in patches if fp.kind != "normal"]
    out = Output(sh)
    p = _Patcher(sh, out, strip, reverse, dry, backup)
    p.always = always
    for key, value in settings.items():
        setattr(p, key, value)
    script = parse_ed(data) if explicit is not None and not patches else None
    if script is not None:
        return _ed_patch(p, script, explicit)
    if not patches:
        if data.strip():
            raise Fail("**** Only garbage was found in the patch input.", 2)
        return 0
    status = 0
    try:
        for fp in patches:
            status = max(status, p.apply(fp, explicit))
    finally:
        out.flush()
    return status
