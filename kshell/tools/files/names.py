"""File names as the file tools build and show them: `join` (a child's path), `quote` (GNU's
shell-escape-always quoting in messages) and `fail` (`tool: what: strerror`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kshell.exec.interp import Interp


def join(base: str, name: str) -> str:
    """`base/name` as the tools build child paths (no doubled slash after "/" or "d/")."""
    return base + name if base.endswith("/") else f"{base}/{name}"


def quote(name: str) -> str:
    """A file name as GNU messages show it (shell-escape-always quoting): 'x', "it's"."""
    if "'" not in name:
        return f"'{name}'"
    if not any(c in name for c in '"$`\\!'):
        return f'"{name}"'
    return "'" + name.replace("'", "'\\''") + "'"


def fail(sh: Interp, prog: str, what: str, e: OSError | int) -> None:
    """`prog: what: strerror` on standard error (what is already quoted by the caller)."""
    if isinstance(e, int):
        text = os.strerror(e)
    elif e.errno:
        text = os.strerror(e.errno)
    else:
        text = e.strerror or str(e)
    sh.write_err(f"{prog}: {what}: {text}\n")
