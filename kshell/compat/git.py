"""The adapters' git helpers (Daytona's and E2B's `sandbox.git`): real `git`, run in the sandbox as a
delegated program (K has no git of its own; with K_SANDBOX_REMOTE=local it runs on this host
under bubblewrap, on the agent's tree through its mount), one command line per call, its
output parsed here once for every adapter. A sandbox without git says "install git".
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from kshell.compat import core

__all__ = ["Branches", "Change", "GitFailed", "Status", "branches", "commit", "git", "refuse_credentials", "run_git",
           "status"]

MISSING = 127  # the shell's status for a program it could not find


class GitFailed(OSError):
    """git ended with a non-zero status (its own message kept), or there is no git to run."""


async def run_git(sandbox: core.KSandbox, args: list[str], *, cwd: str | None = None,
                  env: dict[str, str] | None = None, timeout: float | None = None) -> core.Outcome:
    """`git ARGS` in the sandbox (in `cwd`), how it ended; GitFailed with git's stderr when it
    failed. Never asks for a password (GIT_TERMINAL_PROMPT=0)."""
    line = shlex.join(["git", *args])
    outcome = await sandbox.exec(line, cwd=cwd, envs={"GIT_TERMINAL_PROMPT": "0", **(env or {})}, timeout=timeout)
    if outcome.exception is not None:
        raise outcome.exception
    err = outcome.stderr.decode("utf-8", "replace").strip()
    if outcome.status == MISSING and "command not found" in err:
        raise GitFailed(f"git: command not found in the sandbox: install git on the host and let the sandbox run "
                        f"its programs there ({core.REMOTE_ENV}=local)")
    if outcome.status != 0:
        raise GitFailed(f"{line}: {err or outcome.stdout.decode('utf-8', 'replace').strip() or 'failed'} "
                        f"(status {outcome.status})")
    return outcome


async def git(sandbox: core.KSandbox, args: list[str], *, cwd: str | None = None,
              env: dict[str, str] | None = None) -> str:
    """`git ARGS` in the sandbox, its stdout (run_git)."""
    return (await run_git(sandbox, args, cwd=cwd, env=env)).stdout.decode("utf-8", "replace")


@dataclass
class Change:
    """One path of `git status`: its index (staging) and worktree states, as porcelain letters."""

    name: str
    staging: str  # ".", "M", "A", "D", "R", "C", "U", "?"
    worktree: str
    extra: str = ""  # a rename's or copy's old name


@dataclass
class Status:
    branch: str
    upstream: str | None = None
    ahead: int = 0
    behind: int = 0
    detached: bool = False
    changes: list[Change] = field(default_factory=list)


async def status(sandbox: core.KSandbox, path: str, env: dict[str, str] | None = None) -> Status:
    """`git status --porcelain=v2 --branch` in the repository at `path`, parsed."""
    out = await git(sandbox, ["status", "--porcelain=v2", "--branch", "-z"], cwd=path, env=env)
    result = Status(branch="")
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if entry.startswith("# branch.head "):
            head = entry[len("# branch.head "):]
            result.detached = head == "(detached)"
            result.branch = "" if result.detached else head
        elif entry.startswith("# branch.upstream "):
            result.upstream = entry[len("# branch.upstream "):]
        elif entry.startswith("# branch.ab "):
            ahead, behind = entry[len("# branch.ab "):].split()
            result.ahead, result.behind = int(ahead), -int(behind)
        elif entry.startswith("1 "):
            parts = entry.split(" ", 8)
            result.changes.append(Change(parts[8], parts[1][0], parts[1][1]))
        elif entry.startswith("2 "):  # a rename or copy: the old name is the next field
            parts = entry.split(" ", 9)
            result.changes.append(Change(parts[9], parts[1][0], parts[1][1], fields[i]))
            i += 1
        elif entry.startswith("u "):
            result.changes.append(Change(entry.split(" ", 10)[10], "U", "U"))
        elif entry.startswith("? "):
            result.changes.append(Change(entry[2:], "?", "?"))
    return result


@dataclass
class Branches:
    names: list[str]
    current: str | None


async def branches(sandbox: core.KSandbox, path: str, env: dict[str, str] | None = None) -> Branches:
    """The local branches, and the one checked out (None when the head is detached)."""
    out = await git(sandbox, ["branch", "--format=%(HEAD) %(refname:short)"], cwd=path, env=env)
    names, current = [], None
    for row in out.splitlines():
        mark, name = row[:1], row[2:]
        if name.startswith("("):  # "(HEAD detached at ...)"
            continue
        names.append(name)
        if mark == "*":
            current = name
    return Branches(names, current)


async def commit(sandbox: core.KSandbox, path: str, message: str, author: str | None, email: str | None,
                 allow_empty: bool, env: dict[str, str] | None = None) -> str:
    """Commit what is staged; the new commit's sha."""
    args = ["commit", "-m", message]
    env = dict(env or {})
    if author:
        env.update(GIT_AUTHOR_NAME=author, GIT_COMMITTER_NAME=author)
    if email:
        env.update(GIT_AUTHOR_EMAIL=email, GIT_COMMITTER_EMAIL=email)
    if allow_empty:
        args.append("--allow-empty")
    await git(sandbox, args, cwd=path, env=env)
    return (await git(sandbox, ["rev-parse", "HEAD"], cwd=path)).strip()


def refuse_credentials(call: str, username: str | None, password: str | None) -> None:
    """Credentials are refused: a K sandbox reaches no network host a password would open."""
    if username or password:
        raise core.Unsupported(f"{call}(username=/password=)", "a K sandbox reaches only local paths and its "
                               "image's virtual hosts, which take no git credentials")
