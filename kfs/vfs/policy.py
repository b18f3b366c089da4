"""Restricted modes: which writes a session may make, checked where every front end writes
(PathFS), on the path a write really reaches (symlinks and `..` resolved in the operation's own
transaction, so no swap between check and write can escape).

- `readonly`: no write at all.
- `plan`: writes only under the plan folder (default `~/.plan`).
- `limited`: writes only under the allowed paths or matching the allowed globs (`~/` names
  the home).
- In every restricted mode, some paths are never written, even inside an allowed scope: shell
  start-up files, editor and agent-tool configuration, git's configuration (a repository's
  `.git/config` and hooks, `~/.gitconfig`, `~/.config/git/`), `_shared`. A write that would
  change what runs next time the agent (or a person) starts a shell, an editor or a tool is a
  way out of the restriction.
- `bounds` (a limited fork's scope) narrows the mode further: a write must be allowed by both.

A write is judged on every path it changes or makes reachable, not only on the one it names:
a rename judges every path of the moved tree at its old place and at its new one
(`check_tree`; moving `.git` away, writing its hooks and moving it back is three writes the
mandatory list refuses, and so is renaming a parent of a denied path), a hard link judges its
source path too (a second name of `.git/config` would be a writable one).

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

import bisect
import errno
import fnmatch
import functools
import os
import posixpath
import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from kfs.kstate import Txn
from kfs.values import field, value_class
from kfs.vfs import records

MODES = ("full", "limited", "plan", "readonly")  # from the loosest to the strictest
RC_FILES = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
            ".zshenv", ".zlogin", ".inputrc", ".kshrc", ".mkshrc")
DENIED_NAMES = frozenset({".mcp.json", ".vscode", ".idea", ".zed", ".cursor", ".devcontainer", "_shared"})
DENIED_GIT = (".git/config", ".git/hooks")
HOME_FILES = (*RC_FILES, ".gitconfig")  # in the home itself
HOME_DIRS = (".config/git",)  # in the home, with all under them (git's own configuration)
# The names a protected path's last component can have below a directory that is not protected
# itself: a moved tree's walk (`check_tree`) looks at these entries alone for the mandatory list.
GUARDED_NAMES = frozenset(os.fsencode(n) for n in (*DENIED_NAMES, *HOME_FILES, "config", "hooks", "git"))
_GLOB = "*?[]"
T = TypeVar("T")


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


def _in(path: str, scope: tuple[str, ...]) -> bool:
    """Whether `path` is under one of the paths of `scope` or matches one of its globs."""
    return any(_under(path, a) or any(c in a for c in "*?[") and fnmatch.fnmatchcase(path, a) for a in scope)


@value_class(frozen=True, slots=True)
class Reach:
    """What a policy's path rules can judge under a directory, worked out once per policy
    (`WritePolicy.watch`). `*` and `?` also match `/`, so of a path a glob matches only two
    things are known: it starts with the glob's head (the text before its first glob
    character) and ends with its tail (the text after its last one). A directory's entries are
    all worth judging when a glob without a tail has its head above the place (`above`, as one
    regex) or when a plain path or such a glob's head lies under it (`heads`, sorted); else only
    the names a glob with a tail can end with (`*/.env`: entries named `.env`; `/srv/*.db`:
    names ending in `.db`), from the globs whose head agrees with the place (`tailed`: head ->
    exact names, name ends)."""

    above: re.Pattern[str] | None
    heads: tuple[str, ...]
    tailed: tuple[tuple[str, frozenset[bytes], tuple[bytes, ...]], ...]
    memo: dict[str, tuple[bool, frozenset[bytes], tuple[bytes, ...]]] = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, patterns: Iterable[str]) -> Reach:
        above: list[str] = []
        heads: list[str] = []
        tailed: dict[str, tuple[set[bytes], set[bytes]]] = {}
        for pattern in patterns:
            cut = min((i for i, c in enumerate(pattern) if c in _GLOB), default=-1)
            if cut < 0:
                heads.append(pattern.rstrip("/") or "/")
                continue
            head = pattern[:cut]
            tail = os.fsencode(pattern[max(i for i, c in enumerate(pattern) if c in _GLOB) + 1:])
            if not tail:
                above.append(re.escape(head))
                heads.append(head)
                continue
            names, ends = tailed.setdefault(head, (set(), set()))
            if b"/" in tail:
                names.add(tail.rsplit(b"/", 1)[1])
            else:
                ends.add(tail)
        return cls(re.compile("|".join(above)) if above else None, tuple(sorted(heads)),
                   tuple((h, frozenset(n), tuple(sorted(e))) for h, (n, e) in tailed.items()))

    def at(self, place: str) -> tuple[bool, frozenset[bytes], tuple[bytes, ...]]:
        """(every entry under the directory at `place` is worth judging, else the names, else
        the name ends that are), remembered per place."""
        known = self.memo.get(place)
        if known is not None:
            return known
        top = place.rstrip("/") + "/"
        i = bisect.bisect_left(self.heads, top)
        if self.above is not None and self.above.match(top) or i < len(self.heads) and self.heads[i].startswith(top):
            found: tuple[bool, frozenset[bytes], tuple[bytes, ...]] = (True, frozenset(), ())
        else:
            names: set[bytes] = set()
            ends: set[bytes] = set()
            for head, n, e in self.tailed:
                if top.startswith(head) or head.startswith(top):
                    names.update(n)
                    ends.update(e)
            found = (False, frozenset(names), tuple(sorted(ends)))
        if len(self.memo) >= 1024:
            self.memo.clear()
        self.memo[place] = found
        return found


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
    so a front end can say once, after a command, what refused them. `approve` (None, or its
    answer None: nobody can decide here, and `ask` refuses) waits for a decision on a
    NeedsApproval; `granted`
    holds the paths decided `allow` for this session."""

    mode: str
    home: str
    allowed: tuple[str, ...] = ()
    refused: int = 0
    rules: Any = ()  # kfs.runtime.rules.RuleSet of the path rules: `first(path)`, iterable
    told: list[str] = field(default_factory=list)
    granted: set[str] = field(default_factory=set)
    approve: Callable[[NeedsApproval], bool | None] | None = None
    # the image's write hooks: path -> a rule-like decision (action, describe()) or None
    hook: Callable[[str], Any] | None = None
    # a second scope every write must also be in (a limited fork's, kfs.forks): None for none
    bounds: tuple[str, ...] | None = None
    # what the path rules can judge under a directory (Reach), worked out at the first need
    reach: Reach | None = field(default=None, compare=False)

    def describe(self) -> str:
        """The line that names the mode."""
        where = {"readonly": "", "plan": " (writes only under {})", "limited": " (writes only under {})"}[self.mode]
        fork = "" if self.bounds is None or self.mode == "readonly" else \
            f", within the fork's scope ({', '.join(self.bounds) or 'nothing'})"
        return f"K: this session is in {self.mode} mode{where.format(', '.join(self.allowed))}{fork}"

    @classmethod
    def make(cls, mode: str, home: str, scope: tuple[str, ...] = (), plan: str = "~/.plan",
             rules: Any = (), bounds: tuple[str, ...] | None = None) -> WritePolicy | None:
        """The policy of `mode` with the path `rules` (None for `full` without any), `~/`
        normalised against `home`; `bounds`: a limited fork's scope, which narrows any
        restricted mode (the stricter wins)."""
        if mode == "full":
            return cls(mode, home, rules=rules) if rules else None
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")

        def absolute(p: str) -> str:
            p = home.rstrip("/") + p[1:] if p == "~" or p.startswith("~/") else p
            return posixpath.normpath(p) if p.startswith("/") else posixpath.join(home, p)

        allowed = {"readonly": (), "plan": (plan,), "limited": scope}[mode]
        return cls(mode, home, tuple(absolute(p) for p in allowed), rules=rules,
                   bounds=None if bounds is None else tuple(absolute(p) for p in bounds))

    @classmethod
    def of_agent(cls, settings: dict, home: str, session_mode: str = "full",
                 rules: Any = (), bounds: tuple[str, ...] | None = None) -> WritePolicy | None:
        """An agent's policy from its settings (mode, scope, plan), made stricter by the
        session's own mode (a mode nobody knows restricts the most), with the path `rules`,
        narrowed by `bounds` (a limited fork's scope)."""
        return cls.make(effective_mode(settings, session_mode), home, tuple(settings.get("scope") or ()),
                        settings.get("plan") or "~/.plan", rules, bounds)

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
        """Not where the mode writes (readonly: nowhere), or outside the fork's bounds."""
        return self.mode == "readonly" or not _in(path, self.allowed) or (
            self.bounds is not None and not _in(path, self.bounds))

    def denied(self, path: str) -> bool:
        """The mandatory deny-write list (every name on it starts with a dot, but `_shared`)."""
        if "/." not in path and "_shared" not in path:
            return False
        home = self.home.rstrip("/")
        if posixpath.dirname(path) == home and posixpath.basename(path) in HOME_FILES:
            return True
        if any(_under(path, f"{home}/{d}") for d in HOME_DIRS):
            return True
        parts = path.split("/")
        if DENIED_NAMES.intersection(parts):
            return True
        return any(f"/{g}/" in path + "/" for g in DENIED_GIT)

    # -- what a rename makes reachable -------------------------------------------------------

    def check_rename(self, txn: Txn, src_dir: int, src_name: bytes, dst_dir: int, dst_name: bytes,
                     exchange: bool = False) -> None:
        """Raise what refuses a rename of the entry `src_name` of directory `src_dir` to
        `dst_name` of `dst_dir`, judged in the rename's own transaction `txn` (an inode-level
        front end: the agent's FUSE view): both places, then every path of the moved tree at
        each (an exchange moves two)."""
        src = _place(txn, src_dir, src_name)
        dst = _place(txn, dst_dir, dst_name)
        self.check(src, src)
        self.check(dst, dst)
        for parent, name in ((src_dir, src_name), (dst_dir, dst_name)) if exchange else ((src_dir, src_name),):
            ino = records.lookup_entry(txn, parent, name)
            if ino is not None and records.get_inode(txn, ino).is_dir:
                self.check_tree(txn, ino, (src, dst))

    def check_tree(self, txn: Txn, ino: int, places: tuple[str, ...]) -> None:
        """Raise what refuses a write to a path under K's directory `ino` at any of `places`
        (`judge_tree`), its entries read in the operation's own transaction `txn`."""
        self.judge_tree(ino, functools.partial(records.children, txn), places)

    def judge_tree(self, top: T, listing: Callable[[T], tuple[list[bytes], list[tuple[bytes, T]]]],
                   places: tuple[str, ...]) -> None:
        """Raise what refuses a write to a path under the directory `top` at any of `places`
        (the physical paths a rename moves it between, or the one `rm -r` removes; the places
        themselves are judged by the caller). `listing(directory)` gives a directory's entry
        names and its subdirectories as (name, directory). The walk looks at names only, and
        judges in full only the entries a rule, a hook or a glob scope could judge otherwise
        than their place (`watch`), and against the mandatory list only the names it holds: a
        `full` policy that could not refuse anything under the places walks nothing at all."""
        restricted = self.mode != "full"
        places = tuple(p.rstrip("/") for p in places)
        every, names, suffixes = self.watch(places)
        if not (every or names or suffixes or restricted):
            return
        hot = names | GUARDED_NAMES if restricted else names
        pending = [(top, "")]
        while pending:
            directory, under = pending.pop()
            entries, subdirs = listing(directory)
            if every or suffixes:
                looked = [n for n in entries if every or n in hot or n.endswith(suffixes)]
            else:
                looked = hot.intersection(entries)  # one C-level pass: usually empty
            for name in looked:
                rel = f"{under}/{os.fsdecode(name)}"
                for place in places:
                    path = place + rel
                    if restricted and name in GUARDED_NAMES and self.denied(path):
                        self.refused += 1
                        raise Refusal(path, self.mode)
                    if every or name in names or suffixes and name.endswith(suffixes):
                        self._inherit(path, place + under)
                        self.check(path, path)
            pending.extend((child, f"{under}/{os.fsdecode(name)}") for name, child in subdirs)

    def _inherit(self, path: str, parent: str) -> None:
        """A path under a directory a person allowed, that the same `ask` rule matches, is
        allowed with it: moving an approved tree asks once, not once per file in it."""
        if parent in self.granted and self.rules:
            rule = self.rules.first(path)
            if rule is not None and rule.action == "ask" and rule is self.rules.first(parent):
                self.granted.add(path)

    def watch(self, places: tuple[str, ...]) -> tuple[bool, frozenset[bytes], tuple[bytes, ...]]:
        """Which entries under directories at `places` could be judged otherwise than the places
        were, by the path rules, the image's write hook or a glob scope (the mandatory list is
        `check_tree`'s own): every one, or those named one of `names` or ending with one of
        `suffixes` (Reach)."""
        if self.hook is not None:
            return True, frozenset(), ()
        if self.mode not in ("full", "readonly") and not all(
                self._by_prefix(p, self.allowed) and (self.bounds is None or self._by_prefix(p, self.bounds))
                for p in places):
            return True, frozenset(), ()  # allowed by a glob (or not at all: then `check` refused it already)
        if not self.rules:
            return False, frozenset(), ()
        reach = self.reach
        if reach is None:
            reach = self.reach = Reach.of(r.pattern for r in self.rules)
        if len(places) == 1:
            return reach.at(places[0])
        seen = [reach.at(p) for p in places]
        if any(every for every, _, _ in seen):
            return True, frozenset(), ()
        return False, frozenset().union(*(n for _, n, _ in seen)), tuple(sorted({e for _, _, s in seen for e in s}))

    @staticmethod
    def _by_prefix(path: str, scope: tuple[str, ...]) -> bool:
        """Whether a path of `scope` (not a glob) holds `path`, and so everything under it."""
        return any(_under(path, a) for a in scope if not any(c in a for c in "*?["))


def _place(txn: Txn, directory: int, name: bytes) -> str:
    """The physical path of the entry `name` of `directory`."""
    return os.fsdecode(records.dir_path(txn, directory).rstrip(b"/") + b"/" + name)
