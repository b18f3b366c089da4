"""The agent's Unix toolbox: external commands (ls, grep, sed, ...) run in-process on the VFS.

Each family is a package with a `TOOLS` table (name -> fn(interp, argv) -> status); the shell
looks a command up here after functions and builtins, before $PATH.
"""

from __future__ import annotations

from kshell.builtins import Builtin


def registry() -> dict[str, Builtin]:
    """Every tool of every family (imported on first use, not when kshell is imported)."""
    from kshell.tools import awk, data, files, jobs, net, sed, system, text

    return {**files.TOOLS, **text.TOOLS, **sed.TOOLS, **awk.TOOLS, **data.TOOLS, **system.TOOLS,
            **net.TOOLS, **jobs.TOOLS}
