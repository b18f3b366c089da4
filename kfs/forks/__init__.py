"""Forks: copy-on-write twins of the state's tree, made in O(1), to try something, review it, or
run attempts side by side (docs/forks.md).

A fork is made of the state (or of another fork) with a mode and a disk: `overlay` gives it a
layer of its own (kfs.kstate.layers), so what it writes stays in it while its parent goes on
unchanged for it; `shared` writes through to its parent (a session with another mode, say).
`view` is a fork's state for a VFS (PathFS, the FUSE mount, a shell); `diff` says what it changed
(added, changed, removed paths, as `git status`); `merge` brings those changes into the parent
in one transaction, refusing, with the paths, when the parent changed the same ones since the
fork; `discard` drops a fork and every fork made of it. The event stream records each.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from kfs.accounts import agent_record
from kfs.journal import append_event
from kfs.kstate import KState, Txn, quota
from kfs.kstate.layers import (
    BASE,
    CHANGED,
    HERE,
    LAYERED,
    OWN,
    STATE,
    ForkState,
    LayeredTxn,
    children,
    children_key,
    fork_owner,
    fork_record,
    gen_key,
    keeping,
    layer_bytes,
    layer_files,
    next_generation,
    prefix,
    release,
    set_children,
)
from kfs.kstate.schema import U64

DISKS = ("overlay", "shared")
_FILE_CODES = tuple(LAYERED[db] for db in ("inodes", "chunks", "xattrs", "symlinks"))


class ForkError(Exception):
    """A fork operation refused: the message says why."""


class Conflict(ForkError):
    """A merge refused: the parent changed these paths since the fork."""

    def __init__(self, fork: int, paths: list[str]) -> None:
        super().__init__(f"fork {fork}: the parent changed {len(paths)} of the same paths since the fork: "
                         + ", ".join(paths))
        self.paths = paths


@dataclass
class Diff:
    """What a fork changed against its parent: (kind, path) with kind added, changed or
    removed, in path order; and the paths the parent also changed since the fork."""

    changes: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    parent: int = STATE


class TooMany(ForkError):
    """A fork refused: its agent has `limit` forks already (`forks_max_per_agent`)."""


def create(state: KState, *, parent: int = STATE, mode: str = "full", disk: str = "overlay", hooks: bool = True,
           scope: tuple[str, ...] = (), agent: str | None = None, by: str = "cli", limit: int = 0) -> int:
    """A new fork of `parent` (STATE: the state's own tree); its number. O(1) in the tree.
    `agent`: the agent that may log into it; `mode`, `hooks`, `scope`: its sessions'. `limit`
    (0: none): the forks `agent` may have at once, counted in the same transaction, so that
    concurrent requests cannot pass it together (TooMany)."""
    if disk not in DISKS:
        raise ForkError(f"disk {disk!r}: expected overlay or shared")

    def body(txn: Txn) -> int:
        if agent and limit > 0 and sum(1 for k, v in txn.scan("forks") if len(k) == 8
                                       and json.loads(v).get("agent") == agent) >= limit:
            raise TooMany(f"agent {agent} already has {limit} forks (forks_max_per_agent); the operator merges "
                          "or discards them (komputer fork list, komputer fork discard N)")
        above: tuple[int, ...] = ()
        if parent != STATE:
            record = fork_record(txn, parent)
            if record is None:
                raise ForkError(f"no fork {parent}")
            above = tuple(record["chain"])
        number = txn.incr(b"next_fork")
        chain = (number, *above) if disk == "overlay" else above
        first_ino = LayeredTxn(txn, above, None).counter(b"next_ino") + 1  # the fork's own files start here
        owner = agent_record(txn, agent) if agent else None
        uid = json.loads(owner)["uid"] if owner is not None else 0  # whom its stored bytes are charged to
        record = {"id": number, "parent": parent, "chain": list(chain), "disk": disk, "mode": mode,
                  "hooks": hooks, "scope": list(scope), "agent": agent, "uid": uid, "first_ino": first_ino,
                  "created": time.time(), "by": by}
        layer = above[0] if above else STATE
        if disk == "overlay":  # what its parent writes from now on is kept for it (kstate.layers)
            record["gen"] = next_generation(txn, layer)
        txn.put("forks", U64.pack(number), json.dumps(record).encode())
        if disk == "overlay":
            set_children(txn, layer, (*children(txn, layer), number))
        append_event(txn, "fork.create", fork=number, parent=parent, mode=mode, disk=disk, by=by)
        return number

    return state.write(body)


def get(state: KState, fork: int) -> dict[str, Any]:
    with state.read() as txn:
        record = fork_record(txn, fork)
    if record is None:
        raise ForkError(f"no fork {fork}")
    return record


def forks(state: KState) -> list[dict[str, Any]]:
    """Every fork's record, oldest first."""
    with state.read() as txn:
        return [json.loads(v) for k, v in txn.scan("forks") if len(k) == 8]


def view(state: KState, fork: int) -> ForkState:
    """The fork's tree as a state: `VFS(view(state, n))` reads and writes the fork."""
    try:
        return ForkState(state, fork)
    except LookupError:
        raise ForkError(f"no fork {fork}") from None


def discard(state: KState, fork: int, by: str = "cli") -> list[int]:
    """Drop the fork and the forks made of it, with everything they wrote; their numbers."""

    def body(txn: Txn) -> list[int]:
        if fork_record(txn, fork) is None:
            raise ForkError(f"no fork {fork}")
        gone = _drop(txn, fork)
        append_event(txn, "fork.discard", fork=fork, forks=gone, by=by)
        return gone

    return state.write(body)


def _drop(txn: Txn, fork: int) -> list[int]:
    gone = []
    for key, raw in list(txn.scan("forks")):
        if len(key) == 8 and json.loads(raw)["parent"] == fork:
            gone += _drop(txn, U64.unpack(key)[0])
    record = fork_record(txn, fork)
    assert record is not None
    owner = fork_owner(txn, fork)  # what its layer holds goes back to its owner
    quota.charge(txn, owner, -layer_bytes(txn, fork))
    quota.charge(txn, owner, -layer_files(txn, fork), kind=quota.FILES)
    for key in txn.scan_keys("layers", U64.pack(fork)):
        txn.delete("layers", key)
    if record["disk"] == "overlay":
        chain = record["chain"]
        layer = chain[1] if len(chain) > 1 else STATE
        set_children(txn, layer, tuple(c for c in children(txn, layer) if c != fork))
        release(txn, layer)  # what was kept only for it goes
        txn.delete("forks", children_key(fork))
        txn.delete("forks", gen_key(fork))
    txn.delete("forks", U64.pack(fork))
    return [*gone, fork]


# -- what a fork changed ---------------------------------------------------------------------


@dataclass
class _Entry:
    """One directory entry the fork changed: in directory `parent` (a directory of the base),
    `name`, the fork's child there (0: none) and whether the base had one."""

    parent: int
    name: bytes
    child: int
    had: bool
    conflict: bool


class _Changes:
    """A fork's own rows read once: its entry changes and the base files it changed."""

    def __init__(self, txn: Txn, record: dict[str, Any]) -> None:
        chain = tuple(record["chain"])
        self.fork = chain[0]
        self.first = record["first_ino"]
        self.mine = LayeredTxn(txn, chain, None)  # the fork's view
        self.theirs = LayeredTxn(txn, chain[1:], None, gens=self.mine.gens[1:])  # the parent's, as it is now
        self.txn = txn
        self.entries: list[_Entry] = []
        head = prefix(self.fork, LAYERED["dirents"])
        for key, row in txn.scan("layers", head):
            key = key[len(head):]
            parent = U64.unpack_from(key)[0]
            if not row[0] & OWN or parent >= self.first:
                continue  # preserved rows, and entries inside directories the fork made
            child = U64.unpack_from(row, 1)[0] if row[0] & HERE else 0
            had = bool(row[0] & BASE)
            if not had and not child:
                continue  # made and removed again
            conflict = self._marked(LAYERED["dirents"], key)
            if had and child and not conflict and child == _child(self.theirs, key):
                continue  # the same entry again (moved away and back)
            self.entries.append(_Entry(parent, key[16:], child, had, conflict))
        self.files: dict[int, bool] = {}  # base file -> whether the parent changed it too
        for code in _FILE_CODES:
            head = prefix(self.fork, code)
            for key, row in txn.scan("layers", head):
                ino = U64.unpack_from(key, len(head))[0]
                if row[0] & OWN and ino < self.first and ino not in self.files:
                    self.files[ino] = self._marked(LAYERED["inodes"], U64.pack(ino)) or \
                        self._preserved(LAYERED["inodes"], U64.pack(ino))

    def _marked(self, code: int, key: bytes) -> bool:
        """Whether the parent changed `key` since the fork (an older state's marker row, or a
        version kept above the fork's generation)."""
        return self.txn.get("layers", prefix(self.fork, code | CHANGED) + key) is not None or \
            self.mine.changed_since(code, key)

    def _preserved(self, code: int, key: bytes) -> bool:
        row = self.txn.get("layers", prefix(self.fork, code) + key)
        return row is not None and not row[0] & OWN or self.mine.changed_since(code, key)

    def path(self, parent: int, name: bytes = b"") -> str:
        from kfs.vfs import records

        for view in (self.mine, self.theirs):
            try:
                where = records.dir_path(view, parent).decode("utf-8", "surrogateescape")
            except OSError:
                continue
            return (where.rstrip("/") + "/" + name.decode("utf-8", "surrogateescape")) if name else where
        return f"(directory {parent})/" + name.decode("utf-8", "surrogateescape")

    def changed_files(self) -> dict[int, str]:
        """The base files (not directories) the fork changed in place that it still has, by one
        of their paths in the fork (found by walking its tree until each is found)."""
        from kfs.vfs import records

        wanted = {}
        for ino in self.files:
            found = records.find_inode(self.mine, ino)
            if found is None:
                continue
            if found.is_dir:
                base = records.find_inode(self.theirs, ino)
                if base is None or (found.mode, found.uid, found.gid) == (base.mode, base.uid, base.gid):
                    continue
                wanted[ino] = self.path(ino)
                continue
            wanted[ino] = ""
        missing = {i for i, p in wanted.items() if not p}
        if missing:
            stack = [(1, "")]
            while stack and missing:
                directory, at = stack.pop()
                for name, child, kind, _ in records.list_entries(self.mine, directory):
                    where = at + "/" + name.decode("utf-8", "surrogateescape")
                    if child in missing:
                        wanted[child] = where
                        missing.discard(child)
                    if kind == 0o040000:
                        stack.append((child, where))
        return {i: p for i, p in wanted.items() if p}


def _child(view: Txn, key: bytes) -> int:
    raw = view.get("dirents", key)
    return 0 if raw is None else U64.unpack_from(raw)[0]


def _overlay(state: KState, fork: int) -> dict[str, Any]:
    record = get(state, fork)
    if record["disk"] != "overlay":
        raise ForkError(f"fork {fork} shares its parent's disk: it has no changes of its own")
    return record


def diff(state: KState, fork: int) -> Diff:
    record = _overlay(state, fork)
    with state.read() as txn:
        found = _diff(_Changes(txn, record))
    found.parent = record["parent"]
    return found


def _diff(c: _Changes) -> Diff:
    out = Diff()
    for e in c.entries:
        path = c.path(e.parent, e.name)
        out.changes.append(("removed" if not e.child else "changed" if e.had else "added", path))
        if e.conflict or _gone(c, e.parent):
            out.conflicts.append(path)
    files = c.changed_files()
    for ino, path in files.items():
        out.changes.append(("changed", path))
        if c.files[ino]:
            out.conflicts.append(path)
    out.changes = sorted(set(out.changes), key=lambda change: (change[1], change[0]))
    out.conflicts = sorted(set(out.conflicts))
    return out


def _gone(c: _Changes, directory: int) -> bool:
    """Whether the parent removed a directory the fork changed entries of."""
    from kfs.vfs import records

    return records.find_inode(c.theirs, directory) is None


def merge(state: KState, fork: int, by: str = "cli") -> Diff:
    """Bring the fork's changes into its parent, in one transaction, and close the fork (and
    the forks made of it); Conflict, with the paths, when the parent changed any of them."""
    record = _overlay(state, fork)

    def body(txn: Txn) -> Diff:
        from kfs.forks.apply import apply

        c = _Changes(txn, record)
        found = _diff(c)
        if found.conflicts:
            raise Conflict(fork, found.conflicts)
        chain = tuple(record["chain"])
        layer = chain[1] if len(chain) > 1 else STATE
        # the parent's view: its writes keep its forks' snapshots, this one's too until it goes
        # (what the fork reads while it is copied must not see the parent's new rows)
        apply(c, LayeredTxn(txn, chain[1:], keeping(txn, layer), gens=c.mine.gens[1:]), by)
        gone = _drop(txn, fork)
        append_event(txn, "fork.merge", fork=fork, parent=record["parent"], changes=len(found.changes),
                     forks=gone, by=by)
        found.parent = record["parent"]
        return found

    return state.write(body)


__all__ = ["DISKS", "Conflict", "Diff", "ForkError", "TooMany", "create", "diff", "discard", "forks", "get", "merge",
           "view"]
