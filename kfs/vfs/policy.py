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
"""

from __future__ import annotations

import errno
import fnmatch
import os
import posixpath
from dataclasses import dataclass

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


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def stricter(a: str, b: str) -> str:
    """The stricter of two modes (unknown names count as the strictest)."""
    rank = {m: i for i, m in enumerate(MODES)}
    return a if rank.get(a, len(MODES)) >= rank.get(b, len(MODES)) else b


@dataclass(slots=True)
class WritePolicy:
    """What a restricted session may write. `allowed`: absolute paths (a write under one is
    allowed) or globs (a write whose path matches is allowed). `refused` counts refusals, so
    a front end can say once, after a command, which mode refused them."""

    mode: str
    home: str
    allowed: tuple[str, ...] = ()
    refused: int = 0

    def describe(self) -> str:
        """The line that names the mode."""
        where = {"readonly": "", "plan": " (writes only under {})", "limited": " (writes only under {})"}[self.mode]
        return f"K: this session is in {self.mode} mode{where.format(', '.join(self.allowed))}"

    @classmethod
    def make(cls, mode: str, home: str, scope: tuple[str, ...] = (), plan: str = "~/.plan") -> WritePolicy | None:
        """The policy of `mode` (None for `full`), `~/` normalised against `home`."""
        if mode == "full":
            return None
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")

        def absolute(p: str) -> str:
            p = home.rstrip("/") + p[1:] if p == "~" or p.startswith("~/") else p
            return posixpath.normpath(p) if p.startswith("/") else posixpath.join(home, p)

        allowed = {"readonly": (), "plan": (plan,), "limited": scope}[mode]
        return cls(mode, home, tuple(absolute(p) for p in allowed))

    @classmethod
    def of_agent(cls, settings: dict, home: str, session_mode: str = "full") -> WritePolicy | None:
        """An agent's policy from its settings (mode, scope, plan), made stricter by the
        session's own mode; a mode nobody knows restricts the most."""
        mode = stricter(settings.get("mode", "full"), session_mode or "full")
        return cls.make(mode if mode in MODES else "readonly", home, tuple(settings.get("scope") or ()),
                        settings.get("plan") or "~/.plan")

    def refuses(self, path: str) -> bool:
        """Whether a write reaching the physical absolute `path` is refused."""
        if self.mode == "readonly" or self.denied(path):
            return True
        return not any(_under(path, a) or any(c in a for c in "*?[") and fnmatch.fnmatchcase(path, a)
                       for a in self.allowed)

    def denied(self, path: str) -> bool:
        """The mandatory deny-write list."""
        if posixpath.dirname(path) == self.home.rstrip("/") and posixpath.basename(path) in RC_FILES:
            return True
        parts = path.split("/")
        if DENIED_NAMES.intersection(parts):
            return True
        return any(f"/{g}/" in path + "/" for g in DENIED_GIT)
