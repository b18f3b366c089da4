"""env and printenv. `env [-i] [-u NAME] [NAME=VALUE]... [CMD [ARG]...]` runs CMD in a forked
interpreter whose exported variables are the modified set, so nothing leaks into the caller."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.core.variables import EXPORT, Var
from kshell.tools.options import NONE, REQUIRED, Usage, parse, tool

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_ENV_LONG = {"ignore-environment": ("i", NONE), "unset": ("u", REQUIRED), "null": ("0", NONE),
             "chdir": ("C", REQUIRED), "help": ("help", NONE), "version": ("version", NONE)}


def run_argv(sh: Interp, argv: list[str], prog: str) -> int:
    """Run argv as an exec'd program would be: a tool, a builtin with a binary, or a VFS file
    on $PATH (never a shell function); 127 when not found, as env/nice/timeout report it."""
    name = argv[0]
    tool_fn = sh.tool(name)
    if tool_fn is not None:
        return tool_fn(sh, argv)
    if name in sh.builtins:
        return sh.call_builtin(sh.builtins[name], argv)
    from kshell.exec.scripts import find_in_path

    if "/" not in name and find_in_path(sh, name)[0] is None:
        sh.write_err(f"{prog}: '{name}': No such file or directory\n")
        return 127
    return sh.run_external(argv)


@tool("env", usage_status=125)
def env(sh: Interp, argv: list[str]) -> int:
    opts, operands = parse(argv, "+iu:0C:", _ENV_LONG, permute=False)
    clear = any(k == "i" for k, _ in opts)
    null = any(k == "0" for k, _ in opts)
    unset = [v for k, v in opts if k == "u"]
    child = sh.fork()
    table = child.vars.table
    if clear:
        for name in [n for n, var in table.items() if var.flags & EXPORT]:
            table.pop(name, None)
    for name in unset:
        if not name or "=" in name:
            sh.write_err(f"env: cannot unset '{name}': Invalid argument\n")
            return 125
        table.pop(name, None)
    i = 0
    while i < len(operands) and "=" in operands[i] and not operands[i].startswith("="):
        name, _, value = operands[i].partition("=")
        table[name] = Var(value, EXPORT)
        i += 1
    cmd = operands[i:]
    if not cmd:
        if null:
            pass
        end = "\0" if null else "\n"
        sh.out("".join(f"{k}={v}{end}" for k, v in child.exported_env().items()))
        return 0
    if null:
        raise Usage("cannot specify --null (-0) with command")
    return run_argv(child, cmd, "env")


@tool("printenv", usage_status=2)
def printenv(sh: Interp, argv: list[str]) -> int:
    opts, operands = parse(argv, "0", {"null": ("0", NONE), "help": ("help", NONE),
                                       "version": ("version", NONE)})
    end = "\0" if any(k == "0" for k, _ in opts) else "\n"
    envmap = sh.exported_env()
    if not operands:
        sh.out("".join(f"{k}={v}{end}" for k, v in envmap.items()))
        return 0
    status = 0
    out = []
    for name in operands:
        if "=" not in name and name in envmap:
            out.append(envmap[name] + end)
        else:
            status = 1
    sh.out("".join(out))
    return status
