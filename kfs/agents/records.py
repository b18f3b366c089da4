"""Agent records: a name, a virtual uid/gid (from 100000 up) and a home directory in the VFS.

Records live in the "keys" database under `agent/NAME` (JSON), next to their authorized keys,
so that one agent's identity and credentials sit in one key range (kfs.accounts owns the keys).
Creating an agent creates its home `/home/NAME` (mode 0750, owned by the agent) in the same transaction.

They are also the machine's user database (read by kfs.accounts.accounts for ls, stat, id, tar and
SFTP; never the host's /etc/passwd). Creating or removing an agent rewrites the VFS's /etc/passwd and /etc/group
from the records in the same transaction, and makes sure the base layout every agent's tools
expect exists: /tmp (1777) and /etc (0755), root's.
"""

from __future__ import annotations

import errno
import json
import stat as st
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from kfs.accounts import (
    AGENT_NAME,
    ROOT_ACCOUNT,
    agent_record,
    agent_records,
    agents_changed,
    forget_agent,
    put_agent_record,
)
from kfs.journal import ChangeKind, append_event
from kfs.kstate import KState, Txn
from kfs.vfs import ROOT, ROOT_INO, VFS, PathFS, attrs, data, namespace, records
from kfs.vfs.ops import Op

# New agents' ids start where the subordinate ids of /etc/login.defs do (SUB_UID_MIN), far above
# the host's own accounts (UID_MAX 60000): through the mount (allow_other) and a host drive an
# agent's uid is a real one, and must be no host user's. Ids a host account, a host group or a
# host user's subordinate range (/etc/subuid, /etc/subgid) holds are skipped. Agents made before
# keep the ids they have (`komputer agent list` warns about one that is a host account's).
FIRST_UID = 100_000
LAST_UID = 0xFFFF_FFFE  # (uid_t)-1 is "no change" to chown
SUBORDINATE_FILES = ("/etc/subuid", "/etc/subgid")
# Names of the accounts a Debian system has from its first boot (base-passwd), and K's own: never
# an agent's, whatever the host has (K's /etc/passwd would hold a second root, `ls` show bin's).
RESERVED_NAMES = frozenset({
    "root", "daemon", "bin", "sys", "sync", "games", "man", "lp", "mail", "news", "uucp", "proxy", "www-data",
    "backup", "list", "irc", "gnats", "nobody", "nogroup", "systemd-network", "systemd-resolve", "messagebus",
    "sshd", "_apt", "komputer"})
HOME_MODE = 0o750
_NEXT_UID = b"next_agent_uid"

# The machine's own shape: what a Linux system has before anyone logs in, root's.
# /tmp is world-writable and sticky (mktemp, process substitution); /etc holds the account files.
LAYOUT_DIRS = ((b"tmp", st.S_IFDIR | 0o1777), (b"etc", st.S_IFDIR | 0o755))
SYSTEM_FILE_MODE = 0o644


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


def check_agent_name(name: str) -> None:
    """Agent names follow Debian's user names: lower-case letter or _, then [a-z0-9_-], up to 32;
    a reserved name or a host account's is taken (FileExistsError, as useradd's "already exists")."""
    import grp
    import pwd

    if not AGENT_NAME.match(name):
        raise ValueError(
            f"invalid agent name {name!r}: use a lower-case letter or '_' followed by up to 31 of [a-z0-9_-]"
        )
    if name in RESERVED_NAMES:
        raise FileExistsError(errno.EEXIST, f"agent name {name!r} is reserved (a system account's)")
    for kind, lookup in (("user", pwd.getpwnam), ("group", grp.getgrnam)):
        try:
            found = lookup(name)
        except KeyError:
            continue
        raise FileExistsError(errno.EEXIST, f"agent name {name!r} is a host {kind}'s (id {found[2]}): an agent "
                                            "may not pass for a host account")


def _k_account_names(txn: Txn) -> set[str]:
    """The names K's /etc/passwd and /etc/group hold now (root's and the agents', or what an
    operator wrote there): a new agent takes none of them."""
    names: set[str] = set()
    etc = records.lookup_entry(txn, ROOT_INO, b"etc")
    for file in (b"passwd", b"group") if etc is not None else ():
        ino = records.lookup_entry(txn, etc, file)
        inode = records.get_inode(txn, ino) if ino is not None else None
        if inode is not None and inode.is_reg:
            text = data.read(txn, inode, 0, inode.size)
            names |= {line.split(b":", 1)[0].decode(errors="replace") for line in text.splitlines() if line}
    return names


def _subordinate_ranges() -> list[range]:
    """The host users' subordinate id ranges (name:start:count lines), which their containers use."""
    ranges = []
    for path in SUBORDINATE_FILES:
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split(":")
            if len(fields) == 3 and fields[1].isdigit() and fields[2].isdigit():
                ranges.append(range(int(fields[1]), int(fields[1]) + int(fields[2])))
    return ranges


def host_account(uid: int) -> str | None:
    """What of the host holds id `uid`, as a user's or a group's ("user cloudsdk"), or None."""
    import grp
    import pwd

    for kind, lookup in (("user", pwd.getpwuid), ("group", grp.getgrgid)):
        try:
            return f"{kind} {lookup(uid)[0]}"
        except KeyError:
            continue
    return None


def _free_id(txn: Txn) -> int:
    """The next id from FIRST_UID up that no agent, host account or subordinate range holds."""
    taken = set()
    for raw in agent_records(txn):
        agent = Agent.from_json(raw)
        taken |= {agent.uid, agent.gid}
    subordinate = _subordinate_ranges()
    uid = max(txn.counter(_NEXT_UID), FIRST_UID)
    while True:
        held = next((r for r in subordinate if uid in r), None)
        if held is not None:
            uid = held.stop  # past the whole range at once
        elif uid in taken or host_account(uid) is not None:
            uid += 1
        else:
            return uid
        if uid > LAST_UID:
            raise OSError(errno.EUSERS, "no free id is left for a new agent")


def find_agent_in(txn: Txn, name: str) -> Agent | None:
    raw = agent_record(txn, name)
    return None if raw is None else Agent.from_json(raw)


def merged_settings(stored: dict, configured: dict | None) -> dict:
    """An agent's settings from komputer.toml's `[agents.NAME]` (`configured`) and from
    `komputer agent set` (`stored`): the stricter mode of the two; any other setting stored
    with the CLI replaces the file's."""
    if not configured:
        return stored
    from kfs.vfs.policy import stricter

    merged = {**configured, **stored}
    if "mode" in configured and "mode" in stored:
        merged["mode"] = stricter(configured["mode"], stored["mode"])
    return merged


def find_agent(state: KState, name: str) -> Agent | None:
    with state.read() as txn:
        return find_agent_in(txn, name)


def list_agents(state: KState) -> list[Agent]:
    with state.read() as txn:
        return [Agent.from_json(v) for v in agent_records(txn)]


def find_agent_by_uid(state: KState, uid: int) -> Agent | None:
    return next((a for a in list_agents(state) if a.uid == uid), None)


# -- the base layout and the account files ------------------------------------------------------


def ensure_layout(op: Op) -> None:
    """Create /tmp (1777) and /etc (0755), owned by root, where missing; `op` runs as root.

    Why here and not lazily in the shell: an agent cannot create them in a root-owned `/`, and
    every agent's mktemp and `<(...)` need /tmp. An entry that exists is left as it is.
    """
    root = records.get_inode(op.txn, ROOT_INO)
    for name, mode in LAYOUT_DIRS:
        if records.lookup_entry(op.txn, ROOT_INO, name) is None:
            namespace.make_node(op, root, name, mode, path="/" + name.decode(), absent=True)


def account_files(agents: Sequence[Agent]) -> dict[bytes, bytes]:
    """/etc/passwd and /etc/group for root and `agents`: one user and one group named like it
    per agent, as Debian's useradd makes them (USERGROUPS_ENAB)."""
    users = [ROOT_ACCOUNT, *((a.name, a.uid, a.gid, a.home) for a in agents)]
    passwd = "".join(f"{n}:x:{u}:{g}:{n if u == 0 else ''}:{h}:/bin/sh\n" for n, u, g, h in users)
    seen: set[int] = set()
    group = []
    for n, _, g, _ in users:
        if g not in seen:
            seen.add(g)
            group.append(f"{n}:x:{g}:\n")
    return {b"passwd": passwd.encode(), b"group": "".join(group).encode()}


def write_account_files(op: Op, agents: Sequence[Agent]) -> None:
    """(Re)write /etc/passwd and /etc/group from `agents`, root's and 0644, in `op`.

    They are generated: the agent records are the truth, the files are how Unix tools see it.
    A missing or non-directory /etc, or an entry there that is not a regular file, is left alone.
    """
    txn = op.txn
    etc_ino = records.lookup_entry(txn, ROOT_INO, b"etc")
    if etc_ino is None:
        return
    for name, content in account_files(agents).items():
        etc = records.get_inode(txn, etc_ino)
        if not etc.is_dir:
            return
        path = "/etc/" + name.decode()
        ino = records.lookup_entry(txn, etc_ino, name)
        created = ino is None
        if ino is None:
            inode = namespace.make_node(op, etc, name, st.S_IFREG | SYSTEM_FILE_MODE, path=path,
                                        receipt=False, absent=True)
        else:
            inode = records.get_inode(txn, ino)
            if not inode.is_reg:
                continue
            if inode.size:
                data.truncate(txn, inode, 0, path)
        if content:
            data.write(txn, inode, 0, content, path)
        inode.mode, inode.uid, inode.gid = st.S_IFREG | SYSTEM_FILE_MODE, 0, 0
        inode.mtime = inode.ctime = op.now
        records.put_inode(txn, inode)
        op.receipt("vfs.write", path, len(content), **({"created": True} if created else {}))
        if not created:
            op.changed(ChangeKind.DATA, inode.ino)


def _sync_machine(op: Op) -> None:
    """After an agent change, in its transaction: the layout, the account files, the generation."""
    txn = op.txn
    agents_changed(txn)
    ensure_layout(op)
    write_account_files(op, [Agent.from_json(v) for v in agent_records(txn)])


def sync_machine(vfs: VFS) -> None:
    """Create what a state made before the base layout lacks (/tmp, /etc, the account files).

    A no-op, without a write, when all of it is there; for the paths that find an agent
    already present (`komputer up` on an existing state).
    """
    with vfs.state.read() as txn:
        etc = records.lookup_entry(txn, ROOT_INO, b"etc")
        present = all(records.lookup_entry(txn, ROOT_INO, n) is not None for n, _ in LAYOUT_DIRS) and (
            etc is not None and records.lookup_entry(txn, etc, b"passwd") is not None
        )
    if not present and not vfs.state.readonly:
        vfs.run(ROOT, _sync_machine)


def _create(op: Op, vfs: VFS, name: str) -> Agent:
    txn = op.txn
    if agent_record(txn, name) is not None:
        raise FileExistsError(errno.EEXIST, f"agent {name} already exists")
    if name in _k_account_names(txn):
        raise FileExistsError(errno.EEXIST, f"agent name {name!r} is in K's /etc/passwd or /etc/group already")
    uid = _free_id(txn)
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
    put_agent_record(txn, name, agent.to_json())
    append_event(txn, "agent.add", agent=name, uid=uid, gid=uid, home=home)
    _sync_machine(op)
    return agent


def _remove(op: Op, name: str) -> Agent:
    txn = op.txn
    agent = find_agent_in(txn, name)
    if agent is None:
        raise KeyError(name)
    forget_agent(txn, name)  # its keys and settings go with it
    append_event(txn, "agent.remove", agent=name, uid=agent.uid, gid=agent.gid, home=agent.home)
    _sync_machine(op)
    return agent


def remove_agent(vfs: VFS, name: str) -> Agent:
    """Remove agent `name` and its authorized keys; KeyError if there is none.

    As `userdel` without -r: the home stays, owned by the now nameless uid (ls shows the number).
    """
    return vfs.run(ROOT, lambda op: _remove(op, name))


def add_agent(vfs: VFS, name: str) -> Agent:
    """Create agent `name` with the next free uid (gid = uid, `_free_id`) and its home; EEXIST
    if present, reserved, a host account's or in K's account files."""
    check_agent_name(name)
    return vfs.run(ROOT, lambda op: _create(op, vfs, name))


def ensure_agent(vfs: VFS, name: str) -> tuple[Agent, bool]:
    """The agent `name`, created if missing; returns (agent, created)."""
    existing = find_agent(vfs.state, name)
    if existing is not None:
        sync_machine(vfs)
        return existing, False
    try:
        return add_agent(vfs, name), True
    except FileExistsError:
        found = find_agent(vfs.state, name)
        if found is None:  # a reserved name, or a host account's
            raise
        return found, False

