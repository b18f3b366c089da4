"""The job-control builtins: jobs, fg, bg, kill, wait, disown. They are builtins in bash
(`type -t kill` says builtin, `command -v kill` prints kill), so they are here, in the shell's
command table; what they do to the session's job table is kshell.exec.jobcontrol, imported on the
first call so that a short command pays nothing for it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from kshell.builtins import builtin

if TYPE_CHECKING:
    from kshell.core.context import ToolContext


def _job_builtin(name: str) -> None:
    """Register `name` as the builtin that runs kshell.tools.jobs's function of that name."""

    def run(sh: ToolContext, argv: list[str]) -> int:
        return getattr(importlib.import_module("kshell.exec.jobcontrol"), name)(sh, argv)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = f"bash's `{name}` on the session's job table (kshell.exec.jobcontrol.{name})."
    builtin(name)(run)


for _name in ("jobs", "fg", "bg", "kill", "wait", "disown"):
    _job_builtin(_name)
