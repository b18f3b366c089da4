"""envsubst (GNU gettext 0.21): $VAR and ${VAR} replaced by the exported environment's values
(empty when unset); with SHELL-FORMAT only the variables it names; -v lists those names.

Agents fill templates with it (`envsubst < nginx.conf.in > nginx.conf`); anything else that
looks like a shell expansion (`${A:-x}`, `$1`, `$$`) is left as written, as GNU leaves it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.core.options import NONE, Fail, parse, tool
from kshell.tools.text.textio import Output, message, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"variables": ("v", NONE), "help": ("h", NONE), "version": ("V", NONE)}
_REFERENCE = re.compile(rb"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _names(fmt: str) -> list[str]:
    """The variables SHELL-FORMAT references, in order, repeats included."""
    return [(a or b).decode() for a, b in _REFERENCE.findall(fmt.encode("utf-8", "surrogateescape"))]


@tool("envsubst")
def envsubst(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "vhV", _LONG)
    keys = {k for k, _ in opts}
    if "h" in keys:
        sh.out(b"Usage: envsubst [OPTION] [SHELL-FORMAT]\n\nSubstitutes the values of environment variables.\n")
        return 0
    if "V" in keys:
        sh.out(b"envsubst (GNU gettext-runtime) 0.21\n")
        return 0
    if len(operands) > 1:
        raise Fail("too many arguments")
    if "v" in keys:
        if not operands:
            raise Fail("missing arguments")
        sh.out("".join(f"{n}\n" for n in _names(operands[0])).encode("utf-8", "surrogateescape"))
        return 0
    only = set(_names(operands[0])) if operands else None
    env = sh.exported_env()
    try:
        data = read_all(sh, "-")
    except OSError as e:
        raise Fail(f"error while reading \"standard input\": {message(e)}") from None

    def value(m: re.Match[bytes]) -> bytes:
        name = (m.group(1) or m.group(2)).decode("utf-8", "surrogateescape")
        if only is not None and name not in only:
            return m.group(0)
        return env.get(name, "").encode("utf-8", "surrogateescape")

    out = Output(sh)
    out.write(_REFERENCE.sub(value, data))
    out.flush()
    return 0
