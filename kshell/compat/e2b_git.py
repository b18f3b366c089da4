"""E2B's `sandbox.git` (deprecated upstream in favour of `commands.run`, still shipped) over
K: real `git` run in the sandbox as a delegated program (kshell.compat.git, shared with
Daytona's helpers): `git -C PATH ARGS` in `cwd`, as upstream runs it, a `CommandResult` back
where upstream returns one. Credentials are refused: a K sandbox reaches only local paths and
its image's virtual hosts.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Literal

from kshell.compat import core
from kshell.compat import git as kgit
from kshell.compat.core import Unsupported
from kshell.compat.e2b import CommandResult, _check_user, _errors, _text

__all__ = ["Git", "GitBranches", "GitFileStatus", "GitStatus"]


@dataclass
class GitFileStatus:
    name: str
    status: str
    index_status: str
    working_tree_status: str
    staged: bool
    renamed_from: str | None = None


@dataclass
class GitStatus:
    current_branch: str | None
    upstream: str | None
    ahead: int
    behind: int
    detached: bool
    file_status: list[GitFileStatus]


@dataclass
class GitBranches:
    branches: list[str]
    current_branch: str | None


_LABELS = [("U", "conflict"), ("R", "renamed"), ("C", "copied"), ("D", "deleted"), ("A", "added"), ("M", "modified"),
           ("T", "typechange"), ("?", "untracked")]  # the first that either letter shows, as upstream labels them


def _file_status(change: kgit.Change) -> GitFileStatus:
    index, work = (" " if c == "." else c for c in (change.staging, change.worktree))
    label = next((name for letter, name in _LABELS if letter in (index, work)), "unknown")
    return GitFileStatus(name=change.name, status=label, index_status=index, working_tree_status=work,
                         staged=index not in (" ", "?"), renamed_from=change.extra or None)


class Git:
    def __init__(self, sandbox: core.KSandbox) -> None:
        self._sandbox = sandbox

    def _where(self, path: str | None, cwd: str | None) -> str:
        fs = self._sandbox.session.fs
        base = fs.path(cwd) if cwd else self._sandbox.session.home
        return fs.path(posixpath.join(base, path)) if path else base

    def _run(self, args: list[str], path: str | None, envs: dict[str, str] | None, user: str | None,
             cwd: str | None, timeout: float | None) -> CommandResult[str]:
        _check_user(user)
        outcome = core.run(kgit.run_git(self._sandbox, args, cwd=self._where(path, cwd), env=envs, timeout=timeout))
        return CommandResult(stderr=_text(outcome.stderr), stdout=_text(outcome.stdout), exit_code=outcome.status,
                             error=None)

    @_errors
    def clone(self, url: str, path: str | None = None, branch: str | None = None, depth: int | None = None,
              username: str | None = None, password: str | None = None, envs: dict[str, str] | None = None,
              user: str | None = None, cwd: str | None = None, timeout: float | None = None,
              request_timeout: float | None = None, dangerously_store_credentials: bool = False) -> CommandResult[str]:
        kgit.refuse_credentials("Git.clone", username, password)
        args = ["clone", *(["--branch", branch] if branch else []), *(["--depth", str(depth)] if depth else []),
                "--", url, *([self._where(path, cwd)] if path else [])]
        return self._run(args, None, envs, user, cwd, timeout)

    @_errors
    def init(self, path: str, bare: bool = False, initial_branch: str | None = None,
             envs: dict[str, str] | None = None, user: str | None = None, cwd: str | None = None,
             timeout: float | None = None, request_timeout: float | None = None) -> CommandResult[str]:
        args = ["init", *(["--initial-branch", initial_branch] if initial_branch else []),
                *(["--bare"] if bare else []), self._where(path, cwd)]
        return self._run(args, None, envs, user, cwd, timeout)

    @_errors
    def remote_add(self, path: str, name: str, url: str, fetch: bool = False, overwrite: bool = False,
                   envs: dict[str, str] | None = None, user: str | None = None, cwd: str | None = None,
                   timeout: float | None = None, request_timeout: float | None = None) -> CommandResult[str]:
        if overwrite and self.remote_get(path, name, envs, user, cwd, timeout) is not None:
            result = self._run(["remote", "set-url", name, url], path, envs, user, cwd, timeout)
        else:
            result = self._run(["remote", "add", *(["-f"] if fetch else []), name, url], path, envs, user, cwd,
                               timeout)
        if overwrite and fetch:
            result = self._run(["fetch", name], path, envs, user, cwd, timeout)
        return result

    @_errors
    def remote_get(self, path: str, name: str, envs: dict[str, str] | None = None, user: str | None = None,
                   cwd: str | None = None, timeout: float | None = None,
                   request_timeout: float | None = None) -> str | None:
        """The remote's URL, or None when there is no such remote."""
        try:
            return self._run(["remote", "get-url", name], path, envs, user, cwd, timeout).stdout.strip() or None
        except kgit.GitFailed as e:
            if "No such remote" in str(e):
                return None
            raise

    @_errors
    def status(self, path: str, envs: dict[str, str] | None = None, user: str | None = None, cwd: str | None = None,
               timeout: float | None = None, request_timeout: float | None = None) -> GitStatus:
        _check_user(user)
        found = core.run(kgit.status(self._sandbox, self._where(path, cwd), envs))
        return GitStatus(current_branch=found.branch or None, upstream=found.upstream, ahead=found.ahead,
                         behind=found.behind, detached=found.detached,
                         file_status=[_file_status(c) for c in found.changes])

    @_errors
    def branches(self, path: str, envs: dict[str, str] | None = None, user: str | None = None,
                 cwd: str | None = None, timeout: float | None = None,
                 request_timeout: float | None = None) -> GitBranches:
        _check_user(user)
        found = core.run(kgit.branches(self._sandbox, self._where(path, cwd), envs))
        return GitBranches(branches=found.names, current_branch=found.current)

    @_errors
    def create_branch(self, path: str, branch: str, envs: dict[str, str] | None = None, user: str | None = None,
                      cwd: str | None = None, timeout: float | None = None,
                      request_timeout: float | None = None) -> CommandResult[str]:
        """Create `branch` and check it out (upstream's meaning)."""
        return self._run(["checkout", "-b", branch], path, envs, user, cwd, timeout)

    @_errors
    def checkout_branch(self, path: str, branch: str, envs: dict[str, str] | None = None, user: str | None = None,
                        cwd: str | None = None, timeout: float | None = None,
                        request_timeout: float | None = None) -> CommandResult[str]:
        return self._run(["checkout", branch], path, envs, user, cwd, timeout)

    @_errors
    def delete_branch(self, path: str, branch: str, force: bool = False, envs: dict[str, str] | None = None,
                      user: str | None = None, cwd: str | None = None, timeout: float | None = None,
                      request_timeout: float | None = None) -> CommandResult[str]:
        return self._run(["branch", "-D" if force else "-d", branch], path, envs, user, cwd, timeout)

    @_errors
    def add(self, path: str, files: list[str] | None = None, all: bool = True, envs: dict[str, str] | None = None,
            user: str | None = None, cwd: str | None = None, timeout: float | None = None,
            request_timeout: float | None = None) -> CommandResult[str]:
        args = ["add", "--", *files] if files else ["add", "-A" if all else "."]
        return self._run(args, path, envs, user, cwd, timeout)

    @_errors
    def commit(self, path: str, message: str, author_name: str | None = None, author_email: str | None = None,
               allow_empty: bool = False, envs: dict[str, str] | None = None, user: str | None = None,
               cwd: str | None = None, timeout: float | None = None,
               request_timeout: float | None = None) -> CommandResult[str]:
        _check_user(user)
        sha = core.run(kgit.commit(self._sandbox, self._where(path, cwd), message, author_name, author_email,
                                   allow_empty, envs))
        return CommandResult(stderr="", stdout=sha + "\n", exit_code=0, error=None)

    @_errors
    def reset(self, path: str, mode: Literal["soft", "mixed", "hard", "merge", "keep"] | None = None,
              target: str | None = None, paths: list[str] | None = None, envs: dict[str, str] | None = None,
              user: str | None = None, cwd: str | None = None, timeout: float | None = None,
              request_timeout: float | None = None) -> CommandResult[str]:
        args = ["reset", *([f"--{mode}"] if mode else []), *([target] if target else []),
                *(["--", *paths] if paths else [])]
        return self._run(args, path, envs, user, cwd, timeout)

    @_errors
    def restore(self, path: str, paths: list[str], staged: bool | None = None, worktree: bool | None = None,
                source: str | None = None, envs: dict[str, str] | None = None, user: str | None = None,
                cwd: str | None = None, timeout: float | None = None,
                request_timeout: float | None = None) -> CommandResult[str]:
        args = ["restore", *(["--staged"] if staged else []), *(["--worktree"] if worktree else []),
                *([f"--source={source}"] if source else []), "--", *paths]
        return self._run(args, path, envs, user, cwd, timeout)

    @_errors
    def push(self, path: str, remote: str | None = None, branch: str | None = None, set_upstream: bool = True,
             username: str | None = None, password: str | None = None, envs: dict[str, str] | None = None,
             user: str | None = None, cwd: str | None = None, timeout: float | None = None,
             request_timeout: float | None = None) -> CommandResult[str]:
        kgit.refuse_credentials("Git.push", username, password)
        args = ["push", *(["--set-upstream"] if set_upstream and remote else []), *([remote] if remote else []),
                *([branch] if branch else [])]
        return self._run(args, path, envs, user, cwd, timeout)

    @_errors
    def pull(self, path: str, remote: str | None = None, branch: str | None = None, username: str | None = None,
             password: str | None = None, envs: dict[str, str] | None = None, user: str | None = None,
             cwd: str | None = None, timeout: float | None = None,
             request_timeout: float | None = None) -> CommandResult[str]:
        kgit.refuse_credentials("Git.pull", username, password)
        args = ["pull", *([remote] if remote else []), *([branch] if branch else [])]
        return self._run(args, path, envs, user, cwd, timeout)

    @_errors
    def set_config(self, key: str, value: str, scope: str = "global", path: str | None = None,
                   envs: dict[str, str] | None = None, user: str | None = None, cwd: str | None = None,
                   timeout: float | None = None, request_timeout: float | None = None) -> CommandResult[str]:
        return self._run(["config", f"--{scope}", key, value], path, envs, user, cwd, timeout)

    @_errors
    def get_config(self, key: str, scope: str = "global", path: str | None = None,
                   envs: dict[str, str] | None = None, user: str | None = None, cwd: str | None = None,
                   timeout: float | None = None, request_timeout: float | None = None) -> str | None:
        """The value, or None when it is not set (git config's status 1)."""
        try:
            return self._run(["config", f"--{scope}", "--get", key], path, envs, user, cwd, timeout).stdout.strip()
        except kgit.GitFailed as e:
            if "(status 1)" in str(e):
                return None
            raise

    @_errors
    def configure_user(self, name: str, email: str, scope: str = "global", path: str | None = None,
                       envs: dict[str, str] | None = None, user: str | None = None, cwd: str | None = None,
                       timeout: float | None = None, request_timeout: float | None = None) -> CommandResult[str]:
        self.set_config("user.name", name, scope, path, envs, user, cwd, timeout)
        return self.set_config("user.email", email, scope, path, envs, user, cwd, timeout)

    def dangerously_authenticate(self, username: str, password: str, host: str = "github.com",
                                 protocol: str = "https", envs: dict[str, str] | None = None,
                                 user: str | None = None, cwd: str | None = None, timeout: float | None = None,
                                 request_timeout: float | None = None) -> None:
        raise Unsupported("Git.dangerously_authenticate", "a K sandbox reaches only local paths and its image's "
                          "virtual hosts, which take no git credentials")
