"""A hostile agent filling the disk over real ssh and sftp stops at its own quota (EDQUOT,
"Disk quota exceeded"), and the other agent still writes and runs `echo ok`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import paramiko
import pytest
from kserver import Bench, need
from test_hostile import Prober

from kfs.kstate import quota
from kshell.server import ServerConfig
from kshell.server.config import Penalties

MIB = 1 << 20
QUOTA = 2 * MIB
CONFIG = ServerConfig(hostname="k", penalties=Penalties(exempt=("127.0.0.1/32",)))


@pytest.fixture
def server(make_server) -> Bench:  # type: ignore[no-untyped-def]
    """A server of its own whose agent alice may store 2 MiB."""
    bench = make_server(CONFIG)
    bench.state.write(lambda txn: quota.set_limit(txn, uid(bench, "alice"), QUOTA))
    return bench


def uid(bench: Bench, name: str) -> int:
    agent = bench.server.find_agent(name)
    assert agent is not None
    return agent.uid


def alice_use(bench: Bench) -> int:
    with bench.state.read() as txn:
        return quota.usage(txn, uid(bench, "alice"))


def bob_goes_on(bench: Bench) -> None:
    assert bench.ssh("echo ok", user="bob").stdout == b"ok\n"
    made = bench.ssh("head -c 1048576 /dev/zero > room; wc -c < room", user="bob")
    assert made.stdout == b"1048576\n", made.stderr


def test_the_shell_stops_at_the_quota_and_the_other_agent_goes_on(server: Bench) -> None:
    done = server.ssh("head -c 3000000 /dev/zero > /tmp/fill; echo status=$?; "
                      "head -c 3000000 /dev/zero > fill2; echo status=$?; df /tmp | tail -1; quota | tail -1")
    lines = done.stdout.decode().splitlines()
    assert lines[:2] == ["status=1", "status=1"], done.stdout
    assert done.stderr.decode().count("Disk quota exceeded") == 2
    used = alice_use(server)
    assert 0 < used <= QUOTA  # the bound holds, in /tmp and in the home alike
    df = lines[2].split()
    assert df[0] == "kfs" and df[1] == "2048" and int(df[2]) + int(df[3]) == 2048
    assert lines[3].split()[:4] == ["kfs", str(-(-used // 1024)) + ("*" if used >= QUOTA else ""), "0", "2048"]
    bob_goes_on(server)


def test_sftp_stops_at_the_quota(server: Bench, tmp_path: Path) -> None:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", server.port, "alice", key_filename=str(server.keys["alice"]),
                   look_for_keys=False, allow_agent=False)
    try:
        sftp = client.open_sftp()
        with pytest.raises(OSError) as e, sftp.open("big", "wb") as f:  # noqa: PT012
            for _ in range(48):  # 3 MiB at most
                f.write(b"x" * (64 * 1024))
                f.flush()
        assert "Disk quota exceeded" in str(e.value)
    finally:
        client.close()
    assert alice_use(server) <= QUOTA
    big = tmp_path / "big"  # OpenSSH's sftp too (a v3 client: the code is a plain failure)
    big.write_bytes(b"y" * (3 * MIB))
    (tmp_path / "batch").write_text(f"put {big} other\n")
    done = subprocess.run([need("sftp"), *server.ssh_options(port_flag="-P"), "-b", str(tmp_path / "batch"),
                           "alice@127.0.0.1"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and 'remote "/home/alice/other": Failure' in done.stderr
    assert alice_use(server) <= QUOTA
    (tmp_path / "batch").write_text("df\n")  # statvfs@openssh.com: the agent's quota, as df shows it
    done = subprocess.run([need("sftp"), *server.ssh_options(port_flag="-P"), "-b", str(tmp_path / "batch"),
                           "alice@127.0.0.1"], capture_output=True, text=True, timeout=60)
    size, used, avail = (int(n) for n in done.stdout.splitlines()[-1].split()[:3])
    assert (size, used + avail) == (QUOTA // 1024, QUOTA // 1024)
    bob_goes_on(server)


DRIVES = """[drives.scratch]
path = "/mnt/scratch"
kind = "memory"
max_bytes = "4M"

[drives.data]
path = "/mnt/data"
kind = "host"
source = "{data}"
"""


def test_drives_bound_each_agent_over_the_shell_and_sftp(server: Bench, tmp_path: Path) -> None:
    """A host drive is the host's disk, a memory drive the host's memory: alice fills neither
    past her bound (her quota, K's files and the host drive's together; her share of the memory
    drive, half of it by default), over the shell and SFTP; bob still writes on both."""
    from kfs.runtime import image

    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o777)
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "komputer.toml").write_text(DRIVES.format(data=data))
    image.apply(server.state, image.load(tmp_path / "img"), by="test")
    with Prober(server) as bob:  # bob's `echo ok` while she fills them: printed, only a hang fails
        done = server.ssh("head -c 3000000 /dev/zero > /mnt/data/fill; echo status=$?; "
                          "head -c 3000000 /dev/zero > /mnt/scratch/fill; echo status=$?; "
                          "wc -c < /mnt/scratch/fill; quota | tail -1")
    bob.check()
    lines = done.stdout.decode().splitlines()
    assert lines[:2] == ["status=1", "status=1"], (done.stdout, done.stderr)
    assert done.stderr.decode().count("Disk quota exceeded") == 2, done.stderr
    on_host = (data / "fill").stat().st_size
    assert 0 < on_host <= QUOTA  # the host's disk: at most her quota
    assert 0 < int(lines[2]) <= 2 * MIB  # the host's memory: at most her share of the drive
    with server.state.read() as txn:
        assert quota.usage(txn, uid(server, "alice"), quota.HOST) == on_host
        assert quota.total_use(txn, uid(server, "alice")) <= QUOTA
    assert lines[3].split()[1].rstrip("*") == str(-(-(alice_use(server) + on_host) // 1024))  # quota counts both
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", server.port, "alice", key_filename=str(server.keys["alice"]),
                   look_for_keys=False, allow_agent=False)
    try:
        sftp = client.open_sftp()
        sftp.remove("/mnt/data/fill")  # gives it back
        with server.state.read() as txn:
            assert quota.usage(txn, uid(server, "alice"), quota.HOST) == 0
        with pytest.raises(OSError) as e, sftp.open("/mnt/data/big", "wb") as f:  # noqa: PT012
            for _ in range(48):  # 3 MiB at most
                f.write(b"x" * (64 * 1024))
                f.flush()
        assert "Disk quota exceeded" in str(e.value)
    finally:
        client.close()
    assert 0 < (data / "big").stat().st_size <= QUOTA
    with server.state.read() as txn:
        assert quota.total_use(txn, uid(server, "alice")) <= QUOTA
    made = server.ssh("head -c 1048576 /dev/zero > /mnt/scratch/room && head -c 1048576 /dev/zero > /mnt/data/room "
                      "&& wc -c < /mnt/scratch/room && echo ok", user="bob")
    assert made.stdout == b"1048576\nok\n", made.stderr
