"""`komputer mount --agent NAME [--mode M]`: one agent's view for a host that binds its
workspace into a container. Every request is the agent's (whoever the caller is: root
included), under the agent's restricted mode, checked on the path a write reaches."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from kfs_mounts import Mount, komputer

from kfs.agents.records import add_agent
from kfs.kstate import KState
from kfs.runtime.rules import add_rule
from kfs.vfs import VFS, Cred, PathFS
from kshell.delegate.config import set_agent_overrides


@pytest.fixture
def agent_mount(tmp_path: Path) -> Iterator[tuple[Path, PathFS, int]]:
    state_dir = tmp_path / "state"
    with KState(state_dir, create=True) as state:
        vfs = VFS(state, by="test")
        alice = add_agent(vfs, "alice")
        add_agent(vfs, "bob")
        root = PathFS(vfs)
        root.mkdir("/home/alice/proj/.git", parents=True)
        root.write_file("/home/bob/secret", b"bob's")
        root.chmod("/home/bob", 0o700)
        for p in ("/home/alice/proj", "/home/alice/proj/.git"):
            root.chown(p, alice.uid, alice.gid)
        set_agent_overrides(state, "alice", mode="limited", scope=("~/proj",))
        add_rule(state, "deny", "~/proj/private*", agent="alice", on="path")
        add_rule(state, "ask", "~/proj/asked", agent="alice", on="path")
    top = Path(tempfile.mkdtemp(prefix="kfs-agent."))
    mount = Mount(state_dir, top / "mnt", options=(), extra=("--agent", "alice")).start()
    try:
        with KState(state_dir) as state:
            yield mount.path, PathFS(VFS(state)), alice.uid
    finally:
        mount.stop()
        shutil.rmtree(top, ignore_errors=True)


def test_an_agent_mount_writes_as_the_agent_only_where_its_mode_allows(agent_mount) -> None:  # noqa: ANN001
    mnt, fs, uid = agent_mount
    (mnt / "home/alice/proj/made.txt").write_text("by the container\n")
    assert fs.stat("/home/alice/proj/made.txt").uid == uid  # the agent's, though root wrote it
    for path in ("home/alice/outside.txt", "home/alice/proj/.git/config", "home/alice/.bashrc"):
        with pytest.raises(OSError) as info:
            (mnt / path).write_text("x")
        assert info.value.errno == errno.EROFS, path
    with pytest.raises(OSError) as info:
        os.rename(mnt / "home/alice/proj/made.txt", mnt / "home/alice/moved.txt")
    assert info.value.errno == errno.EROFS
    os.symlink("..", mnt / "home/alice/proj/up")  # a relative link stays in the mount
    with pytest.raises(OSError) as info:
        (mnt / "home/alice/proj/up/escape.txt").write_text("x")  # the home: outside the scope
    assert info.value.errno == errno.EROFS


def test_an_agent_mount_reads_with_the_agents_rights_not_the_callers(agent_mount) -> None:  # noqa: ANN001
    mnt, _, _ = agent_mount
    assert (mnt / "home/alice/proj").is_dir()
    with pytest.raises(PermissionError):
        (mnt / "home/bob/secret").read_bytes()  # root asks, alice is who reads


def test_an_agent_mount_has_no_admin_view_of_every_agents_rows(agent_mount) -> None:  # noqa: ANN001
    mnt, fs, _ = agent_mount
    fs.write_file("/home/bob/diary", b"bob's paths are bob's")  # a receipt naming bob's path
    for path in (".komputer", ".komputer/events.jsonl", ".komputer/receipts.jsonl"):
        with pytest.raises(FileNotFoundError):
            (mnt / path).read_bytes()  # root asks: the container's root is the agent here
    assert ".komputer" not in os.listdir(mnt)


def test_an_unknown_agent_or_mode_is_refused(tmp_path: Path) -> None:
    komputer("init", "--state", str(tmp_path / "state"))
    (tmp_path / "m").mkdir()
    done = komputer("mount", "--state", str(tmp_path / "state"), str(tmp_path / "m"), "--agent", "nobody",
                    "--foreground", check=False)
    assert done.returncode == 1 and "no agent 'nobody'" in done.stderr
    done = komputer("mount", "--state", str(tmp_path / "state"), str(tmp_path / "m"), "--mode", "readonly",
                    check=False)
    assert done.returncode == 2 and "--mode needs --agent" in done.stderr


def test_an_agent_mount_obeys_path_rules_and_cannot_wait_for_an_approval(agent_mount) -> None:  # noqa: ANN001
    mnt, fs, _ = agent_mount
    for name in ("private.txt", "asked"):  # a rule's deny, and an ask nobody can answer in a mount: EACCES
        with pytest.raises(OSError) as info:
            (mnt / "home/alice/proj" / name).write_text("x")
        assert info.value.errno == errno.EACCES, name
        assert not fs.exists(f"/home/alice/proj/{name}")
    (mnt / "home/alice/proj/public.txt").write_text("fine\n")  # the rest of the scope as before
    assert fs.read_file("/home/alice/proj/public.txt") == b"fine\n"


def test_an_agent_mount_runs_the_images_write_hooks(tmp_path: Path) -> None:
    """An agent's mount (a container's, and every delegated program's view) judges writes by
    the image's write hooks as the shell and SFTP do: what the hook denies is EACCES, the rest
    is written; an agent the hook does not name is not asked."""
    from kfs.runtime import image

    state_dir, folder = tmp_path / "state", tmp_path / "img"
    folder.mkdir()
    (folder / "komputer.toml").write_text('[[hooks]]\non = "write"\nhandler = "guard:check"\nagents = ["alice"]\n')
    (folder / "guard.py").write_text("def check(ctx):\n"
                                     "    return ('deny', 'locked') if '/locked' in ctx.path else 'allow'\n")
    with KState(state_dir, create=True) as state:
        vfs = VFS(state, by="test")
        alice = add_agent(vfs, "alice")
        add_agent(vfs, "bob")
        PathFS(vfs, cred=Cred(alice.uid, alice.gid)).write_file("/home/alice/notes", b"mine\n")
        image.apply(state, image.load(folder), by="test")
    top = Path(tempfile.mkdtemp(prefix="kfs-agent."))
    mounts = [Mount(state_dir, top / name, options=(), extra=("--agent", name)).start() for name in ("alice", "bob")]
    try:
        alice_mnt, bob_mnt = (m.path for m in mounts)
        assert (alice_mnt / "home/alice/notes").read_text() == "mine\n"
        (alice_mnt / "home/alice/new").write_text("the hook allows it\n")
        with pytest.raises(OSError) as info:
            (alice_mnt / "home/alice/locked").mkdir()
        assert info.value.errno == errno.EACCES
        (bob_mnt / "home/bob/locked").mkdir()  # bob has no hook
    finally:
        for m in mounts:
            m.stop()
        shutil.rmtree(top, ignore_errors=True)
    with KState(state_dir) as state:
        fs = PathFS(VFS(state, by="test"))
        assert fs.read_file("/home/alice/new") == b"the hook allows it\n"
        assert not fs.exists("/home/alice/locked") and fs.exists("/home/bob/locked")


def test_an_agent_mount_judges_every_path_a_rename_moves_and_a_links_source(agent_mount) -> None:  # noqa: ANN001
    """`mv proj/.git g2; write g2/hooks/pre-commit; mv g2 proj/.git` and `ln .git/config x`
    are writes to the protected paths: refused (EROFS), whichever step comes first."""
    mnt, fs, uid = agent_mount
    fs.mkdir("/home/alice/proj/.git/hooks")
    fs.write_file("/home/alice/proj/.git/config", b"[core]\n")
    for p in ("/home/alice/proj/.git/hooks", "/home/alice/proj/.git/config"):
        fs.chown(p, uid, uid)
    proj = mnt / "home/alice/proj"
    with pytest.raises(OSError) as info:
        os.rename(proj / ".git", proj / "g2")
    assert info.value.errno == errno.EROFS
    (proj / "g3/hooks").mkdir(parents=True)
    (proj / "g3/hooks/pre-commit").write_text("#!/bin/sh\n")
    (proj / "fresh").mkdir()
    with pytest.raises(OSError) as info:
        os.rename(proj / "g3", proj / "fresh/.git")  # its hooks would become a repository's
    assert info.value.errno == errno.EROFS
    with pytest.raises(OSError) as info:
        os.link(proj / ".git/config", proj / "config2")  # a writable second name
    assert info.value.errno == errno.EROFS
    assert fs.read_file("/home/alice/proj/.git/config") == b"[core]\n"
    assert not fs.exists("/home/alice/proj/fresh/.git") and not fs.exists("/home/alice/proj/config2")
    os.rename(proj / "g3", proj / "g4")  # a tree with nothing protected moves as before
    assert fs.exists("/home/alice/proj/g4/hooks/pre-commit")


def test_an_agent_mount_refuses_renaming_a_parent_of_a_denied_path(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    with KState(state_dir, create=True) as state:
        vfs = VFS(state, by="test")
        alice = add_agent(vfs, "alice")
        root = PathFS(vfs)
        root.mkdir("/home/alice/proj/prod", parents=True)
        root.write_file("/home/alice/proj/prod/a", b"prod\n")
        for p in ("/home/alice/proj", "/home/alice/proj/prod", "/home/alice/proj/prod/a"):
            root.chown(p, alice.uid, alice.gid)
        add_rule(state, "deny", "~/proj/prod", agent="alice", on="path")  # a full agent: rules apply all the same
    top = Path(tempfile.mkdtemp(prefix="kfs-agent."))
    mount = Mount(state_dir, top / "mnt", options=(), extra=("--agent", "alice")).start()
    try:
        home = mount.path / "home/alice"
        with pytest.raises(OSError) as info:
            os.rename(home / "proj", home / "proj_moved")
        assert info.value.errno == errno.EACCES
        with KState(state_dir) as state:
            assert PathFS(VFS(state)).read_file("/home/alice/proj/prod/a") == b"prod\n"
        (home / "proj/other").mkdir()
        os.rename(home / "proj/other", home / "proj/other2")  # nothing denied under it
    finally:
        mount.stop()
        shutil.rmtree(top, ignore_errors=True)


def test_an_agent_mount_never_writes_gits_configuration_in_the_home(agent_mount) -> None:  # noqa: ANN001
    mnt, fs, _ = agent_mount
    for path in ("home/alice/.gitconfig", "home/alice/.config/git/config"):
        with pytest.raises(OSError) as info:
            (mnt / path).parent.mkdir(parents=True, exist_ok=True)
            (mnt / path).write_text("[core]\nhooksPath = /tmp/x\n")
        assert info.value.errno == errno.EROFS, path
        assert not fs.exists("/" + path)
