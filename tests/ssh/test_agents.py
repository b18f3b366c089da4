"""kfs.agents: agent records, authorized keys, host key, sessions and leases; the CLI verbs."""

from __future__ import annotations

import grp
import pwd
import re
import stat
import subprocess
import sys
from pathlib import Path

import asyncssh
import pytest

from kfs.accounts import put_agent_record
from kfs.agents import (
    LeaseHeld,
    acquire_session,
    add_agent,
    add_key,
    ensure_agent,
    host_key,
    list_keys,
    parse_key_line,
    records,
    release_session,
    remove_key,
)
from kfs.agents.sessions import holder_id
from kfs.kstate import KState
from kfs.vfs import VFS, PathFS

KEY = asyncssh.generate_private_key("ssh-ed25519", comment="me@test").export_public_key().decode().strip()


def host_free_ids(start: int, count: int) -> list[int]:
    """The first `count` ids from `start` up that no host user, group or subordinate range holds."""
    subordinate = records._subordinate_ranges()
    ids = []
    while len(ids) < count:
        held = next((r for r in subordinate if start in r), None)
        if held is None and records.host_account(start) is None:
            ids.append(start)
        start = start + 1 if held is None else held.stop
    return ids


def test_agents_get_ids_from_100000_no_host_account_holds_and_an_owned_home(vfs: VFS) -> None:
    alice, bob = add_agent(vfs, "alice"), add_agent(vfs, "bob")
    first, second = host_free_ids(records.FIRST_UID, 2)
    assert (alice.uid, alice.gid, bob.uid, bob.gid) == (first, first, second, second)
    assert records.FIRST_UID == 100_000 and first >= 100_000
    home = PathFS(vfs).stat("/home/alice")
    assert (home.uid, home.gid, stat.S_IMODE(home.mode)) == (first, first, 0o750)


def test_an_id_a_host_account_holds_is_skipped(vfs: VFS, monkeypatch: pytest.MonkeyPatch) -> None:
    held = pwd.getpwnam("nobody").pw_uid  # every Debian host has it (65534)
    monkeypatch.setattr(records, "FIRST_UID", held)
    agent = add_agent(vfs, "alice")
    assert agent.uid == host_free_ids(held, 1)[0] and agent.uid > held
    assert records.host_account(agent.uid) is None and records.host_account(held) == "user nobody"


def test_host_users_subordinate_ranges_are_skipped(vfs: VFS, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "subuid").write_text("someone:100000:65536\n")
    (tmp_path / "subgid").write_text("someone:165536:10\n")
    monkeypatch.setattr(records, "SUBORDINATE_FILES", (str(tmp_path / "subuid"), str(tmp_path / "subgid")))
    assert add_agent(vfs, "alice").uid == host_free_ids(165546, 1)[0]


def test_agents_made_before_keep_their_ids_and_new_ones_start_at_100000(vfs: VFS) -> None:
    old = records.Agent("old", 1000, 1000, "/home/old", 0)
    vfs.state.write(lambda txn: (put_agent_record(txn, "old", old.to_json()),
                                 txn.put("meta", b"next_agent_uid", (1001).to_bytes(8, "big"))))
    assert add_agent(vfs, "new").uid == host_free_ids(records.FIRST_UID, 1)[0]
    assert records.find_agent(vfs.state, "old").uid == 1000


def a_host_name() -> str:
    """A host user's or group's name that is no reserved one (tty, disk, staff... on Debian)."""
    names = [p.pw_name for p in pwd.getpwall()] + [g.gr_name for g in grp.getgrall()]
    found = [n for n in names if n not in records.RESERVED_NAMES and re.fullmatch(r"[a-z_][a-z0-9_-]{0,31}", n)]
    if not found:
        pytest.fail("this host has no account but the reserved ones: add a group (groupadd) to test with")
    return found[0]


@pytest.mark.parametrize("name", ["root", "bin", "daemon", "sys", "nobody", "komputer"])
def test_reserved_names_are_refused(vfs: VFS, name: str) -> None:
    add_agent(vfs, "alice")
    with pytest.raises(FileExistsError, match=f"agent name '{name}' is reserved"):
        add_agent(vfs, name)
    assert [line.split(b":")[0] for line in PathFS(vfs).read_file("/etc/passwd").splitlines()] == [b"root", b"alice"]


def test_a_host_accounts_name_is_refused(vfs: VFS) -> None:
    name = a_host_name()
    with pytest.raises(FileExistsError, match=f"agent name '{name}' is a host (user|group)'s"):
        add_agent(vfs, name)


def test_a_name_in_ks_account_files_is_refused(vfs: VFS) -> None:
    add_agent(vfs, "alice")
    PathFS(vfs).append_file("/etc/group", b"ops:x:4242:\n")
    with pytest.raises(FileExistsError, match="agent name 'ops' is in K's /etc/passwd or /etc/group already"):
        add_agent(vfs, "ops")


def test_agent_names_are_checked_and_unique(vfs: VFS) -> None:
    add_agent(vfs, "alice")
    with pytest.raises(FileExistsError):
        add_agent(vfs, "alice")
    with pytest.raises(ValueError):
        add_agent(vfs, "Bad/Name")
    assert ensure_agent(vfs, "alice")[1] is False


def test_key_lines_with_options_are_kept_verbatim(vfs: VFS) -> None:
    add_agent(vfs, "alice")
    line = f'from="10.0.0.0/8",no-pty,command="echo hi" {KEY}'
    added = add_key(vfs.state, "alice", line)
    assert added.line == line and added.comment == "me@test" and added.fingerprint.startswith("SHA256:")
    assert [k.fingerprint for k in list_keys(vfs.state, "alice")] == [added.fingerprint]
    with pytest.raises(FileExistsError):
        add_key(vfs.state, "alice", line)
    assert remove_key(vfs.state, "alice", added.fingerprint)[0].seq == added.seq
    assert list_keys(vfs.state, "alice") == []


@pytest.mark.parametrize("line, reason", [
    (f"restrict {KEY}", "not supported"),
    (f"principals=\"x\" {KEY}", "cert-authority"),
    ("ssh-ed25519 AAAAnotbase64", "not a valid"),
    ("", "no key"),
    (f'environment="PATH=/x" {KEY}', "sets only K_MODE"),
    (f'environment="K_MODE=sometimes" {KEY}', "sets only K_MODE"),
], ids=["restrict", "principals-without-ca", "bad-base64", "empty", "environment-other", "environment-bad-mode"])
def test_bad_key_lines_are_refused_with_the_reason(line: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_key_line(line)


def test_a_key_may_name_its_restricted_mode() -> None:
    assert parse_key_line(f'environment="K_MODE=readonly" {KEY}')[0] == 'environment="K_MODE=readonly"'


def test_keys_need_an_existing_agent(state: KState) -> None:
    with pytest.raises(LookupError):
        add_key(state, "nobody", KEY)


def test_host_key_is_made_once(state: KState) -> None:
    first = host_key(state)
    assert first.algorithm == b"ssh-ed25519"
    assert host_key(state).get_fingerprint() == first.get_fingerprint()


def test_session_lease_refuses_a_second_live_holder(vfs: VFS) -> None:
    add_agent(vfs, "alice")
    one, two = holder_id(1), holder_id(2)
    record = acquire_session(vfs.state, "alice", "work", "/home/alice", one, 30)
    with pytest.raises(LeaseHeld):
        acquire_session(vfs.state, "alice", "work", "/home/alice", two, 30)
    release_session(vfs.state, record, one)
    assert acquire_session(vfs.state, "alice", "work", "/home/alice", two, 30).name == "work"


def test_an_expired_lease_is_free(vfs: VFS) -> None:
    acquire_session(vfs.state, "alice", "w", "/home/alice", holder_id(1), 0.0)
    assert acquire_session(vfs.state, "alice", "w", "/home/alice", holder_id(2), 30).name == "w"


def komputer(*args: str, input_: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kshell.cli", *args], capture_output=True, text=True,
                          input=input_, timeout=60, cwd=Path(__file__).parents[2])


def test_cli_agent_and_keys(tmp_path: Path) -> None:
    state = str(tmp_path / "st")
    (tmp_path / "k.pub").write_text(KEY + "\n")
    made = komputer("agent", "add", "--state", state, "alice")
    uid = host_free_ids(records.FIRST_UID, 1)[0]
    assert made.returncode == 0 and f"uid {uid}" in made.stdout
    again = komputer("agent", "add", "--state", state, "alice")
    assert (again.returncode, again.stderr) == (9, "komputer agent add: agent alice already exists\n")
    added = komputer("keys", "add", "--state", state, "alice", str(tmp_path / "k.pub"))
    assert added.returncode == 0 and "SHA256:" in added.stdout
    listed = komputer("keys", "list", "--state", state, "alice")
    assert listed.stdout.startswith("1\tssh-ed25519\tSHA256:")
    assert komputer("keys", "remove", "--state", state, "alice", "1").returncode == 0
    assert komputer("keys", "list", "--state", state, "alice").stdout == ""
    assert komputer("keys", "add", "--state", state, "nobody", str(tmp_path / "k.pub")).returncode == 1


def test_cli_agent_add_refuses_reserved_and_host_names_as_useradd_does(tmp_path: Path) -> None:
    state = str(tmp_path / "st")
    assert komputer("agent", "add", "--state", state, "alice").returncode == 0
    root = komputer("agent", "add", "--state", state, "root")
    assert (root.returncode, root.stderr) == (9, "komputer agent add: agent name 'root' is reserved "
                                                 "(a system account's)\n")
    name = a_host_name()
    host = komputer("agent", "add", "--state", state, name)
    assert host.returncode == 9 and host.stderr.startswith(f"komputer agent add: agent name '{name}' is a host ")
    with KState(tmp_path / "st") as ks:
        passwd = PathFS(VFS(ks)).read_file("/etc/passwd").decode()
    assert [line.split(":")[0] for line in passwd.splitlines()] == ["root", "alice"]


def test_agent_list_warns_about_an_agent_whose_id_is_a_host_accounts(tmp_path: Path) -> None:
    with KState(tmp_path / "st", create=True) as ks:
        held = records.Agent("old", 65534, 65534, "/home/old", 0)  # nobody's, as a state from before could have
        ks.write(lambda txn: put_agent_record(txn, "old", held.to_json()))
    listed = komputer("agent", "list", "--state", str(tmp_path / "st"))
    assert listed.stdout == "old\t65534\t65534\t/home/old\n"
    assert listed.stderr.startswith("komputer agent list: warning: old's id 65534 is the host user nobody's, who may reach the agent's files through the mount"), listed.stderr
