"""awk, as GNU awk 5.2 for the POSIX language (-F -v -f, BEGIN/END, patterns and ranges, fields,
arrays, user functions, printf, getline, redirections to VFS files and K shell commands).

`parse` reads the program into a tree, `compile` turns it into Python functions once (its
source compiled with compile()), `runtime` holds records, fields and I/O. Messages and
statuses follow gawk (syntax errors exit 1, fatal 2).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from kshell.core.errors import SigPipe
from kshell.tools.awk.compile import compile_program
from kshell.tools.awk.helpers import Exit, Next, NextFile
from kshell.tools.awk.parse import AwkSyntaxError, Parser
from kshell.tools.awk.runtime import Runtime, _escapes_str
from kshell.tools.awk.usage import USAGE
from kshell.tools.awk.values import AwkFatal, field, to_bool
from kshell.core.options import REQUIRED, Usage, parse
from kshell.tools.text.textio import message, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"field-separator": ("F", REQUIRED), "assign": ("v", REQUIRED), "file": ("f", REQUIRED),
         "help": ("h", 0), "version": ("V", 0), "posix": ("P", 0), "traditional": ("c", 0)}


def _latin(text: str) -> str:
    return text.encode("utf-8", "surrogateescape").decode("latin-1")


def awk(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, operands = parse(argv, "F:v:f:hVPc", _LONG, permute=False)
    except Usage as e:
        shown = f"awk: {e.message}\n" if e.message.startswith("option requires") else ""
        sh.write_err(shown + USAGE)
        return 1
    fs: str | None = None
    assigns: list[str] = []
    sources: list[tuple[str, str]] = []
    for key, value in opts:
        if key == "F":
            fs = _latin(value)
        elif key == "v":
            assigns.append(_latin(value))
        elif key == "f":
            try:
                data = read_all(sh, value)
            except OSError as e:
                sh.write_err(f"awk: fatal: cannot open source file `{value}' for reading: {message(e)}\n")
                return 2
            sources.append((data.decode("latin-1"), value))
        elif key == "h":
            sh.out(USAGE)
            return 0
        elif key == "V":
            sh.out("GNU Awk 5.2.1, API 3.2\n")
            return 0
    if not sources:
        if not operands:
            sh.write_err(USAGE)
            return 1
        sources.append((_latin(operands.pop(0)), ""))
    text = "\n".join(s for s, _ in sources)
    names: list[str] = []
    for src, name in sources:
        count = src.count("\n") + 1
        names.extend(f"{name}:{i}" if name else f"cmd. line:{i}" for i in range(1, count + 1))
    rt = Runtime(sh)
    try:
        begins, ends, rules, funcs = Parser(text, names).program()
    except AwkSyntaxError as e:
        sh.write_err(e.message)
        return 1
    try:
        for a in assigns:
            name, eq, value = a.partition("=")
            if not eq or not name.replace("_", "a").isalnum() or name[0].isdigit():
                sh.write_err(f"awk: fatal: `{a}' is not a legal variable name\n" if eq else
                             f"awk: fatal: `{a}' argument to `-v' not in `var=value' form\n")
                return 2
            rt.assign_arg(name, value)
        if fs is not None:
            rt.vars["FS"] = "\t" if fs == "t" else _escapes_str(fs)
        argv_arr = {"0": "awk"}
        for i, op in enumerate(operands, 1):
            argv_arr[str(i)] = field(_latin(op))
        rt.vars["ARGV"] = argv_arr
        rt.vars["ARGC"] = float(len(operands) + 1)
        return _run(rt, begins, ends, rules, funcs)
    except AwkFatal as e:
        _fatal(rt, e)
        return e.status
    except SigPipe:
        return 141


def _fatal(rt: Runtime, e: AwkFatal) -> None:
    with contextlib.suppress(OSError):
        rt.flush()
    if e.message:
        rt.sh.write_err(f"awk: cmd. line:1: fatal: {e.message}\n")


def _run(rt: Runtime, begins: list, ends: list, rules: list, funcs: dict) -> int:
    begin, main, end = compile_program(rt, begins, ends, rules, funcs)
    status = 0
    exiting = False
    try:
        if begin is not None:
            try:
                begin()
            except Exit as x:
                exiting = True
                status = x.status or 0
            except (Next, NextFile):
                raise AwkFatal("`next' used in BEGIN action") from None
        if not exiting and (rules or end is not None):
            try:
                main()
            except Exit as x:
                status = x.status or 0
        if end is not None:
            try:
                end()
            except Exit as x:
                if x.status is not None:
                    status = x.status
    finally:
        try:
            rt.flush()
        finally:
            rt.close_all()
    rt.flush()
    return status


__all__ = ["awk", "to_bool"]
