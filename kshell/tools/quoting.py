"""How the tools quote words in their messages: GNU's two styles.

- `shell_quote`: a file name (GNU's quoteaf, the shell-escape-always style): 'x', "it's",
  'it'\\''s$': what a user could paste back into a shell.
- `locale_quote`: any other argument (GNU's quote(), the locale style in the C locale): an
  option's value or a stray operand, 'x', 'it\\'s'.
"""

from __future__ import annotations

_C_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
              "\\": "\\\\", "'": "\\'"}


def shell_quote(name: str) -> str:
    """A file name as GNU messages show it: `cannot open 'x'`, `cannot stat "it's"`."""
    if "'" not in name:
        return f"'{name}'"
    if not any(c in name for c in '"$`\\!'):
        return f'"{name}"'
    return "'" + name.replace("'", "'\\''") + "'"


def locale_quote(text: str) -> str:
    """An argument as GNU's quote() shows it in the C locale: `invalid number of lines: 'a\\'b'`."""
    out = []
    for c in text:
        escaped = _C_ESCAPES.get(c)
        if escaped is not None:
            out.append(escaped)
        elif c < " " or c == "\x7f":
            out.append(f"\\{ord(c):03o}")
        else:
            out.append(c)
    return "'" + "".join(out) + "'"
