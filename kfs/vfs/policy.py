"""Restricted modes: which writes a session may make, checked where every front end writes
(PathFS), on the path a write really reaches (symlinks and `..` resolved in the operation's own
transaction, so no swap between check and write can escape).

- `readonly`: no write at all.
- `plan`: writes only under the plan folder (default `~/.plan`).
- `limited`: writes only under the allowed paths or matching the allowed globs (`~/` names
  the home).
- In every restricted mode, some paths are never written, even inside an allowed scope: shell
  start-up files, editor and agent-tool configuration, a repository's `.git/config` and hooks,
  `_shared`. A write that would change what runs next time the agent (or a person) starts a
  shell, an editor or a tool is a way out of the restriction.

A refusal is EROFS, "Read-only file system", as a Unix user expects from a read-only mount;
`Refusal.mode` lets a front end add the one line that names the mode.

Policy rules on paths (kfs.runtime.rules, `on = "path"`) come before the mode, in every mode
(`full` included): the first that matches decides. Where none does, the image's write hooks
(`hook`) may deny or ask, then the mode decides. `deny` is EACCES, "Permission denied";
`allow` lets the write through whatever the mode (never past the mandatory list); `ask` raises
`NeedsApproval`, outside the operation's transaction, so that the session can wait for a
person's decision (`approve`) and then run the same operation again. A path once allowed that
way stays allowed for the session (a `cp -p` writes, chmods and touches the same file).
"""

from __future__ import annotations

import errno
import fnmatch
import os
import posixpath
from collections.abc import Callable
from typing import Any

from kfs.values import field, value_class

MODES = ("full", "limited", "plan", "readonly")  # from the loosest to the strictest
RC_FILES = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
            ".zshenv", ".zlogin", ".inputrc", ".kshrc", ".mkshrc")
DENIED_NAMES = frozenset({".mcp.json", ".vscode", ".idea", ".zed", ".cursor", ".devcontainer", "_shared"})
DENIED_GIT = (".git/config", ".git/hooks")


class Refusal(PermissionError):
    """A write the session's mode refuses (errno EROFS)."""

    def __init__(self, path: str, mode: str) -> None:
        super().__init__(errno.EROFS, os.strerror(errno.EROFS), path)
        self.mode = mode


class PolicyDenial(PermissionError):
    """A write a path rule denies (errno EACCES); `why` names the rule."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(errno.EACCES, os.strerror(errno.EACCES), path)
        self.why = why


class NeedsApproval(PermissionError):
    """A write an `ask` rule matched: `physical` is the path it reaches, `rule` the rule."""

    def __init__(self, path: str, physical: str, rule: Any) -> None:
        super().__init__(errno.EACCES, os.strerror(errno.EACCES), path)
        self.physical = physical
        self.rule = rule


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def stricter(a: str, b: str) -> str:
    """The stricter of two modes (unknown names count as the strictest)."""
    rank = {m: i for i, m in enumerate(MODES)}
    return a if rank.get(a, len(MODES)) >= rank.get(b, len(MODES)) else b


def effective_mode(settings: dict, session_mode: str = "full") -> str:
    """The agent's mode made stricter by the session's; a mode nobody knows is `readonly`."""
    mode = stricter(settings.get("mode", "full"), session_mode or "full")
    return mode if mode in MODES else "readonly"


@value_class(slots=True)
class WritePolicy:
    """What a session may write. `allowed`: absolute paths (a write under one is allowed) or
    globs (a write whose path matches is allowed). `rules`: the path rules in force (first
    match decides). `refused` counts the mode's refusals and `told` collects the rules' lines,
    so a front end can say once, after a command, what refused them. `approve` (None: nobody
    can decide here, and `ask` refuses) waits for a decision on a NeedsApproval; `granted`
    holds the paths decided `allow` for this session."""

    mode: str
    home: str
    allowed: tuple[str, ...] = ()
    refused: int = 0
    rules: Any = ()  # kfs.runtime.rules.RuleSet of the path rules: `first(path)`, iterable
    told: list[str] = field(default_factory=list)
    granted: set[str] = field(default_factory=set)
    approve: Callable[[NeedsApproval], bool] | None = None
    # the image's write hooks: path -> a rule-like decision (action, describe()) or None
    hook: Callable[[str], Any] | None = None

    def describe(self) -> str:
        """The line that names the mode."""
        where = {"readonly": "", "plan": " (writes only under {})", "limited": " (writes only under {})"}[self.mode]
        return f"K: this session is in {self.mode} mode{where.format(', '.join(self.allowed))}"

    @classmethod
    def make(cls, mode: str, home: str, scope: tuple[str, ...] = (), plan: str = "~/.plan",
             rules: Any = ()) -> WritePolicy | None:
        """The policy of `mode` with the path `rules` (None for `full` without any), `~/`
        normalised against `home`."""
        if mode == "full":
            return cls(mode, home, rules=rules) if rules else None
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")

        def absolute(p: str) -> str:
            p = home.rstrip("/") + p[1:] if p == "~" or p.startswith("~/") else p
            return posixpath.normpath(p) if p.startswith("/") else posixpath.join(home, p)

        allowed = {"readonly": (), "plan": (plan,), "limited": scope}[mode]
        return cls(mode, home, tuple(absolute(p) for p in allowed), rules=rules)

    @classmethod
    def of_agent(cls, settings: dict, home: str, session_mode: str = "full",
                 rules: Any = ()) -> WritePolicy | None:
        """An agent's policy from its settings (mode, scope, plan), made stricter by the
        session's own mode (a mode nobody knows restricts the most), with the path `rules`."""
        return cls.make(effective_mode(settings, session_mode), home, tuple(settings.get("scope") or ()),
                        settings.get("plan") or "~/.plan", rules)

    def check(self, shown: str, path: str) -> None:
        """Raise what refuses a write reaching the physical absolute `path` (`shown`: the path
        as the caller named it): the first path rule that matches, else the mode."""
        if self.mode != "full" and self.denied(path):
            self.refused += 1
            raise Refusal(shown, self.mode)
        rule = self.rules.first(path) if self.rules else None
        if rule is not None and (rule.action == "allow" or path in self.granted):
            return
        if rule is not None and rule.action == "ask":
            raise NeedsApproval(shown, path, rule)
        if rule is not None:
            raise self.deny(shown, path, f"denied by policy ({rule.describe()})")
        verdict = self.hook(path) if self.hook is not None and path not in self.granted else None
        if verdict is not None and verdict.action == "ask":
            raise NeedsApproval(shown, path, verdict)
        if verdict is not None and verdict.action == "deny":
            raise self.deny(shown, path, f"denied by {verdict.describe()}")
        if self.mode != "full" and self._outside(path):
            self.refused += 1
            raise Refusal(shown, self.mode)

    def deny(self, shown: str, path: str, why: str) -> PolicyDenial:
        """The error for a write a rule refuses, its line kept for the front end to say (a
        few: a command that fails a thousand times says it once)."""
        if len(self.told) < 8:
            self.told.append(f"K: {path}: {why}")
        return PolicyDenial(shown, why)

    def refuses(self, path: str) -> bool:
        """Whether the mode refuses a write reaching the physical absolute `path`."""
        return self.mode != "full" and (self.denied(path) or self._outside(path))

    def _outside(self, path: str) -> bool:
        """Not where the mode writes (readonly: nowhere)."""
        return self.mode == "readonly" or not any(
            _under(path, a) or any(c in a for c in "*?[") and fnmatch.fnmatchcase(path, a) for a in self.allowed)

    def denied(self, path: str) -> bool:
        """The mandatory deny-write list (every name on it starts with a dot, but `_shared`)."""
        if "/." not in path and "_shared" not in path:
            return False
        if posixpath.dirname(path) == self.home.rstrip("/") and posixpath.basename(path) in RC_FILES:
            return True
        parts = path.split("/")
        if DENIED_NAMES.intersection(parts):
            return True
        return any(f"/{g}/" in path + "/" for g in DENIED_GIT)
