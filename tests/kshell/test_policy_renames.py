"""The K shell of a restricted agent: a rename or a hard link cannot change a protected or
denied path by another name (kfs.vfs.policy judges every path a rename moves, at both places)."""

from __future__ import annotations

import pytest

from kfs.kstate import KState
from kfs.runtime.rules import Rule, RuleSet
from kfs.vfs import VFS, Cred, PathFS
from kfs.vfs.policy import WritePolicy
from kshell.session import Shell

HOME = "/home/a"


@pytest.fixture
def root(state: KState) -> PathFS:
    fs = PathFS(VFS(state))
    fs.mkdir(f"{HOME}/proj/.git/hooks", parents=True)
    fs.write_file(f"{HOME}/proj/.git/config", b"[core]\n")
    fs.mkdir(f"{HOME}/proj/prod")
    fs.write_file(f"{HOME}/proj/prod/a", b"prod\n")
    for path, _, files in list(fs.walk(HOME)):
        for p in [path, *(f"{path}/{f}" for f in files)]:
            fs.chown(p, 1000, 1000)
    return fs


def shell(root: PathFS, mode: str, scope: tuple[str, ...] = ("~",), *rules: tuple[str, str]) -> Shell:
    found = RuleSet(tuple(Rule(i, a, p, on="path").at_home(HOME) for i, (a, p) in enumerate(rules, 1)))
    policy = WritePolicy.make(mode, HOME, scope, rules=found)
    fs = PathFS(root.vfs, cred=Cred(1000, 1000), cwd=HOME, home=HOME, policy=policy, tilde=False)
    return Shell(fs, name="k", env={"HOME": HOME})


def test_a_git_directory_moved_away_cannot_have_its_hooks_and_config_written(root: PathFS) -> None:
    done = shell(root, "limited").run(
        "mv proj/.git g2; printf x > g2/hooks/pre-commit; printf '[core]\\nfsmonitor = x\\n' > g2/config;"
        " mv g2 proj/.git; cat proj/.git/config; ls proj/.git/hooks")
    assert done.stdout == b"[core]\n"
    assert b"mv: cannot move 'proj/.git' to 'g2': Read-only file system\n" in done.stderr
    assert not root.exists(f"{HOME}/proj/.git/hooks/pre-commit") and not root.exists(f"{HOME}/g2")


def test_a_denied_path_cannot_be_changed_by_renaming_its_parent(root: PathFS) -> None:
    sh = shell(root, "full", (), ("deny", "~/proj/prod"))
    done = sh.run("mv proj proj_moved; echo x > proj_moved/prod/a; mv proj_moved proj; cat proj/prod/a")
    assert done.stdout == b"prod\n"
    assert b"mv: cannot move 'proj' to 'proj_moved': Permission denied\n" in done.stderr
    assert root.read_file(f"{HOME}/proj/prod/a") == b"prod\n"


def test_a_hard_link_to_git_config_is_refused(root: PathFS) -> None:
    done = shell(root, "limited").run("ln proj/.git/config c2; echo '[core] hooksPath = /tmp' >> c2; echo rc=$?")
    assert b"Read-only file system" in done.stderr
    assert root.read_file(f"{HOME}/proj/.git/config") == b"[core]\n"  # c2 is a file of its own
    assert root.stat(f"{HOME}/proj/.git/config").nlink == 1


def test_git_configuration_in_the_home_is_refused(root: PathFS) -> None:
    done = shell(root, "limited").run(
        "echo '[core] fsmonitor = x' > .gitconfig; mkdir -p .config/git; echo x > .config/git/config; echo ok")
    assert done.stdout == b"ok\n"
    assert not root.exists(f"{HOME}/.gitconfig") and not root.exists(f"{HOME}/.config/git")
