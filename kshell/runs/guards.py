"""A run's guards, held by K itself rather than by the loop, and what is checked at its end.

- The run's agent works in `limited` mode scoped to the run's `workspace/` and `deliverables/`
  (its settings, as `komputer agent set NAME --mode limited --scope ...` stores them): the
  session view's WritePolicy then refuses every other write, in the write's own transaction, on
  the path it really reaches (`..` and symbolic links resolved first), for the K shell, the
  loop's file tools (agent.fs), SFTP and every delegated program (bound from the agent's view):
  docs/modes.md. The run's records and snapshots are outside that scope, root's, and the
  snapshots mode 0444. So an agent runs one run at a time (its scope is its current run's).
- Delete off by default: what the agent removed in its sandbox (K's receipts say so) makes the
  run `review_required`, with the paths, unless the configuration has `delete: true`.
- Every file operation in the sandbox, as K's receipts record it, becomes a line of
  events.jsonl (`file` events), whichever front end did it.
- At the end: the required deliverables (missing ones make the run `review_required`), and the
  two manifests, each entry's path, size, sha256 and media type, the scan bounded by the
  configuration's `manifest` (max_files, max_hash_bytes).
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import posixpath
import stat as st
from typing import TYPE_CHECKING, Any

from kshell.runs.context import RunContext, append_event, now_iso

if TYPE_CHECKING:
    from kfs.kstate import KState

__all__ = ["apply_scope", "check_deliverables", "manifest", "record_file_events",
           "write_manifests"]

RECEIPTS_BATCH = 10_000  # receipts read per look (the scan of one look is bounded by it)


def apply_scope(ctx: RunContext) -> dict[str, Any]:
    """Put the run's agent in limited mode scoped to the run's workspace/ and deliverables/
    (its stored settings: every session of the agent from now on, and every view K mounts
    for its programs). Returns the settings as stored."""
    from kshell.delegate.config import set_agent_overrides

    return set_agent_overrides(ctx.state, ctx.agent, mode="limited", scope=[ctx.workspace, ctx.deliverables])


def _in_sandbox(ctx: RunContext, path: str) -> str | None:
    """`path` relative to the sandbox when it is in it, else None."""
    top = ctx.sandbox.rstrip("/") + "/"
    return path[len(top):] if path.startswith(top) else None


def record_file_events(ctx: RunContext) -> list[dict[str, Any]]:
    """K's receipts since the run's last look, of operations on paths in its sandbox by anyone
    but the run's own bookkeeping, as `file` lines of events.jsonl; the last receipt seen is
    kept in run.json's `receipts_seen` (so a resume goes on from there). Returns the lines."""
    from kfs.journal.receipts import receipts_since

    seen = ctx.record.get("receipts_seen") or 0
    mine = f"runs {ctx.run_id}"
    events: list[dict[str, Any]] = []
    while True:
        rows = receipts_since(ctx.state, seen, RECEIPTS_BATCH)
        for row in rows:
            seen = max(seen, row["id"])
            path = row.get("path")
            if not isinstance(path, str) or not row["op"].startswith("vfs.") or row.get("by") == mine:
                continue
            relative = _in_sandbox(ctx, path)
            if relative is None:
                continue
            event = {"at": _iso(row["ts"]), "type": "file", "op": row["op"], "path": relative, "by": row.get("by"),
                     "status": row.get("status"), "receipt": row["id"]}
            if row.get("bytes") is not None:
                event["bytes"] = row["bytes"]
            for key in ("to", "dst", "target"):
                if isinstance(row.get(key), str):
                    event[key] = _in_sandbox(ctx, row[key]) or row[key]
            events.append(event)
        if len(rows) < RECEIPTS_BATCH:
            break
    append_event(ctx, events)
    ctx.record["receipts_seen"] = seen
    return events


def _iso(ns: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def deletions(ctx: RunContext) -> list[str]:
    """The paths the agent removed in its sandbox (from events.jsonl's `file` lines)."""
    gone = []
    for line in ctx.fs().read_file(ctx.path("events.jsonl")).splitlines():
        event = json.loads(line)
        if event.get("type") == "file" and event.get("op") in ("vfs.unlink", "vfs.rmdir", "vfs.rm"):
            gone.append(event["path"])
    return gone


def check_deliverables(ctx: RunContext) -> list[str]:
    """The required deliverables missing (or not regular files) under deliverables/."""
    fs = ctx.fs()
    missing = []
    for name in ctx.config.get("deliverables") or []:
        path = posixpath.join(ctx.deliverables, name)
        try:
            if not fs.stat(path).is_reg:
                missing.append(name)
        except OSError:
            missing.append(name)
    return missing


def manifest(state: KState, top: str, *, max_files: int, max_hash_bytes: int,
             base: str | None = None) -> dict[str, Any]:
    """Every file under `top` (not following links): path (relative to `base`, default
    `top`), size, sha256 and media type, in path order, read in one transaction. Bounded: at
    most `max_files` entries (then `truncated`), and files are hashed while the bytes hashed
    stay within `max_hash_bytes` (past it an entry's sha256 is null)."""
    from kfs.vfs import records
    from kfs.vfs.data import read

    base = base or top
    cut = len(base.rstrip("/")) + 1  # every path found starts with base + "/": sliced, not relpath'd
    types: dict[str, str] = {}  # media types by name ending (mimetypes looks at the suffix alone)
    files: list[dict[str, Any]] = []
    hashed = 0
    truncated = False
    with state.read() as txn:
        from kfs.vfs import ROOT, VFS, PathFS

        try:
            start = PathFS(VFS(state), cred=ROOT, cwd="/", home="/").stat(top)
        except FileNotFoundError:
            return {"files": [], "truncated": False, "bytes": 0}
        stack = [(top, start.ino)]
        while stack and not truncated:
            folder, ino = stack.pop()
            for name, child, kind, _ in records.list_entries(txn, ino):
                path = folder + "/" + name.decode("utf-8", "surrogateescape")
                if kind == st.S_IFDIR:
                    stack.append((path, child))
                    continue
                if len(files) >= max_files:
                    truncated = True
                    break
                inode = records.get_inode(txn, child)
                suffix = name[name.rfind(b".") + 1:] if b"." in name else b""
                if kind != st.S_IFREG or suffix not in types:
                    media = _media_type(path, kind)
                    if kind == st.S_IFREG:
                        types[suffix] = media
                else:
                    media = types[suffix]
                entry: dict[str, Any] = {"path": path[cut:], "size": inode.size, "media_type": media, "sha256": None}
                if inode.is_reg and hashed + inode.size <= max_hash_bytes:
                    entry["sha256"] = hashlib.sha256(read(txn, inode, 0, inode.size)).hexdigest()
                    hashed += inode.size
                files.append(entry)
    files.sort(key=lambda e: e["path"])
    return {"files": files, "truncated": truncated, "bytes": sum(e["size"] for e in files)}


def _media_type(path: str, kind: int) -> str:
    if kind == st.S_IFLNK:
        return "inode/symlink"
    if kind != st.S_IFREG:
        return "inode/x-special"
    return mimetypes.guess_type(path, strict=False)[0] or ("text/plain" if path.endswith((".md", ".txt")) else
                                                           "application/octet-stream")


def write_manifests(ctx: RunContext) -> tuple[dict[str, Any], dict[str, Any]]:
    """sandbox-manifest.json (workspace/ and deliverables/) and artifact-manifest.json
    (deliverables/), each one K write."""
    bounds = ctx.config.get("manifest") or {}
    limits = {"max_files": bounds.get("max_files", 20_000), "max_hash_bytes": bounds.get("max_hash_bytes", 64 << 20)}
    at = now_iso()
    sandbox = {"run_id": ctx.run_id, "at": at, "files": [], "truncated": False}
    for folder in ("workspace", "deliverables"):
        part = manifest(ctx.state, ctx.path(folder), base=ctx.sandbox, **limits)
        sandbox["files"] += part["files"]
        sandbox["truncated"] = sandbox["truncated"] or part["truncated"]
    sandbox["files"].sort(key=lambda e: e["path"])
    artifacts = {"run_id": ctx.run_id, "at": at, **manifest(ctx.state, ctx.deliverables, **limits)}
    fs = ctx.fs()
    fs.write_file(ctx.path("sandbox-manifest.json"), json.dumps(sandbox, indent=2, sort_keys=True) + "\n")
    fs.write_file(ctx.path("artifact-manifest.json"), json.dumps(artifacts, indent=2, sort_keys=True) + "\n")
    return sandbox, artifacts
