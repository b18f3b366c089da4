"""Restricted modes at the PathFS (the session view every front end writes through): each
mutation refused with EROFS outside what the mode allows, on the path a write really reaches;
reads untouched; the mandatory deny-write list inside an allowed scope too."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from typing import Any

import pytest

from kfs.kstate import KState
from kfs.vfs import VFS, Cred, PathFS
from kfs.vfs.policy import Refusal, WritePolicy, stricter

HOME = "/home/a"


@pytest.fixture
def root(state: KState) -> PathFS:
    fs = PathFS(VFS(state))
    fs.mkdir(f"{HOME}/proj/.git/hooks", parents=True)
    fs.mkdir(f"{HOME}/.plan")
    fs.mkdir("/etc")
    fs.write_file(f"{HOME}/proj/a", b"keep")
    fs.write_file(f"{HOME}/.bashrc", b"rc")
    fs.symlink("/etc", f"{HOME}/proj/out")
    fs.symlink("..", f"{HOME}/proj/up")
    fs.chown(HOME, 1000, 1000)
    for p in ("proj", "proj/.git", "proj/.git/hooks", ".plan", "proj/a", ".bashrc"):
        fs.chown(f"{HOME}/{p}", 1000, 1000, follow=False)
    return fs


def agent(root: PathFS, mode: str, scope: tuple[str, ...] = ()) -> PathFS:
    return PathFS(root.vfs, cred=Cred(1000, 1000), cwd=HOME, home=HOME, policy=WritePolicy.make(mode, HOME, scope))


WRITES: list[tuple[str, Callable[[PathFS, str], Any]]] = [
    ("write", lambda fs, p: fs.write_file(p, b"x")),
    ("append", lambda fs, p: fs.append_file(p, b"x")),
    ("open", lambda fs, p: fs.open(p, os.O_WRONLY | os.O_CREAT).close()),
    ("mkdir", lambda fs, p: fs.mkdir(p + ".d")),
    ("mkdir -p", lambda fs, p: fs.mkdir(p + ".p/q", parents=True)),
    ("symlink", lambda fs, p: fs.symlink("x", p + ".l")),
]


@pytest.mark.parametrize(("name", "write"), WRITES, ids=[w[0] for w in WRITES])
def test_readonly_refuses_every_write_with_erofs(root: PathFS, name: str, write: Callable) -> None:
    fs = agent(root, "readonly")
    with pytest.raises(Refusal) as info:
        write(fs, f"{HOME}/proj/new")
    assert info.value.errno == errno.EROFS and info.value.mode == "readonly"
    assert fs.read_file("proj/a") == b"keep" and fs.readdir("proj")  # reads go on


@pytest.mark.parametrize("op", ["unlink", "rename", "chmod", "utime", "truncate", "setxattr", "link"])
def test_readonly_refuses_changes_to_existing_files(root: PathFS, op: str) -> None:
    fs = agent(root, "readonly")
    calls = {"unlink": lambda: fs.unlink("proj/a"), "rename": lambda: fs.rename("proj/a", "proj/b"),
             "chmod": lambda: fs.chmod("proj/a", 0o600), "utime": lambda: fs.utime("proj/a"),
             "truncate": lambda: fs.truncate("proj/a", 0), "setxattr": lambda: fs.setxattr("proj/a", b"user.x", b"1"),
             "link": lambda: fs.link("proj/a", "proj/b")}
    with pytest.raises(OSError) as info:
        calls[op]()
    assert info.value.errno == errno.EROFS
    assert root.read_file(f"{HOME}/proj/a") == b"keep"


def test_plan_writes_only_under_the_plan_folder(root: PathFS) -> None:
    fs = agent(root, "plan")
    fs.write_file(".plan/notes.md", b"step 1")
    fs.mkdir(".plan/sub/deeper", parents=True)
    for path in ("proj/x", "x", ".plan/../x"):
        with pytest.raises(Refusal):
            fs.write_file(path, b"x")


def test_limited_writes_in_scope_but_not_through_links_or_dots_out_of_it(root: PathFS) -> None:
    fs = agent(root, "limited", ("~/proj", "/home/a/*.log"))
    fs.write_file("proj/x", b"1")
    fs.write_file("build.log", b"glob")
    fs.mkdir("proj/d1/d2/d3", parents=True)
    for path in ("proj/out/passwd", "proj/up/escape", "proj/../escape", "x.txt"):
        with pytest.raises(Refusal):
            fs.write_file(path, b"x")
    with pytest.raises(Refusal):
        fs.mkdir("other/a/b", parents=True)
    assert not root.exists("/etc/passwd") and not root.exists(f"{HOME}/escape")


@pytest.mark.parametrize("path", [".bashrc", ".profile", "proj/.git/config", "proj/.git/hooks/pre-commit",
                                  "proj/.vscode/settings.json", "proj/.mcp.json", "proj/_shared/x"])
def test_the_deny_list_holds_inside_an_allowed_scope(root: PathFS, path: str) -> None:
    fs = agent(root, "limited", ("~",))
    with pytest.raises(Refusal):
        fs.write_file(path, b"x")


def test_full_mode_is_no_policy_and_the_strictest_mode_wins() -> None:
    assert WritePolicy.make("full", HOME) is None
    assert stricter("full", "plan") == "plan" and stricter("readonly", "limited") == "readonly"
    assert WritePolicy.of_agent({"mode": "limited", "scope": ["~/p"]}, HOME, "readonly").mode == "readonly"  # type: ignore[union-attr]
    assert WritePolicy.of_agent({"mode": "readonly"}, HOME, "full").mode == "readonly"  # type: ignore[union-attr]
    assert WritePolicy.of_agent({}, HOME, "bogus").mode == "readonly"  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        WritePolicy.make("sometimes", HOME)


def test_check_write_answers_for_a_front_end_changing_an_open_file(root: PathFS) -> None:
    with pytest.raises(Refusal):
        agent(root, "readonly").check_write("proj/a")
    agent(root, "limited", ("~/proj",)).check_write("proj/a")  # in scope: no error
    PathFS(root.vfs).check_write("/anything")  # no policy: nothing to check


def test_a_walk_without_links_reaches_its_normalized_path(root: PathFS) -> None:
    """What the guard relies on to skip the parent walk: where resolution followed no symlink,
    the lexical normalized path is the physical one (`..` included); where it followed one, it
    says so."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from kfs.vfs import records

    root.mkdir(f"{HOME}/proj/deep/er", parents=True)
    home = PathFS(root.vfs, cwd=HOME, home=HOME)
    comps = st.sampled_from(["proj", "deep", "er", "..", ".", "out", "up", "a", "new", ""])

    @settings(max_examples=400, deadline=None)
    @given(st.lists(comps, min_size=1, max_size=7), st.booleans(), st.booleans())
    def check(parts: list[str], absolute: bool, follow: bool) -> None:
        path = (HOME + "/" if absolute else "") + "/".join(parts)
        with root.vfs.state.read() as txn:
            try:
                found = home.resolve(txn, path, follow=follow, entry=not follow)
            except OSError:
                return
            if found.linked:
                return
            if found.inode is not None and found.inode.is_dir and (follow or found.parent is None):
                real = os.fsdecode(records.dir_path(txn, found.inode.ino))
            elif found.parent is None:
                real = None
            else:
                real = os.fsdecode(records.dir_path(txn, found.parent.ino)).rstrip("/") + "/" + os.fsdecode(found.name)
            if real is not None:
                assert home.abspath(path) == real, path

    check()
