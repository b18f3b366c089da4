"""dd: copy a file in blocks, converting on the way, as GNU coreutils 9.1 does on K's files.

Operands if= of= bs= ibs= obs= count= skip= seek= conv= iflag= oflag= status=. Records are
counted as GNU counts them (a short read or write is a partial record) and the summary goes to
standard error in GNU's words; the transfer line (bytes, seconds, rate) depends on the clock.
conv=block/unblock/ascii/ebcdic/ibm (fixed-length record conversion) are refused by name rather
than done wrong; status=progress prints the final summary only (no periodic line: K's tools run
to completion inside a command).
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.exec.streams import FileReader, FileWriter, InStream
from kshell.tools.files.names import strerror
from kshell.core.options import Fail, Usage, tool
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_MULT = {"c": 1, "w": 2, "b": 512, "k": 1024, "K": 1024, "kB": 1000, "KB": 1000, "KiB": 1024,
         "M": 1024**2, "MB": 1000**2, "MiB": 1024**2, "G": 1024**3, "GB": 1000**3, "GiB": 1024**3,
         "T": 1024**4, "TB": 1000**4, "TiB": 1024**4, "P": 1024**5, "PB": 1000**5, "PiB": 1024**5,
         "E": 1024**6, "EB": 1000**6, "EiB": 1024**6}
_CONV = {"notrunc", "ucase", "lcase", "fsync", "fdatasync", "noerror", "sync", "swab", "excl", "nocreat",
         "sparse"}
_UNSUPPORTED_CONV = {"block", "unblock", "ascii", "ebcdic", "ibm"}
_IFLAGS = {"fullblock", "skip_bytes", "count_bytes", "direct", "dsync", "sync", "nonblock", "noatime", "nocache",
           "noctty", "nofollow", "directory", "binary", "text", "append", "seek_bytes"}
_OFLAGS = {"append", "seek_bytes", "direct", "dsync", "sync", "nonblock", "noatime", "nocache", "noctty",
           "nofollow", "directory", "binary", "text"}
_STATUS = {"none", "noxfer", "progress"}
_ENDLESS = (devices.ZeroSource, devices.FullDevice, devices.RandomSource)
_NUMERIC = ("bs", "ibs", "obs", "cbs", "count", "skip", "seek", "iseek", "oseek")


def _number(text: str) -> int:
    """A dd size: N[suffix], products with `x` (`2x512`), as GNU dd reads them."""
    total = 1
    for part in text.split("x"):
        digits = len(part) - len(part.lstrip("0123456789"))
        if digits == 0 or part[digits:] not in ("", *_MULT):
            raise Fail(f"invalid number: {shell_quote(text)}")
        total *= int(part[:digits]) * _MULT.get(part[digits:], 1)
    return total


def _flags(text: str, allowed: set[str], what: str) -> set[str]:
    out = set()
    for word in text.split(","):
        if word not in allowed:
            raise Usage(f"invalid {what}: {shell_quote(word)}")
        out.add(word)
    return out


def human(n: float, base: int) -> str:
    """gnulib human_readable with autoscale, rounding to nearest, a space and B: `1.5 kB`,
    `10 KiB`, `999 B` (base 1000 names SI prefixes, 1024 the IEC ones)."""
    letters = "kMGTPEZY" if base == 1000 else "KMGTPEZY"
    if n < base:
        return f"{int(n + 0.5) if n != int(n) else int(n)} B"
    power = 0
    while n >= base and power < len(letters):
        n /= base
        power += 1
    if n < 10 and f"{n:.1f}" != "10.0":
        text = f"{n:.1f}"
    else:
        value = int(n + 0.5)
        if value >= base and power < len(letters):
            power += 1
            text = "1.0"
        else:
            text = str(value)
    return f"{text} {letters[power - 1]}{'iB' if base == 1024 else 'B'}"


class _Input:
    """The input as dd reads it: a VFS file at an offset (seekable, reads return whole blocks
    until the end), or a stream, read as a pipe is (what has arrived, at most the block)."""

    def __init__(self, sh: ToolContext, name: str | None) -> None:
        self.name = name if name is not None else "standard input"
        self.handle = None
        self.stream: InStream | None = None
        self.redirect: FileReader | None = None  # `dd < file`: left where dd stopped reading
        self.offset = 0
        if name is None:
            stream = sh.fds.get(0)
            if stream is None or not stream.readable:
                raise OSError(9, "Bad file descriptor")
            if isinstance(stream, FileReader):
                self.handle, self.offset = stream.handle, stream.tell()
                self.redirect = stream
            else:
                self.stream = stream  # type: ignore[assignment]
        else:
            opened = devices.open_file(sh, name)
            if isinstance(opened, devices.DeviceHandle):
                self.stream = opened.stream  # type: ignore[assignment]
            else:
                self.handle = opened

    def read(self, n: int) -> bytes:
        if self.handle is not None:
            data = self.handle.pread(n, self.offset)
            self.offset += len(data)
            return data
        assert self.stream is not None
        if isinstance(self.stream, _ENDLESS):  # a character device fills every read
            return self.stream.read(n)
        data = self.stream.read_some() if hasattr(self.stream, "read_some") else self.stream.read(n)
        if len(data) > n:
            self.stream.unread(data[n:])  # type: ignore[attr-defined]
            data = data[:n]
        return data

    def skip(self, nbytes: int, block: int) -> bool:
        """Move past `nbytes`; False when the input ends before that (GNU warns then, but
        not for an empty file, whose size says nothing)."""
        if self.handle is not None:
            size = self.handle.getattr().size
            left = size - self.offset
            if size > 0 and left < nbytes:
                self.offset = size
                return False
            self.offset += nbytes
            return True
        while nbytes > 0:
            data = self.read(min(block, nbytes))
            if not data:
                return False
            nbytes -= len(data)
        return True

    def close(self) -> None:
        if self.redirect is not None:
            self.redirect.seek(self.offset)
        elif self.handle is not None:
            self.handle.close()


@tool("dd")
def dd(sh: ToolContext, argv: list[str]) -> int:
    args: dict[str, str] = {}
    for arg in argv[1:]:
        if arg in ("--help", "--version"):
            sh.out("dd (GNU coreutils) 9.1\n" if arg == "--version" else "Usage: dd [OPERAND]...\n")
            return 0
        key, eq, value = arg.partition("=")
        if not eq or key not in ("if", "of", "conv", "iflag", "oflag", "status", *_NUMERIC):
            raise Usage(f"unrecognized operand {shell_quote(arg)}")
        args[key] = value
    nums = {k: _number(args[k]) for k in _NUMERIC if k in args}
    for k in ("bs", "ibs", "obs", "cbs"):
        if k in nums and nums[k] == 0:
            raise Fail(f"invalid number: {shell_quote(args[k])}")
    conv = _flags(args["conv"], _CONV | _UNSUPPORTED_CONV, "conversion") if "conv" in args else set()
    iflag = _flags(args["iflag"], _IFLAGS, "input flag") if "iflag" in args else set()
    oflag = _flags(args["oflag"], _OFLAGS, "output flag") if "oflag" in args else set()
    status = _flags(args["status"], _STATUS, "status level") if "status" in args else set()
    if "status" in args and len(args["status"].split(",")) > 1:
        status = {args["status"].split(",")[-1]}
    if {"lcase", "ucase"} <= conv:
        raise Fail("cannot combine lcase and ucase")
    if {"excl", "nocreat"} <= conv:
        raise Fail("cannot combine excl and nocreat")
    unsupported = conv & _UNSUPPORTED_CONV
    if unsupported:
        raise Fail(f"conv={sorted(unsupported)[0]}: fixed-length record conversion is not supported in K")
    ibs = obs = nums.get("bs", 0)
    direct = "bs" in nums  # bs= writes each block as read; else output is regrouped into obs blocks
    if not direct:
        ibs, obs = nums.get("ibs", 512), nums.get("obs", 512)
    skip = nums.get("skip", nums.get("iseek", 0)) * (1 if "skip_bytes" in iflag else ibs)
    seek = nums.get("seek", nums.get("oseek", 0)) * (1 if "seek_bytes" in oflag else obs)
    count = nums.get("count")
    quiet = "none" in status
    counts = [0, 0, 0, 0]  # full in, partial in, full out, partial out
    written = 0
    started = time.monotonic_ns()

    def summary() -> None:
        if quiet:
            return
        sh.write_err(f"{counts[0]}+{counts[1]} records in\n{counts[2]}+{counts[3]} records out\n")
        if "noxfer" in status:
            return
        elapsed = max(time.monotonic_ns() - started, 1)
        si, iec = human(written, 1000), human(written, 1024)
        rate = human(written * 1e9 / elapsed, 1000) + "/s"
        seconds = f"{elapsed / 1e9:g} s"
        if si.endswith(" B") and not si[-3].isalpha():
            head = f"{written} byte{'' if written == 1 else 's'} copied"
        elif iec[-3].isdigit():
            head = f"{written} bytes ({si}) copied"
        else:
            head = f"{written} bytes ({si}, {iec}) copied"
        sh.write_err(f"{head}, {seconds}, {rate}\n")

    try:
        source = _Input(sh, args.get("if"))
    except OSError as e:
        raise Fail(f"failed to open {shell_quote(args['if'])}: {strerror(e)}") from None
    out_name = args.get("of")
    sink = None
    handle = None
    offset = 0
    try:
        if out_name is not None:
            flags = os.O_WRONLY | (0 if "nocreat" in conv else os.O_CREAT) | (os.O_EXCL if "excl" in conv else 0)
            flags |= os.O_APPEND if "append" in oflag else 0
            try:
                handle = devices.open_file(sh, out_name, flags)
            except OSError as e:
                raise Fail(f"failed to open {shell_quote(out_name)}: {strerror(e)}") from None
            if "notrunc" not in conv and isinstance(handle, devices.DeviceHandle) is False:
                handle.truncate(seek)
            offset = seek
        else:
            out_name = "standard output"
            sink = sh.fds.get(1)
            if sink is None:
                raise Fail("standard output: Bad file descriptor")
            if seek:
                if not isinstance(sink, FileWriter):
                    sh.write_err(f"dd: {shell_quote(out_name)}: cannot seek: Illegal seek\n")
                    summary()
                    raise Fail("", 1)
                sink.flush()
                sink.offset += seek

        def write(data: bytes) -> None:
            nonlocal offset, written
            try:
                if handle is not None:
                    handle.pwrite(data, offset)
                else:
                    assert sink is not None
                    sink.write(data)
            except OSError as e:
                sh.write_err(f"dd: error writing {shell_quote(out_name)}: {strerror(e)}\n")
                summary()
                raise Fail("", 1) from None
            offset += len(data)
            written += len(data)

        if skip and not source.skip(skip, ibs) and not quiet:
            name = source.name
            sh.write_err(f"dd: {shell_quote(name) if ' ' in name or not name else name}: "
                         "cannot skip to specified offset\n")
        pending = bytearray()
        got_bytes = 0
        while True:
            if count is not None:
                if "count_bytes" in iflag:
                    if got_bytes >= count:
                        break
                elif counts[0] + counts[1] >= count:
                    break
            want = ibs if count is None or "count_bytes" not in iflag else min(ibs, count - got_bytes)
            try:
                block = source.read(want)
                while "fullblock" in iflag and block and len(block) < want:
                    more = source.read(want - len(block))
                    if not more:
                        break
                    block += more
            except OSError as e:
                sh.write_err(f"dd: error reading {shell_quote(source.name)}: {strerror(e)}\n")
                if "noerror" in conv:
                    break
                summary()
                return 1
            if not block:
                break
            got_bytes += len(block)
            counts[0 if len(block) == ibs else 1] += 1
            if "sync" in conv and len(block) < ibs:
                block += b"\0" * (ibs - len(block))
            if "swab" in conv:
                swapped = bytearray(block)
                swapped[0:len(block) - len(block) % 2:2], swapped[1:len(block) - len(block) % 2:2] = \
                    block[1:len(block) - len(block) % 2:2], block[0:len(block) - len(block) % 2:2]
                block = bytes(swapped)
            if "ucase" in conv:
                block = block.upper()
            elif "lcase" in conv:
                block = block.lower()
            if direct:
                write(block)
                counts[2 if len(block) == obs else 3] += 1
                continue
            pending += block
            while len(pending) >= obs:
                write(bytes(pending[:obs]))
                del pending[:obs]
                counts[2] += 1
        if pending:
            write(bytes(pending))
            counts[3] += 1
        if ("fsync" in conv or "fdatasync" in conv) and handle is not None and hasattr(handle, "fsync"):
            handle.fsync()
    except Fail as e:
        if e.message:
            raise
        return e.status
    finally:
        source.close()
        if handle is not None:
            handle.close()
    summary()
    return 0
