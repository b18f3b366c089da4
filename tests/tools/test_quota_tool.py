"""quota and df in an agent's session: quota-tools' layout with the agent's use and limit in KiB,
df's size and use the agent's quota; a write past it fails with "Disk quota exceeded"."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kfs.agents import add_agent
from kfs.kstate import KState, quota
from kfs.vfs import VFS, Cred, PathFS
from kshell import Shell

MIB = 1 << 20
HEADER = "     Filesystem  blocks   quota   limit   grace   files   quota   limit   grace\n"


@pytest.fixture
def state() -> Iterator[KState]:
    with tempfile.TemporaryDirectory(prefix="ktools-quota-") as tmp, KState(Path(tmp) / "s", create=True) as made:
        yield made


@pytest.fixture
def shells(state: KState) -> tuple[Shell, Shell]:
    """alice's shell (a quota of 2 MiB) and root's, on one fresh state."""
    vfs = VFS(state, by="test")
    alice = add_agent(vfs, "alice")
    state.write(lambda txn: quota.set_limit(txn, alice.uid, 2 * MIB))
    fs = PathFS(vfs, cred=Cred(alice.uid, alice.gid), cwd=alice.home, home=alice.home)
    env = {"LC_ALL": "C"}
    return Shell(fs, name="bash", env=env), Shell(PathFS(vfs), name="bash", env=env)


def test_quota_shows_the_agents_use_and_limit(shells: tuple[Shell, Shell]) -> None:
    alice, _ = shells
    r = alice.run("head -c 1000000 /dev/zero > f; quota")
    assert r.stdout.decode() == ("Disk quotas for user alice (uid 100000): \n" + HEADER
                                 + "            kfs     977       0    2048               2       0 1000000        \n")


def test_quota_s_is_human_readable(shells: tuple[Shell, Shell]) -> None:
    alice, _ = shells
    # quota-tools' units: the largest that leaves at least 100 of it (2 MiB is 2048K, 4 GiB 4096M)
    assert alice.run("quota -s").stdout.decode().splitlines()[2].split()[:4] == ["kfs", "0K", "0K", "2048K"]


def test_quota_tools_units() -> None:
    from kshell.tools.system.quota import human_blocks

    assert [human_blocks(k) for k in (0, 1, 102399, 102400, 4 << 20, 100 << 20, 200 << 30)] == [
        "0K", "1K", "102399K", "100M", "4096M", "100G", "200T"]


def test_quota_marks_a_full_file_limit_and_q_says_so(state: KState, shells: tuple[Shell, Shell]) -> None:
    alice, _ = shells
    state.write(lambda txn: quota.set_limit(txn, 100_000, 3, quota.FILES))  # her home, a and b
    r = alice.run("touch a; touch b; touch c; echo $?; quota -q; quota | tail -1")
    assert r.stderr.decode() == "touch: cannot touch 'c': Disk quota exceeded\n"
    lines = r.stdout.decode().splitlines()
    assert lines[:2] == ["1", "\tFile limit reached on kfs"]
    assert lines[2].split()[4:7] == ["3*", "0", "3"]


def test_quota_marks_a_full_quota_and_q_says_so(shells: tuple[Shell, Shell]) -> None:
    alice, _ = shells
    r = alice.run("head -c 3000000 /dev/zero > f; echo $?; quota -q; quota | tail -1")
    assert r.stderr.decode() == "head: write error: Disk quota exceeded\n"
    lines = r.stdout.decode().splitlines()
    assert lines[0] == "1" and lines[1] == "\tBlock limit reached on kfs"
    assert lines[2].split()[1] == "2048*"


def test_a_user_without_a_limit_has_none(shells: tuple[Shell, Shell]) -> None:
    _, root = shells
    assert root.run("quota").stdout == b"Disk quotas for user root (uid 0): none\n"


def test_only_root_sees_another_users_quota(shells: tuple[Shell, Shell]) -> None:
    alice, root = shells
    r = alice.run("quota root")
    assert (r.status, r.stderr) == (1, b"quota: root (uid 0): Permission denied\n")
    assert root.run("quota alice").stdout.decode().splitlines()[2].split()[3] == "2048"


def test_df_in_an_agents_session_is_its_quota(shells: tuple[Shell, Shell]) -> None:
    alice, root = shells
    row = alice.run("head -c 1048576 /dev/zero > f; df").stdout.split(b"\n")[1].split()
    assert row[0] == b"kfs" and int(row[1]) == 2048 and int(row[2]) + int(row[3]) == 2048
    assert int(row[3]) == 1024
    assert int(root.run("df").stdout.split(b"\n")[1].split()[1]) > 2048  # root: the whole state
