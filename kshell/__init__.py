"""The K shell: a bash-shaped shell whose builtins run on the K virtual filesystem.

    from kshell import Shell, Result, Limits
    Shell(path_fs).run("echo hi") -> Result(stdout=b"hi\\n", stderr=b"", status=0)

The names below load on first use, so that `kshell.cli` (the `komputer` program) does not pay
for the interpreter in commands that never run it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kshell.limits import LimitExceeded, Limits
    from kshell.session import Result, Shell

__all__ = ["LimitExceeded", "Limits", "Result", "Shell"]

_HOMES = {"LimitExceeded": "kshell.limits", "Limits": "kshell.limits", "Result": "kshell.session",
          "Shell": "kshell.session"}


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value
