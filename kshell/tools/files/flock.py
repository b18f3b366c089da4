"""flock (util-linux 2.38): hold a lock on a K file while a command runs, or on a descriptor.

K's files are not host files, so the lock is K's own: one host lock file per K inode under the
state's directory (`<state>/locks/<ino>`), taken with flock(2). Every K shell on the state (jobs
of one session, other sessions, other worker processes) therefore contends for the same lock,
exclusive (-x, the default) or shared (-s), and a lock dies with what holds it (the command's
end, or the process). The descriptor form (`exec 9>f; flock 9`, `flock -u 9`) locks the K file
open on that descriptor until `flock -u` or until the descriptor's stream is gone. Delegated
programs do not see these locks (their flock(2) works on the mount's files): a lock shared
between a K tool and a host program is not something K can give. -o and -F change nothing
(the command is a K command, never a forked child holding the descriptor).
Statuses are util-linux's: 1 when -n or -w gives up (or -E N), 64 usage, 65 a bad descriptor,
66 the file cannot be opened, 69/126/127 a command that cannot run.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

from kshell.tools.files.names import strerror
from kshell.core.options import NONE, REQUIRED, parse, tool
from kshell.tools.system.env import run_argv

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_LONG = {"shared": ("s", NONE), "exclusive": ("x", NONE), "unlock": ("u", NONE), "nonblock": ("n", NONE),
         "nb": ("n", NONE), "no-fork": ("F", NONE), "timeout": ("w", REQUIRED), "wait": ("w", REQUIRED),
         "conflict-exit-code": ("E", REQUIRED), "close": ("o", NONE), "command": ("c", REQUIRED),
         "verbose": ("verbose", NONE), "help": ("h", NONE), "version": ("V", NONE)}
USAGE_STATUS, BAD_FD, NO_INPUT, UNAVAILABLE = 64, 65, 66, 69
POLL = 0.05  # seconds between tries of a contended lock: the wait stays interruptible
_held: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a descriptor's stream -> host fd


class _Usage(Exception):
    pass


def lock_file(sh: Interp, ino: int) -> int:
    """A host descriptor on the lock file of K inode `ino` (created on first use); a fork's
    files have locks of their own (`<fork>.<ino>`): a fork is a world apart from its parent."""
    state = sh.fs.vfs.state
    where = Path(state.path) / "locks"
    where.mkdir(mode=0o700, exist_ok=True)
    fork = getattr(state, "fork", None)
    name = str(ino) if fork is None else f"{fork}.{ino}"
    return os.open(where / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)


def acquire(sh: Interp, fd: int, shared: bool, wait: float | None) -> bool:
    """Take the lock; False when -n (wait 0) or the -w timeout gives up. Ctrl-C interrupts."""
    op = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB
    deadline = None if wait is None else time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, op)
            return True
        except BlockingIOError:
            pass
        if deadline is not None and time.monotonic() >= deadline:
            return False
        sh.session.cancel.check()
        time.sleep(POLL if deadline is None else max(0.0, min(POLL, deadline - time.monotonic())))


@tool("flock", usage_status=USAGE_STATUS)
def flock(sh: Interp, argv: list[str]) -> int:
    opts, operands = parse(argv, "sxeunFw:E:oc:hV", _LONG, permute=False)
    given = dict(opts)
    if "h" in given:
        sh.out("\nUsage:\n flock [options] <file>|<directory> <command> [<argument>...]\n"
               " flock [options] <file>|<directory> -c <command>\n flock [options] <file descriptor number>\n")
        return 0
    if "V" in given:
        sh.out("flock from util-linux 2.38.1\n")
        return 0
    shared = False
    for key, _ in opts:  # the last of -s and -x/-e counts
        if key in ("s", "x", "e"):
            shared = key == "s"
    conflict = 1
    if "E" in given:
        if not given["E"].isdigit() or int(given["E"]) > 255:
            sh.write_err(f"flock: invalid exit code: '{given['E']}'\n")
            return USAGE_STATUS
        conflict = int(given["E"])
    wait: float | None = 0.0 if "n" in given else None
    if "w" in given:
        try:
            wait = float(given["w"])
            if wait < 0:
                raise ValueError
        except ValueError:
            sh.write_err(f"flock: invalid timeout value: '{given['w']}'\n")
            return USAGE_STATUS
    if not operands:
        sh.write_err("flock: not enough arguments\nTry 'flock --help' for more information.\n")
        return USAGE_STATUS
    target, command = operands[0], operands[1:]
    if command[:1] in (["-c"], ["--command"]):  # util-linux reads -c after the file too
        if len(command) != 2:
            sh.write_err("flock: -c requires exactly one command argument\n"
                         "Try 'flock --help' for more information.\n")
            return USAGE_STATUS
        command = ["sh", "-c", command[1]]
    elif "c" in given:
        if command:
            sh.write_err("flock: -c requires exactly one command argument\n"
                         "Try 'flock --help' for more information.\n")
            return USAGE_STATUS
        command = ["sh", "-c", given["c"]]
    if not command:
        return _descriptor(sh, target, given, shared, wait, conflict)
    try:
        ino = _open_target(sh, target)
    except OSError as e:
        sh.write_err(f"flock: cannot open lock file {target}: {strerror(e)}\n")
        return NO_INPUT
    fd = lock_file(sh, ino)
    try:
        if not acquire(sh, fd, shared, wait):
            return conflict
        if _missing(sh, command[0]):
            sh.write_err(f"flock: failed to execute {command[0]}: No such file or directory\n")
            return UNAVAILABLE
        return run_argv(sh.fork(), command, "flock")
    finally:
        os.close(fd)  # closing the last descriptor releases the lock


def _missing(sh: Interp, name: str) -> bool:
    from kshell.exec.scripts import find_in_path

    return (sh.tool(name) is None and name not in sh.builtins and "/" not in name
            and find_in_path(sh, name)[0] is None)


def _open_target(sh: Interp, path: str) -> int:
    """The K inode of the lock target, created (0666 less the umask) when missing, as flock does."""
    try:
        return sh.fs.stat(path).ino
    except OSError as e:
        if e.errno != errno.ENOENT:
            raise
    with sh.fs.open(path, os.O_RDONLY | os.O_CREAT, 0o666) as handle:
        return handle.getattr().ino


def _descriptor(sh: Interp, target: str, given: dict, shared: bool, wait: float | None, conflict: int) -> int:
    """`flock [-s|-x|-u] N`: lock (or unlock) the K file open on descriptor N."""
    if not target.isdigit():
        sh.write_err(f"flock: bad file descriptor: '{target}'\n")
        return USAGE_STATUS
    stream = sh.fds.get(int(target))
    handle = getattr(stream, "handle", None)
    ino = getattr(handle, "ino", None)
    if stream is None or ino is None:
        sh.write_err(f"flock: {target}: Bad file descriptor\n" if stream is None else
                     f"flock: {target}: not a K file: only a K file's descriptor can be locked\n")
        return BAD_FD
    fd = _held.get(stream)
    if "u" in given:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
        return 0
    if fd is None:
        fd = lock_file(sh, ino)
        _held[stream] = fd
        weakref.finalize(stream, os.close, fd)
    return 0 if acquire(sh, fd, shared, wait) else conflict
