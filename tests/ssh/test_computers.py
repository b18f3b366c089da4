"""Many computers on one host: `komputer serve --computers ROOT` routes `ssh AGENT+KEY@host` to
the computer KEY, each its own state; stock ssh, sftp, scp and sshfs reach it; nothing of one
computer is visible from another; an idle computer is closed; `komputer computers` manages them."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kserver import HANG, keygen, komputer, need, start_host


@dataclass
class Host:
    root: Path
    port: int
    proc: subprocess.Popen[str]
    keys: dict[str, Path]

    def options(self, agent: str = "alice", port_flag: str = "-p") -> list[str]:
        return [port_flag, str(self.port), "-i", str(self.keys[agent]), "-F", "/dev/null",
                "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
                "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes"]

    def ssh(self, user: str, command: str, agent: str = "alice") -> subprocess.CompletedProcess[str]:
        return subprocess.run([need("ssh"), *self.options(agent), f"{user}@127.0.0.1", command],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=HANG)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    tmp = tmp_path_factory.mktemp("computers")
    root = tmp / "root"
    config = tmp / "komputer.toml"
    config.write_text(f'[ssh]\nhostname = "k"\n\n[computers]\nroot = "{root}"\nmax_warm = 4\nidle_for = 0.5\n')
    keys = {"alice": keygen(tmp / "alice_key", "alice@test"), "bob": keygen(tmp / "bob_key", "bob@test")}
    komputer("computers", "create", "--config", str(config), "one", "two")
    for key in ("one", "two"):
        komputer("--state", str(root / key), "agent", "add", "alice")
        komputer("--state", str(root / key), "keys", "add", "alice", str(keys["alice"]) + ".pub")
    komputer("--state", str(root / "two"), "agent", "add", "bob")  # bob has an account on two only
    komputer("--state", str(root / "two"), "keys", "add", "bob", str(keys["bob"]) + ".pub")
    proc, port = start_host(config)
    yield Host(root, port, proc, keys)
    proc.terminate()
    proc.wait(HANG)


def test_two_computers_are_two_states(host: Host) -> None:
    one = host.ssh("alice+one", "echo one > mine.txt; hostname; pwd")
    assert one.returncode == 0, one.stderr
    assert one.stdout == "k\n/home/alice\n"
    two = host.ssh("alice+two", "cat mine.txt; ls -A; echo two > mine.txt")
    assert two.returncode == 0
    assert "mine.txt: No such file or directory" in two.stderr
    assert host.ssh("alice+one", "cat mine.txt").stdout == "one\n"
    assert host.ssh("alice+two", "cat mine.txt").stdout == "two\n"


def test_an_agent_reaches_only_computers_that_have_it(host: Host) -> None:
    assert host.ssh("bob+two", "whoami", agent="bob").stdout == "bob\n"
    denied = host.ssh("bob+one", "whoami", agent="bob")
    assert denied.returncode == 255 and "Permission denied" in denied.stderr


@pytest.mark.parametrize("user", ["alice+nosuch", "alice", "alice+", "alice+Bad/Key", "+one"])
def test_a_login_naming_no_computer_is_refused_like_an_unknown_user(host: Host, user: str) -> None:
    refused = host.ssh(user, "true")
    assert refused.returncode == 255 and "Permission denied" in refused.stderr
    assert not (host.root / "nosuch").exists()


def test_sftp_and_scp_reach_the_computer_the_key_names(host: Host, tmp_path: Path) -> None:
    src = tmp_path / "up.bin"
    src.write_bytes(os.urandom(100_000))
    batch = tmp_path / "batch"
    batch.write_text(f"put {src} up.bin\n")
    put = subprocess.run([need("sftp"), *host.options(port_flag="-P"), "-b", str(batch), "alice+one@127.0.0.1"],
                         capture_output=True, text=True, timeout=HANG)
    assert put.returncode == 0, put.stderr
    back = tmp_path / "back.bin"
    scp = subprocess.run([need("scp"), *host.options(port_flag="-P"), "alice+one@127.0.0.1:up.bin", str(back)],
                         capture_output=True, text=True, timeout=HANG)
    assert scp.returncode == 0, scp.stderr
    assert back.read_bytes() == src.read_bytes()
    missing = subprocess.run([need("scp"), *host.options(port_flag="-P"), "alice+two@127.0.0.1:up.bin",
                              str(tmp_path / "no.bin")], capture_output=True, text=True, timeout=HANG)
    assert missing.returncode != 0 and "No such file" in missing.stderr


def test_sshfs_mounts_one_computer(host: Host, tmp_path: Path) -> None:
    need("sshfs")
    need("fusermount3")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    opts = ",".join([f"IdentityFile={host.keys['alice']}", "StrictHostKeyChecking=no",
                     "UserKnownHostsFile=/dev/null", "LogLevel=ERROR", "BatchMode=yes", "IdentitiesOnly=yes"])
    subprocess.run(["sshfs", "-p", str(host.port), "-o", opts, "alice+two@127.0.0.1:", str(mnt)],
                   check=True, timeout=HANG)
    try:
        (mnt / "via-sshfs.txt").write_text("through sshfs\n")
        assert host.ssh("alice+two", "cat via-sshfs.txt").stdout == "through sshfs\n"
        assert host.ssh("alice+one", "test -e via-sshfs.txt; echo $?").stdout == "1\n"
    finally:
        subprocess.run(["fusermount3", "-u", str(mnt)], check=False, timeout=HANG)


def test_an_idle_computer_is_closed_and_opens_again(host: Host) -> None:
    """idle_for = 0.5 s: once no connection uses it, the host lets go of it (its open-lock,
    which `komputer computers stats` reads); the next login opens it again."""
    assert host.ssh("alice+one", "echo kept > idle.txt").returncode == 0
    deadline = time.monotonic() + HANG
    while "\topen\t" in komputer("computers", "stats", "--root", str(host.root), "one").stdout:
        assert time.monotonic() < deadline, "the idle computer was never closed"
        time.sleep(0.1)
    assert host.ssh("alice+one", "cat idle.txt").stdout == "kept\n"


def test_rm_is_refused_while_the_computer_is_open(host: Host) -> None:
    komputer("computers", "create", "--root", str(host.root), "gone")
    komputer("--state", str(host.root / "gone"), "agent", "add", "alice")
    komputer("--state", str(host.root / "gone"), "keys", "add", "alice", str(host.keys["alice"]) + ".pub")
    busy = subprocess.Popen([need("ssh"), *host.options(), "alice+gone@127.0.0.1", "read x; echo $x"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert busy.stdin is not None and busy.stdout is not None
        deadline = time.monotonic() + HANG
        while "\topen\t" not in komputer("computers", "stats", "--root", str(host.root), "gone").stdout:
            assert time.monotonic() < deadline, "the computer was never opened"
            time.sleep(0.1)
        refused = komputer("computers", "rm", "--root", str(host.root), "gone", check=False)
        assert refused.returncode == 1
        assert "gone: computer is open in another process" in refused.stderr
        busy.stdin.write("bye\n")
        busy.stdin.close()
        assert busy.stdout.read() == "bye\n"
    finally:
        busy.wait(HANG)
    deadline = time.monotonic() + HANG
    while komputer("computers", "rm", "--root", str(host.root), "gone", check=False).returncode != 0:
        assert time.monotonic() < deadline, "the idle computer was never let go"
        time.sleep(0.1)
    assert "gone" not in komputer("computers", "list", "--root", str(host.root)).stdout.split()
    assert host.ssh("alice+gone", "true").returncode == 255


def test_computers_cli_errors(tmp_path: Path) -> None:
    bad = komputer("computers", "create", "--root", str(tmp_path), "No/Good", check=False)
    assert bad.returncode == 2 and "invalid computer key 'No/Good'" in bad.stderr
    komputer("computers", "create", "--root", str(tmp_path), "a")
    again = komputer("computers", "create", "--root", str(tmp_path), "a", check=False)
    assert again.returncode == 1 and "a: computer exists" in again.stderr
    missing = komputer("computers", "rm", "--root", str(tmp_path), "b", check=False)
    assert missing.returncode == 1 and "b: no such computer" in missing.stderr
    assert komputer("computers", "list", "--root", str(tmp_path)).stdout == "a\n"
    alone = komputer("computers", "create", "--root", str(tmp_path), "--key", str(tmp_path / "k.pub"), "c", check=False)
    assert alone.returncode == 2 and "--key needs --agent NAME" in alone.stderr
    (tmp_path / "empty.pub").write_text("# no key\n")
    empty = komputer("computers", "create", "--root", str(tmp_path), "--agent", "alice", "--key",
                     str(tmp_path / "empty.pub"), "c", check=False)
    assert empty.returncode == 2 and "empty.pub: no key in it" in empty.stderr
    assert komputer("computers", "list", "--root", str(tmp_path)).stdout == "a\n"  # nothing made
    noroot = komputer("computers", "list", check=False)
    assert noroot.returncode == 2 and "no root" in noroot.stderr
