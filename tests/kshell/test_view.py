"""kshell.view: the one session view every front end opens (the worker, SFTP, the agent mount,
`komputer sh --agent`, the SDK), and a guard that no front end builds a view of its own."""

from __future__ import annotations

import ast
import errno
from collections.abc import Iterator
from pathlib import Path

import pytest

from kfs import forks
from kfs.agents.records import add_agent
from kfs.kstate import KState
from kfs.runtime import image
from kfs.vfs import VFS, Cred, PathFS
from kshell.sdk.types import AgentNotFound
from kshell.view import SessionSpec, open_view

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def state(tmp_path: Path) -> Iterator[KState]:
    with KState(tmp_path / "state", create=True) as st:
        vfs = VFS(st, by="test")
        for name in ("alice", "bob"):
            add_agent(vfs, name)
        yield st


def _image(state: KState, folder: Path, hooks: str) -> None:
    """An image whose hooks are `hooks` (komputer.toml lines) with guard.py: a write under a
    `locked` directory is denied, a session_start denied for bob."""
    folder.mkdir()
    (folder / "komputer.toml").write_text(hooks)
    (folder / "guard.py").write_text(
        "def check(ctx):\n    return ('deny', 'locked') if '/locked' in ctx.path else 'allow'\n"
        "def start(ctx):\n    return ('deny', 'not today') if ctx.agent == 'bob' else 'allow'\n")
    image.apply(state, image.load(folder), by="test")


def test_the_view_is_the_agents_credentials_home_and_tree(state: KState) -> None:
    view = open_view(state, SessionSpec("alice", "sdk", "s1"))
    assert (view.fs.cred, view.fs.home, view.fs.cwd) == (Cred(view.agent.uid, view.agent.gid), b"/home/alice",
                                                         b"/home/alice")
    assert view.vfs.by == "sdk alice/s1"  # every receipt names who acted
    assert view.policy is None and view.fork is None
    view.fs.write_file("/home/alice/mine", b"x")
    with pytest.raises(PermissionError):
        view.fs.write_file("/home/bob/theirs", b"x")  # bob's home is bob's, whoever the front end is
    assert open_view(state, SessionSpec("alice", "sftp", peer="sftp alice@127.0.0.1")).vfs.by == "sftp alice@127.0.0.1"


def test_an_unknown_agent_is_agent_not_found(state: KState) -> None:
    with pytest.raises(AgentNotFound, match="no agent 'carol'"):
        open_view(state, SessionSpec("carol", "sdk"))


def test_a_forks_mode_is_a_floor_on_the_sessions_mode(state: KState) -> None:
    number = forks.create(state, agent="alice", mode="readonly", by="test")
    view = open_view(state, SessionSpec("alice", "sdk", mode="full", fork=number))
    assert view.fork is not None and view.fork["id"] == number
    assert view.policy is not None and view.policy.mode == "readonly"
    with pytest.raises(OSError) as info:
        view.fs.write_file("/home/alice/f", b"x")
    assert info.value.errno == errno.EROFS
    assert view.vfs.by == f"sdk alice/- fork {number}"  # the fork's receipts name it
    looser = forks.create(state, agent="alice", mode="full", by="test")
    assert open_view(state, SessionSpec("alice", "sdk", mode="plan", fork=looser)).policy.mode == "plan"


def test_a_fork_of_another_agent_is_refused(state: KState) -> None:
    number = forks.create(state, agent="bob", mode="full", by="test")
    with pytest.raises(PermissionError, match=f"fork {number} is not agent alice's"):
        open_view(state, SessionSpec("alice", "sdk", fork=number))


def test_a_front_end_that_runs_no_hooks_refuses_what_a_write_hook_would_judge(state: KState, tmp_path: Path) -> None:
    _image(state, tmp_path / "img", '[[hooks]]\non = "write"\nhandler = "guard:check"\n')
    judged = open_view(state, SessionSpec("alice", "sdk", hooks=True))
    judged.fs.write_file("/home/alice/open", b"the hook allows it")
    with pytest.raises(PermissionError):
        judged.fs.mkdir("/home/alice/locked")  # the hook's deny
    closed = open_view(state, SessionSpec("alice", "mount", hooks=False))
    assert closed.hooks is None
    with pytest.raises(PermissionError) as info:
        closed.fs.write_file("/home/alice/other", b"x")  # no hook to ask: fail closed
    assert info.value.errno == errno.EACCES


def test_session_start_is_asked_of_shell_sessions_only(state: KState, tmp_path: Path) -> None:
    _image(state, tmp_path / "img", '[[hooks]]\non = "session_start"\nhandler = "guard:start"\n')
    assert open_view(state, SessionSpec("alice", "sdk")).start_verdict is None
    verdict = open_view(state, SessionSpec("bob", "cli:sh")).start_verdict
    assert verdict is not None and verdict.action == "deny" and verdict.reason == "not today"
    assert open_view(state, SessionSpec("bob", "sftp")).start_verdict is None  # docs/image.md: shell sessions only
    assert open_view(state, SessionSpec("bob", "sdk", hooks=False)).start_verdict is None


def test_a_resumed_cwd_that_is_gone_or_no_directory_falls_back_to_home(state: KState) -> None:
    alice = open_view(state, SessionSpec("alice", "sdk"))
    alice.fs.mkdir("/home/alice/work")
    alice.fs.write_file("/home/alice/file", b"")
    assert open_view(state, SessionSpec("alice", "sdk", cwd="/home/alice/work")).fs.cwd == b"/home/alice/work"
    for cwd in ("/home/alice/gone", "/home/alice/file"):
        assert open_view(state, SessionSpec("alice", "sdk", cwd=cwd)).fs.cwd == b"/home/alice", cwd


def test_the_agents_settings_and_configured_rules_make_the_policy(state: KState) -> None:
    configured = {"policy": [{"action": "deny", "pattern": "~/vault", "on": "path"}]}
    view = open_view(state, SessionSpec("alice", "sdk", configured=configured))
    with pytest.raises(PermissionError):
        view.fs.mkdir("/home/alice/vault")
    view.fs.mkdir("/home/alice/other")
    assert [r.pattern for r in view.governance.of("path")] == ["/home/alice/vault"]
    assert not PathFS(VFS(state)).exists("/home/alice/vault")


# -- the single view ------------------------------------------------------------------------------

VIEW = ROOT / "kshell/view.py"
BUILDERS = ("governance", "DriveFS")  # what makes a session's rules and its filesystem


def _calls(path: Path) -> list[tuple[str, int]]:
    """The calls in `path` of a name in BUILDERS (`governance(...)`, `rules.governance(...)`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in BUILDERS:
                found.append((name, node.lineno))
    return found


def test_only_kshell_view_builds_a_session_view() -> None:
    """Every front end opens its session's view with kshell.view.open_view: no other module of
    kshell or kfs decides a session's rules (`governance`) or makes an agent's filesystem
    (`DriveFS`), so a rule holds in every front end or in none."""
    elsewhere = [f"{path.relative_to(ROOT)}:{line}: {name}(...)"
                 for top in ("kshell", "kfs") for path in sorted((ROOT / top).rglob("*.py")) if path != VIEW
                 for name, line in _calls(path)]
    assert elsewhere == []
    assert sorted(name for name, _ in _calls(VIEW)) == ["DriveFS", "DriveFS", "governance"]


@pytest.mark.parametrize("front", ["kshell/worker/worker.py", "kshell/server/app.py", "kshell/cli/mount.py",
                                   "kshell/cli/shell.py"])
def test_every_front_end_opens_the_one_view(front: str) -> None:
    tree = ast.parse((ROOT / front).read_text())
    assert any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "open_view"
               for n in ast.walk(tree)), front
