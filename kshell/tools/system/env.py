"""env and printenv. `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... [CMD [ARG]...]`
runs CMD in a forked interpreter whose exported variables are the modified set, so nothing
leaks into the caller; -S splits a string into arguments as GNU env does (shebang lines)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.core.variables import EXPORT, Var
from kshell.core.options import NONE, REQUIRED, Usage, parse, tool

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_ENV_LONG = {"ignore-environment": ("i", NONE), "unset": ("u", REQUIRED), "null": ("0", NONE),
             "chdir": ("C", REQUIRED), "split-string": ("S", REQUIRED), "help": ("help", NONE),
             "version": ("version", NONE)}
_S_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "_": " ", "#": "#", "$": "$", "t": "\t", "n": "\n", "r": "\r",
              "f": "\f", "v": "\v"}


class _SplitError(Exception):
    pass


def split_string(sh: Interp, text: str) -> list[str]:
    """GNU env -S: words split on blanks, '...' literal, "..." and bare text with GNU's
    backslash escapes (\\_ a space, \\c ends the string), ${NAME} expanded, # a comment."""
    env = sh.exported_env()
    words: list[str] = []
    word: list[str] | None = None
    quote = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        i += 1
        if quote == "'":
            if c == "'":
                quote = ""
            elif c == "\\" and i < n and text[i] in "\\'":
                word.append(text[i])
                i += 1
            else:
                word.append(c)
            continue
        if not quote and c in " \t\n\v\f\r":
            if word is not None:
                words.append("".join(word))
                word = None
            continue
        if not quote and c == "#" and word is None:
            break
        if word is None:
            word = []
        if c in "'\"" and (not quote or c == quote):
            quote = "" if quote else c
        elif c == "\\":
            if i >= n:
                raise _SplitError("invalid backslash at end of string in -S")
            d = text[i]
            i += 1
            if d == "c" and not quote:
                break
            if d == "_" and quote:
                word.append(" ")
            elif d in _S_ESCAPES:
                word.append(_S_ESCAPES[d])
            else:
                raise _SplitError(f"invalid sequence '\\{d}' in -S")
        elif c == "$":
            end = text.find("}", i)
            if i >= n or text[i] != "{" or end < 0:
                raise _SplitError(f"only ${{VARNAME}} expansion is supported, error at: {text[i - 1:]}")
            word.append(env.get(text[i + 1 : end], ""))
            i = end + 1
        else:
            word.append(c)
    if quote:
        raise _SplitError("no terminating quote in -S string")
    if word is not None:
        words.append("".join(word))
    return words


def _expand_split(sh: Interp, argv: list[str]) -> list[str]:
    """argv with each leading -S STRING (--split-string) replaced by the words it splits into."""
    out = [argv[0]]
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--" or not arg.startswith("-") or arg == "-":
            break
        text = None
        if arg.startswith("--split-string") or (arg.startswith("--") and "--split-string".startswith(
                arg.split("=", 1)[0]) and len(arg.split("=", 1)[0]) > 3):
            name, eq, value = arg.partition("=")
            if eq:
                text = value
            elif i + 1 < len(argv):
                text, i = argv[i + 1], i + 1
        elif not arg.startswith("--") and "S" in arg[1:]:
            at = arg.index("S")
            if any(ch in "uC" for ch in arg[1:at]):  # S is another option's value
                out.append(arg)
                i += 1
                continue
            if at > 1:
                out.append(arg[:at])
            if at + 1 < len(arg):
                text = arg[at + 1:]
            elif i + 1 < len(argv):
                text, i = argv[i + 1], i + 1
        if text is None:
            out.append(arg)
            if arg in ("-u", "-C") and i + 1 < len(argv):
                out.append(argv[i + 1])
                i += 1
            i += 1
            continue
        out.extend(split_string(sh, text))
        i += 1
    return out + argv[i:]


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
    try:
        argv = _expand_split(sh, argv)
    except _SplitError as e:
        sh.write_err(f"env: {e}\n")
        return 125
    opts, operands = parse(argv, "+iu:0C:S:", _ENV_LONG, permute=False)
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
    for directory in [v for k, v in opts if k == "C"]:
        try:
            if not child.fs.stat(directory).is_dir:
                raise NotADirectoryError(20, "Not a directory")
            where = child.fs.realpath(directory)
        except OSError as e:
            sh.write_err(f"env: cannot change directory to '{directory}': {e.strerror}\n")
            return 125
        child.fs.cwd = where.encode("utf-8", "surrogateescape")
        if "PWD" in table:  # what a program's getcwd() would say
            table["PWD"] = Var(where, table["PWD"].flags)
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
