"""The administrator's view through the mount (/.komputer/events.jsonl, receipts.jsonl): the
handlers called directly, then a real mount read with ordinary tools, root only."""

from __future__ import annotations

import errno
import json
import os
import select
import subprocess
import time

import pytest
from test_fuse_operations import ROOT_CTX, call, errno_of, user_ctx

from kfs.fuse.admin import DIR_INO, NAME
from kfs.fuse.operations import Operations
from kfs.journal import append_event, prune_events
from kfs.vfs import ROOT_INO, VFS, PathFS
from tests.hang import HANG


@pytest.fixture
def ops(vfs: VFS) -> Operations:
    return Operations(vfs)


def read_all(ops: Operations, name: bytes, chunk: int = 7) -> bytes:
    ino = call(ops.lookup, DIR_INO, name, ROOT_CTX).st_ino
    fh = call(ops.open, ino, os.O_RDONLY, ROOT_CTX).fh
    out = b""
    while data := call(ops.read, fh, len(out), chunk):
        out += data
    call(ops.release, fh)
    return out


def test_events_read_as_json_lines_that_grow_and_shrink_from_the_front(ops: Operations, vfs: VFS) -> None:
    for n in range(5):
        vfs.state.write(lambda txn, n=n: append_event(txn, "t", n=n))
    lines = read_all(ops, b"events.jsonl").splitlines()
    assert [json.loads(line)["n"] for line in lines] == [0, 1, 2, 3, 4]
    size = call(ops.getattr, call(ops.lookup, DIR_INO, b"events.jsonl", ROOT_CTX).st_ino, ROOT_CTX).st_size
    assert size == sum(len(line) + 1 for line in lines)
    vfs.state.write(lambda txn: append_event(txn, "t", n=5))
    assert json.loads(read_all(ops, b"events.jsonl").splitlines()[-1])["n"] == 5
    prune_events(vfs.state, 2)
    assert [json.loads(line)["n"] for line in read_all(ops, b"events.jsonl").splitlines()] == [4, 5]


def test_events_dropped_from_the_middle_by_an_agents_bound_read_as_whole_lines(ops: Operations, vfs: VFS) -> None:
    for n, agent in enumerate(["a", "b", "b", "a", "b"]):
        vfs.state.write(lambda txn, n=n, agent=agent: append_event(txn, "t", agent=agent, n=n))
    assert len(read_all(ops, b"events.jsonl").splitlines()) == 5  # indexed by the view
    assert prune_events(vfs.state, 0, per_agent=2) == 1  # b's oldest: the first line stays
    assert [json.loads(line)["n"] for line in read_all(ops, b"events.jsonl").splitlines()] == [0, 2, 3, 4]
    assert prune_events(vfs.state, 0, per_agent=1) == 2  # a's 0 and b's 2 go, and one more comes
    vfs.state.write(lambda txn: append_event(txn, "t", agent="c", n=5))
    assert [json.loads(line)["n"] for line in read_all(ops, b"events.jsonl").splitlines()] == [3, 4, 5]
    assert prune_events(vfs.state, 0, per_agent=1) == 0
    vfs.state.write(lambda txn: append_event(txn, "t", agent="c", n=6))
    assert prune_events(vfs.state, 0, per_agent=1) == 1  # c's 5, from the middle, as 7 comes
    vfs.state.write(lambda txn: append_event(txn, "t", agent="d", n=7))
    assert [json.loads(line)["n"] for line in read_all(ops, b"events.jsonl").splitlines()] == [3, 4, 6, 7]


def test_receipts_read_as_json_lines(ops: Operations, vfs: VFS) -> None:
    PathFS(vfs).write_file("/f", b"x")
    rows = [json.loads(line) for line in read_all(ops, b"receipts.jsonl", 1 << 16).splitlines()]
    assert rows[-1]["op"] == "vfs.write" and rows[-1]["path"] == "/f"


def test_an_agents_mount_has_no_admin_view(vfs: VFS) -> None:
    from kfs.fuse.operations import AgentView
    from kfs.vfs import Cred

    ops = Operations(vfs, agent=AgentView("alice", Cred(100000, 100000), None))
    assert errno_of(ops.lookup, ROOT_INO, NAME, ROOT_CTX) == errno.ENOENT  # the caller's root is no admin
    for call_ in (lambda: errno_of(ops.open, DIR_INO + 1, os.O_RDONLY, ROOT_CTX),
                  lambda: errno_of(ops.opendir, DIR_INO, ROOT_CTX),
                  lambda: errno_of(ops.lookup, DIR_INO, b"events.jsonl", ROOT_CTX)):
        assert call_() == errno.ENOENT


def test_only_root_and_only_reading(ops: Operations) -> None:
    assert errno_of(ops.lookup, ROOT_INO, NAME, user_ctx()) == errno.EACCES
    assert errno_of(ops.open, DIR_INO + 1, os.O_RDONLY, user_ctx()) == errno.EACCES
    attrs = call(ops.lookup, ROOT_INO, NAME, ROOT_CTX)
    assert (attrs.st_mode & 0o7777, attrs.st_uid, attrs.attr_timeout) == (0o700, 0, 0)
    assert errno_of(ops.open, DIR_INO + 1, os.O_WRONLY, ROOT_CTX) == errno.EROFS
    assert errno_of(ops.create, DIR_INO, b"x", 0o644, os.O_WRONLY, ROOT_CTX) == errno.EROFS
    assert errno_of(ops.unlink, DIR_INO, b"events.jsonl", ROOT_CTX) == errno.EROFS
    assert errno_of(ops.lookup, DIR_INO, b"other", ROOT_CTX) == errno.ENOENT


def test_a_real_mount_serves_it_to_root_tools_and_refuses_agents(kfs_mount, peer: PathFS) -> None:  # noqa: ANN001
    view = kfs_mount.path / ".komputer"
    assert sorted(os.listdir(view)) == ["events.jsonl", "receipts.jsonl"]
    assert (os.stat(view).st_mode & 0o7777, os.stat(view / "events.jsonl").st_mode & 0o7777) == (0o700, 0o400)
    peer.vfs.state.write(lambda txn: append_event(txn, "admin.view", marker="tail-started"))
    follower = subprocess.Popen(["tail", "-n", "+1", "-f", str(view / "events.jsonl")], stdout=subprocess.PIPE,
                                bufsize=0)  # unbuffered: select sees every line not read yet

    def line_with(marker: bytes) -> bytes:
        """The first line of tail's output that holds `marker` (fails past the hang bound)."""
        deadline = time.monotonic() + HANG
        while True:
            ready, _, _ = select.select([follower.stdout], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"tail never printed {marker!r}"
            line = follower.stdout.readline()  # type: ignore[union-attr]
            assert line, f"tail ended before printing {marker!r}"
            if marker in line:
                return line

    try:
        line_with(b"tail-started")  # tail has read to the end of the file and follows it now
        peer.vfs.state.write(lambda txn: append_event(txn, "admin.view", marker="seen-by-tail"))
        assert json.loads(line_with(b"seen-by-tail"))["marker"] == "seen-by-tail"
    finally:
        follower.kill()
        follower.wait()
    peer.write_file("/admin-view-probe", b"x")
    receipts = (view / "receipts.jsonl").read_text().splitlines()
    assert any(json.loads(r).get("path") == "/admin-view-probe" for r in receipts)
    denied = subprocess.run(["cat", str(view / "events.jsonl")], capture_output=True, text=True,
                            preexec_fn=lambda: (os.setgid(1000), os.setuid(1000)))
    assert denied.returncode == 1 and "Permission denied" in denied.stderr
    assert subprocess.run(["touch", str(view / "x")], capture_output=True).returncode == 1


def test_receipts_of_the_mount_name_the_callers_uid_and_pid(ops: Operations, vfs: VFS) -> None:
    from types import SimpleNamespace

    from test_fuse_operations import user_ctx as ctx_of

    from kfs.journal import receipts_since

    call(ops.mkdir, ROOT_INO, b"shared", 0o777, SimpleNamespace(uid=0, gid=0, pid=1, umask=0))
    shared = call(ops.lookup, ROOT_INO, b"shared", ROOT_CTX).st_ino
    writer = ctx_of(1000)
    writer.pid = 4321
    info, entry = call(ops.create, shared, b"f", 0o644, os.O_WRONLY, writer)
    call(ops.lookup, ROOT_INO, b"shared", ROOT_CTX)  # another caller's request in between
    call(ops.write, info.fh, 0, b"data")
    call(ops.release, info.fh)
    rows = [r for r in receipts_since(vfs.state, 0, 1 << 30) if r.get("path") in ("/shared/f", f"ino {entry.st_ino}")]
    assert {r["by"] for r in rows} == {"fuse uid 1000 pid 4321"}
    assert {r["op"] for r in rows} >= {"vfs.create", "vfs.write"}


def test_mounting_and_unmounting_are_events(kfs_mount) -> None:  # noqa: ANN001
    from kfs.journal import events_since
    from kfs.kstate import KState

    with KState(kfs_mount.state) as state:
        starts = [e for e in events_since(state, 0, 1 << 30) if e["type"] == "mount.start"]
    assert starts and starts[-1]["path"] == str(kfs_mount.path) and starts[-1]["front"] == "fuse"
