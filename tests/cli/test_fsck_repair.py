"""`komputer fsck` finds each kind of damage, `--repair` fixes it, and then fsck is clean."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kfs.fsck import check
from kfs.kstate import KState, Txn
from kfs.kstate.schema import U64, U64x2
from kfs.vfs import VFS, PathFS, records


def _populated(state_dir: Path) -> None:
    with KState(state_dir, create=True) as ks:
        fs = PathFS(VFS(ks))
        fs.mkdir("/d/e", parents=True)
        fs.write_file("/d/f", b"x" * 70_000)
        fs.link("/d/f", "/d/g")
        fs.symlink("f", "/d/l")


def _ino(state_dir: Path, path: str) -> int:
    with KState(state_dir) as ks:
        return PathFS(VFS(ks)).lstat(path).ino


DAMAGE: dict[str, Callable[[Txn, Callable[[str], int]], None]] = {
    "entry naming a missing inode": lambda txn, ino: txn.delete("inodes", U64.pack(ino("/d/l"))),
    "wrong nlink": lambda txn, ino: txn.put(
        "inodes", U64.pack(ino("/d/f")), txn.get("inodes", U64.pack(ino("/d/f")))[:12] + (9).to_bytes(4, "big") + txn.get("inodes", U64.pack(ino("/d/f")))[16:]
    ),
    "orphan chunk": lambda txn, ino: txn.put("chunks", U64x2.pack(999_999, 0), b"stray"),
    "chunk past the file size": lambda txn, ino: txn.put("chunks", U64x2.pack(ino("/d/f"), 5), b"beyond"),
    "unreachable inode": lambda txn, ino: txn.delete("dirents", records.dirent_key(ino("/d"), b"e")),
    "wrong stored-bytes counter": lambda txn, ino: txn.put("meta", b"data_bytes", U64.pack(1)),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_fsck_reports_damage_and_repair_makes_it_clean(tmp_path: Path, kind: str) -> None:
    state_dir = tmp_path / "s"
    _populated(state_dir)
    inos = {p: _ino(state_dir, p) for p in ("/d", "/d/f", "/d/l")}
    with KState(state_dir) as ks:
        ks.write(lambda txn: DAMAGE[kind](txn, inos.__getitem__))
        assert not check(ks).clean

    cli = [sys.executable, "-m", "kshell.cli", "fsck", "--state", str(state_dir)]
    found = subprocess.run(cli, capture_output=True, text=True)
    assert found.returncode == 4, found.stdout
    repaired = subprocess.run([*cli, "--repair"], capture_output=True, text=True)
    assert repaired.returncode == 1, repaired.stdout
    clean = subprocess.run(cli, capture_output=True, text=True)
    assert clean.returncode == 0, clean.stdout
    assert clean.stdout.endswith("clean\n")


def test_a_fresh_state_is_clean(tmp_path: Path) -> None:
    _populated(tmp_path / "s")
    with KState(tmp_path / "s") as ks:
        report = check(ks)
    assert report.clean, report.problems
    assert report.inodes == 5 and report.dirents == 5  # root d e f(=g) l


def test_an_unreachable_file_is_reconnected_under_lost_and_found(tmp_path: Path) -> None:
    state_dir = tmp_path / "s"
    _populated(state_dir)
    ino = _ino(state_dir, "/d/l")
    with KState(state_dir) as ks:
        ks.write(lambda txn: txn.delete("dirents", records.dirent_key(_dir_ino(txn), b"l")))
        check(ks, repair=True)
        fs = PathFS(VFS(ks))
        assert fs.readlink(f"/lost+found/#{ino}") == "f"
        assert check(ks).clean


def _dir_ino(txn: Txn) -> int:
    found = records.lookup_entry(txn, 1, b"d")
    assert found is not None
    return found
