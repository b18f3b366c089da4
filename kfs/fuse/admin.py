"""The administrator's view through the mount: `/.komputer/events.jsonl` and
`/.komputer/receipts.jsonl`, the event stream and the receipts as JSON lines, for `tail -f`,
`jq`, `grep` and `less` on the host.

They are not files of the tree: no agent reaches them over SSH, SFTP or a delegated program
(which see the VFS, or only their home, /tmp and working directory of the mount). The directory
is root's, mode 0700, the files 0400, and every request from another uid is refused besides.
An agent's mount (`komputer mount --agent NAME`, whose caller may be a container's root) has
no /.komputer at all: the rows are every agent's commands and paths.
A file's bytes are the stored records, one line each; its size grows as records are appended,
and when retention drops events (the oldest, or an agent's oldest past its bound) the file is
shorter (as after a `logrotate` copytruncate, `tail -f` says "file truncated" and goes on). Attributes are never
cached by the kernel and reads bypass its page cache, so a read always sees the newest records.
"""

from __future__ import annotations

import bisect
import errno
import json
import stat as st
import threading
import time
from array import array
from collections.abc import Callable
from typing import Any

from pyfuse3 import FUSEError

from kfs.journal.receipts import decode_receipt
from kfs.kstate import KState
from kfs.vfs import Inode

NAME = b".komputer"
DIR_INO = 1 << 62  # far above the VFS's inode counter
_BOOT = time.time_ns()


def _event_line(key: bytes, value: bytes) -> bytes:
    return bytes(value) + b"\n"


def _receipt_line(key: bytes, value: bytes) -> bytes:
    return json.dumps(decode_receipt(bytes(key), bytes(value)), separators=(",", ":")).encode() + b"\n"


class Journal:
    """One append-only database as a file of lines: an index of where each record's line
    starts, brought up to date (incrementally, or from scratch after retention) on demand."""

    def __init__(self, state: KState, db: str, line: Callable[[bytes, bytes], bytes]) -> None:
        self.state = state
        self.db = db
        self.line = line
        self.keys: list[bytes] = []
        self.starts = array("Q")  # offset of each record's line; the file's size last
        self.starts.append(0)
        self.lock = threading.Lock()

    @property
    def size(self) -> int:
        return self.starts[-1]

    def refresh(self) -> None:
        with self.lock, self.state.read() as txn:
            t, db = txn.raw(self.db)
            cur = t.cursor(db)
            entries = txn.stat(self.db)["entries"]
            if self.keys and (not cur.first() or bytes(cur.key()) != self.keys[0]):
                self._forget()  # the oldest went: index afresh
            if not self._append(cur) or len(self.keys) != entries:
                self._forget()  # retention took rows from the middle too (an agent's oldest)
                self._append(cur)

    def _forget(self) -> None:
        self.keys, self.starts = [], array("Q", [0])

    def _append(self, cur: Any) -> bool:
        """Index the rows after the last one indexed; False when that one is gone."""
        if self.keys:
            if not cur.set_key(self.keys[-1]):
                return False
            if not cur.next():
                return True
        elif not cur.first():
            return True
        for key, value in cur:
            self.keys.append(bytes(key))
            self.starts.append(self.starts[-1] + len(self.line(key, value)))
        return True

    def read(self, offset: int, size: int) -> bytes:
        """Up to `size` bytes from `offset`, from the records as the index knows them."""
        with self.lock:
            first = bisect.bisect_right(self.starts, offset) - 1
            if first < 0 or first >= len(self.keys):
                return b""
            skip = offset - self.starts[first]
            start_key = self.keys[first]
        out = bytearray()
        with self.state.read() as txn:
            t, db = txn.raw(self.db)
            cur = t.cursor(db)
            if not cur.set_range(start_key):
                return b""
            for key, value in cur:
                out += self.line(key, value)
                if len(out) - skip >= size:
                    break
        return bytes(out[skip:skip + size])


class AdminView:
    """The `/.komputer` directory's inodes, attributes, listing and reads."""

    def __init__(self, state: KState, agent: str | None = None) -> None:
        self.agent = agent  # an agent's mount: the view is not there
        self.files = {
            DIR_INO + 1: (b"events.jsonl", Journal(state, "events", _event_line)),
            DIR_INO + 2: (b"receipts.jsonl", Journal(state, "receipts", _receipt_line)),
        }

    @staticmethod
    def owns(ino: int) -> bool:
        return ino >= DIR_INO

    def require_root(self, uid: int) -> None:
        """The view is root's: EACCES for another uid; in an agent's mount, where every request
        is the agent's whoever makes it, there is no such directory (ENOENT)."""
        if self.agent is not None:
            raise FUSEError(errno.ENOENT)
        if uid != 0:
            raise FUSEError(errno.EACCES)

    def inode(self, ino: int) -> Inode:
        now = time.time_ns()
        if ino == DIR_INO:
            return Inode(DIR_INO, st.S_IFDIR | 0o700, 0, 0, 2, 4096, _BOOT, _BOOT, _BOOT, _BOOT)
        journal = self.journal(ino)
        journal.refresh()
        return Inode(ino, st.S_IFREG | 0o400, 0, 0, 1, journal.size, now, now, now, _BOOT)

    def journal(self, ino: int) -> Journal:
        try:
            return self.files[ino][1]
        except KeyError:
            raise FUSEError(errno.ENOENT) from None

    def lookup(self, name: bytes) -> Inode:
        for ino, (file_name, _) in self.files.items():
            if file_name == name:
                return self.inode(ino)
        if name == b".":
            return self.inode(DIR_INO)
        raise FUSEError(errno.ENOENT)

    def entries(self) -> list[tuple[bytes, int]]:
        return [(name, ino) for ino, (name, _) in self.files.items()]
