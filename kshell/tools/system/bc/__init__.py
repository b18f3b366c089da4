"""bc: GNU bc 1.07's language (POSIX bc and its extensions: long names, print, else, `#`
comments, ++/--, op-assignments) as an interpreter over exact decimals (numbers).

Input runs as bc runs it: each line once it is complete (a define or a `{` block runs when it
closes); `quit` ends bc when it is read, so nothing on its line runs; a syntax error drops its
line (`(standard_in) N: syntax error`); a runtime error abandons the running line
(`Runtime error (func=NAME, adr=0): Divide by zero`: K has no byte-code addresses to show).
-l loads GNU's math library, written in bc (mathlib) and run by this interpreter, with scale 20.
read() is refused (a K tool's standard input is the program). Standard input is read to its
end before it runs: piped programs (what agents send) behave as GNU's; typed at a terminal, the
results come at end of input (Ctrl-D), not line by line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.core.options import NONE, Usage, parse, tool
from kshell.tools.system.bc.machine import Machine
from kshell.tools.system.bc.mathlib import MATHLIB
from kshell.tools.text.textio import read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"mathlib": ("l", NONE), "quiet": ("q", NONE), "standard": ("s", NONE), "warn": ("w", NONE),
         "interactive": ("i", NONE), "help": ("h", NONE), "version": ("v", NONE)}
USAGE = """\
usage: bc [options] [file ...]
  -h  --help         print this usage and exit
  -i  --interactive  force interactive mode
  -l  --mathlib      use the predefined math routines
  -q  --quiet        don't print initial banner
  -s  --standard     non-standard bc constructs are errors
  -w  --warn         warn about non-standard bc constructs
  -v  --version      print version information and exit
"""


@tool("bc")
def bc(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, files = parse(argv, "lqswihv", _LONG)
    except Usage as e:
        sh.write_err(f"bc: {e.message}\n")
        sh.out(USAGE)
        return 1
    keys = {k for k, _ in opts}
    if "h" in keys:
        sh.out(USAGE)
        return 0
    if "v" in keys:
        sh.out("bc 1.07.1\n")
        return 0
    machine = Machine(sh)
    if "l" in keys:
        machine.source(MATHLIB, "libmath")
        machine.scale = 20
    for name in files:
        try:
            text = devices.read_file(sh, name).decode("utf-8", "surrogateescape")  # `-` is a file name
        except OSError:
            sh.write_err(f"File {name} is unavailable.\n")
            return 1
        if not machine.source(text, name):
            return 0
    machine.source(read_all(sh, "-").decode("utf-8", "surrogateescape"), "standard_in")
    return 0
