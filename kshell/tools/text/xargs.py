"""xargs (-0 -a -d -E -I -i -L -n -P -r -s -t -x): build command lines from standard input and
run them through the interpreter (a tool, a builtin with a /bin twin, or a VFS executable).

Exit status as GNU: 123 when a command exited 1-125, 124 on 255, 126/127 when a command
cannot run or is not found.

`-P N` runs up to N commands at once (`-P 0`: as many as possible, up to MAX_PROCS), each on
its own thread in a subshell of the xargs command, as background jobs run: their writes go
straight to the shared stdout and stderr (one write at a time), so output interleaves per write
as GNU's does; the command's cancel flag (Ctrl-C, wall time, a job stop) reaches every one.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kshell.core.variables import EXPORT, Var
from kshell.exec.streams import NullStream, Stream
from kshell.exec.system import PROGRAM_BUILTINS
from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, tool
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
MAX_PROCS = 64  # `-P 0`: "as many as possible", bounded: each is a thread
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
    procs = 1
    slot_var = None
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
            if re.fullmatch(r"-\d+", value):
                raise Usage(f"value {value} for -P option should be >= 0")
            if not value.isdigit():
                raise Usage(f"invalid number \"{value}\" for -P option")
            procs = int(value) or MAX_PROCS
        elif key == "psv":
            slot_var = value
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
    cmds = ([a.replace(replace, batch[0]) for a in command] if replace is not None else command + batch
            for batch in batches)
    if procs > 1 or slot_var is not None:
        status = _run_parallel(sh, cmds, min(procs, MAX_PROCS), verbose, slot_var)
        if status >= 124:
            return status
    else:
        status = 0
        for cmd in cmds:
            if verbose:
                sh.write_err(" ".join(cmd) + "\n")
            rc = _run(sh, cmd)
            stop, status = _judge(sh, cmd, rc, status)
            if stop:
                return status
    if late_error:
        sh.write_err(f"xargs: {late_error}\n")
        return 1
    return status


def _judge(sh: Interp, cmd: list[str], rc: int, status: int) -> tuple[bool, int]:
    """GNU's verdict on one invocation: (stop running more, xargs's status so far). After 255
    GNU still exits 123 when an earlier command failed (its exit handler reports that one)."""
    if status >= 124:  # already aborting: commands still running do not change the verdict
        return True, status
    if rc == 255:
        sh.write_err(f"xargs: {cmd[0]}: exited with status 255; aborting\n")
        return True, 123 if status == 123 else 124
    if rc in (126, 127):
        return True, rc
    if rc >= 128:
        return True, 125
    if rc:
        return False, 123
    return False, status


class _Shared(Stream):
    """A stream several commands write at once: one write at a time, whole."""

    def __init__(self, inner: Stream) -> None:
        self.inner = inner
        self.name = inner.name
        self.writable = inner.writable
        self.lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self.lock:
            self.inner.write(data)

    def flush(self) -> None:
        with self.lock:
            self.inner.flush()


def _run_parallel(sh: Interp, cmds: Iterable[list[str]], procs: int, verbose: bool,
                  slot_var: str | None) -> int:
    """Run the command lines, up to `procs` at once, each on a thread in a subshell of `sh`;
    stop starting new ones after a fatal verdict (255, cannot run, not found) and wait for the
    running ones, as GNU does. Returns xargs's status."""
    cancel = sh.session.cancel
    fds = dict(sh.fds)
    for fd in (1, 2):
        if fds.get(fd) is not None:
            fds[fd] = _Shared(fds[fd])
    cv = threading.Condition()
    free = list(range(procs))  # process slots, as --process-slot-var numbers them
    results: list[tuple[list[str], int]] = []
    errors: list[BaseException] = []
    status = 0
    stop = False
    threads: list[threading.Thread] = []

    def run_one(child: Interp, cmd: list[str], slot: int) -> None:
        rc = 1
        try:
            rc = _run(child, cmd)
        except BaseException as e:  # noqa: BLE001 - re-raised by xargs itself
            errors.append(e)
        finally:
            for fd in (1, 2):
                stream = child.fds.get(fd)
                if stream is not None:
                    try:
                        stream.flush()
                    except BaseException as e:  # noqa: BLE001 - re-raised by xargs itself (SigPipe too)
                        errors.append(e)
            with cv:
                results.append((cmd, rc))
                free.append(slot)
                cv.notify_all()

    def settle() -> None:
        nonlocal status, stop
        while results:
            cmd, rc = results.pop(0)
            fatal, status = _judge(sh, cmd, rc, status)
            stop = stop or fatal or bool(errors)

    def wait_for(condition) -> None:
        with cv:
            while not condition():
                cv.wait(0.05)
                cancel.check()

    for cmd in cmds:
        wait_for(lambda: bool(free) or bool(results))
        with cv:
            settle()
        if stop:
            break
        if verbose:
            sh.write_err(" ".join(cmd) + "\n")
        if _missing(sh, cmd[0]):  # GNU learns this before it starts another command
            _, status = _judge(sh, cmd, 127, status)
            break
        wait_for(lambda: bool(free))
        with cv:
            slot = free.pop(0)
        child = sh.fork()
        child.fds = dict(fds)
        if slot_var is not None:
            child.vars.table[slot_var] = Var(str(slot), EXPORT)
        threads.append(sh.start_thread(run_one, (child, cmd, slot), f"k-xargs-{child.pid}"))
    wait_for(lambda: len(free) == procs)
    with cv:
        settle()
    if errors:
        raise errors[0]
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


def _missing(sh: Interp, name: str) -> bool:
    """A command name that is no tool, no runnable builtin and not on PATH: say so, as GNU."""
    if sh.tool(name) is not None or name in PROGRAM_BUILTINS or "/" in name:
        return False
    from kshell.exec.scripts import find_in_path

    if find_in_path(sh, name)[0] is None:
        sh.write_err(f"xargs: {name}: No such file or directory\n")
        return True
    return False


def _run(sh: Interp, cmd: list[str]) -> int:
    name = cmd[0]
    saved = sh.fds
    sh.fds = dict(saved)
    sh.fds[0] = NullStream()
    try:
        tool_fn = sh.tool(name)
        if tool_fn is not None:
            return tool_fn(sh, cmd)
        if name in PROGRAM_BUILTINS:
            return sh.call_builtin(sh.builtins[name], cmd)
        if _missing(sh, name):
            return 127
        child = sh.fork()
        child.fds = sh.fds
        return child.run_subshell(lambda: child.run_external(cmd))
    finally:
        sh.fds = saved
