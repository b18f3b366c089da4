"""diff3 (GNU diffutils 3.8): compare MYFILE OLDFILE YOURFILE, on K's diff engine.

The three-way blocks are GNU's: the two edit scripts OLDFILE->MYFILE and OLDFILE->YOURFILE
(kshell.tools.data.diff.changes, GNU diff's algorithm) merged where their OLDFILE ranges overlap
or touch. Output: the default listing (====, ====1/2/3), an ed script (-e -E -A -x -X -3, -i),
or the merged file (-m, which shows all changes with brackets unless -e/-E/-x/-X/-3 narrows it);
-L names the files in the brackets, -T puts a tab before the lines. Status: 0, 1 when a merge
or ed script has conflicts, 2 on trouble.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kshell.tools.data.diff import changes, split
from kshell.tools.files.names import strerror
from kshell.core.options import NONE, REQUIRED, Usage, parse, tool
from kshell.tools.text.textio import read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"easy-only": ("3", NONE), "ed": ("e", NONE), "show-overlap": ("E", NONE), "show-all": ("A", NONE),
         "overlap-only": ("x", NONE), "merge": ("m", NONE), "initial-tab": ("T", NONE), "text": ("a", NONE),
         "label": ("L", REQUIRED), "strip-trailing-cr": ("strip", NONE), "diff-program": ("prog", REQUIRED),
         "help": ("help", NONE), "version": ("v", NONE)}
MINE, OLD, YOURS = 0, 1, 2
ALL, FIRST, SECOND, THIRD = "all", 0, 1, 2  # which file is the odd one out


@dataclass(frozen=True)
class Block:
    """One three-way difference: [lo, hi) in each file (MINE, OLD, YOURS) and which differs."""

    ranges: tuple[tuple[int, int], tuple[int, int], tuple[int, int]]
    odd: int | str


def blocks(mine: list[bytes], old: list[bytes], yours: list[bytes]) -> list[Block]:
    """GNU diff3's blocks, from the two two-way edit scripts against OLDFILE."""
    threads = [changes(old, mine), changes(old, yours)]
    files = (mine, yours)
    pos = [0, 0]
    offset = [0, 0]
    out: list[Block] = []
    while pos[0] < len(threads[0]) or pos[1] < len(threads[1]):
        heads = [threads[t][pos[t]][0] if pos[t] < len(threads[t]) else None for t in (0, 1)]
        first = 0 if heads[1] is None or (heads[0] is not None and heads[0] <= heads[1]) else 1
        seed = threads[first][pos[first]]
        lo, hi = seed[0], seed[0] + seed[2]
        taken: list[list[tuple[int, int, int, int]]] = [[], []]
        taken[first].append(seed)
        pos[first] += 1
        grew = True
        while grew:  # take every hunk of either script that overlaps or touches the block
            grew = False
            for t in (0, 1):
                while pos[t] < len(threads[t]) and threads[t][pos[t]][0] <= hi:
                    h = threads[t][pos[t]]
                    taken[t].append(h)
                    hi = max(hi, h[0] + h[2])
                    pos[t] += 1
                    grew = True
        ranges = []
        for t in (0, 1):
            if taken[t]:
                f, last = taken[t][0], taken[t][-1]
                t_lo = f[1] - (f[0] - lo)
                t_hi = last[1] + last[3] + (hi - (last[0] + last[2]))
                offset[t] += sum(h[3] - h[2] for h in taken[t])
                ranges.append((t_lo, t_hi))
            else:
                ranges.append((lo + offset[t], hi + offset[t]))
        if not taken[1]:
            odd: int | str = FIRST
        elif not taken[0]:
            odd = THIRD
        else:
            (m_lo, m_hi), (y_lo, y_hi) = ranges
            odd = SECOND if files[0][m_lo:m_hi] == files[1][y_lo:y_hi] else ALL
        out.append(Block((ranges[0], (lo, hi), ranges[1]), odd))
    return out


def _label(lo: int, hi: int) -> str:
    if hi == lo:
        return f"{lo}a"
    if hi - lo == 1:
        return f"{hi}c"
    return f"{lo + 1},{hi}c"


def listing(texts: list[list[bytes]], found: list[Block], prefix: bytes) -> bytes:
    """The default output: `====N`, then each file's range and (once per agreeing pair) lines."""
    out = bytearray()
    for b in found:
        out += b"====" + (b"" if b.odd == ALL else str(b.odd + 1).encode()) + b"\n"  # type: ignore[operator]
        order = (0, 2, 1) if b.odd == SECOND else (0, 1, 2)
        skip = 3 if b.odd == ALL else (1 if b.odd == FIRST else 0)
        for i in order:
            lo, hi = b.ranges[i]
            out += f"{i + 1}:{_label(lo, hi)}\n".encode()
            if i == skip:
                continue
            for line in texts[i][lo:hi]:
                out += prefix + line
                if not line.endswith(b"\n"):
                    out += b"\n\\ No newline at end of file\n"
    return bytes(out)


@dataclass(frozen=True)
class Mode:
    """Which blocks an ed script or merge shows, and how (GNU's flags)."""

    show_2nd: bool = False
    flagging: bool = False
    overlap_only: bool = False
    simple_only: bool = False

    def conflict(self, b: Block) -> bool | None:
        """Whether block `b` is shown as a conflict; None when it is not shown."""
        if b.odd == SECOND:
            return True if self.show_2nd else None
        if b.odd == THIRD:
            return None if self.overlap_only else False
        if b.odd == ALL:
            return None if self.simple_only else self.flagging
        return None


def _dotted(out: bytearray, lines: list[bytes]) -> bool:
    """Lines of an ed insert; a line that is `.`-led is doubled (undone after)."""
    dot = False
    for line in lines:
        if line.startswith(b"."):
            dot = True
            out += b"."
        out += line if line.endswith(b"\n") else line + b"\n"
    return dot


def _undot(out: bytearray, dot: bool, start: int, count: int) -> None:
    out += b".\n"
    if dot:
        if count == 1:
            out += f"{start}s/^\\.//\n".encode()
        elif count > 1:
            out += f"{start},{start + count - 1}s/^\\.//\n".encode()


def edscript(texts: list[list[bytes]], found: list[Block], mode: Mode, labels: list[str],
             final: bool) -> tuple[bytes, bool]:
    out = bytearray()
    conflicts = False
    for b in reversed(found):
        conflict = mode.conflict(b)
        if conflict is None:
            continue
        (m_lo, m_hi), (o_lo, o_hi), (y_lo, y_hi) = b.ranges
        low0, high0 = m_lo + 1, m_hi
        old, new = texts[OLD][o_lo:o_hi], texts[YOURS][y_lo:y_hi]
        if conflict:
            conflicts = True
            out += f"{high0}a\n".encode()
            dot = False
            if b.odd == ALL:
                if mode.show_2nd:
                    out += f"||||||| {labels[OLD]}\n".encode()
                    dot = _dotted(out, old)
                out += b"=======\n"
                dot |= _dotted(out, new)
            out += f">>>>>>> {labels[YOURS]}\n".encode()
            _undot(out, dot, high0 + 2, len(old) + len(new) + 1)
            out += f"{low0 - 1}a\n<<<<<<< {labels[MINE] if b.odd == ALL else labels[OLD]}\n".encode()
            dot = False
            if b.odd == SECOND:
                dot = _dotted(out, old)
                out += b"=======\n"
            _undot(out, dot, low0 + 1, len(old))
        elif not new:
            out += (f"{low0}d\n" if low0 == high0 else f"{low0},{high0}d\n").encode()
        else:
            out += (f"{high0}a\n" if high0 - low0 == -1 else f"{high0}c\n" if high0 == low0
                    else f"{low0},{high0}c\n").encode()
            _undot(out, _dotted(out, new), low0, len(new))
    if final:
        out += b"w\nq\n"
    return bytes(out), conflicts


def merge(texts: list[list[bytes]], found: list[Block], mode: Mode, labels: list[str]) -> tuple[bytes, bool]:
    out = bytearray()
    conflicts = False
    read = 0
    mine = texts[MINE]
    for b in found:
        conflict = mode.conflict(b)
        if conflict is None:
            continue
        (m_lo, m_hi), (o_lo, o_hi), (y_lo, y_hi) = b.ranges
        out += b"".join(mine[read:m_lo])
        if conflict:
            conflicts = True
            if b.odd == ALL:
                out += f"<<<<<<< {labels[MINE]}\n".encode() + b"".join(mine[m_lo:m_hi])
            if mode.show_2nd:
                mark = "|||||||" if b.odd == ALL else "<<<<<<<"
                out += f"{mark} {labels[OLD]}\n".encode() + b"".join(texts[OLD][o_lo:o_hi])
            out += b"=======\n"
        out += b"".join(texts[YOURS][y_lo:y_hi])
        if conflict:
            out += f">>>>>>> {labels[YOURS]}\n".encode()
        read = m_hi
    out += b"".join(mine[read:])
    return bytes(out), conflicts


def _unterminated(texts: list[list[bytes]], found: list[Block]) -> bool:
    """Whether a file's last line, without its newline, is part of a difference."""
    for b in found:
        for i, (lo, hi) in enumerate(b.ranges):
            if lo < hi == len(texts[i]) and not texts[i][-1].endswith(b"\n"):
                return True
    return False


@tool("diff3", 2)
def diff3(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, files = parse(argv, "3eEAxXmiTaL:v", _LONG)
    except Usage as e:
        sh.write_err(f"diff3: {e.message}\ndiff3: Try 'diff3 --help' for more information.\n")
        return 2
    keys = [k for k, _ in opts]
    if "help" in keys:
        sh.out("Usage: diff3 [OPTION]... MYFILE OLDFILE YOURFILE\n")
        return 0
    if "v" in keys:
        sh.out("diff3 (GNU diffutils) 3.8\n")
        return 0
    incompat = sum(1 for k in keys if k in "AeExX3")
    if incompat > 1 or ("m" in keys and "i" in keys):
        sh.write_err("diff3: incompatible options\ndiff3: Try 'diff3 --help' for more information.\n")
        return 2
    if len(files) < 3:
        sh.write_err(f"diff3: missing operand after '{files[-1] if files else argv[0]}'\n"
                     "diff3: Try 'diff3 --help' for more information.\n")
        return 2
    if len(files) > 3:
        sh.write_err(f"diff3: extra operand '{files[3]}'\ndiff3: Try 'diff3 --help' for more information.\n")
        return 2
    given = [v for k, v in opts if k == "L"]
    labels = [given[i] if i < len(given) else files[i] for i in range(3)]
    texts = []
    for name in files:
        try:
            texts.append(split(read_all(sh, name)))
        except OSError as e:
            sh.write_err(f"diff3: {name}: {strerror(e)}\n")
            return 2
    if "strip" in keys:
        texts = [[line[:-2] + b"\n" if line.endswith(b"\r\n") else line for line in t] for t in texts]
    found = blocks(*texts)
    mode = Mode(show_2nd="A" in keys, flagging="A" in keys or "E" in keys,
                overlap_only="x" in keys or "X" in keys, simple_only="3" in keys)
    if "m" in keys:
        if not incompat:
            mode = Mode(show_2nd=True, flagging=True)
        data, conflicts = merge(texts, found, mode, labels)
    elif incompat:
        data, conflicts = edscript(texts, found, mode, labels, "i" in keys)
        if _unterminated(texts, found):  # GNU warns: ed cannot give a line without its newline
            sh.write_err("diff3: No newline at end of file\n")
    else:
        sh.out(listing(texts, found, b"\t" if "T" in keys else b"  "))
        return 0
    sh.out(data)
    return 1 if conflicts else 0
