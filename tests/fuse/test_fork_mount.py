"""A fork's FUSE mount (`komputer mount --fork N`) over a parent that has files: the parent's
tree as it was at the fork, the fork's writes on it (copy-up, whiteouts, renames, links), and
nothing of either leaking into the other while both go on writing."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from kfs_mounts import Mount, komputer

from kfs import forks
from kfs.agents.records import add_agent
from kfs.kstate import KState
from kfs.vfs import VFS, PathFS
from kshell.delegate.config import set_agent_overrides


@pytest.fixture
def parent(fork_mount: Mount) -> Iterator[PathFS]:
    """The parent's tree (the state's own), opened in this process."""
    state = KState(fork_mount.state)
    yield PathFS(VFS(state, by="test-parent"))
    state.close()


def test_the_parents_tree_as_it_was(fork_mount: Mount, parent: PathFS) -> None:
    base = fork_mount.path / "base"
    assert (base / "f").read_text() == "".join(f"{i}\n" for i in range(1, 100001))
    assert os.stat(base / "f").st_nlink == 2 and os.stat(base / "f").st_ino == os.stat(base / "g").st_ino
    assert os.readlink(base / "l") == "f"
    assert (base / "d/e/x").read_text() == "parent\n"
    assert os.stat(base / "d").st_mode & 0o7777 == 0o751
    assert os.stat(base / "f").st_ino == parent.stat("/base/f").ino  # the parent's files keep their numbers


def test_writes_stay_in_the_fork_and_the_parents_later_writes_stay_out(fork_mount: Mount, parent: PathFS) -> None:
    top = fork_mount.path
    parent.mkdir("/later")
    parent.write_file("/later/p", b"the parent's, after the fork\n")
    assert not (top / "later").exists()
    (top / "base_copy").mkdir()
    (top / "base_copy/new").write_text("the fork's\n")
    assert not parent.exists("/base_copy")
    with open(top / "base/f", "r+b") as f:  # one byte in the middle of a 589 KiB file: one chunk copied up
        f.seek(300_000)
        f.write(b"#")
    assert parent.read_file("/base/f")[300_000:300_001] != b"#"
    assert (top / "base/g").read_bytes()[300_000:300_001] == b"#"  # the hard link: one file
    os.rename(top / "base/d", top / "base/moved")
    os.unlink(top / "base/l")
    assert sorted(os.listdir(top / "base")) == ["f", "g", "moved"]
    assert (top / "base/moved/e/x").read_text() == "parent\n"
    assert parent.exists("/base/d/e/x") and parent.exists("/base/l")
    # a directory removed and made again shows none of the parent's entries (opaque)
    (top / "base/moved/e/x").unlink()
    os.rmdir(top / "base/moved/e")
    os.mkdir(top / "base/moved/e")
    assert os.listdir(top / "base/moved/e") == []
    with pytest.raises(OSError) as raised:
        os.rmdir(top / "base")
    assert raised.value.errno == errno.ENOTEMPTY


def test_the_mount_of_a_restricted_fork_applies_its_mode_and_scope(tmp_path: Path) -> None:
    """`komputer mount --fork N` of a `readonly` fork refuses every write (EROFS); of a
    `limited` one, every write outside its scope and to the mandatory list: delegated programs
    of a session in the fork see it through this mount."""
    state = str(tmp_path / "state")
    komputer("init", "--state", state)
    komputer("--state", state, "sh", "-c",
             "mkdir -p /w/proj/.git && echo base > /w/f && echo '[core]' > /w/proj/.git/config")
    readonly = komputer("--state", state, "fork", "create", "--mode", "readonly").stdout.strip()
    limited = komputer("--state", state, "fork", "create", "--mode", "limited", "--scope", "/w/proj").stdout.strip()
    top = Path(tempfile.mkdtemp(prefix="kfs-fork."))
    mounts = [Mount(tmp_path / "state", top / f"m{n}", extra=("--fork", n)).start() for n in (readonly, limited)]
    try:
        ro, lim = (m.path for m in mounts)
        for attempt in (lambda: (ro / "w/f").write_text("x"), lambda: (ro / "w/new").mkdir(),
                        lambda: os.rename(ro / "w/f", ro / "w/g")):
            with pytest.raises(OSError) as raised:
                attempt()
            assert raised.value.errno == errno.EROFS
        assert (ro / "w/f").read_text() == "base\n"  # reads go on
        (lim / "w/proj/made").write_text("in scope\n")
        for attempt in (lambda: (lim / "w/f").write_text("x"), lambda: (lim / "w/proj/.git/config").write_text("x")):
            with pytest.raises(OSError) as raised:
                attempt()
            assert raised.value.errno == errno.EROFS
        assert (lim / "w/proj/made").read_text() == "in scope\n"
        with pytest.raises(OSError) as raised:
            os.rename(lim / "w/proj/.git", lim / "w/proj/g2")  # its config would go with it
        assert raised.value.errno == errno.EROFS and (lim / "w/proj/.git/config").read_text() == "[core]\n"
    finally:
        for m in mounts:
            m.stop()
        shutil.rmtree(top, ignore_errors=True)


def test_an_agents_mount_of_a_limited_fork_is_bounded_by_the_forks_scope(tmp_path: Path) -> None:
    """`komputer mount --fork N --agent NAME`: an agent whose own scope is `~` writes only
    under the fork's `--scope ~/proj` there (the stricter wins)."""
    state_dir = tmp_path / "state"
    with KState(state_dir, create=True) as state:
        vfs = VFS(state, by="test")
        alice = add_agent(vfs, "alice")
        PathFS(vfs).mkdir("/home/alice/proj")
        PathFS(vfs).chown("/home/alice/proj", alice.uid, alice.gid)
        set_agent_overrides(state, "alice", mode="limited", scope=("~",))
        number = forks.create(state, agent="alice", mode="limited", scope=("~/proj",), by="test")
    top = Path(tempfile.mkdtemp(prefix="kfs-fork."))
    mount = Mount(state_dir, top / "mnt", options=(), extra=("--fork", str(number), "--agent", "alice")).start()
    try:
        home = mount.path / "home/alice"
        (home / "proj/in.txt").write_text("in the fork's scope\n")
        with pytest.raises(OSError) as raised:
            (home / "out.txt").write_text("x")
        assert raised.value.errno == errno.EROFS
    finally:
        mount.stop()
        shutil.rmtree(top, ignore_errors=True)
