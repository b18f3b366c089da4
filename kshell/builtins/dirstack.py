"""bash's directory stack: pushd, popd, dirs, and the DIRSTACK array (kshell.exec.varops).

The stack is the working directory followed by `sh.dirstack` (its entry 0 is bash's `+1`);
a subshell has its own copy (Interp.fork). The algorithms follow bash's pushd.def: `pushd +N`
rotates the whole stack, `-n` manipulates the stack without changing directory, a failed
change of directory keeps what the stack became before it, and each success prints the stack
as `dirs` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.builtins import builtin, legal_number
from kshell.builtins.flow import cd

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_USAGE = {"pushd": "pushd [-n] [+N | -N | dir]", "popd": "popd [-n] [+N | -N]",
          "dirs": "dirs [-clpv] [+N] [-N]"}


def _polite(sh: Interp, path: str) -> str:
    """bash's polite_directory_format: $HOME at the start of a path shown as ~ (not a HOME of /)."""
    home = sh.get_param_or_none("HOME")
    if home and len(home) > 1 and path.startswith(home) and path[len(home):len(home) + 1] in ("", "/"):
        return "~" + path[len(home):]
    return path


def _usage(sh: Interp, name: str) -> int:
    sh.write_err(f"{name}: usage: {_USAGE[name]}\n")
    return 2


def _range_error(sh: Interp, name: str, word: str) -> int:
    """bash's pushd_error: an empty stack, or an index beyond it."""
    if not sh.dirstack:
        sh.error(f"{name}: directory stack empty")
    else:
        sh.error(f"{name}: {word}: directory stack index out of range")
    return 1


def _show(sh: Interp) -> None:
    """What pushd and popd print after a success: `dirs` without arguments."""
    sh.out(" ".join(_polite(sh, d) for d in sh.directory_stack()) + "\n")


def _change_to(sh: Interp, name: str, path: str) -> int:
    """bash's change_to_temp: cd to `path` (messages under `name`), and show the stack."""
    status = cd(sh, [name, "--", path])
    if status == 0:
        _show(sh)
    return status


@builtin("dirs")
def dirs(sh: Interp, argv: list[str]) -> int:
    long = clear = False
    numbered = one_per_line = False
    index: int | None = None
    word = ""
    for arg in argv[1:]:
        if arg == "-l":
            long = True
        elif arg == "-c":
            clear = True
        elif arg == "-v":
            numbered = True
        elif arg == "-p":
            one_per_line = True
        elif arg == "--":
            break
        elif arg[:1] in ("+", "-"):
            n = legal_number(arg[1:])
            if n is None:
                sh.error(f"dirs: {arg}: invalid number")
                return _usage(sh, "dirs")
            word = arg[1:]
            index = n if arg[0] == "+" else len(sh.dirstack) - n
            if n < 0:
                index = -1
        else:
            sh.error(f"dirs: {arg}: invalid option")
            return _usage(sh, "dirs")
    if clear:
        sh.dirstack.clear()
        return 0
    entries = sh.directory_stack()
    shown = entries if long else [_polite(sh, d) for d in entries]
    if index is not None:
        if not 0 <= index <= len(sh.dirstack):
            return _range_error(sh, "dirs", word)
        sh.out(f"{index:2d}  {shown[index]}\n" if numbered else f"{shown[index]}\n")
        return 0
    if numbered:
        sh.out("".join(f"{i:2d}  {d}\n" for i, d in enumerate(shown)))
    elif one_per_line:
        sh.out("".join(f"{d}\n" for d in shown))
    else:
        sh.out(" ".join(shown) + "\n")
    return 0


@builtin("pushd")
def pushd(sh: Interp, argv: list[str]) -> int:
    args = argv[1:]
    skipopt = bool(args) and args[0] == "--"
    if skipopt:
        args = args[1:]
    if not args:
        if not sh.dirstack:
            sh.error("pushd: no other directory")
            return 1
        target, sh.dirstack[0] = sh.dirstack[0], sh.working_directory()
        return _change_to(sh, "pushd", target)
    nocd = False
    rotate: int | None = None
    while args and not skipopt:
        arg = args[0]
        if arg == "-n":
            nocd = True
        elif arg == "--":
            args = args[1:]
            break
        elif arg == "-":  # `pushd -` as `cd -`
            break
        elif arg[:1] in ("+", "-"):
            n = legal_number(arg[1:])
            if n is None:
                sh.error(f"pushd: {arg}: invalid number")
                return _usage(sh, "pushd")
            num = n if arg[0] == "+" else len(sh.dirstack) - n
            if not 0 <= num <= len(sh.dirstack):
                return _range_error(sh, "pushd", arg)
            rotate = num
        else:
            break
        args = args[1:]
    if rotate is not None:
        whole = sh.directory_stack()
        whole = whole[rotate:] + whole[:rotate]
        if rotate:
            sh.dirstack[:] = whole[1:]
        return 0 if nocd else _change_to(sh, "pushd", whole[0])
    if not args:
        return 0
    current = sh.working_directory()
    status = 0 if nocd else cd(sh, ["pushd", *args])
    if status != 0:
        return status
    sh.dirstack.insert(0, args[0] if nocd else current)
    _show(sh)
    return 0


@builtin("popd")
def popd(sh: Interp, argv: list[str]) -> int:
    nocd = False
    which, direction, word = 0, "+", ""
    for arg in argv[1:]:
        if arg == "-n":
            nocd = True
        elif arg == "--":
            break
        elif arg[:1] in ("+", "-"):
            n = legal_number(arg[1:])
            if n is None:
                sh.error(f"popd: {arg}: invalid number")
                return _usage(sh, "popd")
            which, direction, word = n, arg[0], arg
        elif arg:
            sh.error(f"popd: {arg}: invalid argument")
            return _usage(sh, "popd")
        else:
            break
    depth = len(sh.dirstack)
    if which > depth or which < -depth or (depth == 0 and which == 0):
        return _range_error(sh, "popd", word)
    if (direction == "+" and which == 0) or (direction == "-" and which == depth):
        if not nocd:
            status = cd(sh, ["popd", "--", sh.dirstack[0]])
            if status != 0:
                return status
        del sh.dirstack[0]
    else:
        # bash's list runs from the bottom of the stack: its entry i is our depth-1-i
        i = depth - which if direction == "+" else which
        if not 0 <= i < depth:
            return _range_error(sh, "popd", word)
        del sh.dirstack[depth - 1 - i]
    _show(sh)
    return 0
