"""The frames between the SSH front end and a session worker.

One stream socket carries both directions: a frame is a type byte, a 4-byte big-endian length
and the payload (JSON for requests and replies, raw bytes for output and snapshots). Output and
the end of a command travel in the same ordered stream, so the front end has written every byte
of a command's output before it acts on its `DONE`. Standard input flows by credit: the worker
says how many chunks it will take (WANT), so a command that does not read stops the front end
from reading the channel, which is the back-pressure SSH's window carries to the client.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from typing import Any

HEADER = struct.Struct(">BI")
MAX_FRAME = 64 << 20  # a frame longer than this is a broken peer, not data

# front end -> worker
BIND = ord("B")  # JSON: agent, uid, gid, home, cwd, env, functions, tty, limits
RESTORE = ord("R")  # bytes: a snapshot the worker made earlier (sent just before BIND)
RUN = ord("X")  # JSON: source, interactive
CALL = ord("C")  # JSON: method, args -> REPLY
STDIN = ord("D")  # bytes of standard input (only as many chunks as the worker asked for with WANT)
STDIN_EOF = ord("E")  # end of standard input for the running command
INTERRUPT = ord("I")  # Ctrl-C (empty) or a lost connection (b"hangup"): cancel the running command
HANGUP = ord("H")  # the session is over: SIGHUP to every job, then exit
RESET = ord("Z")  # the session is over and it had no jobs: drop the shell, wait for the next BIND
DETACH = ord("G")  # JSON: hangup. The session is over, its jobs run on: exit when they end
# worker -> front end
OUT = ord("o")  # bytes for standard output
ERR = ord("e")  # bytes for standard error
WANT = ord("w")  # JSON n: the worker takes n more stdin chunks (a terminal asks one at a time)
SNAPSHOT = ord("s")  # bytes: the shell state after an interactive command (opaque to the front end)
DONE = ord("d")  # JSON: status, interrupted, exited, cwd, jobs
REPLY = ord("r")  # JSON: the result of a CALL
FAILED = ord("f")  # JSON: the worker could not start (message); it exits
PAUSE = ord("p")  # JSON bool: the command waits for an approval (its wall time stops) or goes on
RAW = ord("t")  # JSON bool: a delegated program has the terminal (no line editing, echo) or gives it back


def encode(kind: int, payload: bytes = b"") -> bytes:
    return HEADER.pack(kind, len(payload)) + payload


def encode_json(kind: int, value: Any) -> bytes:
    return encode(kind, json.dumps(value, separators=(",", ":")).encode())


class FrameSocket:
    """The worker's end: blocking frames, sent whole under a lock (several threads write)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._send_lock = threading.Lock()

    def send(self, kind: int, payload: bytes = b"") -> None:
        data = encode(kind, payload)
        with self._send_lock:
            self.sock.sendall(data)

    def send_json(self, kind: int, value: Any) -> None:
        self.send(kind, json.dumps(value, separators=(",", ":")).encode())

    def recv(self) -> tuple[int, bytes] | None:
        """The next frame, or None at end of stream."""
        header = self._exactly(HEADER.size)
        if header is None:
            return None
        kind, length = HEADER.unpack(header)
        if length > MAX_FRAME:
            raise ValueError(f"frame of {length} bytes")
        payload = self._exactly(length) if length else b""
        if payload is None:
            return None
        return kind, payload

    def _exactly(self, n: int) -> bytes | None:
        chunks: list[bytes] = []
        while n:
            chunk = self.sock.recv(min(n, 1 << 20))
            if not chunk:
                return None
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)
