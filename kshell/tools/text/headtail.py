"""head and tail (-n N, -n +N / -N, -c, -q, -v, -z; tail -f/-F following a VFS file until the
command is cancelled or reaches its wall-time bound), as GNU coreutils."""

from __future__ import annotations

import contextlib
import errno
import time
from collections import deque
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, parse, parse_size, tool
from kshell.tools.quoting import locale_quote, shell_quote
from kshell.tools.text.textio import Output, message, open_chunks

if TYPE_CHECKING:
    from kfs.vfs.vfs import FileHandle
    from kshell.core.context import ToolContext

_HEAD_LONG = {"lines": ("n", REQUIRED), "bytes": ("c", REQUIRED), "quiet": ("q", NONE),
              "silent": ("q", NONE), "verbose": ("v", NONE), "zero-terminated": ("z", NONE),
              "help": ("help", NONE), "version": ("version", NONE)}
_TAIL_LONG = {**_HEAD_LONG, "follow": ("f", OPTIONAL), "retry": ("retry", NONE),
              "sleep-interval": ("s", REQUIRED), "pid": ("pid", REQUIRED),
              "max-unchanged-stats": ("mus", REQUIRED)}


def _count(tool_name: str, key: str, value: str) -> tuple[str, int]:
    size = parse_size(value)
    if size is None:
        what = "lines" if key == "n" else "bytes"
        raise Fail(f"invalid number of {what}: {locale_quote(value)}")
    return size


class _Headers:
    def __init__(self, out: Output, show: bool) -> None:
        self.out = out
        self.show = show
        self.first = True

    def __call__(self, name: str) -> None:
        if self.show:
            shown = "standard input" if name == "-" else name
            self.out.write(f"{'' if self.first else chr(10)}==> {shown} <==\n".encode("utf-8", "surrogateescape"))
        self.first = False


def _common(tool_name: str, argv: list[str], short: str, long: dict):
    opts, files = parse(argv, short, long, digits="n")
    mode, sign, count = "n", "", 10
    verbose: bool | None = None
    sep = b"\n"
    follow = False
    interval = 1.0
    for key, value in opts:
        if key in ("n", "c"):
            mode = key
            sign, count = _count(tool_name, key, value)
        elif key == "q":
            verbose = False
        elif key == "v":
            verbose = True
        elif key == "z":
            sep = b"\0"
        elif key == "f" or key == "F":
            follow = True
        elif key == "s":
            try:
                interval = float(value)
            except ValueError:
                raise Fail(f"invalid number of seconds: {locale_quote(value)}") from None
        elif key in ("help", "version"):
            return None
    files = files or ["-"]
    show = verbose if verbose is not None else len(files) > 1
    return files, mode, sign, count, show, sep, follow, interval


@tool("head")
def head(sh: ToolContext, argv: list[str]) -> int:
    parsed = _common("head", argv, "n:c:qvz", _HEAD_LONG)
    if parsed is None:
        sh.out(b"Usage: head [OPTION]... [FILE]...\n")
        return 0
    files, mode, sign, count, show, sep, _, _ = parsed
    out = Output(sh)
    header = _Headers(out, show)
    status = 0
    for name in files:
        try:
            chunks = open_chunks(sh, name)
        except OSError as e:
            out.flush()
            sh.write_err(f"head: cannot open {shell_quote(name)} for reading: {message(e)}\n")
            status = 1
            continue
        header(name)
        try:
            if sign == "-":
                _head_all_but(chunks, mode, count, sep, out)
            else:
                _head(chunks, mode, count, sep, out)
        except OSError as e:
            out.flush()
            sh.write_err(f"head: error reading {shell_quote(name)}: {message(e)}\n")
            status = 1
    out.flush()
    return status


def _head(chunks, mode: str, count: int, sep: bytes, out: Output) -> None:
    if count <= 0:
        return
    for chunk in chunks:
        if mode == "c":
            out.write(chunk[:count])
            count -= len(chunk)
        else:
            n = chunk.count(sep)
            if n < count:
                out.write(chunk)
                count -= n
                continue
            pos = -1
            for _ in range(count):
                pos = chunk.index(sep, pos + 1)
            out.write(chunk[: pos + 1])
            count = 0
        if count <= 0:
            out.flush()
            return


def _head_all_but(chunks, mode: str, count: int, sep: bytes, out: Output) -> None:
    if mode == "c":
        held = bytearray()
        for chunk in chunks:
            held += chunk
            if len(held) > count:
                cut = len(held) - count
                out.write(bytes(held[:cut]))
                del held[:cut]
        return
    pending: deque[bytes] = deque()
    rest = b""
    for chunk in chunks:
        parts = (rest + chunk).split(sep)
        rest = parts.pop()
        for p in parts:
            pending.append(p + sep)
            if len(pending) > count:
                out.write(pending.popleft())
    if rest:
        pending.append(rest)
        if len(pending) > count:
            out.write(pending.popleft())


@tool("tail")
def tail(sh: ToolContext, argv: list[str]) -> int:
    parsed = _common("tail", argv, "n:c:qvzfFs:", _TAIL_LONG)
    if parsed is None:
        sh.out(b"Usage: tail [OPTION]... [FILE]...\n")
        return 0
    files, mode, sign, count, show, sep, follow, interval = parsed
    out = Output(sh)
    header = _Headers(out, show)
    status = 0
    followed: list[tuple[str, object, int]] = []
    for name in files:
        try:
            handle = None if name == "-" or devices.device_name(name) else _open_file(sh, name)
            if handle is not None and handle.getattr().is_dir:
                handle.close()
                handle = None
                raise IsADirectoryError(21, "Is a directory", name)
            chunks = open_chunks(sh, name) if handle is None else None
        except IsADirectoryError as e:
            header(name)
            out.flush()
            sh.write_err(f"tail: error reading {shell_quote(name)}: {message(e)}\n")
            status = 1
            continue
        except OSError as e:
            out.flush()
            sh.write_err(f"tail: cannot open {shell_quote(name)} for reading: {message(e)}\n")
            status = 1
            continue
        header(name)
        try:
            if handle is not None:
                end = _tail_file(handle, mode, sign, count, sep, out)
                if follow:
                    followed.append((name, handle, end))
                else:
                    handle.close()
            else:
                _tail_stream(chunks, mode, sign, count, sep, out)
        except OSError as e:
            out.flush()
            sh.write_err(f"tail: error reading {shell_quote(name)}: {message(e)}\n")
            status = 1
    out.flush()
    if follow and followed:
        _follow(sh, followed, out, header, interval)
    elif follow and not followed and status:
        sh.write_err("tail: no files remaining\n")
    return status


def _open_file(sh: ToolContext, name: str) -> FileHandle | None:
    """A VFS file to seek in, or None for a FIFO, which is read as a stream (by open_chunks)."""
    try:
        return sh.fs.open(name)
    except OSError as e:
        if e.errno != errno.EOPNOTSUPP:
            raise
        return None


def _tail_file(handle, mode: str, sign: str, count: int, sep: bytes, out: Output) -> int:
    size = handle.getattr().size
    if mode == "c":
        start = max(count - 1, 0) if sign == "+" else max(size - count, 0)
    elif sign == "+":
        start = _line_offset(handle, count, sep, size)
    else:
        start = _last_lines_offset(handle, count, sep, size)
    offset = start
    while offset < size:
        chunk = handle.pread(min(1 << 20, size - offset), offset)
        if not chunk:
            break
        out.write(chunk)
        offset += len(chunk)
    return offset


def _line_offset(handle, count: int, sep: bytes, size: int) -> int:
    """Where line `count` (1-based) starts."""
    need = count - 1
    offset = 0
    while need > 0 and offset < size:
        chunk = handle.pread(1 << 20, offset)
        if not chunk:
            break
        n = chunk.count(sep)
        if n < need:
            need -= n
            offset += len(chunk)
            continue
        pos = -1
        for _ in range(need):
            pos = chunk.index(sep, pos + 1)
        return offset + pos + 1
    return offset if need <= 0 else size


def _last_lines_offset(handle, count: int, sep: bytes, size: int) -> int:
    if count <= 0:
        return size
    block = 65536
    found = 0
    pos = size
    trailing = True
    while pos > 0:
        start = max(0, pos - block)
        chunk = handle.pread(pos - start, start)
        i = len(chunk)
        if trailing and chunk.endswith(sep):
            i -= 1  # the final terminator does not start a line
        trailing = False
        while True:
            j = chunk.rfind(sep, 0, i)
            if j < 0:
                break
            found += 1
            if found == count:
                return start + j + 1
            i = j
        pos = start
        block = min(block * 2, 1 << 22)
    return 0


def _tail_stream(chunks, mode: str, sign: str, count: int, sep: bytes, out: Output) -> None:
    if sign == "+":
        skip = count - 1 if count else 0
        for chunk in chunks:
            if skip <= 0:
                out.write(chunk)
                continue
            if mode == "c":
                out.write(chunk[skip:])
                skip -= len(chunk)
                continue
            n = chunk.count(sep)
            if n < skip:
                skip -= n
                continue
            pos = -1
            for _ in range(skip):
                pos = chunk.index(sep, pos + 1)
            out.write(chunk[pos + 1 :])
            skip = 0
        return
    held = bytearray()
    for chunk in chunks:
        held += chunk
        if len(held) > (4 << 20):
            _trim(held, mode, count, sep)
    _trim(held, mode, count, sep)
    out.write(bytes(held))


def _trim(held: bytearray, mode: str, count: int, sep: bytes) -> None:
    if mode == "c":
        if len(held) > count:
            del held[: len(held) - count]
        return
    if count <= 0:
        held.clear()
        return
    i = len(held) - (1 if held.endswith(sep) else 0)
    for _ in range(count):
        j = held.rfind(sep, 0, i)
        if j < 0:
            return
        i = j
    del held[: i + 1]


def _follow(sh: ToolContext, followed: list, out: Output, header: _Headers, interval: float) -> None:
    """Poll each file for growth until the command is cancelled (tail -f never ends itself)."""
    cancel = sh.session.cancel
    last = followed[-1][0]
    state = {name: (handle, offset) for name, handle, offset in followed}
    try:
        while True:
            deadline = time.monotonic() + min(interval, 0.2)
            while time.monotonic() < deadline:
                cancel.check()
                time.sleep(0.02)
            cancel.check()
            for name, (handle, offset) in list(state.items()):
                try:
                    size = handle.getattr().size
                except OSError:
                    continue
                if size < offset:
                    sh.write_err(f"tail: {name}: file truncated\n")
                    offset = 0
                if size > offset:
                    if name != last:
                        header(name)
                        last = name
                    while offset < size:
                        chunk = handle.pread(min(1 << 20, size - offset), offset)
                        if not chunk:
                            break
                        out.write(chunk)
                        offset += len(chunk)
                    out.flush()
                state[name] = (handle, offset)
    finally:
        for handle, _ in state.values():
            with contextlib.suppress(OSError):
                handle.close()
