"""sdiff (GNU diffutils 3.8) without -o: two files side by side, as `diff -y` lays them out.

The differences are K's diff engine's (GNU diff's algorithm, with -i -b -w -E -Z as diff reads
them); the layout is GNU's side.c: columns from -w (130) and the tab size, tabs kept unless -t,
`|` for changed lines (`/` `\\` when only one side ends in a newline), `<` `>` for lines on one
side, `(` for common lines under -l, none under -s. Interactive merging (-o) is refused: it
needs a person at a terminal answering each hunk. Status: 0 same, 1 different, 2 trouble.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.tools.data.diff import changes, split
from kshell.tools.files.names import strerror
from kshell.tools.files.sidebyside import Layout, side_by_side
from kshell.core.options import NONE, REQUIRED, Usage, parse, tool
from kshell.tools.text.textio import read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"output": ("o", REQUIRED), "ignore-case": ("i", NONE), "ignore-tab-expansion": ("E", NONE),
         "ignore-trailing-space": ("Z", NONE), "ignore-space-change": ("b", NONE), "ignore-all-space": ("W", NONE),
         "ignore-blank-lines": ("B", NONE), "ignore-matching-lines": ("I", REQUIRED), "strip-trailing-cr": ("cr", NONE),
         "text": ("a", NONE), "width": ("w", REQUIRED), "left-column": ("l", NONE),
         "suppress-common-lines": ("s", NONE), "expand-tabs": ("t", NONE), "tabsize": ("tabsize", REQUIRED),
         "minimal": ("d", NONE), "speed-large-files": ("H", NONE), "diff-program": ("prog", REQUIRED),
         "help": ("help", NONE), "version": ("v", NONE)}
def _key(given: dict):
    """What diff compares for -i -b -W -E -Z (None: the lines themselves)."""
    if not any(k in given for k in "ibWEZ"):
        return None

    def key(line: bytes) -> bytes:
        if "i" in given:
            line = line.lower()
        if "W" in given:
            return b"".join(line.split())
        if "b" in given:
            line = b" ".join(line.split()) + (b"\n" if line.endswith(b"\n") else b"")
        elif "Z" in given:
            line = line.rstrip(b" \t\n") + (b"\n" if line.endswith(b"\n") else b"")
        if "E" in given:
            line = line.expandtabs(8)
        return line

    return key


@tool("sdiff", 2)
def sdiff(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, files = parse(argv, "o:iEZbWBI:aw:lstdHv", _LONG)
    except Usage as e:
        sh.write_err(f"sdiff: {e.message}\nsdiff: Try 'sdiff --help' for more information.\n")
        return 2
    given = dict(opts)
    if "help" in given:
        sh.out("Usage: sdiff [OPTION]... FILE1 FILE2\n")
        return 0
    if "v" in given:
        sh.out("sdiff (GNU diffutils) 3.8\n")
        return 0
    if "o" in given:
        sh.write_err("sdiff: -o (interactive merging) is not supported in K: it asks a person about each hunk\n")
        return 2
    if any(k in given for k in ("B", "I")):
        sh.write_err(f"sdiff: -{'B' if 'B' in given else 'I'} is not supported in K\n")
        return 2
    if len(files) != 2:
        what = f"missing operand after '{files[-1] if files else argv[0]}'" if len(files) < 2 \
            else f"extra operand '{files[2]}'"
        sh.write_err(f"sdiff: {what}\nsdiff: Try 'sdiff --help' for more information.\n")
        return 2
    try:
        width = int(given.get("w", "130"))
        tab = int(given.get("tabsize", "8"))
        if width <= 0 or tab <= 0:
            raise ValueError
    except ValueError:
        sh.write_err(f"sdiff: invalid width '{given.get('w')}'\n" if "w" in given else
                     f"sdiff: invalid tabsize '{given.get('tabsize')}'\n")
        return 2
    texts = []
    for name in files:
        try:
            data = read_all(sh, name)
        except OSError as e:
            sh.write_err(f"diff: {name}: {strerror(e)}\n")  # GNU sdiff passes on its diff's words
            return 2
        lines = split(data)
        if "cr" in given:
            lines = [x[:-2] + b"\n" if x.endswith(b"\r\n") else x for x in lines]
        texts.append(lines)
    a, b = texts
    script = changes(a, b, key=_key(given))
    sh.out(side_by_side(a, b, script, Layout(width, tab, "t" in given), "s" not in given, "l" in given))
    return 1 if script else 0
