"""kfs.agents: agent records, authorized keys, host key, sessions and leases; the CLI verbs."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import asyncssh
import pytest

from kfs.agents import (
    LeaseHeld,
    acquire_session,
    add_agent,
    add_key,
    ensure_agent,
    host_key,
    list_keys,
    parse_key_line,
    release_session,
    remove_key,
)
from kfs.agents.sessions import holder_id
from kfs.kstate import KState
from kfs.vfs import VFS, PathFS

KEY = asyncssh.generate_private_key("ssh-ed25519", comment="me@test").export_public_key().decode().strip()


def test_agents_get_uids_from_1000_and_an_owned_home(vfs: VFS) -> None:
    alice, bob = add_agent(vfs, "alice"), add_agent(vfs, "bob")
    assert (alice.uid, alice.gid, bob.uid) == (1000, 1000, 1001)
    home = PathFS(vfs).stat("/home/alice")
    assert (home.uid, home.gid, stat.S_IMODE(home.mode)) == (1000, 1000, 0o750)


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
    assert made.returncode == 0 and "uid 1000" in made.stdout
    assert komputer("agent", "add", "--state", state, "alice").returncode == 1
    added = komputer("keys", "add", "--state", state, "alice", str(tmp_path / "k.pub"))
    assert added.returncode == 0 and "SHA256:" in added.stdout
    listed = komputer("keys", "list", "--state", state, "alice")
    assert listed.stdout.startswith("1\tssh-ed25519\tSHA256:")
    assert komputer("keys", "remove", "--state", state, "alice", "1").returncode == 0
    assert komputer("keys", "list", "--state", state, "alice").stdout == ""
    assert komputer("keys", "add", "--state", state, "nobody", str(tmp_path / "k.pub")).returncode == 1
