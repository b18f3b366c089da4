"""Byte streams behind the shell's file descriptors: in-memory buffers, bounded pipes between
concurrent pipeline stages, VFS files, /dev/null. A descriptor table maps numbers to these.

Input streams keep a pushback buffer, so `read` may take a line at a time from a pipe or a file
and leave the rest for the next command that reads the same descriptor, as a shared open file
description would.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from kshell.core.errors import SigPipe
from kshell.limits import LimitExceeded

CHUNK = 65536


class Stream:
    """A descriptor's target. Subclasses implement the directions they support."""

    readable = False
    writable = False
    name = ""

    def write(self, data: bytes) -> None:
        raise OSError(errno.EBADF, "Bad file descriptor")

    def read(self, n: int = -1) -> bytes:
        raise OSError(errno.EBADF, "Bad file descriptor")

    def read_until(self, delim: bytes, limit: int = -1) -> bytes:
        raise OSError(errno.EBADF, "Bad file descriptor")

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


class InStream(Stream):
    """Input with a pushback buffer over `_fill()` (returns b"" at end of input)."""

    readable = True

    def __init__(self) -> None:
        self._buf = b""
        self._eof = False

    def _fill(self) -> bytes:
        return b""

    def _more(self) -> bool:
        if self._eof:
            return False
        chunk = self._fill()
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    def read(self, n: int = -1) -> bytes:
        if n < 0:
            while self._more():
                pass
            out, self._buf = self._buf, b""
            return out
        while len(self._buf) < n and self._more():
            pass
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def unread(self, data: bytes, *, at_end: bool = False) -> None:
        """Give back bytes a reader took but did not use (a delegated program's unread stdin):
        the next read sees them first (or, read after the others, last)."""
        self._buf = self._buf + data if at_end else data + self._buf

    def read_some(self) -> bytes:
        """Whatever is available (at least one byte unless at end of input)."""
        if not self._buf:
            self._more()
        out, self._buf = self._buf, b""
        return out

    def read_until(self, delim: bytes, limit: int = -1) -> bytes:
        """Up to and including `delim` (or end of input, or `limit` bytes)."""
        start = 0
        while True:
            i = self._buf.find(delim, start)
            if i >= 0 and (limit < 0 or i < limit):
                out, self._buf = self._buf[: i + 1], self._buf[i + 1 :]
                return out
            if limit >= 0 and len(self._buf) >= limit:
                out, self._buf = self._buf[:limit], self._buf[limit:]
                return out
            start = len(self._buf)
            if not self._more():
                out, self._buf = self._buf, b""
                return out


class BytesSource(InStream):
    """Fixed input: here-documents, here-strings, a run()'s stdin."""

    name = "bytes"

    def __init__(self, data: bytes) -> None:
        super().__init__()
        self._buf = bytes(data)
        self._eof = True


class NullStream(InStream):
    """/dev/null: reads end at once, writes vanish."""

    writable = True
    name = "/dev/null"

    def __init__(self) -> None:
        super().__init__()
        self._eof = True

    def write(self, data: bytes) -> None:
        pass


class BufferSink(Stream):
    """Collects output in memory (a run()'s stdout, a command substitution), bounded."""

    writable = True

    def __init__(self, limit: int, what: str = "output") -> None:
        self.data = bytearray()
        self.limit = limit
        self.what = what

    def write(self, data: bytes) -> None:
        self.data += data
        if len(self.data) > self.limit:
            del self.data[self.limit :]
            raise LimitExceeded(f"{self.what} exceeds the limit of {self.limit} bytes")


class CallbackSink(Stream):
    """Streams output to a callable (the SSH server's channel, the CLI's real stdout)."""

    writable = True

    def __init__(self, fn: Callable[[bytes], object]) -> None:
        self.fn = fn

    def write(self, data: bytes) -> None:
        if data:
            self.fn(data)


class Capture(Stream):
    """Another stream, and a record of what passed through it: the first and the last `keep`
    bytes and the count (a process's output, for its events, kept even when no one reads it
    any more). Everything else is the inner stream's."""

    def __init__(self, inner: Stream, keep: int) -> None:
        self.inner = inner
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.readable = inner.readable
        self.writable = inner.writable
        self.name = inner.name

    def write(self, data: bytes) -> None:
        self.total += len(data)
        rest = data
        room = self.keep - len(self.head)
        if room > 0:
            self.head += rest[:room]
            rest = rest[room:]
        if rest:
            self.tail += rest
            if len(self.tail) > self.keep:
                del self.tail[:-self.keep]
        self.inner.write(data)

    def flush(self) -> None:
        self.inner.flush()

    def close(self) -> None:
        self.inner.close()

    def summary(self) -> dict[str, Any]:
        """What an event says of it: head and tail as text, the count, and how much of the
        middle neither shows."""
        text = {"head": self.head.decode("utf-8", "replace"), "bytes": self.total}
        if self.total > len(self.head):
            text["tail"] = self.tail.decode("utf-8", "replace")
            text["omitted"] = self.total - len(self.head) - len(self.tail)
        return text

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Meter:
    """Counts the bytes a top-level command writes to the session's own outputs."""

    __slots__ = ("count", "limit")

    def __init__(self, limit: int) -> None:
        self.count = 0
        self.limit = limit


class MeteredSink(Stream):
    """A session output (stdout or stderr) charged to a shared Meter."""

    writable = True

    def __init__(self, inner: Stream, meter: Meter, *, terminal: bool = False) -> None:
        self.inner = inner
        self.meter = meter
        self.name = inner.name
        self.terminal = terminal  # the session's terminal (a delegated program writes to a pty there)

    def write(self, data: bytes) -> None:
        meter = self.meter
        meter.count += len(data)
        if meter.count > meter.limit:
            raise LimitExceeded(f"output exceeds the limit of {meter.limit} bytes per command")
        self.inner.write(data)

    def flush(self) -> None:
        self.inner.flush()


_PARKING = threading.Lock()  # counts parked threads (`Cancel.parked`); taken only on the way in and out of a stop


class Cancel:
    """Shared by every thread of one top-level command (or one job): a deadline, a cancel flag
    and a stop switch, checked by loops, sleeps, reads and pipe waits, so that nothing blocks
    past the wall-time bound and a stopped command parks at its next checkpoint.

    A stopped command (`kill -STOP`, Ctrl-Z) waits inside `check()` until it is resumed or
    cancelled; its wall-time clock does not run while it is stopped."""

    __slots__ = ("deadline", "cancelled", "reason", "quiet", "signal", "stop_signal", "stopped", "parent", "_go",
                 "_left", "hup_ignored", "parked")

    def __init__(self, deadline: float, parent: Cancel | None = None) -> None:
        self.deadline = deadline
        self.parent = parent  # an enclosing command's flag (`timeout`): its stop or cancel reaches this one
        self.cancelled = False
        self.reason = ""
        self.quiet = False  # ended by a signal: the job's status says so, no message
        self.signal = 0  # the signal that ends it (a real program delegated by K receives it)
        self.stop_signal = 0  # the signal that stopped it (19 STOP, 20 TSTP, ...), 0 when running
        self.stopped = False  # a plain flag: busy loops test it on every iteration
        self.hup_ignored = False  # `nohup`, `setsid`: SIGHUP does not end it
        self._go = threading.Event()
        self._go.set()
        self._left = 0.0
        self.parked = 0  # threads waiting in check() now: a stop has taken hold once all of them are

    def stop(self, sig: int = 19) -> None:
        """Park every thread of the command at its next checkpoint (the clock stops too)."""
        if self.stopped or self.cancelled:
            return
        self._left = self.deadline - time.monotonic()
        self.deadline = float("inf")
        self.stop_signal = sig
        self._go.clear()
        self.stopped = True

    def renew(self, deadline: float) -> None:
        """The next top-level line runs on this same switch with a wall time of its own. Not a
        new switch: a Ctrl-Z that came as the line began has stopped this one and made it its
        job's, so the line parks at its first checkpoint and `kill %1` reaches it."""
        self.hup_ignored = False  # the last line's `nohup` was its own
        if self.stopped:
            self._left = deadline - time.monotonic()
        else:
            self.deadline = deadline

    def resume(self) -> None:
        """SIGCONT: let the parked threads go on, with the wall time they had left."""
        if not self.stopped:
            return
        self.deadline = time.monotonic() + self._left
        self.stop_signal = 0
        self.stopped = False
        self._go.set()

    def kill(self, reason: str, sig: int = 15) -> None:
        """End the command at its next checkpoint, stopped or not, without an error message."""
        self.reason = self.reason or reason
        self.signal = self.signal or sig
        self.quiet = True
        self.cancelled = True
        self.stop_signal = 0
        self.stopped = False
        self._go.set()  # a stopped command is continued to let it die, as bash does

    def check(self) -> None:
        if self.parent is not None:
            self.parent.check()
        if self.stopped:
            with _PARKING:
                self.parked += 1
            try:
                while not self._go.wait(0.05) and not self.cancelled:
                    pass
            finally:
                with _PARKING:
                    self.parked -= 1
        if self.cancelled:
            e = LimitExceeded(self.reason or "cancelled")
            e.quiet = self.quiet  # type: ignore[attr-defined]
            raise e
        if time.monotonic() > self.deadline:
            self.cancelled = True
            self.reason = "command exceeded the wall-time limit"
            raise LimitExceeded(self.reason)


class Pipe:
    """A bounded byte buffer between two pipeline stages (threads). A write to a pipe whose
    reader has gone raises SigPipe (bash's SIGPIPE), so `yes | head -n 1` ends."""

    def __init__(self, capacity: int, cancel: Cancel | None) -> None:
        self.capacity = capacity
        self.buf = bytearray()
        self.cv = threading.Condition(threading.Lock())
        self.writer_closed = False
        self.reader_closed = False
        self.cancel = cancel

    def _wait(self, cancel: Cancel | None) -> None:
        self.cv.wait(0.05)
        if cancel is None:
            return
        if cancel.stopped:  # park without the lock: the other end may be a running job
            self.cv.release()
            try:
                cancel.check()
            finally:
                self.cv.acquire()
        else:
            cancel.check()

    def put(self, data: bytes, cancel: Cancel | None = None) -> None:
        """Append `data`, waiting while the buffer is full (`cancel`, else the pipe's own, bounds
        the wait: a FIFO's ends belong to different commands)."""
        cancel = cancel or self.cancel
        view = memoryview(data)
        with self.cv:
            while view:
                if self.reader_closed:
                    raise SigPipe
                space = self.capacity - len(self.buf)
                if space <= 0:
                    self._wait(cancel)
                    continue
                self.buf += view[:space]
                view = view[space:]
                self.cv.notify_all()

    def get(self, cancel: Cancel | None = None) -> bytes:
        cancel = cancel or self.cancel
        with self.cv:
            while not self.buf:
                if self.writer_closed:
                    return b""
                self._wait(cancel)
            out = bytes(self.buf)
            self.buf.clear()
            self.cv.notify_all()
            return out

    def close_writer(self) -> None:
        with self.cv:
            self.writer_closed = True
            self.cv.notify_all()

    def close_reader(self) -> None:
        with self.cv:
            self.reader_closed = True
            self.buf.clear()
            self.cv.notify_all()


class PipeWriter(Stream):
    writable = True
    name = "pipe"

    def __init__(self, pipe: Pipe) -> None:
        self.pipe = pipe

    def write(self, data: bytes) -> None:
        if data:
            self.pipe.put(data)

    def close(self) -> None:
        self.pipe.close_writer()


class PipeReader(InStream):
    name = "pipe"

    def __init__(self, pipe: Pipe) -> None:
        super().__init__()
        self.pipe = pipe

    def _fill(self) -> bytes:
        return self.pipe.get()

    def close(self) -> None:
        self.pipe.close_reader()


class FileReader(InStream):
    """A VFS file open for reading (or read-write with `<>`), read in chunks at an offset."""

    def __init__(self, handle, name: str, writable: bool = False) -> None:  # handle: FileHandle
        super().__init__()
        self.handle = handle
        self.name = name
        self.offset = 0
        self.writable = writable

    def _fill(self) -> bytes:
        chunk = self.handle.pread(CHUNK, self.offset)
        self.offset += len(chunk)
        return chunk

    def tell(self) -> int:
        return self.offset - len(self._buf)

    def seek(self, offset: int) -> None:
        """lseek(2) to an absolute offset (past the end too: reads there end at once)."""
        self._buf = b""
        self._eof = False
        self.offset = offset

    def write(self, data: bytes) -> None:
        if not self.writable:
            super().write(data)
        pos = self.offset - len(self._buf)
        try:
            self.handle.pwrite(data, pos)
        except OSError as e:
            raise WriteError(e) from None
        self._buf = b""
        self.offset = pos + len(data)

    def close(self) -> None:
        self.handle.close()


class WriteError(Exception):
    """Writing to a file a redirection opened failed (ENOSPC from a quota, EIO). Not an OSError
    on purpose: a tool's handler for errors reading its input files must not take it for one
    (`head: error reading '/dev/zero'`); whoever runs the command reports it as bash and GNU
    do, `NAME: write error: No space left on device`, with status 1."""

    def __init__(self, e: OSError) -> None:
        super().__init__(e.errno, e.strerror)
        self.errno = e.errno
        self.strerror = e.strerror or os.strerror(e.errno or errno.EIO)


class FileWriter(Stream):
    """A VFS file open for writing. Writes are buffered (one VFS transaction per flush) and
    flushed when the buffer grows, when the redirection ends, or at once when `unbuffered`
    (descriptors opened by `exec`, which later commands may read back at any time)."""

    writable = True

    def __init__(self, handle, name: str, append: bool, unbuffered: bool = False) -> None:
        self.handle = handle
        self.name = name
        self.offset = 0
        self.append = append
        self.buf = bytearray()
        self.unbuffered = unbuffered

    def write(self, data: bytes) -> None:
        self.buf += data
        if self.unbuffered or len(self.buf) >= CHUNK:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            data = bytes(self.buf)
            self.buf.clear()
            try:
                self.handle.pwrite(data, self.offset)
            except OSError as e:
                raise WriteError(e) from None
            self.offset += len(data)

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self.handle.close()


def open_flags(op: str, noclobber: bool) -> int:
    """os.open flags for a redirection operator."""
    if op in (">", ">&", "&>"):
        return os.O_WRONLY | os.O_CREAT | (os.O_EXCL if noclobber else os.O_TRUNC)
    if op in (">|",):
        return os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    if op in (">>", "&>>"):
        return os.O_WRONLY | os.O_CREAT | os.O_APPEND
    if op == "<>":
        return os.O_RDWR | os.O_CREAT
    return os.O_RDONLY
