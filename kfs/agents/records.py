"""Agent records: a name, a virtual uid/gid (from 1000 up) and a home directory in the VFS.

Records live in the "keys" database under `agent/NAME` (JSON), next to their authorized keys,
so that one agent's identity and credentials sit in one key range. Creating an agent creates
its home `/home/NAME` (mode 0750, owned by the agent) in the same transaction.
"""

from __future__ import annotations

import errno
import json
import re
import stat as st
from dataclasses import asdict, dataclass

from kfs.journal import append_event
from kfs.kstate import KState, Txn
from kfs.vfs import ROOT, VFS, PathFS, attrs, namespace, records
from kfs.vfs.ops import Op

FIRST_UID = 1000
HOME_MODE = 0o750
_NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}\Z")
_NEXT_UID = b"next_agent_uid"


@dataclass(frozen=True, slots=True)
class Agent:
    name: str
    uid: int
    gid: int
    home: str
    created: int  # ns since the epoch

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> Agent:
        return cls(**json.loads(raw))


def agent_key(name: str) -> bytes:
    return b"agent/" + name.encode()


def check_agent_name(name: str) -> None:
    """Agent names follow Debian's user names: lower-case letter or _, then [a-z0-9_-], up to 32."""
    if not _NAME.match(name):
        raise ValueError(
            f"invalid agent name {name!r}: use a lower-case letter or '_' followed by up to 31 of [a-z0-9_-]"
        )


def find_agent_in(txn: Txn, name: str) -> Agent | None:
    raw = txn.get("keys", agent_key(name)) if _NAME.match(name) else None
    return None if raw is None else Agent.from_json(raw)


def find_agent(state: KState, name: str) -> Agent | None:
    with state.read() as txn:
        return find_agent_in(txn, name)


def list_agents(state: KState) -> list[Agent]:
    with state.read() as txn:
        return [Agent.from_json(v) for _, v in txn.scan("keys", b"agent/")]


def find_agent_by_uid(state: KState, uid: int) -> Agent | None:
    return next((a for a in list_agents(state) if a.uid == uid), None)


def _create(op: Op, vfs: VFS, name: str) -> Agent:
    txn = op.txn
    if txn.get("keys", agent_key(name)) is not None:
        raise FileExistsError(errno.EEXIST, f"agent {name} already exists")
    uid = txn.counter(_NEXT_UID) or FIRST_UID
    taken = {Agent.from_json(v).uid for _, v in txn.scan("keys", b"agent/")}
    while uid in taken:
        uid += 1
    txn.put("meta", _NEXT_UID, (uid + 1).to_bytes(8, "big"))
    home = f"/home/{name}"
    fs = PathFS(vfs, cred=ROOT)
    fs.mkdirs_in(op, "/home", 0o755)
    found = fs.resolve(txn, home, entry=True)
    inode = found.inode
    if inode is None:
        assert found.parent is not None
        inode = namespace.make_node(op, found.parent, name.encode(), st.S_IFDIR | HOME_MODE, path=home)
    elif not inode.is_dir:
        raise NotADirectoryError(errno.ENOTDIR, f"{home} exists and is not a directory")
    inode = records.get_inode(txn, inode.ino)
    attrs.setattr(op, inode, uid=uid, gid=uid, path=home)
    attrs.setattr(op, records.get_inode(txn, inode.ino), mode=HOME_MODE, path=home)
    agent = Agent(name, uid, uid, home, op.now)
    txn.put("keys", agent_key(name), agent.to_json())
    append_event(txn, "agent.add", agent=name, uid=uid, gid=uid, home=home)
    return agent


def add_agent(vfs: VFS, name: str) -> Agent:
    """Create agent `name` with the next free uid (gid = uid) and its home; EEXIST if present."""
    check_agent_name(name)
    return vfs.run(ROOT, lambda op: _create(op, vfs, name))


def ensure_agent(vfs: VFS, name: str) -> tuple[Agent, bool]:
    """The agent `name`, created if missing; returns (agent, created)."""
    existing = find_agent(vfs.state, name)
    if existing is not None:
        return existing, False
    try:
        return add_agent(vfs, name), True
    except FileExistsError:
        found = find_agent(vfs.state, name)
        assert found is not None
        return found, False

