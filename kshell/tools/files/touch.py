"""touch (-c -d -t -r -m -a): create files and set their times."""

from __future__ import annotations

import errno
import os
import re
import time
from datetime import datetime
from typing import TYPE_CHECKING

from kfs.vfs import NOW
from kshell.core.clock import zone
from kshell.tools.files.names import fail
from kshell.core.options import NONE, REQUIRED, Usage, parse, tool
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

LONG = {
    "no-create": ("c", NONE),
    "date": ("d", REQUIRED),
    "reference": ("r", REQUIRED),
    "time": ("time", REQUIRED),
    "no-dereference": ("h", NONE),
}


def parse_date(text: str, sh: ToolContext) -> int | None:
    """`-d STRING`: GNU's free-form date strings, as date -d reads them (nanoseconds)."""
    from kshell.tools.system.datestr import parse as parse_string

    if text.strip().lower() == "now":
        return NOW_SENTINEL
    try:
        when, ns = parse_string(text, time.time_ns(), zone(sh))
    except (ValueError, OverflowError):
        return None
    return int(when.timestamp()) * 1_000_000_000 + ns


NOW_SENTINEL = -(1 << 62)


def parse_stamp(text: str, sh: ToolContext) -> int | None:
    """touch -t [[CC]YY]MMDDhhmm[.ss]."""
    m = re.fullmatch(r"(\d{8}|\d{10}|\d{12})(?:\.(\d{2}))?", text)
    if m is None:
        return None
    digits, secs = m.group(1), int(m.group(2) or 0)
    if len(digits) == 12:
        year, rest = int(digits[:4]), digits[4:]
    elif len(digits) == 10:
        yy = int(digits[:2])
        year, rest = (1900 + yy if yy >= 69 else 2000 + yy), digits[2:]
    else:
        year, rest = datetime.now(zone(sh)).year, digits
    try:
        when = datetime(year, int(rest[:2]), int(rest[2:4]), int(rest[4:6]), int(rest[6:8]), secs, tzinfo=zone(sh))
    except ValueError:
        return None
    return int(when.timestamp()) * 1_000_000_000


@tool("touch")
def touch(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "acd:fhmr:t:", LONG)
    given = dict(opts)
    fs = sh.fs
    atime = mtime = NOW
    only_a = "a" in given or given.get("time") in ("atime", "access", "use")
    only_m = "m" in given or given.get("time") in ("mtime", "modify")
    for key, value in opts:
        if key == "d" or key == "t":
            ns = parse_date(value, sh) if key == "d" else parse_stamp(value, sh)
            if ns is None:
                sh.write_err(f"touch: invalid date format {shell_quote(value)}\n")
                return 1
            atime = mtime = NOW if ns == NOW_SENTINEL else ns
        elif key == "r":
            try:
                ref = fs.stat(value)
            except OSError as e:
                fail(sh, "touch", f"failed to get attributes of {shell_quote(value)}", e)
                return 1
            atime, mtime = ref.atime, ref.mtime
    if not operands:
        raise Usage("missing file operand")
    if only_a and not only_m:
        mtime = None
    elif only_m and not only_a:
        atime = None
    status = 0
    for path in operands:
        if path == "-":  # GNU: the file standard output is open on, never one named `-`
            status |= _touch_stdout(sh, atime, mtime)
            continue
        try:
            fs.stat(path)
        except OSError as e:
            if e.errno != errno.ENOENT or "c" in given:
                if e.errno != errno.ENOENT:
                    fail(sh, "touch", f"cannot touch {shell_quote(path)}", e)
                    status = 1
                continue
            try:
                fs.open(path, os.O_WRONLY | os.O_CREAT).close()
            except OSError as e2:
                fail(sh, "touch", f"cannot touch {shell_quote(path)}", e2)
                status = 1
                continue
        try:
            fs.utime(path, atime, mtime)
        except OSError as e:
            fail(sh, "touch", f"setting times of {shell_quote(path)}", e)
            status = 1
    return status


def _touch_stdout(sh: ToolContext, atime: int | None, mtime: int | None) -> int:
    """touch - : the times of the file standard output writes to (futimens), if it is one."""
    from kshell.exec.streams import FileWriter

    out = sh.fds.get(1)
    if out is None:
        sh.write_err("touch: setting times of '-': Bad file descriptor\n")
        return 1
    if isinstance(out, FileWriter):
        try:
            out.handle.setattr(atime=atime, mtime=mtime)
        except OSError as e:
            fail(sh, "touch", "setting times of '-'", e)
            return 1
    return 0
