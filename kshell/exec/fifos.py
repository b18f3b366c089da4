"""Named pipes (FIFO inodes of the VFS, made by mkfifo) as Linux opens them, within this process.

The VFS stores a FIFO's inode but no data: it cannot carry bytes between the agents' commands,
which are threads here. So the process keeps a rendezvous per FIFO (its KState object and inode
number) holding a bounded Pipe while any end is open. An open for reading waits until a writer
has come, an open for writing until a reader is there, and `<>` (read-write) waits for nobody,
as fifo_open in Linux does; a reader sees the end of its input when the last writer closes, a
writer gets EPIPE (bash's SIGPIPE) when the last reader has gone. Every wait answers to the
opening session's current Cancel, so `cat fifo` with no writer ends at the command's wall-time
bound (bash would hang) or when the job is killed.

A FIFO is reached only by opening its path: fs.open refuses it (EOPNOTSUPP, as it refuses every
inode that is not a file or a directory), and the callers that open paths for redirections and
tools hand that error to `open_special`, which opens a FIFO's end instead or re-raises.
"""

from __future__ import annotations

import errno
import os
import stat as st
import threading
import weakref
from typing import TYPE_CHECKING, Any

from kfs.vfs.cred import R_OK, W_OK, require
from kshell.exec.streams import InStream, Pipe

if TYPE_CHECKING:
    from kshell.exec.interp import Interp


class _Fifo:
    """One FIFO's open ends: counts of readers and writers, and how many of each ever came (a
    waiting opener watches these: a partner that came and went already counts)."""

    __slots__ = ("fifos", "ino", "pipe", "readers", "writers", "read_opens", "write_opens")

    def __init__(self, fifos: dict[int, _Fifo], ino: int, capacity: int) -> None:
        self.fifos = fifos  # the open FIFOs of its KState, by inode number
        self.ino = ino
        self.pipe = Pipe(capacity, None)
        self.readers = self.writers = self.read_opens = self.write_opens = 0


_LOCK = threading.Condition(threading.Lock())
_TABLE: weakref.WeakKeyDictionary[Any, dict[int, _Fifo]] = weakref.WeakKeyDictionary()


class FifoEnd(InStream):
    """An open end of a FIFO: reads and writes go through its Pipe; closing leaves the FIFO."""

    def __init__(self, fifo: _Fifo, session: Any, name: str, readable: bool, writable: bool) -> None:
        super().__init__()
        self.fifo = fifo
        self.session = session  # its `cancel` is the running command's, whenever that is
        self.name = name
        self.readable = readable
        self.writable = writable
        self.closed = False

    def _fill(self) -> bytes:
        if not self.readable:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF), self.name)
        return self.fifo.pipe.get(self.session.cancel)

    def write(self, data: bytes) -> None:
        if not self.writable:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF), self.name)
        if data:
            self.fifo.pipe.put(data, self.session.cancel)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            _release(self.fifo, self.readable, self.writable)


def open_special(sh: Interp, path: str, flags: int, error: OSError) -> FifoEnd:
    """The end of the FIFO at `path` that `flags` ask for, when fs.open refused `path` with
    `error` because it is one; any other refusal is raised as it came."""
    if error.errno != errno.EOPNOTSUPP:
        raise error
    inode = sh.fs.stat(path)
    if not st.S_ISFIFO(inode.mode):
        raise error
    access = flags & os.O_ACCMODE
    reading, writing = access != os.O_WRONLY, access != os.O_RDONLY
    require(sh.fs.cred, inode, (R_OK if reading else 0) | (W_OK if writing else 0), path)
    with _LOCK:
        fifos = _TABLE.setdefault(sh.fs.vfs.state, {})
        fifo = fifos.get(inode.ino)
        if fifo is None:
            fifo = fifos[inode.ino] = _Fifo(fifos, inode.ino, sh.limits.pipeline_buffer)
        if reading:
            fifo.readers += 1
            fifo.read_opens += 1
            fifo.pipe.reader_closed = False
        if writing:
            fifo.writers += 1
            fifo.write_opens += 1
            fifo.pipe.writer_closed = False
        _LOCK.notify_all()
        seen = fifo.write_opens if reading else fifo.read_opens
    try:
        if reading != writing:
            _await_partner(sh, fifo, reading, seen)
    except BaseException:
        _release(fifo, reading, writing)
        raise
    return FifoEnd(fifo, sh.session, path, reading, writing)


def _await_partner(sh: Interp, fifo: _Fifo, reading: bool, seen: int) -> None:
    """Wait until the other side has an end open (or has had one since this open began)."""
    while True:
        with _LOCK:
            if (fifo.writers or fifo.write_opens != seen) if reading else (fifo.readers or fifo.read_opens != seen):
                return
            _LOCK.wait(0.05)
        sh.session.cancel.check()  # outside the lock: a stopped job parks here


def _release(fifo: _Fifo, reading: bool, writing: bool) -> None:
    with _LOCK:
        if reading:
            fifo.readers -= 1
            if not fifo.readers:
                fifo.pipe.close_reader()
        if writing:
            fifo.writers -= 1
            if not fifo.writers:
                fifo.pipe.close_writer()
        if not fifo.readers and not fifo.writers and fifo.fifos.get(fifo.ino) is fifo:
            del fifo.fifos[fifo.ino]  # what was left unread goes with it, as with a FIFO no one holds
        _LOCK.notify_all()
