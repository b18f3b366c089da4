"""bash's `ulimit [-SHabcdefiklmnpqrstuvxPRT] [limit]` on real resource limits (getrlimit and
setrlimit, Linux's table of bash 5.2's ulimit.def).

A session with a process of its own (a worker, kshell.worker) reports and sets that process's
limits, which its delegated programs inherit; a subshell's setting stays its own (a subshell of
bash is a process), as does the setting of a shell running inside a process it shares (the
server's threads, the tests): those start from the process's limits and keep what they set,
judged by the rules the kernel applies (a soft limit above the hard one is EINVAL, raising a
hard limit needs CAP_SYS_RESOURCE, open files stop at fs.nr_open), so that the messages are
the kernel's either way: `ulimit: open files: cannot modify limit: Operation not permitted`.
"""

from __future__ import annotations

import errno
import os
import resource
from typing import TYPE_CHECKING

from kshell.builtins import Usage, builtin, getopt

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

INFINITY = (1 << 64) - 1  # RLIM_INFINITY as the kernel has it
_USAGE = "ulimit [-SHabcdefiklmnpqrstuvxPRT] [limit]"
_PIPE = -1  # -p: the pipe buffer, PIPE_BUF in 512-byte blocks, fixed
_BLOCK = 0  # -c and -f: 1024-byte blocks (512 in POSIX mode)

# option: (RLIMIT_ number, bytes per unit, description, units), in the order of `ulimit -a`
LIMITS: dict[str, tuple[int, int, str, str]] = {
    "R": (15, 1, "real-time non-blocking time", "microseconds"),
    "c": (4, _BLOCK, "core file size", "blocks"),
    "d": (2, 1024, "data seg size", "kbytes"),
    "e": (13, 1, "scheduling priority", ""),
    "f": (1, _BLOCK, "file size", "blocks"),
    "i": (11, 1, "pending signals", ""),
    "l": (8, 1024, "max locked memory", "kbytes"),
    "m": (5, 1024, "max memory size", "kbytes"),
    "n": (7, 1, "open files", ""),
    "p": (_PIPE, 512, "pipe size", "512 bytes"),
    "q": (12, 1, "POSIX message queues", "bytes"),
    "r": (14, 1, "real-time priority", ""),
    "s": (3, 1024, "stack size", "kbytes"),
    "t": (0, 1, "cpu time", "seconds"),
    "u": (6, 1, "max user processes", ""),
    "v": (9, 1024, "virtual memory", "kbytes"),
    "x": (10, 1, "file locks", ""),
}
_CAP_SYS_RESOURCE = 24


def _factor(sh: Interp, opt: str) -> int:
    factor = LIMITS[opt][1]
    return (512 if "posix" in sh.opts else 1024) if factor == _BLOCK else factor


def _kernel(value: int) -> int:
    """A value as the kernel's unsigned rlim_t (Python's resource module says -1 for infinity)."""
    return INFINITY if value < 0 else value


def get_limit(sh: Interp, number: int) -> tuple[int, int]:
    """(soft, hard) of RLIMIT_ `number` for this shell."""
    if number == _PIPE:
        return 4096, 4096  # PIPE_BUF, shown in 512-byte blocks
    if number in sh.rlimits:
        return sh.rlimits[number]
    soft, hard = resource.getrlimit(number)
    return _kernel(soft), _kernel(hard)


def _may_raise_hard() -> bool:
    """Whether this process holds CAP_SYS_RESOURCE (root in a container often does not)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> _CAP_SYS_RESOURCE & 1)
    except OSError:
        pass
    return os.geteuid() == 0


def _nr_open() -> int:
    try:
        with open("/proc/sys/fs/nr_open") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 1 << 20


def set_limit(sh: Interp, number: int, soft: int, hard: int) -> None:
    """Set RLIMIT_ `number` to (soft, hard), or raise OSError as setrlimit(2) would."""
    if number == _PIPE:
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
    old_hard = get_limit(sh, number)[1]
    if soft > hard:
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
    if hard > old_hard and not _may_raise_hard():
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))
    if number == resource.RLIMIT_NOFILE and hard > _nr_open():
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))
    if sh.session.own_process and not sh.subshell:
        as_python = tuple(-1 if v == INFINITY else v for v in (soft, hard))
        try:
            resource.setrlimit(number, as_python)
        except ValueError as e:  # Python's own checks, in its words
            code = errno.EPERM if "raise" in str(e) else errno.EINVAL
            raise OSError(code, os.strerror(code)) from None
        sh.rlimits.pop(number, None)
        sh.session.process_limits_set = True
    else:
        sh.rlimits[number] = (soft, hard)


def _value_text(value: int, factor: int) -> str:
    return "unlimited" if value == INFINITY else str(value // factor)


def _print_one(sh: Interp, opt: str, value: int, described: bool) -> None:
    _, _, description, units = LIMITS[opt]
    head = ""
    if described:
        unit = f"({units}, -{opt}) " if units else f"(-{opt}) "
        head = f"{description:<20} {unit:>20}"
    sh.out(head + _value_text(value, _factor(sh, opt)) + "\n")


def _parse_value(sh: Interp, opt: str, text: str, soft: int, hard: int) -> int | None:
    """A limit argument in bytes-or-units as setrlimit takes it, None once said why not."""
    if text == "hard":
        return hard
    if text == "soft":
        return soft
    if text == "unlimited":
        return INFINITY
    if text.isdigit() and text.isascii():
        number = int(text) % (1 << 64)  # bash's string_to_rlimtype wraps as rlim_t does
        factor = _factor(sh, opt)
        value = number * factor
        if value >= 1 << 64:
            sh.error(f"ulimit: {text}: limit out of range")
            return None
        return value
    sh.error(f"ulimit: {text}: invalid number")
    return None


def _one(sh: Interp, opt: str, arg: str | None, mode: str, described: bool) -> int:
    number, _, description, _ = LIMITS[opt]
    if not mode:
        mode = "SH" if arg is not None else "S"
    soft, hard = get_limit(sh, number)
    if arg is None:
        _print_one(sh, opt, soft if "S" in mode else hard, described)
        return 0
    value = _parse_value(sh, opt, arg, soft, hard)
    if value is None:
        return 1
    try:
        set_limit(sh, number, value if "S" in mode else soft, value if "H" in mode else hard)
    except OSError as e:
        sh.error(f"ulimit: {description}: cannot modify limit: {os.strerror(e.errno or errno.EINVAL)}")
        return 1
    return 0


@builtin("ulimit")
def ulimit(sh: Interp, argv: list[str]) -> int:
    args = argv[1:]
    spec = "HSa" + "".join(f"{c};" for c in LIMITS)
    try:
        opts, rest = getopt(sh, "ulimit", args, spec, _USAGE)
    except Usage:
        return 2
    mode = "".join(sorted({c for c, _ in opts if c in "HS"}, reverse=True))
    if any(c == "a" for c, _ in opts):
        for opt, (number, *_) in LIMITS.items():
            soft, hard = get_limit(sh, number)
            _print_one(sh, opt, hard if mode == "H" else soft, True)
        return 0
    commands: list[tuple[str, str | None]] = [(c, v or None) for c, v in opts if c not in "HSa"]
    if not commands:
        commands.append(("f", rest[0] if rest else None))
        rest = rest[1:]
    if rest and commands[-1][1] is None:  # POSIX: an operand is the last option's argument
        commands[-1] = (commands[-1][0], rest[0])
    for opt, arg in commands:
        if _one(sh, opt, arg, mode, len(commands) > 1) != 0:
            return 1
    return 0
