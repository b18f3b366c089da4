"""Small text tools: yes, sleep, timeout, tac, rev, as GNU coreutils/util-linux."""

from __future__ import annotations

import contextlib
import errno
import re
import signal
import time
from typing import TYPE_CHECKING

from kshell.exec import devices, regexes
from kshell.exec.streams import Cancel
from kshell.limits import LimitExceeded
from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.regex import RegexError, translate
from kshell.tools.text.textio import Output, message, read_all

if TYPE_CHECKING:
    from kshell.exec.interp import Interp


@tool("yes")
def yes(sh: Interp, argv: list[str]) -> int:
    _, operands = parse(argv, "", {"help": ("help", NONE), "version": ("version", NONE)})
    line = ((" ".join(operands) if operands else "y") + "\n").encode("utf-8", "surrogateescape")
    block = line * max(1, 8192 // len(line))
    stream = sh.fds.get(1)
    cancel = sh.session.cancel
    if stream is None:
        raise Fail("standard output: Bad file descriptor")
    while True:
        stream.write(block)
        cancel.check()


_DURATION = re.compile(r"(\+?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)([smhd]?)\Z")


def _seconds(text: str) -> float | None:
    m = _DURATION.match(text)
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def pause(sh: Interp, seconds: float) -> None:
    """Sleep in small steps, ending early (LimitExceeded) when the command is cancelled."""
    cancel = sh.session.cancel
    end = time.monotonic() + seconds
    while True:
        cancel.check()
        left = end - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, 0.05))


@tool("sleep")
def sleep(sh: Interp, argv: list[str]) -> int:
    _, operands = parse(argv, "", {"help": ("help", NONE), "version": ("version", NONE)})
    if not operands:
        raise Usage("missing operand")
    total = 0.0
    for op in operands:
        s = _seconds(op)
        if s is None:
            raise Usage(f"invalid time interval '{op}'")
        total += s
    pause(sh, total)
    return 0


def _signal_number(spec: str) -> int:
    """A signal name (TERM, SIGTERM) or number, as timeout -s takes it."""
    if spec.isdigit():
        if int(spec) < 65:
            return int(spec)
    else:
        name = spec.upper()
        name = name if name.startswith("SIG") else "SIG" + name
        with contextlib.suppress(KeyError):
            return int(signal.Signals[name])
    raise Usage(f"'{spec}': invalid signal")


@tool("timeout", usage_status=125)
def timeout(sh: Interp, argv: list[str]) -> int:
    opts, operands = parse(argv, "k:s:v", {"kill-after": ("k", REQUIRED), "signal": ("s", REQUIRED),
                                           "preserve-status": ("p", NONE), "foreground": ("f", NONE),
                                           "verbose": ("v", NONE), "help": ("help", NONE)},
                           permute=False)
    preserve = any(k == "p" for k, _ in opts)
    signum = signal.SIGTERM
    for key, value in opts:
        if key == "s":
            signum = _signal_number(value)
    if len(operands) < 2:
        sh.write_err("Try 'timeout --help' for more information.\n")
        return 125
    limit = _seconds(operands[0])
    if limit is None:
        raise Usage(f"invalid time interval '{operands[0]}'")
    session = sh.session
    outer = session.cancel
    inner = Cancel(min(outer.deadline, time.monotonic() + limit) if limit > 0 else outer.deadline, outer)
    inner.signal = signum
    session.cancel = inner
    try:
        return _run_keep_stdin(sh, operands[1:])
    except LimitExceeded:
        if outer.cancelled or time.monotonic() > outer.deadline:
            raise
        # GNU: the command's own status under --preserve-status (killed: 128 + the signal);
        # with KILL timeout signals its own process group and dies with it (137)
        if preserve or signum == signal.SIGKILL:
            return 128 + signum
        return 124
    finally:
        session.cancel = outer


def _run_keep_stdin(sh: Interp, cmd: list[str]) -> int:
    name = cmd[0]
    tool_fn = sh.tool(name)
    if tool_fn is not None:
        return tool_fn(sh, cmd)
    if name in sh.builtins:
        return sh.call_builtin(sh.builtins[name], cmd)
    from kshell.exec.scripts import find_in_path

    if "/" not in name and find_in_path(sh, name)[0] is None:
        sh.write_err(f"timeout: failed to run command '{name}': No such file or directory\n")
        return 127
    if "/" in name and find_in_path(sh, name)[0] is None:  # execvp's errors, reported by timeout itself
        try:
            runnable = not sh.fs.stat(name).is_dir and sh.fs.access(name, 1)
        except OSError as e:
            sh.write_err(f"timeout: failed to run command '{name}': {message(e)}\n")
            return 127 if e.errno == errno.ENOENT else 126
        if not runnable:
            sh.write_err(f"timeout: failed to run command '{name}': Permission denied\n")
            return 126
    child = sh.fork()
    return child.run_subshell(lambda: child.run_external(cmd))


@tool("tac")
def tac(sh: Interp, argv: list[str]) -> int:
    opts, files = parse(argv, "brs:", {"before": ("b", NONE), "regex": ("r", NONE),
                                       "separator": ("s", REQUIRED), "help": ("help", NONE)})
    sep = "\n"
    before = regex = False
    for key, value in opts:
        if key == "s":
            sep = value
        elif key == "b":
            before = True
        elif key == "r":
            regex = True
    if regex:
        if not sep:
            raise Fail("separator cannot be empty")
        try:
            src, _ = translate(sep, False)
            finder = regexes.compile(src.encode("utf-8", "surrogateescape"))
        except (RegexError, *regexes.error) as e:
            raise Fail(str(e)) from e
    else:  # an empty separator is GNU's sentinel, a NUL byte
        finder = re.compile(re.escape(sep.encode("utf-8", "surrogateescape") or b"\0"))
    out = Output(sh)
    status = 0
    for name in files or ["-"]:
        try:
            data = read_all(sh, name)
        except OSError as e:
            out.flush()
            if e.errno == errno.EISDIR:  # GNU reads the directory and fails so
                sh.write_err(f"tac: {name}: read error: Invalid argument\n")
            else:
                sh.write_err(f"tac: failed to open '{name}' for reading: {message(e)}\n")
            status = 1
            continue
        records: list[bytes] = []
        pos = 0
        for m in finder.finditer(data):
            if m.end() == m.start():
                continue
            cut = m.start() if before else m.end()
            records.append(data[pos:cut])
            pos = cut
        records.append(data[pos:])
        out.write(b"".join(reversed(records)))
    out.flush()
    return status


@tool("rev")
def rev(sh: Interp, argv: list[str]) -> int:
    _, files = parse(argv, "", {"help": ("help", NONE)})
    out = Output(sh)
    status = 0
    utf8 = sh.utf8_locale()
    for name in files or [None]:
        try:  # util-linux rev: every operand is a file name, "-" too
            data = read_all(sh, "-") if name is None else devices.read_file(sh, name)
        except OSError as e:
            out.flush()
            if e.errno == errno.EISDIR:  # opened, then a read error after 0 lines
                sh.write_err(f"rev: {name}: 0: {message(e)}\n")
            else:
                sh.write_err(f"rev: cannot open {name}: {message(e)}\n")
            status = 1
            continue
        lines = data.split(b"\n")
        last = lines.pop()
        if utf8:
            conv = [ln.decode("utf-8", "surrogateescape")[::-1].encode("utf-8", "surrogateescape") for ln in lines]
        else:
            conv = [ln[::-1] for ln in lines]
        out.write(b"".join(c + b"\n" for c in conv))
        if last:
            out.write(last[::-1])
    out.flush()
    return status
