"""Mode arguments as chmod, mkdir -m and install -m read them: octal or symbolic (u+x,go-w,a=r,+t)."""

from __future__ import annotations

import re

_CLAUSE = re.compile(r"([ugoa]*)((?:[-+=](?:[ugo]|[rwxXst]*))+)$")
_ACTION = re.compile(r"([-+=])([ugo]|[rwxXst]*)")


def apply_mode(text: str, old: int, is_dir: bool, umask: int = 0o022) -> int | None:
    """The new permission bits (with setuid/setgid/sticky), or None when `text` is not a mode."""
    if text and all(c in "01234567" for c in text):
        value = int(text, 8)
        if value > 0o7777:
            return None
        if is_dir and len(text) < 5:  # GNU keeps a directory's setuid/setgid unless 5 digits say
            value |= old & 0o6000
        return value
    mode = old & 0o7777
    for clause in text.split(","):
        m = _CLAUSE.match(clause)
        if m is None:
            return None
        who = m.group(1)
        mask = 0
        for w in who or "a":
            mask |= {"u": 0o4700, "g": 0o2070, "o": 0o1007, "a": 0o7777}[w]
        for op, perms in _ACTION.findall(m.group(2)):
            bits = 0
            if perms in ("u", "g", "o"):
                shift = {"u": 6, "g": 3, "o": 0}[perms]
                three = (mode >> shift) & 7
                bits = three << 6 | three << 3 | three
            else:
                for p in perms:
                    if p == "r":
                        bits |= 0o444
                    elif p == "w":
                        bits |= 0o222
                    elif p == "x":
                        bits |= 0o111
                    elif p == "X":
                        if is_dir or mode & 0o111:
                            bits |= 0o111
                    elif p == "s":
                        bits |= 0o6000
                    elif p == "t":
                        bits |= 0o1000
            bits &= mask
            if not who:
                bits &= ~umask | 0o7000
            if op == "+":
                mode |= bits
            elif op == "-":
                mode &= ~bits
            else:
                clear = mask if who else 0o7777 & ~(0o6000 if is_dir else 0)
                mode = (mode & ~clear) | bits
    return mode
