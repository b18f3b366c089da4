"""xargs (-0 -a -d -E -I -i -L -n -P -r -s -t -x): build command lines from standard input and
run them through the interpreter (a tool, a builtin with a /bin twin, or a VFS executable).

Exit status as GNU: 123 when a command exited 1-125, 124 on 255, 126/127 when a command
cannot run or is not found.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.exec.streams import NullStream
from kshell.tools.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.textio import message, open_chunks, read_all

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_LONG = {"null": ("0", NONE), "arg-file": ("a", REQUIRED), "delimiter": ("d", REQUIRED),
         "eof": ("E", OPTIONAL), "replace": ("i", OPTIONAL), "max-lines": ("l", OPTIONAL),
         "max-args": ("n", REQUIRED), "max-procs": ("P", REQUIRED),
         "no-run-if-empty": ("r", NONE), "max-chars": ("s", REQUIRED), "verbose": ("t", NONE),
         "exit": ("x", NONE), "open-tty": ("o", NONE), "interactive": ("p", NONE),
         "process-slot-var": ("psv", REQUIRED), "show-limits": ("show-limits", NONE),
         "help": ("help", NONE), "version": ("version", NONE)}
# builtins that exist as /usr/bin programs too, so xargs may run them
_BIN_BUILTINS = frozenset({"echo", "printf", "test", "[", "true", "false", "kill", "pwd"})
_TOKEN = re.compile(r"""'([^']*)'|"([^"]*)"|\\(.)|([^\s'"\\]+)|(\s+)""", re.S)


def _split_default(text: str, eof: str | None) -> tuple[list[tuple[str, int]], str]:
    """Items separated by blanks and newlines, with quotes and backslashes (line numbers kept),
    and the unmatched-quote error that ended the input early, if any."""
    items: list[tuple[str, int]] = []
    current: list[str] | None = None
    line = 1
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            break
        pos = m.end()
        sq, dq, esc, word, space = m.groups()
        if space is not None:
            if current is not None:
                item = "".join(current)
                if eof is not None and item == eof:
                    return items, ""
                items.append((item, line))
                current = None
            line += space.count("\n")
            continue
        current = current or []
        current.append(sq if sq is not None else dq if dq is not None else esc if esc is not None else word)
    if pos != len(text):
        kind = "single" if text[pos] == "'" else "double"
        return items, f"unmatched {kind} quote; by default quotes are special to xargs unless you use the -0 option"
    if current is not None:
        item = "".join(current)
        if eof is None or item != eof:
            items.append((item, line))
    return items, ""


@tool("xargs")
def xargs(sh: Interp, argv: list[str]) -> int:
    opts, command = parse(argv, "0a:d:E:e::I:i::L:l::n:P:rs:txop", _LONG, permute=False)
    null = False
    delim = None
    argfile = None
    eof = None
    replace = None
    max_lines = None
    max_args = None
    no_empty = verbose = False
    for key, value in opts:
        if key == "0":
            null = True
        elif key == "a":
            argfile = value
        elif key == "d":
            delim = _delimiter(value)
        elif key in ("E", "e"):
            eof = value or None
        elif key in ("I", "i"):
            replace = value if key == "I" else (value or "{}")
            max_lines = 1
        elif key in ("L", "l"):
            max_lines = _positive(value or "1", "-L")
            replace = None if key in ("L", "l") and replace is None else replace
        elif key == "n":
            max_args = _positive(value, "-n")
        elif key == "P":
            if not value.isdigit():
                raise Fail(f"invalid number \"{value}\" for -P option")
        elif key == "r":
            no_empty = True
        elif key == "s":
            _positive(value, "-s")
        elif key == "t":
            verbose = True
        elif key == "help":
            sh.out(b"Usage: xargs [OPTION]... COMMAND [INITIAL-ARGS]...\n")
            return 0
        elif key == "version":
            sh.out(b"xargs (GNU findutils) 4.9.0\n")
            return 0
    if not command:
        command = ["echo"]
    try:
        data = read_all(sh, argfile) if argfile is not None else b"".join(open_chunks(sh, "-"))
    except OSError as e:
        raise Fail(f"{argfile}: {message(e)}") from None
    text = data.decode("utf-8", "surrogateescape")
    late_error = ""
    if null or delim is not None:
        sep = "\0" if null else delim
        parts = text.split(sep)
        if parts and parts[-1] == "":
            parts.pop()
        items = [(p, i) for i, p in enumerate(parts)]
        if eof is not None and not null:
            pass
    elif replace is not None:
        items = []
        for i, line in enumerate(text.split("\n")):
            stripped = line.lstrip(" \t")
            if stripped or i < text.count("\n"):
                if stripped == "" and i == text.count("\n"):
                    continue
                if eof is not None and stripped == eof:
                    break
                items.append((stripped, i))
        items = [(s, i) for s, i in items if s != ""]
    else:
        items, late_error = _split_default(text, eof)
    batches: list[list[str]] = []
    if replace is not None:
        batches = [[it] for it, _ in items]
    elif max_lines is not None:
        current: list[str] = []
        lines_seen = 0
        last_line = None
        for it, ln in items:
            if ln != last_line:
                if last_line is not None:
                    lines_seen += 1
                if lines_seen >= max_lines:
                    batches.append(current)
                    current, lines_seen = [], 0
                last_line = ln
            current.append(it)
        if current:
            batches.append(current)
    elif max_args is not None:
        flat = [it for it, _ in items]
        batches = [flat[i : i + max_args] for i in range(0, len(flat), max_args)]
    else:
        flat = [it for it, _ in items]
        batches = [flat] if flat else []
    if not batches and not no_empty and replace is None and not late_error:
        batches = [[]]
    status = 0
    for batch in batches:
        cmd = [a.replace(replace, batch[0]) for a in command] if replace is not None else command + batch
        if verbose:
            sh.write_err(" ".join(cmd) + "\n")
        rc = _run(sh, cmd)
        if rc == 255:
            sh.write_err(f"xargs: {cmd[0]}: exited with status 255; aborting\n")
            return 124
        if rc in (126, 127):
            return rc
        if 1 <= rc <= 125:
            status = 123
        if rc >= 128:
            return 125
    if late_error:
        sh.write_err(f"xargs: {late_error}\n")
        return 1
    return status


def _positive(value: str, opt: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise Fail(f"invalid number \"{value}\" for {opt} option") from None
    if n < 1:
        raise Usage(f"value {value} for {opt} option should be >= 1")
    return n


def _delimiter(value: str) -> str:
    esc = {"\\n": "\n", "\\t": "\t", "\\0": "\0", "\\\\": "\\", "\\r": "\r", "\\a": "\a",
           "\\b": "\b", "\\f": "\f", "\\v": "\v"}
    if value in esc:
        return esc[value]
    if value.startswith("\\x"):
        return chr(int(value[2:], 16))
    if len(value) != 1:
        raise Fail(f"invalid input delimiter specification {value}: the delimiter must be either "
                   "a single character or an escape sequence starting with \\.")
    return value


def _run(sh: Interp, cmd: list[str]) -> int:
    name = cmd[0]
    saved = sh.fds
    sh.fds = dict(saved)
    sh.fds[0] = NullStream()
    try:
        tool_fn = sh.session.tools.get(name)
        if tool_fn is not None:
            return tool_fn(sh, cmd)
        if name in _BIN_BUILTINS:
            return sh.call_builtin(sh.builtins[name], cmd)
        if "/" not in name:
            from kshell.exec.scripts import find_in_path

            path, _ = find_in_path(sh, name)
            if path is None:
                sh.write_err(f"xargs: {name}: No such file or directory\n")
                return 127
        child = sh.fork()
        child.fds = sh.fds
        return child.run_subshell(lambda: child.run_external(cmd))
    finally:
        sh.fds = saved
