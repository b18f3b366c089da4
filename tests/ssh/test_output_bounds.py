"""A client that does not read what the server sends must not grow the front end's memory:
an exec's output and SFTP's answers wait for the client's window, with at most asyncssh's
high-water mark (64 KiB) and one answer buffered per channel."""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator

import paramiko
import pytest
from kserver import Bench

from kfs.vfs import ROOT, VFS, PathFS

HIGH = 64 << 10  # asyncssh's default high-water mark of a channel's send buffer
WINDOW = 3.0  # seconds the buffer is watched after the client's window filled (a measurement)


@pytest.fixture
def client(bench: Bench) -> Iterator[paramiko.SSHClient]:
    c = paramiko.SSHClient()
    c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    c.connect("127.0.0.1", bench.port, "alice", key_filename=str(bench.keys["alice"]), look_for_keys=False,
              allow_agent=False)
    try:
        yield c
    finally:
        c.close()


def buffered(bench: Bench) -> int:
    """The bytes the server holds for its clients, over every channel of every connection."""
    def total() -> int:
        return sum(chan.get_write_buffer_size() for conn in bench.server.connections
                   for chan in list(conn._channels.values()))  # noqa: SLF001
    return bench.thread.call(total)


def watch(bench: Bench, bound: int) -> int:
    """The most the server held in WINDOW seconds once the client's window is full (fails when
    it never fills, or past `bound`)."""
    deadline = time.monotonic() + 60
    while buffered(bench) == 0:
        assert time.monotonic() < deadline, "the server never had to wait for the client"
        time.sleep(0.05)
    most, end = 0, time.monotonic() + WINDOW
    while time.monotonic() < end:
        most = max(most, buffered(bench))
        assert most <= bound, f"the server holds {most} bytes for a client that does not read"
        time.sleep(0.05)
    return most


def test_an_exec_whose_client_does_not_read_waits(bench: Bench, client: paramiko.SSHClient) -> None:
    chan = client.get_transport().open_session()
    chan.exec_command("while true; do echo 0123456789abcdef0123456789abcdef; done")
    most = watch(bench, 2 * HIGH)
    print(f"exec: at most {most} bytes held")
    assert chan.recv(100).startswith(b"0123456789abcdef")  # it goes on once read
    chan.close()


def packet(kind: int, request: int, *fields: bytes) -> bytes:
    body = bytes((kind,)) + struct.pack(">I", request) + b"".join(fields)
    return struct.pack(">I", len(body)) + body


def sftp_string(s: bytes) -> bytes:
    return struct.pack(">I", len(s)) + s


def read_packet(chan: paramiko.Channel) -> bytes:
    def exactly(n: int) -> bytes:
        out = b""
        while len(out) < n:
            got = chan.recv(n - len(out))
            assert got, "the SFTP channel closed"
            out += got
        return out
    return exactly(struct.unpack(">I", exactly(4))[0])


def test_sftp_reads_whose_answers_are_not_read_wait(bench: Bench, client: paramiko.SSHClient) -> None:
    """200 READs of 255 KiB sent at once, none of the answers read: asyncssh would hold 50 MiB;
    the server reads the next request only when the client took the answers before it."""
    PathFS(VFS(bench.state, by="test"), cred=ROOT).write_file("/home/alice/big", bytes(range(256)) * 4096)
    chan = client.get_transport().open_session()
    chan.invoke_subsystem("sftp")
    chan.sendall(struct.pack(">I", 5) + bytes((1,)) + struct.pack(">I", 3))  # INIT, version 3
    assert read_packet(chan)[0] == 2  # VERSION
    chan.sendall(packet(3, 1, sftp_string(b"/home/alice/big"), struct.pack(">II", 1, 0)))  # OPEN for reading
    answer = read_packet(chan)
    assert answer[0] == 102, answer  # HANDLE
    handle = answer[9:9 + struct.unpack_from(">I", answer, 5)[0]]
    size = 255 << 10
    chan.sendall(b"".join(packet(5, 10 + i, sftp_string(handle), struct.pack(">QI", 0, size)) for i in range(200)))
    most = watch(bench, 2 * HIGH + size)
    print(f"sftp: at most {most} bytes held")
    for i in range(200):  # every answer comes, in order, once the client reads
        answer = read_packet(chan)
        assert answer[0] == 103 and struct.unpack_from(">I", answer, 1)[0] == 10 + i  # DATA
    chan.close()
