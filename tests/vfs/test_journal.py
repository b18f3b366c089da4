"""The journal: a receipt and change rows for every mutation, never contents; the event log."""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from kfs.journal import (
    ChangeKind,
    append_event,
    changes_since,
    events_since,
    follow_events,
    last_change,
    receipt_rows,
    receipts_since,
)
from kfs.kstate import KState
from kfs.kstate.schema import U64
from kfs.vfs import NOW, RENAME_EXCHANGE, ROOT_INO, VFS, XATTR_CREATE, Cred, PathFS
from tests.hang import HANG

SECRET = "s3cr3t-Zq8vW2-do-not-journal"


def last_receipt_id(state: KState) -> int:
    with state.read() as txn:
        return txn.next_seq("receipts") - 1


def receipts_after(state: KState, action: Callable[[], object]) -> list[dict[str, Any]]:
    start = last_receipt_id(state)
    action()
    return receipts_since(state, start)


def journal_bytes(state: KState) -> bytes:
    """Every raw key and value of the receipts, changes and events databases."""
    out = bytearray()
    with state.read() as txn:
        for db in ("receipts", "changes", "events"):
            for key, value in txn.scan(db):
                out += key + value
    return bytes(out)


# -- a receipt for every mutation --------------------------------------------------------------


def _prepare(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/d/f", b"12345")
    fs.mkdir("/d/empty")


MUTATIONS: list[tuple[str, Callable[[PathFS], object], dict[str, Any]]] = [
    (
        "write",
        lambda fs: fs.write_file("/d/f", b"hello!"),
        {"op": "vfs.write", "path": "/d/f", "bytes": 6},
    ),
    (
        "write-new",
        lambda fs: fs.write_file("/d/new", b"abc"),
        {"op": "vfs.write", "path": "/d/new", "bytes": 3},
    ),
    (
        "create",
        lambda fs: fs.open("/d/new", os.O_CREAT | os.O_WRONLY).close(),
        {"op": "vfs.create", "path": "/d/new"},
    ),
    (
        "write that creates",
        lambda fs: fs.write_file("/d/new", b"abc"),
        {"op": "vfs.write", "path": "/d/new", "bytes": 3, "created": True},
    ),
    (
        "append",
        lambda fs: fs.append_file("/d/f", b"more"),
        {"op": "vfs.append", "path": "/d/f", "bytes": 4},
    ),
    ("mkdir", lambda fs: fs.mkdir("/d/sub"), {"op": "vfs.mkdir", "path": "/d/sub"}),
    (
        "mkdir-parents",
        lambda fs: fs.mkdir("/d/x/y", parents=True),
        {"op": "vfs.mkdir", "path": "/d/x/y"},
    ),
    ("unlink", lambda fs: fs.unlink("/d/f"), {"op": "vfs.rm", "path": "/d/f"}),
    ("rm", lambda fs: fs.rm("/d/f"), {"op": "vfs.rm", "path": "/d/f"}),
    ("rmdir", lambda fs: fs.rmdir("/d/empty"), {"op": "vfs.rm", "path": "/d/empty"}),
    (
        "rename",
        lambda fs: fs.rename("/d/f", "/d/g"),
        {"op": "vfs.rename", "path": "/d/f", "to": "/d/g"},
    ),
    (
        "exchange",
        lambda fs: fs.rename("/d/f", "/d/empty", RENAME_EXCHANGE),
        {"op": "vfs.rename", "path": "/d/f"},
    ),
    ("symlink", lambda fs: fs.symlink("f", "/d/l"), {"op": "vfs.symlink", "path": "/d/l"}),
    ("link", lambda fs: fs.link("/d/f", "/d/h"), {"op": "vfs.link", "path": "/d/h"}),
    ("chmod", lambda fs: fs.chmod("/d/f", 0o600), {"op": "vfs.chmod", "path": "/d/f"}),
    ("chown", lambda fs: fs.chown("/d/f", 7, 7), {"op": "vfs.chown", "path": "/d/f"}),
    ("utime", lambda fs: fs.utime("/d/f", NOW, NOW), {"op": "vfs.utime", "path": "/d/f"}),
    (
        "truncate",
        lambda fs: fs.truncate("/d/f", 2),
        {"op": "vfs.truncate", "path": "/d/f", "bytes": 2},
    ),
    ("mknod", lambda fs: fs.mknod("/d/p", 0o010644), {"op": "vfs.mknod", "path": "/d/p"}),
    (
        "setxattr",
        lambda fs: fs.setxattr("/d/f", b"user.k", b"vv"),
        {"op": "vfs.setxattr", "path": "/d/f", "bytes": 2},
    ),
    (
        "removexattr",
        lambda fs: (fs.setxattr("/d/f", b"user.k", b"v"), fs.removexattr("/d/f", b"user.k")),
        {"op": "vfs.removexattr", "path": "/d/f"},
    ),
    (
        "pwrite",
        lambda fs: fs.open("/d/f", os.O_WRONLY).pwrite(b"xyz", 1),
        {"op": "vfs.write", "path": "/d/f", "bytes": 3},
    ),
    (
        "o_append",
        lambda fs: fs.open("/d/f", os.O_WRONLY | os.O_APPEND).pwrite(b"xy", 0),
        {"op": "vfs.append", "path": "/d/f", "bytes": 2},
    ),
    (
        "o_trunc",
        lambda fs: fs.open("/d/f", os.O_WRONLY | os.O_TRUNC),
        {"op": "vfs.truncate", "path": "/d/f", "bytes": 0},
    ),
    (
        "o_creat",
        lambda fs: fs.open("/d/new", os.O_WRONLY | os.O_CREAT),
        {"op": "vfs.create", "path": "/d/new"},
    ),
]


@pytest.mark.parametrize(
    "action, expected", [(a, e) for _, a, e in MUTATIONS], ids=[n for n, _, _ in MUTATIONS]
)
def test_every_mutation_writes_a_committed_receipt_with_path_bytes_and_by(
    state: KState, fs: PathFS, action: Callable[[PathFS], object], expected: dict[str, Any]
) -> None:
    _prepare(fs)
    rows = receipts_after(state, lambda: action(fs))
    matching = [r for r in rows if all(r.get(k) == v for k, v in expected.items())]
    assert matching, f"no receipt like {expected} in {rows}"
    for row in rows:
        assert row["by"] == "test"
        assert row["status"] == "committed"


@pytest.mark.parametrize("action", [a for _, a, _ in MUTATIONS], ids=[n for n, _, _ in MUTATIONS])
def test_every_mutation_writes_change_rows(
    state: KState, fs: PathFS, action: Callable[[PathFS], object]
) -> None:
    _prepare(fs)
    seq = last_change(state)
    action(fs)
    assert changes_since(state, seq)


def test_receipts_carry_the_callers_provenance(state: KState) -> None:
    fs = PathFS(VFS(state, by="ssh:agent"))
    rows = receipts_after(state, lambda: fs.write_file("/f", b"x"))
    assert {r["by"] for r in rows} == {"ssh:agent"}


def test_receipts_record_the_absolute_path_of_a_relative_one(
    state: KState, vfs: VFS, fs: PathFS
) -> None:
    here = PathFS(vfs, cwd="/home/agent", home="/home/agent")
    rows = receipts_after(state, lambda: here.write_file("notes", b"x"))
    assert {r["path"] for r in rows} == {"/home/agent/notes"}


def test_inode_level_mutations_write_receipts_with_the_path(state: KState, vfs: VFS) -> None:
    d = vfs.mkdir(ROOT_INO, b"d", 0o755).ino
    rows = receipts_after(state, lambda: vfs.mkdir(d, b"e", 0o755))
    assert [(r["op"], r["path"]) for r in rows] == [("vfs.mkdir", "/d/e")]


def test_a_receipt_can_be_read_back_by_id(state: KState, fs: PathFS) -> None:
    rows = receipts_after(state, lambda: fs.mkdir("/d"))
    assert receipt_rows(state, rows[0]["id"]) == rows


def test_reading_writes_no_receipt_and_no_change(state: KState, fs: PathFS) -> None:
    fs.write_file("/f", b"x")
    seq, rid = last_change(state), last_receipt_id(state)
    fs.read_file("/f")
    fs.stat("/f")
    fs.readdir("/")
    with fs.open("/f") as handle:
        handle.pread(1, 0)
    assert changes_since(state, seq) == [] and receipts_since(state, rid) == []


# -- never the contents ------------------------------------------------------------------------


def test_file_contents_never_reach_a_receipt_change_or_event(state: KState, fs: PathFS) -> None:
    fs.write_file("/a", SECRET)
    fs.append_file("/a", SECRET)
    with fs.open("/b", os.O_CREAT | os.O_RDWR) as handle:
        handle.pwrite(SECRET.encode(), 0)
        handle.pwrite(SECRET.encode(), 1 << 20)
    fs.setxattr("/a", b"user.k", SECRET.encode())
    fs.truncate("/a", 3)
    fs.rename("/a", "/c")
    fs.unlink("/b")
    assert SECRET.encode() not in journal_bytes(state)


# -- failures leave nothing --------------------------------------------------------------------


def _no_setup(fs: PathFS) -> None:
    pass


def _tiny_quota(fs: PathFS) -> None:
    fs.vfs.state.write(lambda txn: txn.put("meta", b"max_bytes", U64.pack(10)))


def _user_tree_with_root_subdir(fs: PathFS) -> None:
    fs.chmod("/d", 0o777)
    fs.chown("/d/f", 5, 5)
    fs.chown("/d", 5, 5)
    fs.write_file("/d/empty/rootfile", b"")  # /d/empty stays root's 0755: user 5 cannot empty it


def _existing_xattr(fs: PathFS) -> None:
    fs.setxattr("/d/f", b"user.k", b"1")


USER5 = Cred(5, 5)

FAILURES: list[tuple[str, Callable[[PathFS], None], Callable[[PathFS], object], int]] = [
    ("write-enoent", _no_setup, lambda fs: fs.write_file("/missing/f", b"x"), errno.ENOENT),
    ("write-enospc", _tiny_quota, lambda fs: fs.write_file("/d/new", b"x" * 100), errno.ENOSPC),
    ("append-enospc", _tiny_quota, lambda fs: fs.append_file("/d/f", b"x" * 100), errno.ENOSPC),
    ("mkdir-eexist", _no_setup, lambda fs: fs.mkdir("/d"), errno.EEXIST),
    (
        "mkdir-parents-enotdir",
        _no_setup,
        lambda fs: fs.mkdir("/d/new/../f/x", parents=True),
        errno.ENOTDIR,
    ),
    ("unlink-enoent", _no_setup, lambda fs: fs.unlink("/d/missing"), errno.ENOENT),
    ("rmdir-enotempty", _no_setup, lambda fs: fs.rmdir("/d"), errno.ENOTEMPTY),
    ("rename-enotempty", _no_setup, lambda fs: fs.rename("/home", "/d"), errno.ENOTEMPTY),
    ("rename-eisdir", _no_setup, lambda fs: fs.rename("/d/f", "/d/empty"), errno.EISDIR),
    (
        "open-excl",
        _no_setup,
        lambda fs: fs.open("/d/f", os.O_CREAT | os.O_EXCL | os.O_WRONLY),
        errno.EEXIST,
    ),
    (
        "chmod-eperm",
        _no_setup,
        lambda fs: PathFS(fs.vfs, cred=USER5).chmod("/d/f", 0o777),
        errno.EPERM,
    ),
    (
        "xattr-create",
        _existing_xattr,
        lambda fs: fs.setxattr("/d/f", b"user.k", b"2", XATTR_CREATE),
        errno.EEXIST,
    ),
    (
        "rm-recursive-eacces",
        _user_tree_with_root_subdir,
        lambda fs: PathFS(fs.vfs, cred=USER5).rm("/d", recursive=True),
        errno.EACCES,
    ),
]


@pytest.mark.parametrize(
    "setup, action, code",
    [(s, a, c) for _, s, a, c in FAILURES],
    ids=[n for n, _, _, _ in FAILURES],
)
def test_a_failed_operation_leaves_no_receipt_and_no_change(
    state: KState,
    fs: PathFS,
    setup: Callable[[PathFS], None],
    action: Callable[[PathFS], object],
    code: int,
) -> None:
    _prepare(fs)
    setup(fs)
    seq, rid = last_change(state), last_receipt_id(state)
    with pytest.raises(OSError) as info:
        action(fs)
    assert info.value.errno == code
    assert receipts_since(state, rid) == []
    assert changes_since(state, seq) == []


# -- the change feed ---------------------------------------------------------------------------


def test_change_sequence_numbers_increase_by_one(state: KState, fs: PathFS) -> None:
    for i in range(10):
        fs.write_file(f"/f{i}", b"x")
        fs.rename(f"/f{i}", f"/g{i}")
    seqs = [c.seq for c in changes_since(state, 0)]
    assert seqs == list(range(1, len(seqs) + 1))
    assert last_change(state) == seqs[-1]


def test_receipt_ids_increase(state: KState, fs: PathFS) -> None:
    for i in range(5):
        fs.write_file(f"/f{i}", b"x")
    ids = [r["id"] for r in receipts_since(state, 0)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_changes_since_returns_only_newer_rows(state: KState, fs: PathFS) -> None:
    fs.mkdir("/a")
    seq = last_change(state)
    fs.mkdir("/b")
    assert [c.name for c in changes_since(state, seq)] == [b"b"]


def test_mkdir_records_an_entry_added_to_its_parent(state: KState, fs: PathFS) -> None:
    seq = last_change(state)
    fs.mkdir("/d")
    [change] = changes_since(state, seq)
    assert (change.kind, change.ino, change.parent, change.name) == (
        ChangeKind.ENTRY_ADD,
        fs.stat("/d").ino,
        ROOT_INO,
        b"d",
    )


def test_unlink_records_an_entry_removed_from_its_parent(state: KState, fs: PathFS) -> None:
    fs.write_file("/f", b"")
    ino = fs.stat("/f").ino
    seq = last_change(state)
    fs.unlink("/f")
    [change] = changes_since(state, seq)
    assert (change.kind, change.ino, change.parent, change.name) == (
        ChangeKind.ENTRY_DEL,
        ino,
        ROOT_INO,
        b"f",
    )


def test_a_write_records_a_data_change_of_the_inode(state: KState, fs: PathFS) -> None:
    fs.write_file("/f", b"")
    seq = last_change(state)
    fs.write_file("/f", b"new")
    assert [(c.kind, c.ino) for c in changes_since(state, seq)] == [
        (ChangeKind.DATA, fs.stat("/f").ino)
    ]


def test_handle_writes_store_the_rows_append_receipt_and_append_change_store(state: KState, fs: PathFS) -> None:
    """A handle's writes encode their receipt text once and reuse their change row
    (journal.FixedReceipt, change_row): the stored rows are byte for byte the general ones,
    also after the writer's provenance changes between two writes of one handle."""
    from kfs.journal.changes import _ROW
    from kfs.journal.receipts import _encode_binary

    fs.write_file("/f", b"")
    ino = fs.stat("/f").ino
    start, seq = last_receipt_id(state), last_change(state)
    with fs.open("/f", os.O_WRONLY) as handle:
        handle.pwrite(b"abc", 0)
        fs.vfs.by = "someone else"
        handle.pwrite(b"de", 1)
    with fs.open("/f", os.O_WRONLY | os.O_APPEND) as handle:
        handle.pwrite(b"xyz", 0)
    with state.read() as txn:
        receipts = list(txn.scan("receipts", start=U64.pack(start + 1)))
        changes = [value for _, value in txn.scan("changes", start=U64.pack(seq + 1))]
    expected = [("vfs.write", "test", 3), ("vfs.write", "someone else", 2), ("vfs.append", "someone else", 3)]
    writes = [value for _, value in receipts if b"vfs." in value and b"/f" in value][-3:]
    assert len(writes) == 3
    for value, (op, by, nbytes) in zip(writes, expected):
        ts = U64.unpack(value[1:9])[0]
        assert value == _encode_binary(op, by, "committed", ts, "/f", nbytes, {})
    data_rows = [row for row in changes if row[16:17] == bytes([ChangeKind.DATA])]
    assert data_rows == [_ROW.pack(ino, 0, ChangeKind.DATA, fs.vfs.origin)] * 3


def test_a_store_without_receipts_writes_none_for_a_handle_write(state: KState) -> None:
    fs = PathFS(VFS(state, by="memory", receipts=False))
    start = last_receipt_id(state)
    with fs.open("/f", os.O_CREAT | os.O_WRONLY) as handle:
        handle.pwrite(b"data", 0)
    assert receipts_since(state, start) == []
    assert fs.read_file("/f") == b"data"


def test_chmod_records_an_attribute_change(state: KState, fs: PathFS) -> None:
    fs.write_file("/f", b"")
    seq = last_change(state)
    fs.chmod("/f", 0o600)
    assert [(c.kind, c.ino) for c in changes_since(state, seq)] == [
        (ChangeKind.ATTR, fs.stat("/f").ino)
    ]


def test_rename_records_removal_from_the_old_parent_and_addition_to_the_new(
    state: KState, fs: PathFS
) -> None:
    fs.mkdir("/a")
    fs.mkdir("/b")
    fs.write_file("/a/f", b"")
    seq = last_change(state)
    fs.rename("/a/f", "/b/g")
    rows = {(c.kind, c.parent, c.name) for c in changes_since(state, seq)}
    assert (ChangeKind.ENTRY_DEL, fs.stat("/a").ino, b"f") in rows
    assert (ChangeKind.ENTRY_ADD, fs.stat("/b").ino, b"g") in rows


def test_change_rows_name_the_process_that_wrote_them(state: KState) -> None:
    one, two = VFS(state), VFS(state)
    seq = last_change(state)
    PathFS(one).mkdir("/one")
    PathFS(two).mkdir("/two")
    origins = [c.origin for c in changes_since(state, seq)]
    assert origins == [one.origin, two.origin] and one.origin != two.origin


# -- events ------------------------------------------------------------------------------------


def test_appended_events_get_increasing_sequence_numbers(state: KState) -> None:
    seqs = [state.write(lambda txn, i=i: append_event(txn, "test.tick", n=i)) for i in range(5)]
    assert seqs == list(range(1, 6))


def test_events_since_returns_events_after_a_sequence_in_order(state: KState) -> None:
    for i in range(5):
        state.write(lambda txn, i=i: append_event(txn, "test.tick", n=i))
    events = events_since(state, 2)
    assert [(e["seq"], e["type"], e["n"]) for e in events] == [
        (3, "test.tick", 2),
        (4, "test.tick", 3),
        (5, "test.tick", 4),
    ]


def test_an_event_written_in_a_failed_transaction_is_not_kept(state: KState) -> None:
    def body(txn: Any) -> None:
        append_event(txn, "test.lost")
        raise OSError(errno.EIO, "boom")

    with pytest.raises(OSError):
        state.write(body)
    assert events_since(state, 0) == []


def test_follow_events_yields_events_as_they_are_appended(state: KState) -> None:
    """Each event is appended only once the follower has yielded the one before: the follower
    is seen following, not reading what was there when it began."""
    state.write(lambda txn: append_event(txn, "test.before"))
    yielded = [threading.Event() for _ in range(3)]

    def produce() -> None:
        for i in range(3):
            if i:
                assert yielded[i - 1].wait(HANG)
            state.write(lambda txn, i=i: append_event(txn, "test.live", n=i))

    producer = threading.Thread(target=produce)
    producer.start()
    deadline = time.monotonic() + HANG
    seen = []
    for event in follow_events(state, 1, poll=0.01, stop=lambda: time.monotonic() > deadline):
        seen.append(event)
        yielded[len(seen) - 1].set()
        if len(seen) == 3:
            break
    producer.join(HANG)
    assert [(e["type"], e["n"]) for e in seen] == [
        ("test.live", 0),
        ("test.live", 1),
        ("test.live", 2),
    ]


def test_events_survive_reopening_the_state(tmp_path: Any) -> None:
    with KState(tmp_path, create=True) as first:
        first.write(lambda txn: append_event(txn, "test.durable", note="kept"))
    with KState(tmp_path) as again:
        assert [(e["type"], e["note"]) for e in events_since(again)] == [("test.durable", "kept")]


def test_the_change_feed_is_trimmed_to_the_newest_rows(state: KState, monkeypatch: pytest.MonkeyPatch) -> None:
    from kfs.journal import changes

    monkeypatch.setattr(changes, "KEEP", 3000)
    for _ in range(5):
        state.write(lambda txn: [changes.append_change(txn, 1, changes.ChangeKind.ATTR, 7) for _ in range(1000)])
    newest = changes.last_change(state)
    assert newest == 5000
    assert changes.oldest_change(state) > newest - 3000 - changes._TRIM_EVERY
    assert changes.oldest_change(state) <= newest - 3000 + 1


# -- the stored form of a receipt ----------------------------------------------------------------


def _raw_receipt(state: KState, receipt_id: int) -> bytes:
    with state.read() as txn:
        return next(bytes(v) for _, v in txn.scan("receipts", U64.pack(receipt_id)))


@pytest.mark.parametrize(
    ("fields", "stored_as"),
    [
        ({"path": "/d/f", "nbytes": 6}, b"\x01"),
        ({"path": "/d/f"}, b"\x01"),
        ({}, b"\x01"),
        ({"nbytes": 0, "created": True}, b"\x01"),
        ({"path": "/a", "to": "/b", "exchange": False, "uid": -1, "gid": 2**40, "mode": "0644"}, b"\x01"),
        ({"path": "/caf\u00e9/\udcff\udc80", "name": "user.\u2603"}, b"\x01"),
        ({"path": "", "to": ""}, b"\x01"),
        ({"path": "/nul\0inside"}, b"{"),
        ({"path": "/f", "note": None}, b"{"),
        ({"path": "/f", "ratio": 0.5}, b"{"),
        ({"path": "/f", "nbytes": 2**70}, b"{"),
        ({"path": "/f", "nul\0key": 1}, b"{"),
    ],
)
def test_a_receipt_reads_back_as_written_in_either_stored_form(
    state: KState, fields: dict[str, Any], stored_as: bytes
) -> None:
    from kfs.journal import append_receipt

    rid = state.write(lambda txn: append_receipt(txn, "vfs.test", "by:\u00e9", **fields))
    (row,) = receipts_since(state, rid - 1)
    expected = {"id": rid, "op": "vfs.test", "status": "committed", "by": "by:\u00e9", "ts": row["ts"]}
    if "path" in fields:
        expected["path"] = fields["path"]
    if "nbytes" in fields:
        expected["bytes"] = fields["nbytes"]
    expected.update({k: v for k, v in fields.items() if k not in ("path", "nbytes")})
    assert row == expected
    assert list(row) == list(expected)  # the same key order as the JSON rows had
    assert all(type(row[k]) is type(v) for k, v in expected.items())
    assert _raw_receipt(state, rid)[:1] == stored_as
    assert receipt_rows(state, rid) == [row]


def test_receipts_stored_as_json_by_an_older_komputer_still_read(state: KState, fs: PathFS) -> None:
    """Rows written before the binary form (JSON, the id inside) read as they always did."""
    rid = last_receipt_id(state) + 1
    old = {"id": rid, "op": "vfs.write", "status": "committed", "by": "fuse", "ts": 5, "path": "/f", "bytes": 3}
    state.write(lambda txn: txn.put("receipts", U64.pack(rid) + b"\0\0\0\0", json.dumps(old).encode()))
    rows = receipts_after(state, lambda: fs.write_file("/g", b"abcd"))
    assert receipts_since(state, rid - 1)[0] == old
    assert receipt_rows(state, rid) == [old]
    assert [(r["id"], r["path"], r["bytes"]) for r in rows] == [(rid + 1, "/g", 4)]


def test_continued_receipts_keep_their_rows_in_order(state: KState) -> None:
    from kfs.journal import append_receipt

    rid = state.write(lambda txn: append_receipt(txn, "agent.run", "a", status="uncertain", path="/x"))
    state.write(lambda txn: append_receipt(txn, "agent.run", "a", status="committed", receipt_id=rid, exit=0))
    rows = receipt_rows(state, rid)
    assert [(r["id"], r["status"]) for r in rows] == [(rid, "uncertain"), (rid, "committed")]
    assert rows[1]["exit"] == 0 and "path" not in rows[1]
