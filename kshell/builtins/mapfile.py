"""mapfile / readarray: lines (or other records) of input into an indexed array, as bash 5.2.

Records are read one at a time from the descriptor's stream, so a `mapfile -n 1` leaves the
rest of the input to the next reader, as bash's unbuffered reads do on pipes. Elements are
stored as they are read, after the callback has seen them: a `-C` callback sees the array as
bash's does (every element before the current one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.builtins import builtin, legal_number
from kshell.builtins.flow import eval_builtin
from kshell.core.variables import ASSOC, READONLY
from kshell.exec.varops import ReadonlyError

if TYPE_CHECKING:
    from kshell.exec.interp import Interp
    from kshell.exec.streams import Stream

_OPTIONS = "d:u:n:O:tC:c:s:"  # bash's internal_getopt string for mapfile
_USAGE = "[-d delim] [-n count] [-O origin] [-s count] [-t] [-u fd] [-C callback] [-c quantum] [array]"
# bash's legal_number: strtoimax's leading white space and sign, then trailing blanks only
_UINT_MAX = (1 << 32) - 1
_INT_MAX = (1 << 31) - 1
_DEFAULT_QUANTUM = 5000


class _Usage(Exception):
    """An option error: the message is printed, then the usage line; status 2."""


class _Invalid(Exception):
    """A bad option value: the message is printed; status 1."""


def _number(text: str, what: str, maximum: int, minimum: int = 0) -> int:
    """An option's count as bash's legal_number reads it (64-bit), within [minimum, maximum]
    (bash compares against an unsigned or int cast); else `_Invalid`."""
    value = legal_number(text)
    if value is None or not minimum <= value <= maximum:
        raise _Invalid(f"{text}: {what}")
    return value


class _Settings:
    """The parsed options, with bash's defaults."""

    def __init__(self) -> None:
        self.delim = b"\n"
        self.fd = 0
        self.count = 0  # 0: every record
        self.origin = 0
        self.clear = True  # -O keeps the array's elements
        self.skip = 0
        self.chop = False
        self.callback: str | None = None
        self.quantum = _DEFAULT_QUANTUM


def _parse(sh: Interp, argv: list[str]) -> tuple[_Settings, list[str]]:
    """Options in bash's internal_getopt manner (clustered, `-n3` or `-n 3`, `--` ends them),
    each value checked as it is met; the remaining arguments."""
    opts = _Settings()
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            i += 1
            break
        if len(arg) < 2 or arg[0] != "-":
            break
        j = 1
        while j < len(arg):
            c = arg[j]
            spec = _OPTIONS.find(c)
            if spec < 0 or c == ":":
                raise _Usage(f"-{c}: invalid option")
            j += 1
            if _OPTIONS[spec + 1 : spec + 2] != ":":
                opts.chop = True  # -t, the only flag
                continue
            if j < len(arg):
                value = arg[j:]
            else:
                i += 1
                if i == len(argv):
                    raise _Usage(f"-{c}: option requires an argument")
                value = argv[i]
            _set_option(sh, opts, c, value)
            break
        i += 1
    return opts, argv[i:]


def _set_option(sh: Interp, opts: _Settings, c: str, value: str) -> None:
    if c == "d":
        opts.delim = value.encode("utf-8", "surrogateescape")[:1] or b"\0"
    elif c == "u":
        opts.fd = _number(value, "invalid file descriptor specification", _INT_MAX)
        if opts.fd not in sh.fds:
            raise _Invalid(f"{opts.fd}: invalid file descriptor: Bad file descriptor")
    elif c == "n":
        opts.count = _number(value, "invalid line count", _UINT_MAX)
    elif c == "O":
        opts.origin = _number(value, "invalid array origin", _UINT_MAX)
        opts.clear = False
    elif c == "s":
        opts.skip = _number(value, "invalid line count", _UINT_MAX)
    elif c == "C":
        opts.callback = value
    else:  # c
        opts.quantum = _number(value, "invalid callback quantum", _UINT_MAX, minimum=1)


@builtin("mapfile", "readarray")
def mapfile(sh: Interp, argv: list[str]) -> int:
    """`mapfile [options] [array]` (default MAPFILE)."""
    name0 = argv[0]
    try:
        opts, args = _parse(sh, argv)
    except _Usage as e:
        sh.error(f"{name0}: {e}")
        sh.write_err(f"{name0}: usage: {name0} {_USAGE}\n")
        return 2
    except _Invalid as e:
        sh.error(f"{name0}: {e}")
        return 1
    name = args[0] if args else "MAPFILE"
    if not sh.is_valid_name(name):
        sh.error(f"{name0}: `{name}': not a valid identifier")
        return 1
    try:
        var = sh.lookup_through_ref(name)
        if var is not None and var.flags & READONLY:  # checked first, as bash does
            sh.readonly_error(name)
        if var is not None and var.flags & ASSOC:
            sh.error(f"{name0}: {name}: not an indexed array")
            return 1
        # an indexed array from here on: emptied, or (-O) a scalar kept as element 0
        sh.assign_array(name, [], append=not opts.clear)
        _read_records(sh, sh.fds.get(opts.fd), name, opts)
    except ReadonlyError as e:
        sh.error(f"{e.name}: readonly variable")
        return 1
    return 0


def _read_records(sh: Interp, stream: Stream | None, name: str, opts: _Settings) -> None:
    """Skip `opts.skip` records, then store up to `opts.count` (0: all) from `opts.origin`
    on. A read error ends the input, as in bash (a closed or write-only descriptor reads
    as empty)."""
    if stream is None or not stream.readable:
        return
    delim = opts.delim
    index = opts.origin
    stored = 0
    skipped = 0
    while True:
        try:
            record = stream.read_until(delim)
        except OSError:
            return
        if not record:
            return
        if skipped < opts.skip:
            skipped += 1
            continue
        nul = record.find(b"\0")
        if nul >= 0:  # bash's records are C strings: a NUL ends one (and -d '' has no -t)
            record = record[:nul]
        elif opts.chop and record.endswith(delim):
            record = record[:-1]
        text = record.decode("utf-8", "surrogateescape")
        stored += 1
        if opts.callback is not None and stored % opts.quantum == 0:
            quoted = "'" + text.replace("'", "'\\''") + "'"
            eval_builtin(sh, ["eval", f"{opts.callback} {index} {quoted}"])  # bash's evalstring
        sh.set_element(name, index, text)
        index += 1
        if stored == opts.count:
            return
