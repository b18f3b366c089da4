"""Builtins that manage variables and options: declare/typeset/local/export/readonly, unset,
set, shopt, shift, getopts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.builtins import Usage, builtin, getopt, numeric_arg
from kshell.core.variables import (
    ARRAY,
    ASSOC,
    EXPORT,
    FLAG_LETTERS,
    INTEGER,
    LOWER,
    NAMEREF,
    READONLY,
    UPPER,
    AssignArg,
    NameRef,
    Var,
    assoc_order,
)
from kshell.exec.options import LONG_ONLY, LONG_OPTIONS, SET_O_NAMES, SHOPTS, option_is_set
from kshell.exec.varops import ReadonlyError, split_element
from kshell.expand.params import quote_q
from kshell.syntax import parse
from kshell.syntax.printer import assoc_key_text, function_text, quote_dq, trace_value

if TYPE_CHECKING:
    from kshell.exec.interp import Interp


_LETTER_FLAGS = {"a": ARRAY, "A": ASSOC, "i": INTEGER, "l": LOWER, "u": UPPER, "r": READONLY,
                 "x": EXPORT, "n": NAMEREF}


def _declare_line(name: str, var: Var) -> str:
    letters = "".join(letter for letter, flag in FLAG_LETTERS if var.flags & flag) or "-"
    value = var.value
    if value is None:
        return f"declare -{letters} {name}" if letters != "-" else f"declare -- {name}"
    if type(value) is dict:
        return f"declare -{letters} {name}={_array_text(var)}"
    return f"declare -{letters} {name}={quote_dq(value)}"


def _array_text(var: Var) -> str:
    """An array's value as `declare -p` and `set` show it: `([0]="a" [1]="b")`, an
    associative array's keys quoted where needed and followed by a space, as bash's are."""
    value = var.value
    assert type(value) is dict
    if var.flags & ASSOC:
        body = " ".join(f"[{assoc_key_text(k)}]={quote_dq(value[k])}" for k in assoc_order(value))
        return f"({body} )" if body else "()"
    return f"({' '.join(f'[{k}]={quote_dq(v)}' for k, v in sorted(value.items()))})"


_USAGE = {
    "declare": "declare [-aAfFgiIlnrtux] [name[=value] ...] or declare -p [-aAfFilnrtux] [name ...]",
    "typeset": "typeset [-aAfFgiIlnrtux] name[=value] ... or typeset -p [-aAfFilnrtux] [name ...]",
    "local": "local [option] name[=value] ...",
    "export": "export [-fn] [name[=value] ...] or export -p",
    "readonly": "readonly [-aAf] [name[=value] ...] or readonly -p",
}


def _parse_flags(sh: Interp, argv: list[str], allowed: str) -> tuple[set[str], set[str], list[str]] | int:
    on: set[str] = set()
    off: set[str] = set()
    i = 1
    while i < len(argv):
        arg = argv[i]
        if isinstance(arg, AssignArg):
            break
        if arg == "--":
            i += 1
            break
        if len(arg) > 1 and arg[0] in "-+" and not isinstance(arg, AssignArg):
            target = on if arg[0] == "-" else off
            for c in arg[1:]:
                if c not in allowed:
                    sh.error(f"{argv[0]}: {arg[0]}{c}: invalid option")
                    usage = _USAGE.get(argv[0])
                    if usage:
                        sh.write_err(f"{argv[0]}: usage: {usage}\n")
                    return 2
                target.add(c)
            i += 1
            continue
        break
    return on, off, list(argv[i:])


def declare_common(sh: Interp, argv: list[str], *, local: bool = False, force: str = "") -> int:
    name0 = argv[0]
    parsed = _parse_flags(sh, argv, "aAilurxgpfFnt")
    if isinstance(parsed, int):
        return parsed
    on, off, args = parsed
    on |= set(force)
    if local and not sh.vars.frames:
        sh.error(f"{name0}: can only be used in a function")
        return 1
    in_function = bool(sh.vars.frames)
    make_local = (local or (name0 in ("declare", "typeset") and in_function)) and "g" not in on
    if "f" in on or "F" in on:
        names = args or sorted(sh.funcs)
        status = 0
        for n in names:
            if n not in sh.funcs:
                status = 1
                continue
            if "F" in on:  # named, a name alone; all of them, as declare -f lines (bash)
                sh.out(f"{n}\n" if args and "p" not in on else f"declare -f {n}\n")
            else:
                sh.out(function_text(sh.funcs[n]) + "\n")
        return status
    if local and not args:  # `local`, `local -p`: the variables of this function's own
        return _print_vars(sh, [], on | {"p"}, only=set(sh.vars.frames[-1]))
    if "p" in on or (not args and not (on - {"g"}) and not off):
        return _print_vars(sh, args, on, builtin=name0)
    if not args:
        return _print_vars(sh, [], on | {"p"})
    status = 0
    set_flags = 0
    clear_flags = 0
    for c in on:
        set_flags |= _LETTER_FLAGS.get(c, 0)
    for c in off:
        clear_flags |= _LETTER_FLAGS.get(c, 0)
    for arg in args:
        if isinstance(arg, AssignArg):
            name = arg.name
        else:
            name, eq, _ = arg.partition("=")
            if name.endswith("+") and eq:
                name = name[:-1]
            if "[" in name and name.endswith("]"):
                name = name[:-1].partition("[")[0]
        if not sh.is_valid_name(name):
            sh.error(f"{name0}: `{arg}': not a valid identifier")
            status = 1
            continue
        try:
            if make_local:
                if name not in sh.vars.frames[-1]:
                    old = sh.vars.table.get(name)
                    if old is not None and old.flags & READONLY:
                        sh.error(f"{name0}: {name}: readonly variable")
                        status = 1
                        continue
                    sh.vars.make_local(name)
                    new = Var(None, 0)
                    if old is not None and name in ("IFS",) or (old is not None and old.flags & EXPORT and False):
                        new.value = old.value if type(old.value) is str else None
                    sh.vars.table[name] = new
            elif "g" in on and sh.vars.frames:
                slot, key = sh.vars.global_slot(name)
                if slot is not sh.vars.table:
                    # operate on the global binding hidden under locals
                    saved_table = sh.vars.table
                    glob = slot.get(key)
                    if glob is None:
                        glob = Var(None, 0)
                        slot[key] = glob
                    tmp = {name: glob}
                    sh.vars.table = tmp
                    try:
                        status |= _declare_one(sh, name0, name, arg, set_flags, clear_flags)
                    finally:
                        sh.vars.table = saved_table
                    continue
            status |= _declare_one(sh, name0, name, arg, set_flags, clear_flags)
        except ReadonlyError as e:
            sh.error(f"{name0}: {e.name}: readonly variable" if name0 != "local" else f"{e.name}: readonly variable")
            status = 1
    return status


def _declare_one(sh: Interp, cmd: str, name: str, arg: str, set_flags: int, clear_flags: int) -> int:
    """One name of declare/typeset/local/export/readonly. Under `set -a` a scalar it creates
    or assigns is exported, as bash's bind does (a new local without a value is not: `local`
    made it before, and bash binds it no value); an array it assigns is not."""
    old = sh.vars.table.get(name)
    exported = old is not None and bool(old.flags & EXPORT)
    status = _declare_name(sh, cmd, name, arg, set_flags, clear_flags)
    var = sh.vars.table.get(name)
    if "a" not in sh.opts or status or var is None:
        return status
    if var.flags & (ARRAY | ASSOC):
        if not exported and not set_flags & EXPORT:
            var.flags &= ~EXPORT  # the assignment's own export (assign_scalar) undone
    elif old is None or isinstance(arg, AssignArg) or "=" in arg:
        var.flags |= EXPORT
    return status


def _declare_name(sh: Interp, cmd: str, name: str, arg: str, set_flags: int, clear_flags: int) -> int:
    table = sh.vars.table
    var = table.get(name)
    if var is not None and type(var.value) is NameRef and not (set_flags | clear_flags) & NAMEREF:
        target = sh.ref_target(name)  # `declare -i ref=1`: the target's attributes and value
        if target is not None and "[" not in target and target != name:
            return _declare_one(sh, cmd, target, arg, set_flags, clear_flags)
    if set_flags & NAMEREF or (var is not None and var.flags & NAMEREF and clear_flags & NAMEREF):
        return _declare_ref(sh, cmd, name, arg, set_flags, clear_flags)
    if var is None:
        var = table[name] = Var(None, 0)
    if var.flags & READONLY and (clear_flags & READONLY or isinstance(arg, AssignArg) or "=" in arg):
        # bash names the builtin for declare, typeset and local, not for export and readonly
        sh.error(f"{name}: readonly variable" if cmd in ("export", "readonly") else f"{cmd}: {name}: readonly variable")
        return 1
    if set_flags & ASSOC and var.flags & ARRAY and type(var.value) is dict and var.value:
        sh.error(f"{cmd}: {name}: cannot convert indexed to associative array")
        return 1
    if set_flags & ARRAY and var.flags & ASSOC:
        sh.error(f"{cmd}: {name}: cannot convert associative to indexed array")
        return 1
    ro = set_flags & READONLY
    var.flags = (var.flags | (set_flags & ~READONLY)) & ~clear_flags
    if set_flags & UPPER:
        var.flags &= ~LOWER
    if set_flags & LOWER and not set_flags & UPPER:
        var.flags &= ~UPPER
    if set_flags & (ARRAY | ASSOC) and type(var.value) is not dict:
        if var.value is not None:  # None stays: declared, not assigned (bash: unset)
            var.value = {0 if not set_flags & ASSOC else "0": var.value}
    if isinstance(arg, AssignArg):
        if arg.items is not None:
            sh.assign_array(name, arg.items, arg.append, assoc=bool(var.flags & ASSOC))
        elif arg.subscript is not None:
            sh.set_element(name, sh.element_key_text(name, arg.subscript), arg.value, arg.append)
        else:
            sh.assign_scalar(name, arg.value, arg.append)
    elif "=" in arg:
        n, _, value = arg.partition("=")
        append = n.endswith("+")
        if "[" in n and n.endswith("]"):
            _, _, sub = n[:-1].partition("[")
            sh.set_element(name, sh.element_key_text(name, sub), value, append)
        elif value.startswith("(") and value.endswith(")") and var.flags & (ARRAY | ASSOC):
            try:
                prog = parse(f"{name}={value}")
                lit = prog.commands[0].assigns[0].value
                sh.assign_array(name, sh.array_items(lit), append)
            except Exception:  # noqa: BLE001
                sh.assign_scalar(name, value, append)
        else:
            sh.assign_scalar(name, value, append)
    if ro:
        var = sh.vars.table.get(name) or var
        var.flags |= READONLY
    return 0


def _declare_ref(sh: Interp, cmd: str, name: str, arg: str, set_flags: int, clear_flags: int) -> int:
    """`declare -n ref[=target]` (the value is the target's name, never assigned through) and
    `declare +n ref` (the name becomes an ordinary value)."""
    table = sh.vars.table
    var = table.get(name)
    if var is None:
        var = table[name] = Var(None, 0)
    if isinstance(arg, AssignArg):
        if arg.items is not None or arg.subscript is not None:
            sh.error(f"{cmd}: {name}: reference variable cannot be an array")
            return 1
        value: str | None = arg.value
    elif "=" in arg:
        value = arg.partition("=")[2]
    else:
        value = None
    if var.flags & READONLY and (value is not None or clear_flags & READONLY):
        sh.error(f"{cmd}: {name}: readonly variable")
        return 1
    if set_flags & NAMEREF:
        if value is None and type(var.value) is str:
            value = var.value  # `x=y; declare -n x`: x now refers to y
        if value is not None:
            base = value[:-1].partition("[")[0] if value.endswith("]") else value
            if not sh.is_valid_name(base):
                sh.error(f"{cmd}: `{value}': invalid variable name for name reference")
                return 1
            if base == name:
                sh.error(f"{cmd}: {name}: nameref variable self references not allowed")
                return 1
            var.value = NameRef(value)
        if type(var.value) is dict:
            sh.error(f"{cmd}: {name}: reference variable cannot be an array")
            return 1
    else:
        var.value = str(var.value) if var.value is not None else None
        if value is not None:
            var.value = value
    var.flags = (var.flags | set_flags) & ~clear_flags & ~(ARRAY | ASSOC | INTEGER | LOWER | UPPER)
    return 0


_DYNAMIC_ARRAYS = ("DIRSTACK", "FUNCNAME", "PIPESTATUS")  # kept by the shell, not in the table


def _dynamic(sh: Interp, name: str) -> Var | None:
    """An array bash keeps up to date itself (PIPESTATUS, DIRSTACK, FUNCNAME), as declare shows
    it while it has elements; K computes them when read."""
    if name not in _DYNAMIC_ARRAYS:
        return None
    values = sh.array_values(name)
    return Var(dict(enumerate(values)), ARRAY) if values else None


def _print_vars(sh: Interp, names: list[str], on: set[str], only: set[str] | None = None,
                builtin: str = "declare") -> int:
    status = 0
    table = sh.vars.table
    want = 0
    for c in on:
        want |= _LETTER_FLAGS.get(c, 0)
    if names:
        for name in names:
            var = table.get(name) or _dynamic(sh, name)
            if var is None:
                sh.error(f"{builtin}: {name}: not found")
                status = 1
                continue
            sh.out(_declare_line(name, var) + "\n")
        return status
    lines = []
    for name in sorted(table if only is None else only & table.keys()):
        var = table[name]
        if want and not var.flags & want:
            continue
        if "p" in on or want:
            lines.append(_declare_line(name, var))
        elif var.value is not None:
            if type(var.value) is dict:
                lines.append(f"{name}={_array_text(var)}")
            else:
                lines.append(f"{name}={quote_q(var.value) if _needs_quote(var.value) else var.value}")
    if not ("p" in on or want):
        for fname in sorted(sh.funcs):
            lines.append(function_text(sh.funcs[fname]))
    sh.out("".join(line + "\n" for line in lines))
    return status


def _needs_quote(value: str) -> bool:
    return value == "" or any(not (c.isalnum() or c in "@%+=:,./_-^") for c in value)


@builtin("declare", "typeset")
def declare(sh: Interp, argv: list[str]) -> int:
    return declare_common(sh, argv)


@builtin("local")
def local(sh: Interp, argv: list[str]) -> int:
    return declare_common(sh, argv, local=True)


@builtin("export")
def export(sh: Interp, argv: list[str]) -> int:
    parsed = _parse_flags(sh, argv, "fnp")
    if isinstance(parsed, int):
        return parsed
    on, _, args = parsed
    if not args or "p" in on:
        for name in sorted(sh.vars.table):
            var = sh.vars.table[name]
            if var.flags & EXPORT:
                line = _declare_line(name, var)
                sh.out(line.replace("declare --", "declare -x", 1) + "\n")
        return 0
    if "n" in on:
        for arg in args:
            var = sh.vars.table.get(str(arg).partition("=")[0])
            if var is not None:
                var.flags &= ~EXPORT
        return 0
    status = 0
    for arg in args:
        name = arg.name if isinstance(arg, AssignArg) else arg.partition("=")[0].rstrip("+")
        if not sh.is_valid_name(name):
            sh.error(f"export: `{arg}': not a valid identifier")
            status = 1
            continue
        try:
            if isinstance(arg, AssignArg) or "=" in arg:
                _trace_assignment(sh, name, arg)
                if _declare_one(sh, "export", name, arg, 0, 0):
                    status = 1  # and bash exports it all the same
            var = sh.vars.table.get(name)
            if var is None:
                var = sh.vars.table[name] = Var(None, 0)
            var.flags |= EXPORT
        except ReadonlyError as e:
            sh.error(f"{e.name}: readonly variable")
            status = 1
    return status


def _trace_assignment(sh: Interp, name: str, arg: str) -> None:
    """set -x: export and readonly show each assignment they make again, as bash does."""
    if "x" not in sh.opts or not (isinstance(arg, AssignArg) or "=" in arg):
        return

    if isinstance(arg, AssignArg) and arg.items is not None:
        return  # traced before the command (Interp.trace_words)
    shown = trace_value(arg.value if isinstance(arg, AssignArg) else arg.partition("=")[2],
                        sh.utf8_locale())
    append = "+" if (arg.append if isinstance(arg, AssignArg) else arg.partition("=")[0].endswith("+")) else ""
    sh.write_err(f"{sh.ps4()}{name}{append}={shown}\n")


@builtin("readonly")
def readonly(sh: Interp, argv: list[str]) -> int:
    parsed = _parse_flags(sh, argv, "aAfp")
    if isinstance(parsed, int):
        return parsed
    on, _, args = parsed
    if not args or "p" in on:
        for name in sorted(sh.vars.table):
            var = sh.vars.table[name]
            if var.flags & READONLY:
                sh.out(_declare_line(name, var) + "\n")
        return 0
    status = 0
    extra = (ARRAY if "a" in on else 0) | (ASSOC if "A" in on else 0)
    for arg in args:
        name = arg.name if isinstance(arg, AssignArg) else arg.partition("=")[0].rstrip("+")
        if not sh.is_valid_name(name):
            sh.error(f"readonly: `{arg}': not a valid identifier")
            status = 1
            continue
        _trace_assignment(sh, name, arg)
        kind = extra
        if kind and "=" not in arg and name not in sh.vars.table:
            kind = 0  # bash: `readonly -a x` without a value makes x readonly, not an array
        status |= _declare_one(sh, "readonly", name, arg, kind | READONLY, 0)
    return status


@builtin("unset")
def unset(sh: Interp, argv: list[str]) -> int:
    try:
        found, args = getopt(sh, "unset", argv[1:], "fvn", "unset [-f] [-v] [-n] [name ...]")
    except Usage:
        return 2
    flags = {c for c, _ in found}
    if {"f", "v"} <= flags:
        sh.error("unset: cannot simultaneously unset a function and a variable")
        return 1
    mode = "f" if "f" in flags else found[-1][0] if found else ""  # the last of -v and -n
    status = 0
    for name in args:
        if mode == "f":
            sh.funcs.pop(name, None)
            continue
        if mode == "n" and sh.is_valid_name(name) and name in sh.vars.table:
            if not sh.unset_var(name, follow=False):
                status = 1
            continue
        element = split_element(name)
        if element is not None:
            if not sh.unset_element(*element):
                status = 1
            continue
        if "[" in name and name.endswith("]"):
            continue  # bash: `unset 'a b[0]'` is quietly nothing
        if not sh.is_valid_name(name):
            if mode == "v" or name in ("",) or "=" in name:
                sh.error(f"unset: `{name}': not a valid identifier")
                status = 1
            else:
                sh.funcs.pop(name, None)
            continue
        if name in sh.vars.table:
            if not sh.unset_var(name):
                status = 1
        elif mode != "v" and name in sh.funcs:
            sh.funcs.pop(name, None)
    return status


# --------------------------------------------------------------------------- set / shopt

SET_LETTERS = "abefhkmnptuvxBCEHPT"  # bash's, less -i (never by set) and -r (not in K)
_SET_USAGE = "set: usage: set [-abefhkmnptuvxBCEHPT] [-o option-name] [--] [-] [arg ...]\n"
# variables that options bind when they go on and unbind when they go off, as bash's do
_OPTION_VARS = {"posix": ("POSIXLY_CORRECT", "y"), "ignoreeof": ("IGNOREEOF", "10")}


def set_flag(sh: Interp, letter: str, on: bool) -> None:
    """`set -X` / `set +X` for one letter of SET_LETTERS (-f also switches globbing)."""
    if on:
        sh.opts.add(letter)
    else:
        sh.opts.discard(letter)
    if letter == "f":
        sh.noglob = on


def set_long_option(sh: Interp, name: str, on: bool) -> bool:
    """`set -o name` / `set +o name`; False when there is no such option."""
    if name in LONG_OPTIONS:
        set_flag(sh, LONG_OPTIONS[name], on)
    elif name == "pipefail":
        sh.pipefail = on
    elif name == "interactive-comments":
        (sh.shopts.add if on else sh.shopts.discard)("interactive_comments")
    elif name in LONG_ONLY:
        if on and name in ("emacs", "vi"):  # one editing mode at a time
            sh.opts.discard("vi" if name == "emacs" else "emacs")
        if name in _OPTION_VARS and not (name == "posix" and on == (name in sh.opts)):
            var, value = _OPTION_VARS[name]
            try:
                if on:
                    sh.assign_scalar(var, value)
                else:
                    sh.unset_var(var)
            except ReadonlyError as e:
                sh.error(f"{e.name}: readonly variable")
        (sh.opts.add if on else sh.opts.discard)(name)
    else:
        return False
    return True


def _option_line(name: str, on: bool, reusable: str) -> str:
    """One option as bash shows it: `name<tab>on` (padded to 15), or with `reusable` as the
    command that sets it again: `set -o name` ("set") or `shopt -s name` ("shopt")."""
    if reusable == "set":
        return f"set {'-' if on else '+'}o {name}\n"
    if reusable == "shopt":
        return f"shopt {'-s' if on else '-u'} {name}\n"
    return f"{name:<15}\t{'on' if on else 'off'}\n"


def list_options(sh: Interp, reusable: bool, only: bool | None = None) -> None:
    """bash's list_minus_o_opts: the `set -o` options (`only` those on, or off), as a table
    (`set -o`) or as commands (`set +o`, `shopt -po`)."""
    states = ((name, option_is_set(sh, name)) for name in SET_O_NAMES)
    sh.out("".join(_option_line(name, on, "set" if reusable else "")
                   for name, on in states if only is None or on == only))


def _first_bad_flag(args: list[str]) -> str | None:
    """bash checks all of set's flag words before it applies any (internal_getopt): the first
    invalid flag (`-Z`, `+Z`), else None. `-o` takes the rest of its word, or the next word
    when that is no flag word, as its option name, which this check skips."""
    i = 0
    while i < len(args):
        arg = args[i]
        if len(arg) < 2 or arg[0] not in "-+" or arg == "--":
            return None
        for j, c in enumerate(arg[1:], 1):
            if c == "o":
                nxt = args[i + 1] if i + 1 < len(args) else "-"
                if j == len(arg) - 1 and (len(nxt) < 2 or nxt[0] not in "-+"):
                    i += 1
                break
            if c not in SET_LETTERS:
                return arg[0] + c
        i += 1
    return None


@builtin("set")
def set_builtin(sh: Interp, argv: list[str]) -> int:
    """bash's set: flag words (`-eu`, `+x`, a lone `+` that sets nothing, `-o name`, a bare
    `-o` that lists the options) up to the first other word, which starts the positional
    parameters. `--` ends the flags and always sets the positional parameters (none left:
    unsets them); `-` ends them too, turns -x and -v off, and sets them only when words follow."""
    args = argv[1:]
    if not args:
        return _print_vars(sh, [], set())
    bad = _first_bad_flag(args)
    if bad is not None:
        sh.error(f"set: {bad}: invalid option")
        sh.write_err(_SET_USAGE)
        return 0 if bad[1] == "?" else 2
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-", "--"):
            if arg == "-":
                set_flag(sh, "x", False)
                set_flag(sh, "v", False)
            if arg == "--" or i + 1 < len(args):
                sh.positional = list(args[i + 1 :])
            return 0
        if arg[:1] not in ("-", "+"):
            sh.positional = list(args[i:])
            return 0
        on = arg[0] == "-"
        for c in arg[1:]:
            if c == "o":
                name = args[i + 1] if i + 1 < len(args) else ""
                if name[:1] in ("", "-", "+"):  # no name follows: list the options
                    list_options(sh, reusable=not on)
                    continue
                i += 1
                if not set_long_option(sh, name, on):
                    sh.error(f"set: {name}: invalid option name")
                    return 2
            elif c in SET_LETTERS:
                set_flag(sh, c, on)
            else:  # a letter after an inline `-oNAME`, which the check took for o's name
                sh.error(f"set: {arg[0]}{c}: invalid option")
                sh.write_err(_SET_USAGE)
                return 1
        i += 1
    return 0


_SHOPT_READONLY = ("login_shell", "restricted_shell")  # what the shell is: shopt -s/-u ignore them
_SHOPT_USAGE = "shopt: usage: shopt [-pqsu] [-o] [optname ...]\n"


def set_shopts(sh: Interp, names: list[str], on: bool, where: str | None = None) -> int:
    """`shopt -s names` / `shopt -u names`: 1 if a name is no option. `bash -O name` gives
    `where` its message starts with, for shopt's own."""
    status = 0
    for name in names:
        if name not in SHOPTS:
            if where is None:
                sh.error(f"shopt: {name}: invalid shell option name")
            else:
                sh.write_err(f"{where}{name}: invalid shell option name\n")
            status = 1
        elif name not in _SHOPT_READONLY:
            (sh.shopts.add if on else sh.shopts.discard)(name)
    return status


def list_shopts(sh: Interp, reusable: bool, only: bool | None = None) -> None:
    """Every shopt option (`only` those on, or off): a table, or `shopt -s/-u` commands."""
    sh.out("".join(_option_line(name, name in sh.shopts, "shopt" if reusable else "")
                   for name in SHOPTS if only is None or (name in sh.shopts) == only))


@builtin("shopt")
def shopt(sh: Interp, argv: list[str]) -> int:
    """bash's shopt. Names (or none: every option) are shown as a table, or with -p as
    `shopt -s/-u` commands; -s/-u set them (none: list those on/off); -q only answers by
    the status, 1 when a named option is off. -o works on the `set -o` options instead
    (`set -o`/`set +o` format); an unknown name there is reported but leaves the status 0
    when setting, as in bash."""
    flags = ""
    args = argv[1:]
    while args and len(args[0]) > 1 and args[0][0] == "-":
        arg = args.pop(0)
        if arg == "--":
            break
        for c in arg[1:]:
            if c not in "pqsuo":
                sh.error(f"shopt: -{c}: invalid option")
                sh.write_err(_SHOPT_USAGE)
                return 2
        flags += arg[1:]
    if "s" in flags and "u" in flags:
        sh.error("shopt: cannot set and unset shell options simultaneously")
        return 1
    setting = "s" in flags or "u" in flags
    on = "s" in flags
    quiet = "q" in flags
    reusable = "p" in flags
    if setting and args:
        if "o" not in flags:
            return set_shopts(sh, args, on)
        for name in args:
            if not set_long_option(sh, name, on):
                sh.error(f"shopt: {name}: invalid option name")
        return 0
    if not args:
        if not quiet:
            only = on if setting else None
            if "o" in flags:
                list_options(sh, reusable, only)
            else:
                list_shopts(sh, reusable, only)
        return 0
    status = 0
    for name in args:
        if "o" in flags:
            valid, value = name in SET_O_NAMES, option_is_set(sh, name)
        else:
            valid, value = name in SHOPTS, name in sh.shopts
        if not valid:
            sh.error(f"shopt: {name}: invalid {'' if 'o' in flags else 'shell '}option name")
            status = 1
            continue
        if not value:
            status = 1
        if not quiet:
            sh.out(_option_line(name, value, ("set" if "o" in flags else "shopt") if reusable else ""))
    return status


@builtin("shift")
def shift(sh: Interp, argv: list[str]) -> int:
    n = 1
    args = argv[2:] if argv[1:2] == ["--"] else argv[1:]
    if args:
        number = numeric_arg(sh, "shift", args)
        if number is None:
            return 1
        n = number
        if n < 0:
            sh.error(f"shift: {args[0]}: shift count out of range")
            return 1
    if n > len(sh.positional):
        return 1
    sh.positional = sh.positional[n:]
    return 0


@builtin("getopts")
def getopts(sh: Interp, argv: list[str]) -> int:
    if len(argv) < 3:
        sh.write_err("getopts: usage: getopts optstring name [arg ...]\n")
        return 2
    optstring = argv[1]
    name = argv[2]
    valid = sh.is_valid_name(name)
    if not valid:  # bash goes on (OPTIND, OPTARG) and fails only the assignment
        sh.error(f"getopts: `{name}': not a valid identifier")
    silent_msgs = sh.get_param_or_none("OPTERR") == "0"
    args = argv[3:] if len(argv) > 3 else list(sh.positional)
    silent = optstring.startswith(":")
    if silent:
        optstring = optstring[1:]
    try:
        optind = int(sh.get_param("OPTIND") or "1")
    except ValueError:
        optind = 1
    if optind < 1:
        optind = 1
    pos = getattr(sh, "getopts_char", 1)
    if getattr(sh, "getopts_last_optind", None) != optind:
        pos = 1

    bound = [valid]  # whether `name` took the option: bash returns 2 when it is readonly

    def finish(ind: int, p: int) -> int:
        sh.getopts_char = p
        sh.getopts_last_optind = ind
        sh.assign_scalar("OPTIND", str(ind))
        return 0 if bound[0] else 1 if not valid else 2

    def found(value: str) -> None:
        if valid:
            try:
                sh.assign_scalar(name, value)
            except ReadonlyError as e:
                sh.error(f"{e.name}: readonly variable")
                bound[0] = False

    def optarg(value: str | None) -> None:
        """Set or unset OPTARG; bash's getopts unbinds it first when it is readonly (and the
        new one is not)."""
        var = sh.vars.table.get("OPTARG")
        if var is not None and var.flags & READONLY:
            del sh.vars.table["OPTARG"]
        if value is None:
            sh.unset_var("OPTARG")
        else:
            sh.assign_scalar("OPTARG", value)

    def end(ind: int) -> int:
        """No more options: `?`, OPTARG unset, OPTIND at most one past the arguments."""
        found("?")
        optarg(None)
        finish(min(ind, len(args) + 1), 1)
        return 1

    if optind > len(args):
        return end(optind)
    arg = args[optind - 1]
    if pos == 1:
        if arg == "--":
            return end(optind + 1)
        if not arg.startswith("-") or arg == "-":
            return end(optind)
    c = arg[pos]
    nxt_pos = pos + 1
    nxt_ind = optind
    if nxt_pos >= len(arg):
        nxt_ind += 1
        nxt_pos = 1
    idx = optstring.find(c) if c != ":" else -1
    if idx < 0:
        if silent:
            optarg(c)
        else:
            if not silent_msgs:
                sh.write_err(f"{sh.script_name}: illegal option -- {c}\n")
            optarg(None)
        found("?")
        return finish(nxt_ind, nxt_pos)
    if idx + 1 < len(optstring) and optstring[idx + 1] == ":":
        if nxt_pos != 1:
            optarg(arg[nxt_pos:])
            nxt_ind += 1
            nxt_pos = 1
        elif nxt_ind <= len(args):
            optarg(args[nxt_ind - 1])
            nxt_ind += 1
        else:
            if silent:
                found(":")
                optarg(c)
            else:
                if not silent_msgs:
                    sh.write_err(f"{sh.script_name}: option requires an argument -- {c}\n")
                found("?")
                optarg(None)
            return finish(nxt_ind, nxt_pos)
    else:
        optarg(None)
    found(c)
    return finish(nxt_ind, nxt_pos)
