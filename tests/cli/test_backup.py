"""`komputer backup`: a copy of a running state that is one snapshot, clean, and never
overwrites; real states in temp dirs, a real writer process, the real command line."""

from __future__ import annotations

import os
import stat as st
import sys
import time
from pathlib import Path

import pytest

from kfs.kstate import KState
from kfs.vfs import VFS, PathFS

sys.path.insert(0, str(Path(__file__).parent))
from backup_storm import Write, komputer, read_log, storm, wait_writes  # noqa: E402
from backup_storm_writer import DIR, content, seq_of  # noqa: E402


def _init(state_dir: Path) -> None:
    with KState(state_dir, create=True) as ks:
        VFS(ks)  # makes the root directory


def _storm_files(state_dir: Path) -> dict[str, bytes]:
    with KState(state_dir) as ks:
        fs = PathFS(VFS(ks))
        return {f"{DIR}/{name}": fs.read_file(f"{DIR}/{name}") for name in fs.readdir(DIR)}


def _replay(writes: list[Write], cut: int) -> dict[str, int]:
    """Which write each file holds after writes 1..cut: the state the snapshot must equal."""
    latest: dict[str, int] = {}
    for w in writes:
        if w.seq <= cut:
            latest[w.path] = w.seq
    return latest


def _assert_one_snapshot(dest: Path, writes: list[Write], began_ns: int) -> int:
    """The copy equals the state after some write `cut`, byte for byte, and `cut` comes no
    earlier than the last write completed before the backup began; returns `cut`."""
    files = _storm_files(dest)
    held = {path: seq_of(data) for path, data in files.items()}
    cut = max(held.values())  # each write leaves its number in its file: the newest is the cut
    assert held == _replay(writes, cut), "the copy is not the state after one commit"
    for path, data in files.items():
        assert data == content(held[path], path), f"{path} is not write {held[path]}'s bytes"
    completed_before = max(w.seq for w in writes if w.done_ns < began_ns)
    assert cut >= completed_before, f"write {completed_before} completed before the backup began but is missing"
    return cut


def test_backups_taken_during_a_write_storm_are_each_one_clean_snapshot(tmp_path: Path) -> None:
    state, log = tmp_path / "state", tmp_path / "storm.log"
    assert komputer("init", "--state", state).returncode == 0
    taken: list[tuple[Path, int, int]] = []
    with storm(state, log, warmup=300) as writer:
        for i, options in enumerate(([], ["--compact"], [])):
            dest = tmp_path / f"backup{i}"
            began = time.monotonic_ns()
            result = komputer("backup", dest, "--state", state, *options)
            ended = time.monotonic_ns()
            assert result.returncode == 0, result.stderr
            assert result.stdout.startswith(f"komputer backup: wrote {dest}/data.mdb (")
            assert result.stdout.count("\n") == 1
            taken.append((dest, began, ended))
            # the storm moves on between backups: a write completes after this one ended
            wait_writes(writer, log, lambda writes, ended=ended: writes[-1].done_ns > ended)
    writes = read_log(log)
    cuts = []
    for dest, began, ended in taken:
        assert any(began <= w.done_ns <= ended for w in writes), "no write completed during the backup"
        fsck = komputer("fsck", "--state", dest)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
        assert fsck.stdout.endswith(": clean\n")
        cuts.append(_assert_one_snapshot(dest, writes, began))
    assert cuts == sorted(cuts) and cuts[-1] < writes[-1].seq  # later backups, later cuts; the storm went on
    print(f"storm: {len(writes)} writes; backups cut after writes {cuts}")


def test_compact_gives_a_file_no_larger_and_equally_clean(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with KState(state, create=True) as ks:  # rewrites and deletes leave free pages behind
        fs = PathFS(VFS(ks))
        for i in range(300):
            fs.write_file(f"/f{i % 60}", content(i, f"/f{i % 60}"))
        for i in range(0, 60, 3):
            fs.unlink(f"/f{i}")
        wanted = {name: fs.read_file(f"/{name}") for name in fs.readdir("/")}
    plain, compact = tmp_path / "plain", tmp_path / "compact"
    assert komputer("backup", plain, "--state", state).returncode == 0
    result = komputer("backup", compact, "--compact", "--state", state)
    assert result.returncode == 0, result.stderr
    assert "compacted" in result.stdout
    plain_size, compact_size = (plain / "data.mdb").stat().st_size, (compact / "data.mdb").stat().st_size
    assert compact_size <= plain_size
    print(f"plain {plain_size} bytes, compact {compact_size} bytes")
    for copy in (plain, compact):
        assert komputer("fsck", "--state", copy).returncode == 0
        with KState(copy) as ks:
            fs = PathFS(VFS(ks))
            assert {name: fs.read_file(f"/{name}") for name in fs.readdir("/")} == wanted


def test_the_copy_serves_as_a_state_and_carries_the_config_not_the_client_key(tmp_path: Path) -> None:
    state, dest = tmp_path / "state", tmp_path / "copy"
    with KState(state, create=True) as ks:
        PathFS(VFS(ks)).write_file("/hello", b"hi\n")
    (state / "komputer.toml").write_text("[ssh]\n")
    (state / "client").mkdir()
    (state / "client" / "id_ed25519").write_text("not a real key\n")
    result = komputer("backup", dest, "--state", state)
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith("s") and " and komputer.toml in " in result.stdout
    assert sorted(os.listdir(dest)) == ["data.mdb", "komputer.toml"]  # no lock.mdb, no client/
    assert (dest / "komputer.toml").read_text() == "[ssh]\n"
    assert st.S_IMODE(dest.stat().st_mode) == 0o700
    assert st.S_IMODE((dest / "data.mdb").stat().st_mode) == 0o600
    assert komputer("cat", "/hello", "--state", dest).stdout == "hi\n"
    assert komputer("fsck", "--state", dest).returncode == 0


def test_a_dest_that_holds_a_state_is_refused_and_left_alone(tmp_path: Path) -> None:
    state, dest = tmp_path / "state", tmp_path / "copy"
    _init(state)
    assert komputer("backup", dest, "--state", state).returncode == 0
    before = (dest / "data.mdb").read_bytes()
    again = komputer("backup", dest, "--state", state)
    assert again.returncode == 1
    assert again.stderr.startswith(f"komputer backup: {dest}: File exists")
    assert "Traceback" not in again.stderr
    assert (dest / "data.mdb").read_bytes() == before
    onto_itself = komputer("backup", state, "--state", state)
    assert onto_itself.returncode == 1 and "File exists" in onto_itself.stderr


def test_an_existing_empty_directory_is_a_fine_dest(tmp_path: Path) -> None:
    state, dest = tmp_path / "state", tmp_path / "mounted-disk"
    _init(state)
    dest.mkdir()
    assert komputer("backup", dest, "--state", state).returncode == 0
    assert komputer("fsck", "--state", dest).returncode == 0


@pytest.mark.parametrize("where", ["missing parent", "parent is a file", "dest is a file"])
def test_a_bad_dest_gives_a_clear_error_and_creates_nothing(tmp_path: Path, where: str) -> None:
    state = tmp_path / "state"
    _init(state)
    (tmp_path / "file").write_text("x")
    dest = {
        "missing parent": tmp_path / "no" / "such" / "dest",
        "parent is a file": tmp_path / "file" / "dest",
        "dest is a file": tmp_path / "file",
    }[where]
    result = komputer("backup", dest, "--state", state)
    assert result.returncode == 1
    assert result.stderr.startswith(f"komputer backup: {dest}: ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert ("does not exist" in result.stderr) if where == "missing parent" else True
    assert sorted(os.listdir(tmp_path)) == ["file", "state"]
    assert (tmp_path / "file").read_text() == "x"


def test_backup_of_a_missing_or_damaged_state_is_refused(tmp_path: Path) -> None:
    missing = komputer("backup", tmp_path / "copy", "--state", tmp_path / "nowhere")
    assert missing.returncode == 1 and "no KState here" in missing.stderr
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "data.mdb").write_bytes(b"")
    result = komputer("backup", tmp_path / "copy", "--state", damaged)
    assert result.returncode == 1 and "damaged" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "copy").exists()


def test_backup_has_help_that_says_what_is_copied() -> None:
    result = komputer("backup", "--help")
    assert result.returncode == 0
    for words in ("--state DIR", "--compact", "DEST", "komputer.toml", "lock.mdb", "client/", "host key"):
        assert words in result.stdout.replace("\n", " "), words
