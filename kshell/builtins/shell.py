"""Builtins about the shell itself: times, caller, enable, logout, suspend (bash 5.2's)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.builtins import PROGRAMS, SPECIAL, Usage, builtin, getopt, legal_number
from kshell.builtins.flow import exit_builtin
from kshell.core.errors import DiscardCommand
from kshell.exec import timing

if TYPE_CHECKING:
    from kshell.exec.interp import Interp


def _no_options(sh: Interp, name: str, args: list[str], usage: str) -> list[str]:
    """bash's no_options: a builtin that takes no options refuses one (`-x: invalid option`)."""
    return getopt(sh, name, args, "", usage)[1]


def _clock(user: float, system: float) -> str:
    """bash's print_timeval pair: `0m0.012s 0m0.004s`."""
    return " ".join(timing._seconds_text(*timing._secs(t), 3, True) for t in (user, system))


@builtin("times")
def times(sh: Interp, argv: list[str]) -> int:
    """The CPU time of the shell (its thread) and of its children (the threads of its jobs and
    pipeline stages that ended): K's processes are threads of one Python process, whose own
    totals would count every other session (see kshell.exec.timing)."""
    try:
        _no_options(sh, "times", argv[1:], "times")
    except Usage:
        return 2
    user, system = timing.thread_cpu()
    child_user = sum(u for u, _ in sh.session.child_cpu.parts)
    child_system = sum(s for _, s in sh.session.child_cpu.parts)
    sh.out(f"{_clock(user, system)}\n{_clock(child_user, child_system)}\n")
    return 0


def _frames(sh: Interp) -> tuple[list[str], list[str], list[str]]:
    """FUNCNAME, BASH_SOURCE and BASH_LINENO as bash 5.2 has them: in a script file the top
    level is a frame (`main`, the file, line 0); in a -c string it is none, and a function's
    source is `environment`."""
    names = list(reversed(sh.funcnames))
    lines = [str(n) for n in reversed(sh.call_lines)]
    if sh.dash_c:
        return names, ["environment"] * len(names), lines
    return names + ["main"] * bool(names), [sh.script_name] * (len(names) + 1), lines + ["0"]


@builtin("caller")
def caller(sh: Interp, argv: list[str]) -> int:
    """`caller [expr]`: the line and file a function was called from, or with EXPR the line,
    function and file EXPR frames up (bash's caller_builtin, from its call-stack arrays)."""
    names, sources, lines = _frames(sh)
    if not lines or not sources:
        return 1
    try:
        args = _no_options(sh, "caller", argv[1:], "caller [expr]")
    except Usage:
        return 2
    if not args:
        sh.out(f"{lines[0]} {sources[1] if len(sources) > 1 else 'NULL'}\n")
        return 0
    n = legal_number(args[0])
    if n is None:
        sh.error(f"caller: {args[0]}: invalid number")
        sh.write_err("caller: usage: caller [expr]\n")
        return 2
    if not (0 <= n < len(lines) and n + 1 < len(sources) and n + 1 < len(names)):
        return 1
    sh.out(f"{lines[n]} {names[n + 1]} {sources[n + 1]}\n")
    return 0


_ENABLE_USAGE = "enable [-a] [-dnps] [-f filename] [name ...]"


@builtin("enable")
def enable(sh: Interp, argv: list[str]) -> int:
    """bash's enable: list the builtins (-a all, -n the disabled, -s the special ones), or turn
    names off (-n) and on again; a disabled builtin's name runs what $PATH finds, as in bash.
    K loads no shared objects: `-f` fails as bash's dlopen of a file it cannot load."""
    try:
        opts, names = getopt(sh, "enable", argv[1:], "adnpsf:", _ENABLE_USAGE)
    except Usage:
        return 2
    flags = {c for c, _ in opts}
    library = next((v for c, v in reversed(opts) if c == "f"), None)
    if not names or "p" in flags:
        every = sorted((set(sh.builtins) | set(sh.disabled)) - PROGRAMS)
        for name in every:
            if "s" in flags and name not in SPECIAL:
                continue
            on = name in sh.builtins
            if on and ("a" in flags or "n" not in flags):
                sh.out(f"enable {name}\n")
            elif not on and ("a" in flags or "n" in flags):
                sh.out(f"enable -n {name}\n")
        return 0
    if library is not None:
        reason = "cannot open shared object file: No such file or directory"
        if "/" in library and sh.fs.exists(library):
            reason = "K does not load shared objects into its shell"
        sh.error(f"enable: cannot open shared object {library}: {library}: {reason}")
        return 1
    status = 0
    for name in names:
        if "d" in flags:
            known = name in sh.builtins or name in sh.disabled
            sh.error(f"enable: {name}: {'not dynamically loaded' if known else 'not a shell builtin'}")
            status = 1
        elif "n" in flags and name in sh.builtins and name not in PROGRAMS:
            if sh.builtins is sh.session.builtins:
                sh.builtins = dict(sh.builtins)  # this shell's own table from now on
            sh.disabled[name] = sh.builtins.pop(name)
        elif "n" not in flags and name in sh.disabled:
            sh.builtins[name] = sh.disabled.pop(name)
        elif name not in sh.builtins or name in PROGRAMS:
            sh.error(f"enable: {name}: not a shell builtin")
            status = 1
    return status


@builtin("logout")
def logout(sh: Interp, argv: list[str]) -> int:
    """`logout [n]`: exit from a login shell; any other shell says to use exit, as bash."""
    if "login_shell" not in sh.shopts:
        sh.error("logout: not login shell: use `exit'")
        return 1

    return exit_builtin(sh, argv)


@builtin("suspend")
def suspend(sh: Interp, argv: list[str]) -> int:
    """`suspend [-f]`: without job control, bash's `cannot suspend: no job control`; a login
    shell is not suspended without -f. The K shell does not stop itself (as `kill -STOP $$`
    does not): nothing could continue it, so `suspend -f` returns 0 at once."""
    try:
        opts, args = getopt(sh, "suspend", argv[1:], "f", "suspend [-f]")
    except Usage:
        return 2
    if opts:
        return 0
    if args:
        sh.error("suspend: too many arguments")
        raise DiscardCommand(1)
    if "m" not in sh.opts:
        sh.error("suspend: cannot suspend: no job control")
        return 1
    if "login_shell" in sh.shopts:
        sh.error("suspend: cannot suspend a login shell")
        return 1
    return 0
