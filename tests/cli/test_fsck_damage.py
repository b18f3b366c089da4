"""`komputer fsck` on a data.mdb damaged below KState (torn by `cp`, truncated, overwritten):
it names the damage in one line and exits 4, never dies inside LMDB, never writes the file."""

from __future__ import annotations

import os
import random
import shutil
import signal
import struct
import sys
from collections.abc import Callable
from pathlib import Path

import lmdb
import pytest

from kfs.child import ChildDied, run_in_child
from kfs.kstate import KState
from kfs.kstate.env import StateError
from kfs.kstate.lmdbfile import walk_with_engine
from kfs.kstate.schema import U64
from kfs.vfs import VFS, PathFS

sys.path.insert(0, str(Path(__file__).parent))
from backup_storm import CRASHED, komputer, read_log, storm, wait_writes  # noqa: E402

# LMDB 0.9's page layout on a 64-bit little-endian host (what these states are written in).
HDR = 16
U16, U64LE = struct.Struct("<H"), struct.Struct("<Q")
P_BRANCH, P_LEAF = 0x01, 0x02


def _populated(state_dir: Path, files: int = 500) -> None:
    """A state big enough that the directory entries need a branch page over several leaves."""
    with KState(state_dir, create=True) as ks:
        fs = PathFS(VFS(ks))
        for i in range(files):
            fs.write_file(f"/file-with-a-longish-name-{i}", b"%d\n" % i * (i % 50))


def _psize(data: bytes) -> int:
    return struct.unpack_from("<I", data, HDR + 24)[0]  # the free database's md_pad in meta 0


def _used_bytes(state_dir: Path) -> int:
    with KState(state_dir) as ks:
        return ks.used_bytes()


def _btree_pages(data: bytes) -> list[int]:
    psize = _psize(data)
    return [
        pgno
        for pgno in range(2, len(data) // psize)
        if U64LE.unpack_from(data, pgno * psize)[0] == pgno
        and U16.unpack_from(data, pgno * psize + 10)[0] in (P_BRANCH, P_LEAF)
    ]


def _root_of(state_dir: Path, name: bytes) -> int:
    """The root page of a named database: its MDB_db record in the main database."""
    env = lmdb.open(str(state_dir), readonly=True, lock=False, max_dbs=32)
    try:
        with env.begin() as t:
            record = t.get(name)
    finally:
        env.close()
    assert record is not None and struct.unpack_from("<H", record, 6)[0] >= 2, "want a tree of depth 2"
    return U64LE.unpack_from(record, 40)[0]


def truncate(state_dir: Path) -> None:
    os.truncate(state_dir / "data.mdb", _used_bytes(state_dir) // 2)


def zero_meta_pages(state_dir: Path) -> None:
    data = state_dir / "data.mdb"
    psize = _psize(data.read_bytes())
    with open(data, "r+b") as f:
        f.write(bytes(2 * psize))


def garble_a_middle_page(state_dir: Path) -> None:
    """Random bytes over the body of the B-tree page in the middle of the file."""
    data = state_dir / "data.mdb"
    raw = data.read_bytes()
    pages = _btree_pages(raw)
    pgno, psize = pages[len(pages) // 2], _psize(raw)
    with open(data, "r+b") as f:
        f.seek(pgno * psize + HDR)
        f.write(random.Random(7).randbytes(psize - HDR))


def empty(state_dir: Path) -> None:
    (state_dir / "data.mdb").write_bytes(b"")


def point_a_branch_at_itself(state_dir: Path) -> None:
    """The second child of the directory entries' root is the root itself: a page reachable
    twice. LMDB, iterating, descends into a branch where it expects a leaf and aborts."""
    root = _root_of(state_dir, b"dirents")
    data = state_dir / "data.mdb"
    psize = _psize(data.read_bytes())
    with open(data, "r+b") as f:
        f.seek(root * psize)
        page = bytearray(f.read(psize))
        node = U16.unpack_from(page, HDR + 2)[0]  # mp_ptrs[1]
        struct.pack_into("<HHH", page, node, root & 0xFFFF, root >> 16 & 0xFFFF, root >> 32)
        f.seek(root * psize)
        f.write(page)


def newer_meta_over_older_pages(state_dir: Path) -> None:
    """What a `cp` racing a writer makes: meta pages of a later commit over the other pages of
    an earlier one (the data pages were copied first, the writer committed, then the metas)."""
    older = (state_dir / "data.mdb").read_bytes()
    with KState(state_dir) as ks:
        fs = PathFS(VFS(ks))
        for i in range(300):
            fs.write_file(f"/later-{i}", b"y" * (i * 37 % 9000))
    newer = (state_dir / "data.mdb").read_bytes()
    psize = _psize(newer)
    (state_dir / "data.mdb").write_bytes(newer[: 2 * psize] + older[2 * psize :])


def cut_an_inode_record_short(state_dir: Path) -> None:
    """Sound LMDB pages, but a record K cannot decode (written through LMDB, so only K sees it)."""
    with KState(state_dir) as ks:
        ks.write(lambda txn: txn.put("inodes", U64.pack(1), b"abc"))


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated": (truncate, "truncated"),
    "zeroed meta pages": (zero_meta_pages, "no LMDB magic"),
    "garbage in a middle page": (garble_a_middle_page, "structural problem"),
    "empty file": (empty, "empty"),
    "branch page pointing at itself": (point_a_branch_at_itself, "reachable more than once"),
    "newer metas over older pages": (newer_meta_over_older_pages, "damaged: "),
    "an inode record cut short": (cut_an_inode_record_short, "a record cannot be decoded (struct.error"),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
@pytest.mark.parametrize("repair", [False, True], ids=["check", "repair"])
def test_damage_is_named_in_one_line_with_exit_4_and_the_file_is_left_as_it_was(
    tmp_path: Path, kind: str, repair: bool
) -> None:
    state = tmp_path / "s"
    _populated(state)
    damage, words = DAMAGE[kind]
    damage(state)
    before = (state / "data.mdb").read_bytes()
    result = komputer("fsck", "--state", state, *(["--repair"] if repair else []))
    assert result.returncode == 4, (result.returncode, result.stdout, result.stderr)
    damaged = [line for line in result.stdout.splitlines() if line.startswith("komputer fsck: damaged: ")]
    assert len(damaged) == 1 and words in damaged[0], result.stdout
    assert "--repair cannot fix damage to the LMDB file itself: restore the state from a backup" in result.stdout
    assert result.stderr == ""
    assert (state / "data.mdb").read_bytes() == before


def test_an_lmdb_abort_in_the_child_is_a_report_not_a_crash(tmp_path: Path) -> None:
    """Without the structural check in front, LMDB itself aborts on this damage: in the child."""
    state = tmp_path / "s"
    _populated(state)
    point_a_branch_at_itself(state)
    with pytest.raises(ChildDied) as died:
        run_in_child(lambda: walk_with_engine(state))
    assert died.value.signal == signal.SIGABRT and died.value.crashed
    assert died.value.describe() == "signal 6, SIGABRT"


def test_the_child_returns_values_and_raises_exceptions_here() -> None:
    assert run_in_child(lambda: {"answer": 42}) == {"answer": 42}
    with pytest.raises(StateError, match="no KState"):
        run_in_child(lambda: KState("/nonexistent/komputer-state"))
    with pytest.raises(ChildDied) as died:
        run_in_child(lambda: os._exit(3))
    assert died.value.status == 3 and not died.value.crashed


def test_fsck_of_a_running_state_is_clean_and_of_cp_copies_never_crashes(tmp_path: Path) -> None:
    """During a storm: fsck of the live state stays clean (no false damage from the running
    writer), and a `cp` of its data.mdb is either whole (exit 0) or reported (exit 4)."""
    state, log = tmp_path / "state", tmp_path / "storm.log"
    _populated(state, files=50)
    outcomes = []
    with storm(state, log, warmup=300) as writer:
        for i in range(3):
            live = komputer("fsck", "--state", state)
            assert live.returncode == 0, live.stdout + live.stderr
            copy = tmp_path / f"cp{i}"
            copy.mkdir()
            shutil.copyfile(state / "data.mdb", copy / "data.mdb")
            result = komputer("fsck", "--state", copy)
            assert result.returncode not in CRASHED and "Traceback" not in result.stderr
            assert result.returncode in (0, 4), (result.returncode, result.stdout, result.stderr)
            if result.returncode == 4:
                assert result.stdout.startswith("komputer fsck: damaged: ")
            outcomes.append(result.returncode)
            copied = len(read_log(log))  # the storm moves on before the next copy
            wait_writes(writer, log, lambda writes, copied=copied: len(writes) > copied)
    print(f"fsck of cp copies during the storm: exit statuses {outcomes}")
