"""Agent-written text on an operator's terminal.

A command line, a session name or a path comes from an agent, who may put ESC, CR or a newline
in it to make `komputer approvals` show `rm -r build` where the action is `rm -r ~`. Every
human-readable listing of agent text goes through `printable` (JSON output escapes on its own).
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, the backslash (so that an escape is never ambiguous), and the
# characters that reorder or break a line without being controls (bidi overrides and isolates,
# the Unicode line and paragraph separators): what an agent could use to make an operator's
# terminal show something else than what is there.
_UNPRINTABLE = re.compile("[\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_C_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\a": "\\a", "\b": "\\b", "\f": "\\f",
              "\v": "\\v"}


def _escape_char(m: re.Match[str]) -> str:
    c = m.group()
    if c in _C_ESCAPES:
        return _C_ESCAPES[c]
    return f"\\{ord(c):03o}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def printable(text: str) -> str:
    """Agent-written text (a command line, a session name, a path) as it may be shown on an
    operator's terminal: control characters as C escapes (`\\n`, `\\033`), as `ls -b` and
    `git status` quote names, so that ESC, CR or a newline can never redraw or split a line."""
    return _UNPRINTABLE.sub(_escape_char, text) if _UNPRINTABLE.search(text) else text
