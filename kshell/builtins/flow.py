"""Builtins for control flow and commands: true false : eval exec exit return break continue
source . command builtin type cd pwd trap let sh bash."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import native
from kshell.builtins import Usage, builtin, getopt, legal_number, numeric_arg
from kshell.builtins.completion import table_order
from kshell.builtins.vars import (
    SET_LETTERS,
    list_options,
    list_shopts,
    set_flag,
    set_long_option,
    set_shopts,
)
from kshell.core.errors import BreakLoop, ContinueLoop, ExitSignal, ReturnSignal
from kshell.core.variables import EXPORT, Var
from kshell.exec import devices
from kshell.exec import redirects as redir
from kshell.exec.defaults import BASH_VERSION
from kshell.exec.jobs import NUMBERS, SIGNALS, signal_number, signal_table
from kshell.expand import arith
from kshell.expand.words import expand_string
from kshell.syntax import Parser, ShellSyntaxError
from kshell.syntax.ast import Word
from kshell.syntax.errors import ArithSyntaxError
from kshell.syntax.printer import function_text

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "case", "esac", "for", "while",
                       "until", "do", "done", "in", "function", "time", "{", "}", "!", "[[",
                       "]]", "coproc", "select"})


@builtin("true", ":")
def true(sh: Interp, argv: list[str]) -> int:
    return 0


@builtin("false")
def false(sh: Interp, argv: list[str]) -> int:
    return 1


def _status_arg(sh: Interp, name: str, argv: list[str], default: int) -> int | None:
    if len(argv) < 2:
        return default
    args = argv[2:] if argv[1] == "--" and len(argv) > 2 else argv[1:]
    value = numeric_arg(sh, name, args)
    return None if value is None else value & 0xFF


@builtin("exit")
def exit_builtin(sh: Interp, argv: list[str]) -> int:
    """`exit [n]`. An interactive shell (`bash -i`), not a subshell of it, says it leaves."""
    if "i" in sh.opts and not sh.subshell:
        sh.write_err("logout\n" if "login_shell" in sh.shopts else "exit\n")
    status = _status_arg(sh, "exit", argv, sh.last_status)
    if status is None:
        raise ExitSignal(2)
    raise ExitSignal(status)


@builtin("return")
def return_builtin(sh: Interp, argv: list[str]) -> int:
    if not sh.funcnames and not sh.source_depth:
        sh.error("return: can only `return' from a function or sourced script")
        return 2
    status = _status_arg(sh, "return", argv, sh.last_status)
    if status is None:
        raise ReturnSignal(2)
    raise ReturnSignal(status)


def _loop_levels(sh: Interp, name: str, argv: list[str]) -> int:
    n = 1
    args = argv[2:] if argv[1:2] == ["--"] else argv[1:]
    if args:
        number = numeric_arg(sh, name, args)
        if number is None:
            raise ExitSignal(128)
        n = number
        if n < 1:  # bash leaves every loop, failing
            sh.error(f"{name}: {args[0]}: loop count out of range")
            raise BreakLoop(sh.loop_depth, 1)
    return n


def _jump(sh: Interp, name: str, argv: list[str], jump: type[BreakLoop | ContinueLoop]) -> int:
    if not sh.loop_depth:
        sh.error(f"{name}: only meaningful in a `for', `while', or `until' loop")
        return 0
    raise jump(min(_loop_levels(sh, name, argv), sh.loop_depth))


@builtin("break")
def break_builtin(sh: Interp, argv: list[str]) -> int:
    return _jump(sh, "break", argv, BreakLoop)


@builtin("continue")
def continue_builtin(sh: Interp, argv: list[str]) -> int:
    return _jump(sh, "continue", argv, ContinueLoop)


@builtin("eval")
def eval_builtin(sh: Interp, argv: list[str]) -> int:
    args = argv[1:]
    if args and args[0] == "--":
        args = args[1:]
    elif args and args[0].startswith("-") and args[0] != "-":  # bash's no_options
        sh.error(f"eval: {args[0][:2]}: invalid option")
        sh.write_err("eval: usage: eval [arg ...]\n")
        return 2
    source = " ".join(args)
    if not source.strip():
        return 0

    parser = sh.parser(source, line0=sh.lineno - 1)
    status = 0
    sh.call_depth += 1
    try:
        if sh.call_depth > sh.limits.recursion_depth:
            sh.error("eval: maximum nesting level exceeded")
            return 1
        while True:
            start = parser.pos
            try:
                commands = parser.parse_line()
            except ShellSyntaxError as e:
                sh.echo_input(parser, start, error=True)
                sh.write_err(e.format(f"{sh.script_name}: eval: line {{lineno}}: "))
                return 2
            if commands is None:
                return status
            sh.echo_input(parser, start)
            status = 0
            for cmd in commands:
                status = sh.execute(cmd)
            sh.update_parser(parser)
    finally:
        sh.call_depth -= 1


@builtin("source", ".")
def source(sh: Interp, argv: list[str]) -> int:
    name = argv[0]
    args = argv[1:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        sh.error(f"{name}: filename argument required")
        sh.write_err(f"{name}: usage: {name} filename [arguments]\n")
        return 2
    path = args[0]
    target = path
    if "/" not in path:
        found = None
        if "sourcepath" in sh.shopts:
            pv = sh.get_param_or_none("PATH") or ""
            for d in pv.split(":"):
                cand = f"{d or '.'}/{path}"
                try:
                    if sh.fs.stat(cand).is_reg:
                        found = cand
                        break
                except OSError:
                    continue
        target = found or path
    try:
        inode = devices.stat(sh, target)
        if inode.is_dir:
            sh.error(f"{name}: {path}: is a directory")
            return 1
        data = devices.read_file(sh, target)
    except OSError as e:
        sh.error(f"{path}: {redir.os_message(e)}")
        return 1
    if sh.source_depth + sh.call_depth >= sh.limits.recursion_depth:
        sh.error(f"{name}: maximum nesting level exceeded")
        return 1
    saved_pos = sh.positional
    if len(args) > 1:
        sh.positional = list(args[1:])
    saved_name = sh.script_name
    sh.script_name = path
    saved_line = sh.lineno
    sh.source_depth += 1
    try:
        status = sh.run_source(data.decode("utf-8", "surrogateescape"), filename=path)
    except ReturnSignal as r:
        status = r.status
    finally:
        sh.source_depth -= 1
        sh.script_name = saved_name
        sh.lineno = saved_line
        if len(args) > 1:
            sh.positional = saved_pos
    return status


@builtin("exec")
def exec_builtin(sh: Interp, argv: list[str]) -> int:
    args = argv[1:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        return 0  # redirections were made permanent by the interpreter
    name = args[0]
    if name not in sh.builtins and name not in sh.funcs and sh.tool(name) is None:
        from kshell.exec.scripts import find_in_path  # on first use, not at start-up

        if "/" not in name and find_in_path(sh, name)[0] is None:
            sh.error(f"exec: {name}: not found")
            raise ExitSignal(127)
    status = sh.run_command(args, None)
    raise ExitSignal(status)


def _lookup(sh: Interp, name: str, use_funcs: bool = True) -> tuple[str, str | None]:
    if name in _KEYWORDS:
        return "keyword", None
    if use_funcs and name in sh.funcs:
        return "function", None
    if name in sh.builtins:
        return "builtin", None
    if sh.tool(name) is not None:
        return "tool", f"/usr/bin/{name}"
    if "/" in name:
        return ("file", name) if _executable_file(sh, name) else ("", None)

    from kshell.exec.scripts import find_in_path  # on first use, not at start-up

    path, ok = find_in_path(sh, name)
    if path is not None and ok:
        return "file", path
    return "", None


def _executable_file(sh: Interp, path: str) -> bool:
    """What execve would try: an executable non-directory in the session's view (K, or the
    host programs a delegating session shows)."""
    try:
        return not sh.fs.stat(path).is_dir and sh.fs.access(path, 1)
    except OSError:
        return False


@builtin("command")
def command_builtin(sh: Interp, argv: list[str]) -> int:
    args = argv[1:]
    verbose = ""
    while args and args[0].startswith("-") and len(args[0]) > 1:
        if args[0] == "--":
            args = args[1:]
            break
        for c in args[0][1:]:
            if c in "vV":
                verbose = c
            elif c == "p":
                pass
            else:
                sh.error(f"command: -{c}: invalid option")
                sh.write_err("command: usage: command [-pVv] command [arg ...]\n")
                return 2
        args = args[1:]
    if not args:
        return 0
    if verbose:
        status = 0
        for name in args:
            kind, path = _lookup(sh, name)
            alias = sh.parse_aliases()
            if verbose == "v" and alias is not None and name in alias:
                sh.out("alias " + name + "='" + alias[name].replace("'", "'\\''") + "'\n")
            elif verbose == "v":
                if kind in ("file", "tool"):
                    sh.out(f"{path}\n")
                elif kind:
                    sh.out(f"{name}\n")
                else:
                    status = 1
            else:
                if not _describe(sh, name, False):
                    sh.error(f"command: {name}: not found")
                    status = 1
        return status
    name = args[0]
    builtin_fn = sh.builtins.get(name)
    if builtin_fn is not None:
        return sh.call_builtin(builtin_fn, args)
    tool = sh.tool(name)
    if tool is not None:
        return tool(sh, args)
    return sh.run_external(args)


@builtin("builtin")
def builtin_builtin(sh: Interp, argv: list[str]) -> int:
    if len(argv) < 2:
        return 0
    fn = sh.builtins.get(argv[1])
    if fn is None:
        sh.error(f"builtin: {argv[1]}: not a shell builtin")
        return 1
    return sh.call_builtin(fn, argv[1:])


def _describe(sh: Interp, name: str, all_: bool, mode: str = "") -> bool:
    found = False
    alias = sh.parse_aliases()
    if alias is not None and name in alias:
        found = True
        if mode == "t":
            sh.out("alias\n")
        elif not mode:
            sh.out(f"{name} is aliased to `{alias[name]}'\n")
        if not all_:
            return True
    if name in _KEYWORDS:
        found = True
        sh.out("keyword\n" if mode == "t" else (f"{name} is a shell keyword\n" if not mode else ""))
        if not all_:
            return True
    if name in sh.funcs:
        found = True
        if mode == "t":
            sh.out("function\n")
        elif not mode:
            sh.out(f"{name} is a function\n{function_text(sh.funcs[name])}\n")
        if not all_:
            return True
    if name in sh.builtins:
        found = True
        if mode == "t":
            sh.out("builtin\n")
        elif not mode:
            sh.out(f"{name} is a shell builtin\n")
        if not all_:
            return True
    if sh.tool(name) is not None:
        found = True
        if mode == "t":
            sh.out("file\n")
        elif mode == "p" or mode == "P":
            sh.out(f"/usr/bin/{name}\n")
        else:
            sh.out(f"{name} is /usr/bin/{name}\n")
        if not all_:
            return True
    kind, path = ("", None)
    if "/" in name:
        if _executable_file(sh, name):
            kind, path = "file", name
    else:
        from kshell.exec.scripts import find_in_path  # on first use, not at start-up

        p, ok = find_in_path(sh, name)
        if p is not None and ok:
            kind, path = "file", p
    if kind == "file":
        found = True
        if mode == "t":
            sh.out("file\n")
        elif mode in ("p", "P"):
            sh.out(f"{path}\n")
        else:
            sh.out(f"{name} is {path}\n")
    return found


@builtin("type")
def type_builtin(sh: Interp, argv: list[str]) -> int:
    args = argv[1:]
    mode = ""
    all_ = False
    while args and args[0].startswith("-") and len(args[0]) > 1:
        if args[0] == "--":
            args = args[1:]
            break
        for c in args[0][1:]:
            if c == "a":
                all_ = True
            elif c in "tpP":
                mode = c
            elif c == "f":
                pass
            else:
                sh.error(f"type: -{c}: invalid option")
                sh.write_err("type: usage: type [-afptP] name [name ...]\n")
                return 2
        args = args[1:]
    status = 0
    for name in args:
        if not _describe(sh, name, all_, mode):
            if not mode:
                sh.error(f"type: {name}: not found")
            status = 1
    return status


# --------------------------------------------------------------------------- directories


def _set_cwd(sh: Interp, path: str) -> None:
    sh.fs.cwd = path.encode("utf-8", "surrogateescape")


def _two_slashes(path: str) -> bool:
    """Whether `path` starts with exactly two slashes, which bash keeps in PWD (POSIX leaves
    their meaning to the implementation): `cd //tmp; pwd` prints //tmp, `cd ///tmp` /tmp."""
    return path.startswith("//") and not path.startswith("///")


@builtin("cd")
def cd(sh: Interp, argv: list[str]) -> int:
    """bash's cd; its messages name argv[0], as bash's cd_builtin names the command that
    called it (`pushd: x: No such file or directory`)."""
    name, args = argv[0], argv[1:]
    physical = "P" in sh.opts
    while args and args[0].startswith("-") and len(args[0]) > 1:
        if args[0] == "--":
            args = args[1:]
            break
        bad = [c for c in args[0][1:] if c not in "LPe@"]
        if bad:
            sh.error(f"cd: -{bad[0]}: invalid option")
            sh.write_err("cd: usage: cd [-L|[-P [-e]] [-@]] [dir]\n")
            return 2
        if "P" in args[0]:
            physical = True
        if "L" in args[0]:
            physical = False
        args = args[1:]
    if len(args) > 1:
        sh.error(f"{name}: too many arguments")
        return 1
    print_dir = False
    if not args:
        target = sh.get_param_or_none("HOME")
        if target is None:
            sh.error(f"{name}: HOME not set")
            return 1
    else:
        target = args[0]
        if target == "-":
            target = sh.get_param_or_none("OLDPWD")
            if target is None:
                sh.error(f"{name}: OLDPWD not set")
                return 1
            print_dir = True
    if target == "":
        return 0
    pwd = sh.get_param("PWD") or sh.fs.cwd.decode("utf-8", "surrogateescape")
    candidates = []
    cdpath = sh.get_param_or_none("CDPATH")
    if cdpath and not target.startswith("/") and not target.startswith("."):
        for d in cdpath.split(":"):
            if d:
                candidates.append((d.rstrip("/") + "/" + target, True))
    candidates.append((target, False))
    last_error = None
    for cand, from_cdpath in candidates:
        base = pwd if not cand.startswith("/") else "/"
        logical = native.normalize(cand.encode("utf-8", "surrogateescape"),
                                   base.encode("utf-8", "surrogateescape"),
                                   b"/").decode("utf-8", "surrogateescape")
        try:
            inode = sh.fs.stat(logical if not physical else cand)
        except OSError as e:
            last_error = e
            continue
        if not inode.is_dir:
            last_error = OSError(20, "Not a directory")
            continue
        if not sh.fs.access(logical, 1):
            last_error = OSError(13, "Permission denied")
            continue
        if physical:
            logical = sh.fs.realpath(logical)
        _set_cwd(sh, logical)
        if _two_slashes(cand if cand.startswith("/") else pwd):
            logical = "/" + logical
        sh.assign_scalar("OLDPWD", pwd)
        old = sh.vars.table.get("OLDPWD")
        if old is not None:
            old.flags |= EXPORT
        sh.assign_scalar("PWD", logical)
        if print_dir or from_cdpath:
            sh.out(logical + "\n")
        return 0
    assert last_error is not None
    sh.error(f"{name}: {args[0] if args else target}: {redir.os_message(last_error)}")
    return 1


@builtin("pwd")
def pwd(sh: Interp, argv: list[str]) -> int:
    physical = False
    for arg in argv[1:]:
        if arg == "-P":
            physical = True
        elif arg == "-L":
            physical = False
        elif arg.startswith("-"):
            sh.error(f"pwd: {arg}: invalid option")
            sh.write_err("pwd: usage: pwd [-LP]\n")
            return 2
    cwd = sh.fs.cwd.decode("utf-8", "surrogateescape")
    pv = sh.get_param_or_none("PWD")
    current = pv is not None and sh.working_directory() == pv
    if physical:
        try:
            cwd = sh.fs.realpath(cwd)
        except OSError as e:
            sh.error(f"pwd: error retrieving current directory: {redir.os_message(e)}")
            return 1
        if current and _two_slashes(pv):
            cwd = "/" + cwd
    elif current:
        cwd = pv
    sh.out(cwd + "\n")
    return 0


# --------------------------------------------------------------------------- traps, let, wait

_PSEUDO = {"EXIT": 0, "DEBUG": 65, "ERR": 66, "RETURN": 67}  # bash lists them in this order, among signals
_TRAP_USAGE = "trap: usage: trap [-lp] [[arg] signal_spec ...]\n"


def _trap_key(spec: str) -> str | None:
    """What `trap` keeps a condition under (EXIT, INT, RTMIN+1, ERR, ...): a name in any case,
    with or without SIG, or a number (blanks around it allowed, as bash's legal_number)."""
    number = legal_number(spec)
    if number is not None:
        return "EXIT" if number == 0 else SIGNALS.get(number)
    name = spec.upper()
    name = name[3:] if name.startswith("SIG") else name
    if name in _PSEUDO:
        return name
    n = signal_number(name)
    return SIGNALS.get(n) if n else None


def _trap_order(key: str) -> int:
    return _PSEUDO.get(key, NUMBERS.get(key, 0))


def _show_trap(sh: Interp, key: str, action: str) -> None:
    label = key if key in _PSEUDO else "SIG" + key
    sh.out(f"trap -- '{action.replace(chr(39), chr(39) + chr(92) + chr(39) + chr(39))}' {label}\n")


@builtin("trap")
def trap(sh: Interp, argv: list[str]) -> int:
    """bash's trap: `trap [-lp] [[action] condition ...]`. A first operand that is a signal
    number, or a lone condition, resets (as `-` does); an empty action ignores."""
    args = argv[1:]
    listing = show = False
    while args and args[0].startswith("-") and args[0] != "-":
        word = args.pop(0)
        if word == "--":
            break
        for c in word[1:]:
            if c not in "lp":
                sh.error(f"trap: -{c}: invalid option")
                sh.write_err(_TRAP_USAGE)
                return 2
            listing, show = listing or c == "l", show or c == "p"
    if listing:
        sh.out(signal_table())
        return 0
    traps = sh.traps or sh.parent_traps
    if show or not args:
        status = 0
        for spec in args:  # `trap -p NAME...`: those, in the order named
            key = _trap_key(spec)
            if key is None:
                sh.error(f"trap: {spec}: invalid signal specification")
                status = 1
            elif key in traps:
                _show_trap(sh, key, traps[key])
        for key in sorted(traps, key=_trap_order) if not args else ():
            _show_trap(sh, key, traps[key])
        return status
    first = args[0]
    if first.isascii() and first.isdigit() and _trap_key(first) is not None or len(args) == 1:
        if len(args) == 1 and _trap_key(first) is None:
            sh.write_err(_TRAP_USAGE)
            return 2
        action, specs = None, args  # reset each
    else:
        action, specs = (None if first == "-" else first), args[1:]
    status = 0
    sh.parent_traps = {}
    for spec in specs:
        key = _trap_key(spec)
        if key is None:
            sh.error(f"trap: {spec}: invalid signal specification")
            status = 1
        elif action is None:
            sh.traps.pop(key, None)
        else:
            sh.traps[key] = action
    return status


@builtin("let")
def let(sh: Interp, argv: list[str]) -> int:
    if len(argv) < 2:
        sh.error("let: expression expected")
        return 1
    value = 0
    for expr in argv[1:]:
        try:
            value = arith.evaluate_text(sh, expr)
        except ArithSyntaxError as e:
            sh.error(f"let: {e.text}")
            return 1
    return 0 if value else 1


@builtin("umask")
def umask(sh: Interp, argv: list[str]) -> int:
    """bash's umask.def: -S (symbolic), -p (reusable as input), an octal mask or a symbolic mode
    as chmod's (`u=rwx,g=rx,o=`, `a+r`, `g-w`) applied to the permissions the mask leaves."""
    try:
        found, args = getopt(sh, "umask", argv[1:], "Sp", "umask [-p] [-S] [mode]")
    except Usage:
        return 2
    symbolic, reusable = ("S", "") in found, ("p", "") in found
    if not args:
        if reusable:
            sh.out("umask -S " if symbolic else "umask ")
        sh.out(_symbolic_umask(sh.fs.umask) if symbolic else f"{sh.fs.umask:04o}\n")
        return 0
    mode = args[0]
    if mode[:1].isdigit():
        if any(c not in "01234567" for c in mode) or int(mode, 8) > 0o7777:  # bash's read_octal
            sh.error(f"umask: {mode}: octal number out of range")
            return 1
        mask = int(mode, 8) & 0o777  # as umask(2) keeps it
    else:
        bits = _symbolic_mode(sh, mode, ~sh.fs.umask & 0o777)
        if bits is None:
            return 1
        mask = ~bits & 0o777
    sh.fs.umask = mask
    if symbolic:
        sh.out(_symbolic_umask(mask))
    return 0


def _symbolic_umask(mask: int) -> str:
    """`u=rwx,g=rx,o=rx`: what a mask lets through, as umask -S prints it."""
    perms = []
    for who, shift in (("u", 6), ("g", 3), ("o", 0)):
        bits = (~mask >> shift) & 7
        perms.append(who + "=" + "".join(c for c, b in (("r", 4), ("w", 2), ("x", 1)) if bits & b))
    return ",".join(perms) + "\n"


def _symbolic_mode(sh: Interp, mode: str, bits: int) -> int | None:
    """bash's parse_symbolic_mode: clauses `[agou]*[+-=][rwx]*` separated by commas, applied to
    `bits`; None (after bash's message) for a bad operator or permission character."""
    whos = {"u": 0o700, "g": 0o070, "o": 0o007, "a": 0o777}
    perms = {"r": 0o444, "w": 0o222, "x": 0o111}
    i, n = 0, len(mode)
    while True:
        who = perm = 0
        while i < n and mode[i] in whos:
            who |= whos[mode[i]]
            i += 1
        op = mode[i] if i < n else "\0"  # bash prints the string's terminating NUL
        i += 1
        if op not in ("+", "-", "="):
            sh.error(f"umask: `{op}': invalid symbolic mode operator")
            return None
        while i < n and mode[i] in perms:
            perm |= perms[mode[i]]
            i += 1
        if i < n and mode[i] != ",":
            sh.error(f"umask: `{mode[i]}': invalid symbolic mode character")
            return None
        if who:
            perm &= who
        if op == "+":
            bits |= perm
        elif op == "-":
            bits &= ~perm
        else:
            bits = bits & ~(who or 0o777) | perm
        if i >= n:
            return bits
        i += 1


@builtin("hash")
def hash_builtin(sh: Interp, argv: list[str]) -> int:
    """bash's hash.def over the shell's table of command paths (Interp.hash_table: each K tool
    or $PATH program that runs, with its hits): a listing in bash's bucket order, `NAME` looked
    up and added, -p PATH NAME (the name then runs that path), -t (where), -d (forget), -l
    (reusable), -r (forget all, and which tools a K file shadows)."""
    try:
        found, args = getopt(sh, "hash", argv[1:], "rtdp:l", "hash [-lr] [-p pathname] [-dt] [name ...]")
    except Usage:
        return 2
    opts = {c for c, _ in found if c != "p"}
    given = next((value for c, value in reversed(found) if c == "p"), None)
    table = sh.hash_table()
    if "r" in opts:
        table.clear()
        sh.session.shadowed.clear()
    if not args and opts & {"t", "d"}:
        sh.error(f"hash: -{'d' if 'd' in opts and 't' not in opts else 't'}: option requires an argument")
        return 1
    if not args:
        if "r" in opts:  # silent, as bash's
            return 0
        if table and "l" not in opts:
            sh.out("hits\tcommand\n")
        for name in table_order(table):
            path, hits = table[name]
            sh.out(f"builtin hash -p {path} {name}\n" if "l" in opts else f"{hits:4d}\t{path}\n")
        if not table and "l" not in opts:
            sh.out("hash: hash table empty\n")
        return 0
    status = 0
    for name in args:
        if given is not None:
            table[name] = (given, 0)
            continue
        if "t" in opts:  # before -d, as bash's; a lookup counts as a hit there
            entry = table.get(name)
            if entry is None:
                sh.error(f"hash: {name}: not found")
                status = 1
            else:
                table[name] = (entry[0], entry[1] + 1)
                sh.out(f"{name}\t{entry[0]}\n" if len(args) > 1 else f"{entry[0]}\n")
            continue
        if "d" in opts:
            if table.pop(name, None) is None:
                sh.error(f"hash: {name}: not found")
                status = 1
            continue
        if "l" in opts:
            entry = table.get(name)
            if entry is not None:
                sh.out(f"builtin hash -p {entry[0]} {name}\n")
            continue
        if name in sh.builtins or "/" in name:
            continue
        kind, path = _lookup(sh, name, use_funcs=False)
        if kind in ("tool", "file") and path is not None:
            table[name] = (path, 0)
        else:
            sh.error(f"hash: {name}: not found")
            status = 1
    return status


# --------------------------------------------------------------------------- child shells


_LONG_OPTIONS = ("debug", "debugger", "dump-po-strings", "dump-strings", "help", "init-file",
                 "login", "noediting", "noprofile", "norc", "posix", "pretty-print", "rcfile",
                 "restricted", "verbose", "version")
_K_LACKS = frozenset({"debugger", "dump-po-strings", "dump-strings", "pretty-print", "restricted"})


def _shell_usage(name: str) -> str:
    """bash's usage text (after an invalid option, and in --help)."""
    return (f"Usage:\t{name} [GNU long option] [option] ...\n"
            f"\t{name} [GNU long option] [option] script-file ...\nGNU long options:\n"
            + "".join(f"\t--{option}\n" for option in _LONG_OPTIONS)
            + "Shell options:\n\t-ilrsD or -c command or -O shopt_option\t\t(invocation only)\n"
              "\t-abefhkmnptuvxBCEHPT or -o option\n")


def _shell_help(name: str) -> str:
    return (f"GNU bash, version {BASH_VERSION}-(x86_64-pc-linux-gnu)\n{_shell_usage(name)}"
            f"Type `{name} -c \"help set\"' for more information about shell options.\n"
            f"Type `{name} -c help' for more information about shell builtin commands.\n"
            "Use the `bashbug' command to report bugs.\n\n"
            "bash home page: <http://www.gnu.org/software/bash>\n"
            "General help using GNU software: <http://www.gnu.org/gethelp/>\n")


def _shell_version() -> str:
    return (f"GNU bash, version {BASH_VERSION} (x86_64-pc-linux-gnu)\n"
            "Copyright (C) 2022 Free Software Foundation, Inc.\n"
            "License GPLv3+: GNU GPL version 3 or later <http://gnu.org/licenses/gpl.html>\n\n"
            "This is free software; you are free to change and redistribute it.\n"
            "There is NO WARRANTY, to the extent permitted by law.\n")


class _Invocation:
    """What `bash ARGS` asked for beyond the set options (applied to the child as parsed)."""

    def __init__(self) -> None:
        self.command = False  # -c: the first argument is the commands
        self.stdin = False  # -s: commands from standard input, every argument positional
        self.interactive = False  # -i
        self.login = False  # -l, --login
        self.norc = False
        self.noprofile = False
        self.noediting = False
        self.rcfile: str | None = None  # --rcfile, --init-file
        self.shopts: list[tuple[str, bool]] = []  # -O name / +O name, applied after parsing


def _parse_invocation(sh: Interp, child: Interp, name: str, args: list[str]) -> _Invocation | int:
    """Parse bash's options (GNU long ones first, then -abc / +abc words, to `-`, `--` or the
    first other word): set options go into `child`, the rest into the invocation returned;
    the words taken are taken off `args`. An int instead is the exit status of a shell that
    does not run: an error (bash's message printed, status 2), --help, --version."""
    inv = _Invocation()
    while args and args[0].startswith("-"):
        word = args[0][2:] if args[0].startswith("--") and len(args[0]) > 2 else args[0][1:]
        if word not in _LONG_OPTIONS or word in _K_LACKS:
            if args[0].startswith("--") and len(args[0]) > 2:
                sh.write_err(f"{name}: {args[0]}: invalid option\n{_shell_usage(name)}")
                return 2
            break
        args.pop(0)
        if word in ("rcfile", "init-file"):
            if not args:
                sh.write_err(f"{name}: {word}: option requires an argument\n")
                return 2
            inv.rcfile = args.pop(0)
        elif word == "help":
            sh.out(_shell_help(name))
            return 0
        elif word == "version":
            sh.out(_shell_version())
            return 0
        elif word == "posix":
            set_long_option(child, "posix", True)
        elif word == "verbose":
            set_flag(child, "v", True)
        elif word != "debug":  # --debug changes nothing a script sees
            setattr(inv, word, True)  # login, noediting, noprofile, norc
    while args and args[0][:1] in ("-", "+"):
        arg = args.pop(0)
        if arg in ("-", "--"):
            break
        on = arg[0] == "-"
        taken = 0  # words after this one that its -o/-O letters took
        for c in arg[1:]:
            if c in "oO":
                if taken >= len(args):  # no name: list the options, as bash does
                    (list_options if c == "o" else list_shopts)(child, reusable=not on)
                    continue
                option = args[taken]
                taken += 1
                if c == "O":
                    inv.shopts.append((option, on))
                elif not set_long_option(child, option, on):
                    sh.write_err(f"{name}: line 0: {name}: {option}: invalid option name\n")
                    return 2
            elif c in "csil":
                setattr(inv, {"c": "command", "s": "stdin", "i": "interactive", "l": "login"}[c],
                        on if c == "i" else True)
            elif c in SET_LETTERS:
                set_flag(child, c, on)
            else:  # also -r and -D, which K does not have
                sh.write_err(f"{name}: {arg[0]}{c}: invalid option\n{_shell_usage(name)}")
                return 2
        del args[:taken]
    if inv.command and not args:
        sh.write_err(f"{name}: -c: option requires an argument\n")
        return 2
    for option, on in inv.shopts:
        if set_shopts(child, [option], on, where=f"{name}: line 0: "):
            return 2
    return inv


def _startup_files(child: Interp, name: str, inv: _Invocation) -> None:
    """bash's run_startup_files: a login shell reads /etc/profile and the first of
    ~/.bash_profile, ~/.bash_login, ~/.profile (as `sh`: ~/.profile), unless --noprofile;
    an interactive one then /etc/bash.bashrc (Debian's bash) and ~/.bashrc or its --rcfile,
    unless --norc or it was a login shell (as `sh`, or in posix mode: the file $ENV names);
    a non-interactive one the file $BASH_ENV names. Missing files are skipped. set -e does
    not apply while they run."""
    as_sh = name.rsplit("/", 1)[-1] == "sh"
    posix = "posix" in child.opts
    home = child.get_param_or_none("HOME") or child.fs.home.decode("utf-8", "surrogateescape")
    files: list[str] = []
    norc = inv.norc
    if inv.login and not posix:
        norc = True
        if not inv.noprofile:
            files.append("/etc/profile")
            names = (".profile",) if as_sh else (".bash_profile", ".bash_login", ".profile")
            found = [f"{home}/{n}" for n in names if _is_file(child, f"{home}/{n}")]
            files += found[:1]
    if not inv.interactive:
        if not (posix or as_sh):
            files.append(_expanded(child, "BASH_ENV"))
    elif not (posix or as_sh):
        if not norc:
            files += ["/etc/bash.bashrc", inv.rcfile or f"{home}/.bashrc"]
    else:
        files.append(_expanded(child, "ENV"))
    child.errexit_off += 1
    try:
        for path in files:
            if path and _is_file(child, path):
                source(child, [".", path])
    finally:
        child.errexit_off -= 1


def _is_file(sh: Interp, path: str) -> bool:
    try:
        return not devices.stat(sh, path).is_dir
    except OSError:
        return False


def _expanded(sh: Interp, name: str) -> str:
    """The value of $BASH_ENV or $ENV expanded as bash does (as in double quotes)."""
    text = sh.get_param_or_none(name) or ""
    if not text:
        return ""
    return expand_string(sh, Word(tuple(Parser(text).read_dq_like(0, len(text), False))))


@builtin("sh", "bash")
def shell_builtin(sh: Interp, argv: list[str]) -> int:
    """A child bash: `bash [options] -c COMMANDS [$0 [args]]`, `bash [options] FILE [args]`,
    or commands from standard input (`-s`, or no FILE), after its startup files. -i makes it
    interactive ($- has i; set -u errors abandon only the command; emacs, history and
    expand_aliases on; it reads an rc file); K shows no prompts and has no job control."""
    name = argv[0]
    args = argv[1:]
    from kshell.exec.scripts import child_shell  # on first use, not at start-up

    child = child_shell(sh)
    child.dollar0 = child.script_name = name
    inv = _parse_invocation(sh, child, name, args)
    if isinstance(inv, int):
        return inv
    if inv.interactive:
        child.opts |= {"i", "H", "history"}
        child.shopts.add("expand_aliases")
        if not inv.noediting:
            set_long_option(child, "emacs", True)
    else:  # bash unsets the prompts of a non-interactive shell
        child.unset_var("PS1")
        child.unset_var("PS2")
    if inv.login:
        child.shopts.add("login_shell")
    filename = ""
    if inv.command:
        source_text = args[0]
        child.dollar0 = child.script_name = args[1] if len(args) > 1 else name
        child.positional = list(args[2:])
    elif args and not inv.stdin:
        path = args[0]
        try:
            inode = devices.stat(sh, path)
            if inode.is_dir:
                sh.write_err(f"{path}: {path}: is a directory\n")
                return 126
            data = devices.read_file(sh, path)
        except OSError as e:
            sh.write_err(f"{name}: {path}: {redir.os_message(e)}\n")
            return 127
        source_text = data.decode("utf-8", "surrogateescape")
        filename = child.dollar0 = child.script_name = path
        child.positional = list(args[1:])
        child.dash_c = False
    else:
        stream = sh.fds.get(0)
        data = stream.read() if stream is not None and stream.readable else b""
        source_text = data.decode("utf-8", "surrogateescape")
        child.positional = list(args)
        child.dash_c = False
        child.opts.add("s")  # $- shows it
    from kshell.exec.scripts import run_child  # on first use, not at start-up

    return run_child(child, source_text, filename, startup=lambda: _startup_files(child, name, inv))


_ = (os, Var)
