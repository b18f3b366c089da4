"""Reading operands and writing output for the text tools, incrementally.

An operand (`-` is standard input) is read in chunks, so a tool stops reading as soon as it
has what it needs (`yes | head -n 3`), and output is buffered and written in large blocks; a
write to a pipe whose reader has gone raises SigPipe, which ends the tool (bash's
SIGPIPE). Read errors are OSError with the operand as filename; each tool words them.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from kshell.exec import devices, fifos
from kshell.exec.streams import FileReader, InStream, Stream

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

READ_SIZE = 1 << 20
FLUSH_SIZE = 1 << 16


def message(e: OSError) -> str:
    return e.strerror or os.strerror(e.errno or errno.EIO)


class Output:
    """Buffered writes to the tool's standard output."""

    __slots__ = ("sh", "parts", "size", "stream")

    def __init__(self, sh: ToolContext) -> None:
        self.sh = sh
        self.parts: list[bytes] = []
        self.size = 0
        self.stream = sh.fds.get(1)

    def write(self, data: bytes) -> None:
        self.parts.append(data)
        self.size += len(data)
        if self.size >= FLUSH_SIZE:
            self.flush()

    def flush(self) -> None:
        if not self.parts:
            return
        data = b"".join(self.parts)
        self.parts.clear()
        self.size = 0
        if self.stream is None:
            raise OSError(errno.EBADF, "Bad file descriptor")
        self.stream.write(data)
        self.sh.session.cancel.check()


def is_stdin(name: str) -> bool:
    return name == "-"


def open_chunks(sh: ToolContext, name: str, size: int = READ_SIZE) -> Iterator[bytes]:
    """The chunks of an operand. Opening errors are raised by this call, read errors (a
    directory: EISDIR) by the iteration."""
    cancel = sh.session.cancel
    stream = _shared_input(sh, name)
    if stream is not None:
        return _stream_chunks(stream, cancel)
    try:
        handle = sh.fs.open(name)
    except OSError as e:
        return _stream_chunks(fifos.open_special(sh, name, os.O_RDONLY, e), cancel, close=True)
    return _file_chunks(handle, size, cancel)


def open_stream(sh: ToolContext, name: str) -> tuple[InStream, bool]:
    """An operand as a stream read on demand, and whether the caller closes it (not standard
    input or a device, which belong to their descriptors). A VFS file is a FileReader, which
    seeks (tools that lseek their input: xxd -s, hexdump -s)."""
    stream = _shared_input(sh, name)
    if stream is not None:
        return stream, False  # type: ignore[return-value]
    try:
        return FileReader(sh.fs.open(name), name), True
    except OSError as e:
        return fifos.open_special(sh, name, os.O_RDONLY, e), True


def _shared_input(sh: ToolContext, name: str) -> Stream | None:
    """Standard input for `-`, the stream of a device path, else None."""
    stream = sh.fds.get(0) if name == "-" else devices.open_stream(name, sh.fds)
    if stream is None and name != "-":
        return None
    if stream is None or not stream.readable:
        raise OSError(errno.EBADF, "Bad file descriptor", name)
    return stream


def _stream_chunks(stream: Stream, cancel, close: bool = False) -> Iterator[bytes]:
    read_some = getattr(stream, "read_some", None)
    try:
        while True:
            chunk = read_some() if read_some is not None else stream.read(READ_SIZE)
            if not chunk:
                return
            yield chunk
            cancel.check()
    finally:
        if close:
            stream.close()


def _file_chunks(handle, size: int, cancel) -> Iterator[bytes]:
    offset = 0
    try:
        while True:
            chunk = handle.pread(size, offset)
            if not chunk:
                return
            offset += len(chunk)
            yield chunk
            if len(chunk) < size:
                return
            cancel.check()
    finally:
        handle.close()


def read_all(sh: ToolContext, name: str) -> bytes:
    """The whole content of an operand (for tools that must see all input before writing)."""
    if name != "-":
        return devices.read_file(sh, name)
    return b"".join(open_chunks(sh, name))


def blocks(chunks: Iterator[bytes], sep: bytes = b"\n") -> Iterator[bytes]:
    """Re-cut chunks into blocks of whole lines (each ending in `sep`; the last may not)."""
    rest = b""
    for chunk in chunks:
        if rest:
            chunk = rest + chunk
        cut = chunk.rfind(sep) + 1
        if cut == 0:
            rest = chunk
            continue
        rest = chunk[cut:]
        yield chunk[:cut]
    if rest:
        yield rest


def lines(chunks: Iterator[bytes], sep: bytes = b"\n") -> Iterator[bytes]:
    """Each line with its terminator (the last may lack one)."""
    for block in blocks(chunks, sep):
        parts = block.split(sep)
        last = parts.pop()
        for p in parts:
            yield p + sep
        if last:
            yield last


def split_lines(data: bytes, sep: bytes = b"\n") -> list[bytes]:
    """Lines without terminators; a final terminator does not make an empty last line."""
    if not data:
        return []
    parts = data.split(sep)
    if parts[-1] == b"":
        parts.pop()
    return parts
