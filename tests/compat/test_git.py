"""Daytona's and E2B's `sandbox.git` on real git, run in the sandbox as a delegated program (this host's
git under bubblewrap, K_SANDBOX_REMOTE=local, on the agent's tree): a bare repository made
inside the agent's tree is the only remote (never a network host); init, add, status, commit,
push, clone, branches, checkout; credentials refused; no git to run says "install git"."""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Iterator

import pytest

from kshell.compat import core
from kshell.compat import e2b as k_e2b
from kshell.compat.daytona import AsyncDaytona, Daytona, DaytonaError, GitFileStatus, Sandbox, Unsupported


@pytest.fixture
def delegated(monkeypatch: pytest.MonkeyPatch) -> None:
    for program, package in (("bwrap", "bubblewrap"), ("git", "git")):
        if shutil.which(program) is None:
            pytest.fail(f"{program} is missing: install {package} (apt-get install -y {package})")
    monkeypatch.setenv(core.REMOTE_ENV, "local")


@pytest.fixture
def sandbox(delegated: None) -> Iterator[Sandbox]:
    daytona = Daytona()
    made = daytona.create()
    yield made
    daytona.delete(made)


def test_init_add_commit_push_clone_and_branches(sandbox: Sandbox) -> None:
    git = sandbox.git
    git.init("origin.git", bare=True, initial_branch="main")
    git.init("work", initial_branch="main")
    sandbox.fs.upload_file(b"hello\n", "work/a.txt")
    status = git.status("work")
    assert status.current_branch == "main"
    assert [(f.name, f.staging, f.worktree) for f in status.file_status] == [
        ("a.txt", GitFileStatus.Untracked, GitFileStatus.Untracked)]
    git.add("work", ["a.txt"])
    assert [(f.name, f.staging) for f in git.status("work").file_status] == [("a.txt", GitFileStatus.Added)]
    sha = git.commit("work", "first", "Ada", "ada@example.org").sha
    assert re.fullmatch(r"[0-9a-f]{40}", sha)
    assert git.status("work").file_status == []
    git.remote_add("work", "origin", "/home/user/origin.git")
    assert git.remote_get("work", "origin") == "/home/user/origin.git"
    assert git.remote_get("work", "upstream") is None
    assert [(r.name, r.url) for r in git.remotes("work").remotes] == [("origin", "/home/user/origin.git")]
    git.push("work", branch="main", remote="origin", set_upstream=True)
    assert git.status("work").upstream == "origin/main"

    git.clone("/home/user/origin.git", "copy")
    assert sandbox.fs.download_file("copy/a.txt") == b"hello\n"
    assert sandbox.process.exec("git -C copy log --format=%H%x20%an").result == f"{sha} Ada\n"
    branches = git.branches("copy")
    assert (branches.branches, branches.current) == (["main"], "main")
    git.create_branch("copy", "feature")
    assert git.branches("copy").current == "feature" and git.status("copy").current_branch == "feature"
    sandbox.fs.upload_file(b"changed\n", "copy/a.txt")
    assert [(f.name, f.staging, f.worktree) for f in git.status("copy").file_status] == [
        ("a.txt", GitFileStatus.Unmodified, GitFileStatus.Modified)]
    git.restore("copy", ["a.txt"])
    assert sandbox.fs.download_file("copy/a.txt") == b"hello\n"
    git.checkout_branch("copy", "main")
    git.delete_branch("copy", "feature")
    assert git.branches("copy").branches == ["main"]


def test_git_failures_keep_gits_words_and_credentials_are_refused(sandbox: Sandbox) -> None:
    with pytest.raises(DaytonaError, match="not a git repository"):
        sandbox.git.status(".")
    with pytest.raises(Unsupported, match=r"Git.clone\(username=/password=\)"):
        sandbox.git.clone("/home/user/none.git", "x", username="u", password="p")
    with pytest.raises(Unsupported, match="dangerously_authenticate"):
        sandbox.git.dangerously_authenticate("u", "p")


def test_a_sandbox_without_git_says_install_git(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(core.REMOTE_ENV, raising=False)  # no remote: K runs no programs it does not have
    daytona = Daytona()
    sandbox = daytona.create()
    try:
        with pytest.raises(DaytonaError, match="git: command not found in the sandbox: install git"):
            sandbox.git.init("repo")
    finally:
        daytona.delete(sandbox)


def test_async_git(delegated: None) -> None:
    async def main() -> None:
        async with AsyncDaytona() as daytona:
            sandbox = await daytona.create()
            try:
                await sandbox.git.init("r", initial_branch="trunk")
                await sandbox.fs.upload_file(b"x", "r/x")
                await sandbox.git.add("r", ["x"])
                await sandbox.git.commit("r", "one", "Bo", "bo@example.org")
                assert (await sandbox.git.branches("r")).current == "trunk"
            finally:
                await daytona.delete(sandbox)

    asyncio.run(asyncio.wait_for(main(), 120))


def test_e2b_git_runs_git_dash_c_and_parses_as_upstream(delegated: None) -> None:
    with k_e2b.Sandbox.create() as sandbox:
        git = sandbox.git
        git.init("/home/user/bare.git", bare=True, initial_branch="main")
        git.init("proj", initial_branch="main", cwd="/home/user")
        sandbox.files.write("/home/user/proj/a.txt", "one\n")
        git.add("proj")
        status = git.status("proj")
        assert status.current_branch == "main" and not status.detached
        assert [(f.name, f.status, f.index_status, f.staged) for f in status.file_status] == [
            ("a.txt", "added", "A", True)]
        sha = git.commit("proj", "first", author_name="Cy", author_email="cy@example.org").stdout.strip()
        assert re.fullmatch(r"[0-9a-f]{40}", sha)
        git.remote_add("proj", "origin", "/home/user/bare.git")
        git.push("proj", remote="origin", branch="main")
        assert git.status("proj").upstream == "origin/main"
        git.clone("/home/user/bare.git", "again")
        assert sandbox.files.read("/home/user/again/a.txt") == "one\n"
        branches = git.branches("again")
        assert (branches.branches, branches.current_branch) == (["main"], "main")
        with pytest.raises(k_e2b.SandboxException, match="not a git repository"):
            git.status("/home/user")
        with pytest.raises(Unsupported, match=r"Git.push\(username=/password=\)"):
            git.push("proj", username="u", password="p")
