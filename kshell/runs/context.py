"""A run: its ids, its directory in the agent's K tree, and its state of record (run.json).

`create_run_context` checks the configuration first (nothing is made for a bad one), then lays
the run out in the agent's tree, under its home, in a fixed order: `run.json` (pending),
`session.json`, `task.yaml`, `prompt.md`, `config.yaml` (the resolved configuration),
`effective-system-prompt.md`, `sandbox-manifest.json`, `artifact-manifest.json`,
`events.jsonl`, `transcript.md`, and the folders `workspace/`, `deliverables/`, `archive/`,
`logs/`. These are K files (visible through the mount as any file of the agent), written by K
for the run (receipts say `runs RUN_ID`) as root: the agent reads them and, its writes limited
to `workspace/` and `deliverables/` (kshell.runs.guards), changes none of them; the snapshots
are also mode 0444.

`update_run_state` is a transition: run.json rewritten whole, one K write transaction, then
its line in events.jsonl. Ids sort by time: `run-20261129T140501123Z-3f9a1c` (UTC to the
millisecond, then random), as do session and task ids.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kfs.runtime.runs import index_run, indexed, run_entry
from kshell.runs.config import ConfigError, canonical, fingerprint, load_config, resolve_config

if TYPE_CHECKING:
    from kfs.kstate import KState
    from kfs.vfs import PathFS

__all__ = ["ACTIVE", "STATES", "TERMINAL", "RunContext", "RunError", "create_run_context", "find_run", "list_runs",
           "new_id", "open_run", "resolve_sandbox_path", "update_run_state"]

STATES = ("pending", "running", "waiting_for_tool", "waiting_for_user", "review_required", "revision_required",
          "completed", "failed", "cancelled")
ACTIVE = frozenset({"running", "waiting_for_tool", "waiting_for_user"})  # a worker is on it
TERMINAL = frozenset({"completed", "cancelled"})
# what a run may become from each state: a resume takes a failed run back to running, a review's
# verdict takes review_required to completed or revision_required, which a resume runs again
TRANSITIONS: dict[str, frozenset[str]] = {
    "pending": frozenset({"running", "failed", "cancelled"}),
    "running": frozenset({"waiting_for_tool", "waiting_for_user", "review_required", "completed", "failed",
                          "cancelled"}),
    "waiting_for_tool": frozenset({"running", "waiting_for_user", "review_required", "completed", "failed",
                                   "cancelled"}),
    "waiting_for_user": frozenset({"running", "waiting_for_tool", "failed", "cancelled"}),
    "review_required": frozenset({"completed", "revision_required", "cancelled"}),
    "revision_required": frozenset({"running", "failed", "cancelled"}),
    "failed": frozenset({"running", "cancelled"}),
    "completed": frozenset(),
    "cancelled": frozenset(),
}
FILES = ("run.json", "session.json", "task.yaml", "prompt.md", "config.yaml", "effective-system-prompt.md",
         "sandbox-manifest.json", "artifact-manifest.json", "events.jsonl", "transcript.md")
FOLDERS = ("workspace", "deliverables", "archive", "logs")
SNAPSHOTS = ("prompt.md", "config.yaml", "effective-system-prompt.md")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")


class RunError(Exception):
    """A run K will not make or change (the message says why, in the user's words)."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_id(kind: str) -> str:
    """`KIND-YYYYMMDDTHHMMSSmmmZ-RANDOM`: ids of one kind sort by when they were made."""
    t = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(t)) + f"{int(t * 1000) % 1000:03d}Z"
    return f"{kind}-{stamp}-{secrets.token_hex(3)}"


@dataclass
class RunContext:
    """One run: its ids, the agent and the sandbox (an absolute path of the K tree), the
    resolved configuration and its fingerprint, and `record` (run.json as last written)."""

    state: KState
    agent: str
    uid: int
    gid: int
    home: str
    sandbox: str
    config: dict[str, Any]
    prompt: str
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def run_id(self) -> str:
        return self.record["run_id"]

    @property
    def session_id(self) -> str:
        return self.record["session_id"]

    @property
    def task_id(self) -> str:
        return self.record["task_id"]

    @property
    def status(self) -> str:
        return self.record["status"]

    @property
    def workspace(self) -> str:
        return posixpath.join(self.sandbox, "workspace")

    @property
    def deliverables(self) -> str:
        return posixpath.join(self.sandbox, "deliverables")

    @property
    def conversation(self) -> str:
        """The agent loop's conversation of the run (kfs.runtime.conversations)."""
        return f"{self.agent}.{self.run_id}"

    def path(self, name: str) -> str:
        return posixpath.join(self.sandbox, name)

    def fs(self) -> PathFS:
        """K's own file view for the run's records: root, receipts saying `runs RUN_ID`."""
        from kfs.vfs import ROOT, VFS, PathFS

        return PathFS(VFS(self.state, by=f"runs {self.run_id}"), cred=ROOT, cwd=self.sandbox, home=self.home)


def _check_id(kind: str, value: str | None) -> str:
    if value is None:
        return new_id(kind)
    if not _ID.match(value):
        raise RunError(f"{kind} id {value!r}: expected 1 to 128 letters, digits, '.', '_' or '-', "
                       "starting with a letter or digit")
    return value


def sandbox_of(home: str, sandbox_path: str) -> str:
    """The sandbox's absolute path: `sandbox_path` relative to the agent's home (`~/` too), and
    under it (no `..` out of it, not the home itself)."""
    raw = sandbox_path[2:] if sandbox_path.startswith("~/") else sandbox_path
    path = posixpath.normpath(raw if raw.startswith("/") else posixpath.join(home, raw))
    if not path.startswith(home.rstrip("/") + "/"):
        raise RunError(f"sandbox {sandbox_path}: must be a folder under the agent's home ({home})")
    return path


def create_run_context(config: str | dict[str, Any], prompt: str, sandbox_path: str, session_id: str | None = None,
                       task_id: str | None = None, run_id: str | None = None, *, state: KState,
                       agent: str | None = None) -> RunContext:
    """Make a run (pending) in `agent`'s tree on `state`: `config` a kgent.yaml path or a
    mapping (checked first: a ConfigError names the file and line, and nothing is made),
    `sandbox_path` relative to the agent's home (made; it must not exist or be empty). The
    agent is made if new. Ids not given are new ones; a run id already used is refused."""
    from kfs.agents import ensure_agent
    from kfs.vfs import VFS

    resolved = load_config(config) if isinstance(config, str) else resolve_config(config)
    if not isinstance(prompt, str) or not prompt.strip():
        raise RunError("the prompt is empty")
    ids = {"session_id": _check_id("ses", session_id), "task_id": _check_id("task", task_id),
           "run_id": _check_id("run", run_id)}
    agent = agent or resolved["agent"]
    resolved = {**resolved, "agent": agent}
    record_agent, _ = ensure_agent(VFS(state, by="runs"), agent)
    home = record_agent.home
    sandbox = sandbox_of(home, sandbox_path)
    with state.read() as txn:
        if run_entry(txn, ids["run_id"]) is not None:
            raise RunError(f"run {ids['run_id']} exists already")
    ctx = RunContext(state, agent, record_agent.uid, record_agent.gid, home, sandbox, resolved, prompt)
    ctx.record = {"run_id": ids["run_id"]}
    fs = ctx.fs()
    if fs.exists(sandbox) and (not fs.stat(sandbox).is_dir or fs.readdir(sandbox)):
        raise RunError(f"sandbox {sandbox_path}: exists and is not an empty folder ({sandbox})")
    _lay_out(ctx, fs, ids)
    return ctx


def effective_system_prompt(ctx: RunContext) -> str:
    """The configuration's system prompt and the run's own lines: where to work and what to hand in."""
    lines = [ctx.config.get("system", "").rstrip(), ""] if ctx.config.get("system", "").strip() else []
    lines += [
        f"You work in the run {ctx.record['run_id']}. Your working directory is {ctx.workspace}.",
        f"Write only under {ctx.workspace} (your work) and {ctx.deliverables} (what you hand in): "
        "K refuses every other write.",
    ]
    wanted = ctx.config.get("deliverables") or []
    if wanted:
        lines.append("Required deliverables, under deliverables/: " + ", ".join(wanted) + ".")
    if not ctx.config.get("delete"):
        lines.append("Do not delete files: a deletion sends the run to review.")
    return "\n".join(lines) + "\n"


def _lay_out(ctx: RunContext, fs: PathFS, ids: dict[str, str]) -> None:
    """The run's directory, in a fixed order, run.json first (pending) and the index last (a
    run not in the index was never made whole: `runs list` does not show it)."""
    created = now_iso()
    with ctx.state.read() as txn:  # K's receipts before the run: its events start after them
        last = txn.last("receipts")
    ctx.record = {
        **ids, "profile_id": ctx.config["profile"], "agent": ctx.agent, "sandbox": ctx.sandbox,
        "config_fingerprint": fingerprint(ctx.config), "status": "pending", "created_at": created,
        "updated_at": created, "started_at": None, "completed_at": None, "failure_reason": None,
        "conversation": ctx.conversation, "attempt": 0, "worker": None,
        "receipts_seen": 0 if last is None else int.from_bytes(bytes(last[:8]), "big"),
    }
    parent = posixpath.dirname(ctx.sandbox)
    if not fs.exists(parent):
        _mkdirs_owned(fs, parent, ctx)
    if not fs.exists(ctx.sandbox):
        fs.mkdir(ctx.sandbox, 0o755)
    fs.write_file(ctx.path("run.json"), _json(ctx.record), mode=0o644)
    fs.write_file(ctx.path("session.json"), _json({"session_id": ids["session_id"], "agent": ctx.agent,
                                                   "created_at": created}), mode=0o644)
    task = {"task_id": ids["task_id"], "session_id": ids["session_id"], "profile_id": ctx.config["profile"],
            "deliverables": ctx.config["deliverables"], "created_at": created}
    fs.write_file(ctx.path("task.yaml"), _yaml(task), mode=0o644)
    fs.write_file(ctx.path("prompt.md"), ctx.prompt if ctx.prompt.endswith("\n") else ctx.prompt + "\n", mode=0o444)
    fs.write_file(ctx.path("config.yaml"), _yaml(json.loads(canonical(ctx.config))), mode=0o444)
    fs.write_file(ctx.path("effective-system-prompt.md"), effective_system_prompt(ctx), mode=0o444)
    for name in ("sandbox-manifest.json", "artifact-manifest.json"):
        fs.write_file(ctx.path(name), _json({"run_id": ids["run_id"], "files": [], "truncated": False}), mode=0o644)
    fs.write_file(ctx.path("events.jsonl"), _line({"at": created, "type": "run.created", **ids,
                                                   "config_fingerprint": ctx.record["config_fingerprint"]}),
                  mode=0o644)
    fs.write_file(ctx.path("transcript.md"), f"# Run {ids['run_id']}\n\n## user\n\n{ctx.prompt.rstrip()}\n\n",
                  mode=0o644)
    for name in FOLDERS:
        fs.mkdir(ctx.path(name), 0o755)
    for name in ("workspace", "deliverables"):  # the agent's to write (its scope: kshell.runs.guards)
        fs.chown(ctx.path(name), ctx.uid, ctx.gid)
    index_run(ctx.state, ids["run_id"], {"agent": ctx.agent, "sandbox": ctx.sandbox, "created_at": created})


def _mkdirs_owned(fs: PathFS, path: str, ctx: RunContext) -> None:
    """The folders above the sandbox, made as the agent's own (its home is)."""
    missing = []
    while not fs.exists(path):
        missing.append(path)
        path = posixpath.dirname(path)
    for folder in reversed(missing):
        fs.mkdir(folder, 0o755)
        fs.chown(folder, ctx.uid, ctx.gid)


def _yaml(value: Any) -> str:
    """YAML with PyYAML's C emitter where it was built with libyaml (a tenth of the time)."""
    import yaml

    return yaml.dump(value, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=True)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True) + "\n"


def _line(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":")) + "\n"


def update_run_state(ctx: RunContext, status: str, reason: str | None = None, **fields: Any) -> dict[str, Any]:
    """Move the run to `status` (STATES; TRANSITIONS says from where): run.json rewritten in
    one K write, then the transition's line in events.jsonl. `reason`: why (a failure's,
    kept as failure_reason). RunError for a transition the run cannot make."""
    current = ctx.record["status"]
    if status not in STATES:
        raise RunError(f"status {status!r}: expected one of {', '.join(STATES)}")
    if status != current and status not in TRANSITIONS[current]:
        raise RunError(f"run {ctx.run_id} is {current}: it cannot become {status}")
    at = now_iso()
    record = {**ctx.record, **fields, "status": status, "updated_at": at}
    if status == "running" and record.get("started_at") is None:
        record["started_at"] = at
    if status in ("completed", "failed", "cancelled", "review_required"):
        record["completed_at"] = at
    elif status in ACTIVE:
        record["completed_at"] = None
    if status == "failed":
        record["failure_reason"] = reason or "failed"
    elif status == "running":
        record["failure_reason"] = None
    fs = ctx.fs()
    fs.write_file(ctx.path("run.json"), _json(record))
    ctx.record = record
    event = {"at": at, "type": "run.state", "from": current, "status": status}
    if reason:
        event["reason"] = reason
    append_event(ctx, event, fs)
    return record


def append_event(ctx: RunContext, event: dict[str, Any] | list[dict[str, Any]], fs: PathFS | None = None) -> None:
    """Lines of events.jsonl (append-only), one K write for all of them."""
    events = event if isinstance(event, list) else [event]
    if events:
        (fs or ctx.fs()).append_file(ctx.path("events.jsonl"), "".join(_line(e) for e in events))


def resolve_sandbox_path(ctx: RunContext, user_path: str) -> str:
    """`user_path` as the run's agent may write it: relative to `workspace/` (or absolute, or
    `~/`), after `..` and symbolic links, inside `workspace/` or `deliverables/`; else
    PermissionError ("outside the run's sandbox"). A path the agent gives a tool goes through
    this; K's own policy refuses the same writes wherever they come from (guards)."""
    fs = ctx.fs()
    raw = user_path[2:] if user_path.startswith("~/") else user_path
    if user_path.startswith("~/"):
        joined = posixpath.join(ctx.home, raw)
    elif raw.startswith("/"):
        joined = raw
    else:
        joined = posixpath.join(ctx.workspace, raw)
    real = _real(fs, posixpath.normpath(joined))
    for top in (ctx.workspace, ctx.deliverables):
        if real == top or real.startswith(top + "/"):
            return real
    raise PermissionError(f"{user_path}: outside the run's sandbox (writes go under {ctx.workspace} or "
                          f"{ctx.deliverables})")


def _real(fs: PathFS, path: str) -> str:
    """`path` with its symbolic links resolved as far as it exists (the rest as given)."""
    head, rest = path, ""
    while head != "/":
        try:
            real = fs.realpath(head)
        except FileNotFoundError:
            head, name = posixpath.split(head)
            rest = posixpath.join(name, rest) if rest else name
            continue
        return posixpath.join(real, rest) if rest else real
    return posixpath.join("/", rest)


def read_record(state: KState, sandbox: str) -> dict[str, Any]:
    from kfs.vfs import ROOT, VFS, PathFS

    fs = PathFS(VFS(state, by="runs"), cred=ROOT, cwd="/", home="/")
    return json.loads(fs.read_file(posixpath.join(sandbox, "run.json")))


def list_runs(state: KState) -> list[dict[str, Any]]:
    """Every run's record (run.json), oldest first (ids sort by time)."""
    with state.read() as txn:
        index = indexed(txn)
    out = []
    for run_id, entry in sorted(index):
        try:
            out.append(read_record(state, entry["sandbox"]))
        except OSError as e:  # its folder removed by hand: the index still names it
            out.append({"run_id": run_id, "agent": entry["agent"], "sandbox": entry["sandbox"], "status": "missing",
                        "failure_reason": f"run.json: {os.strerror(e.errno or 0)}"})
    return out


def find_run(state: KState, run_id: str) -> dict[str, Any]:
    with state.read() as txn:
        entry = run_entry(txn, run_id) if _ID.match(run_id) else None
    if entry is None:
        raise RunError(f"no run {run_id} (komputer runs list shows them)")
    return entry


def open_run(state: KState, run_id: str) -> RunContext:
    """The RunContext of an existing run, from its index entry and its files."""
    import yaml

    from kfs.agents.records import find_agent

    entry = find_run(state, run_id)
    record = read_record(state, entry["sandbox"])
    agent = find_agent(state, entry["agent"])
    if agent is None:
        raise RunError(f"run {run_id}: its agent {entry['agent']} is gone")
    ctx = RunContext(state, agent.name, agent.uid, agent.gid, agent.home, entry["sandbox"], {}, "", record)
    fs = ctx.fs()
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        ctx.config = yaml.load(fs.read_file(ctx.path("config.yaml")), Loader=loader)
        ctx.prompt = fs.read_file(ctx.path("prompt.md")).decode("utf-8", "surrogateescape")
    except OSError as e:
        raise RunError(f"run {run_id}: {e}") from None
    return ctx


# re-exported so a caller of this module needs no other import for the config's errors
__all__ += ["ConfigError"]
