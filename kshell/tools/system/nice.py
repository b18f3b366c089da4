"""nice: print the niceness, or run a command at an adjusted one, as GNU coreutils.

K's tools are threads of the appliance: they just run, and the niceness is the shell's own
(`nice -n 5 nice` prints 5; subshells inherit it). A delegated program gets it for real: the
sandbox runs it under the host's `nice -n N` (kshell.delegate). As on Linux, only root may
lower it: an agent asking for less is told `cannot set niceness: Permission denied` and the
command runs at the niceness it had.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.system.env import run_argv

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_LONG = {"adjustment": ("n", REQUIRED), "help": ("help", NONE), "version": ("version", NONE)}
_NUMBER = re.compile(r"[+-]?\d+\Z")
LOWEST, HIGHEST = -20, 19


@tool("nice", usage_status=125)
def nice(sh: Interp, argv: list[str]) -> int:
    args = list(argv[1:])
    adjustment: str | None = None
    while args and len(args[0]) > 1 and args[0][0] == "-" and _NUMBER.match(args[0][1:]):
        adjustment = args.pop(0)[1:]  # the obsolete `nice -5 CMD` (and `nice --5`, -5 lower)
    opts, command = parse([argv[0], *args], "n:", _LONG, permute=False)
    for key, value in opts:
        if key == "help":
            sh.out("Usage: nice [OPTION] [COMMAND [ARG]...]\n")
            return 0
        if key == "version":
            sh.out("nice (GNU coreutils) 9.1\n")
            return 0
        adjustment = value
    current = sh.niceness
    if not command:
        if adjustment is not None:
            raise Usage("a command must be given with an adjustment")
        sh.out(f"{current}\n")
        return 0
    if adjustment is None:
        adjustment = "10"
    if not _NUMBER.match(adjustment):
        raise Fail(f"invalid adjustment {adjustment!r}" if "'" not in adjustment else
                   f'invalid adjustment "{adjustment}"', 125)
    wanted = max(LOWEST, min(HIGHEST, current + int(adjustment)))
    if wanted < current and sh.fs.cred.uid != 0:
        sh.write_err("nice: cannot set niceness: Permission denied\n")
        wanted = current
    child = sh.fork()
    child.niceness = wanted
    return run_argv(child, command, "nice")
