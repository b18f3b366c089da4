"""SFTP on the VFS with real clients: OpenSSH sftp, paramiko, asyncssh."""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import asyncssh
import paramiko
import pytest
from kserver import Bench, need
from paramiko.sftp import CMD_CLOSE, CMD_DATA, CMD_EXTENDED, CMD_OPENDIR, CMD_READ, CMD_WRITE, int64

from kfs.vfs import Cred, PathFS
from kshell.server import ServerConfig
from kshell.server.config import Penalties
from kshell.worker.limits import WorkerLimits


def agent_fs(bench: Bench, name: str = "alice") -> PathFS:
    agent = bench.server.find_agent(name)
    assert agent is not None
    return PathFS(bench.server.vfs, cred=Cred(agent.uid, agent.gid), cwd=agent.home, home=agent.home)


def paramiko_client(bench: Bench) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", bench.port, "alice", key_filename=str(bench.keys["alice"]),
                   look_for_keys=False, allow_agent=False)
    return client


def sftp_batch(bench: Bench, commands: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    batch = tmp_path / "batch"
    batch.write_text(commands)
    argv = [need("sftp"), *bench.ssh_options(port_flag="-P"), "-b", str(batch), "alice@127.0.0.1"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def test_sftp_batch_covers_the_everyday_commands(bench: Bench, tmp_path: Path) -> None:
    src = tmp_path / "up.bin"
    src.write_bytes(os.urandom(300_000))
    (tmp_path / "other.txt").write_text("replaced\n")
    result = sftp_batch(bench, f"""
        pwd
        mkdir sb
        put {src} sb/a.bin
        put {tmp_path / 'other.txt'} sb/b.txt
        rename sb/b.txt sb/a.bin
        put {src} sb/c.bin
        chmod 640 sb/c.bin
        ln -s c.bin sb/link
        ls -l sb
        get sb/c.bin {tmp_path / 'down.bin'}
        df
        mkdir sb/gone
        rmdir sb/gone
        rm sb/link
        """, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Remote working directory: /home/alice" in result.stdout
    assert (tmp_path / "down.bin").read_bytes() == src.read_bytes()
    fs = agent_fs(bench)
    assert fs.read_file("sb/a.bin") == b"replaced\n"  # rename over an existing file (posix-rename)
    assert stat.S_IMODE(fs.stat("sb/c.bin").mode) == 0o640
    assert not fs.exists("sb/link") and not fs.exists("sb/gone")
    assert "Size" in result.stdout and "%Capacity" in result.stdout  # df answered (statvfs)
    listing = [line for line in result.stdout.splitlines() if line.startswith(("-", "l"))]
    assert any(line.startswith("lrwxrwxrwx") and "alice" in line for line in listing)


def test_sftp_put_p_keeps_mode_and_times(bench: Bench, tmp_path: Path) -> None:
    src = tmp_path / "kept.txt"
    src.write_text("x")
    src.chmod(0o604)
    os.utime(src, ns=(1_500_000_000_000_000_000, 1_600_000_000_000_000_000))
    assert sftp_batch(bench, f"put -p {src} kept.txt\n", tmp_path).returncode == 0
    inode = agent_fs(bench).stat("kept.txt")
    assert stat.S_IMODE(inode.mode) == 0o604
    assert inode.mtime // 10**9 == 1_600_000_000
    assert inode.uid == bench.server.find_agent("alice").uid  # type: ignore[union-attr]


def test_sftp_errors_are_sftp_status_codes(bench: Bench, tmp_path: Path) -> None:
    result = sftp_batch(bench, "get no-such-file /dev/null\n", tmp_path)
    assert result.returncode != 0
    assert "No such file" in result.stderr or "not found" in result.stderr


def test_sftp_cannot_reach_another_agents_home(bench: Bench, tmp_path: Path) -> None:
    result = sftp_batch(bench, "ls /home/bob\n", tmp_path)
    assert result.returncode != 0
    assert "Permission denied" in result.stderr


def test_paramiko_sftp_round_trip(bench: Bench) -> None:
    client = paramiko_client(bench)
    try:
        sftp = client.open_sftp()
        data = os.urandom(200_000)
        with sftp.open("pm.bin", "wb") as f:
            f.write(data)
        assert sftp.normalize(".") == "/home/alice"
        assert sftp.stat("pm.bin").st_size == len(data)
        with sftp.open("pm.bin", "rb") as f:
            assert f.read() == data
        sftp.mkdir("pmdir")
        sftp.rename("pm.bin", "pmdir/pm.bin")
        assert sftp.listdir("pmdir") == ["pm.bin"]
        sftp.chmod("pmdir/pm.bin", 0o600)
        assert stat.S_IMODE(sftp.stat("pmdir/pm.bin").st_mode) == 0o600
        sftp.remove("pmdir/pm.bin")
        sftp.rmdir("pmdir")
    finally:
        client.close()


def test_asyncssh_sftp_get_put_and_seek(bench: Bench, tmp_path: Path) -> None:
    data = os.urandom(1 << 20)
    (tmp_path / "a.bin").write_bytes(data)

    async def main() -> None:
        async with asyncssh.connect("127.0.0.1", bench.port, username="alice", known_hosts=None,
                                    client_keys=[str(bench.keys["alice"])]) as conn, conn.start_sftp_client() as sftp:
            await sftp.put(str(tmp_path / "a.bin"), "as.bin")
            await sftp.get("as.bin", str(tmp_path / "b.bin"))  # uses the ranges request (seek)
            assert await sftp.realpath(".") == "/home/alice"
            async with sftp.open("as.bin", "r+b") as f:
                await f.seek(10)
                await f.write(b"XYZ")
            st = await sftp.statvfs(".")
            assert st.namemax == 255
            await sftp.symlink("as.bin", "as.link")
            assert await sftp.readlink("as.link") == "as.bin"
            await sftp.link("as.bin", "as.hard")

    asyncio.run(main())
    assert hashlib.sha256((tmp_path / "b.bin").read_bytes()).digest() == hashlib.sha256(data).digest()
    fs = agent_fs(bench)
    assert fs.read_file("as.bin")[10:13] == b"XYZ"
    assert fs.stat("as.hard").nlink == 2 and fs.stat("as.hard").ino == fs.stat("as.bin").ino


def test_sftp_bounds_reads_writes_and_handles(make_server: Callable[[ServerConfig], Bench]) -> None:
    """A 4 GiB READ of a sparse file gets a short read, an oversized WRITE is refused, the
    handle after the last allowed fails, and the limits reply tells clients all three."""
    limits = WorkerLimits(sftp_handles=8, sftp_read=64 << 10, sftp_write=32 << 10)
    bench = make_server(ServerConfig(hostname="k", limits=limits, penalties=Penalties(exempt=("127.0.0.1/32",))))
    agent_fs(bench).write_file("sparse", b"")
    agent_fs(bench).truncate("sparse", 1 << 40)
    client = paramiko_client(bench)
    try:
        sftp = client.open_sftp()
        f = sftp.open("sparse", "rb")
        kind, msg = sftp._request(CMD_READ, f.handle, int64(0), 0xFFFFFFFF)  # noqa: SLF001 - one raw READ
        assert kind == CMD_DATA and msg.get_binary() == bytes(64 << 10)
        w = sftp.open("written", "wb")
        with pytest.raises(OSError, match="longer than the limit of 32 KiB"):
            sftp._request(CMD_WRITE, w.handle, int64(0), bytes((32 << 10) + 1))  # noqa: SLF001
        sftp._request(CMD_WRITE, w.handle, int64(0), bytes(32 << 10))  # noqa: SLF001
        held = [sftp.open("sparse", "rb") for _ in range(5)]  # with f and w: 7 files
        kind, msg = sftp._request(CMD_OPENDIR, ".")  # noqa: SLF001 - the 8th handle, a directory
        directory = msg.get_binary()
        with pytest.raises(OSError, match="too many open handles"):
            sftp.open("sparse", "rb")
        with pytest.raises(OSError, match="too many open handles"):
            sftp.listdir(".")
        sftp._request(CMD_CLOSE, directory)  # noqa: SLF001
        assert "sparse" in sftp.listdir(".")  # a closed handle makes room again
        kind, msg = sftp._request(CMD_EXTENDED, "limits@openssh.com")  # noqa: SLF001
        assert [msg.get_int64() for _ in range(4)][1:] == [64 << 10, 32 << 10, 8]
        held[0].close()
        sftp.open("sparse", "rb").close()
    finally:
        client.close()
    assert agent_fs(bench).stat("written").size == 32 << 10


def test_sftp_receipts_name_the_front_end_the_agent_and_the_peer(bench: Bench, tmp_path: Path) -> None:
    from kfs.journal import receipts_since

    before = max((r["id"] for r in receipts_since(bench.state, 0, 1 << 30)), default=0)
    src = tmp_path / "prov.txt"
    src.write_text("provenance\n")
    assert sftp_batch(bench, f"put {src} prov.txt\n", tmp_path).returncode == 0
    mine = [r for r in receipts_since(bench.state, before, 1 << 30) if r.get("path") == "/home/alice/prov.txt"]
    assert mine and {r["by"] for r in mine} == {"sftp alice@127.0.0.1"}


def test_sftp_of_a_restricted_agent_cannot_move_or_write_protected_and_denied_paths(
        make_server: Callable[[ServerConfig], Bench]) -> None:
    """`rename proj/.git g2` (then write g2/hooks, rename back) and `rename proj proj_moved`
    (then write proj_moved/prod/a) are writes to what the moved trees hold: refused, as are
    git's own configuration files in the home."""
    from kfs.runtime.rules import add_rule
    from kshell.delegate.config import set_agent_overrides

    b = make_server(ServerConfig())
    fs = agent_fs(b)
    fs.mkdir("proj/.git/hooks", parents=True)
    fs.write_file("proj/.git/config", b"[core]\n")
    fs.mkdir("proj/prod")
    fs.write_file("proj/prod/a", b"prod\n")
    set_agent_overrides(b.state, "alice", mode="limited", scope=("~",))
    add_rule(b.state, "deny", "~/proj/prod", agent="alice", on="path")
    client = paramiko_client(b)
    try:
        sftp = client.open_sftp()
        for src, dst in (("proj/.git", "g2"), ("proj", "proj_moved")):
            with pytest.raises(OSError):
                sftp.rename(src, dst)
            with pytest.raises(OSError):
                sftp.posix_rename(src, dst)
        sftp.mkdir("g3")
        sftp.mkdir("g3/hooks")
        with sftp.open("g3/hooks/pre-commit", "w") as f:
            f.write(b"#!/bin/sh\n")
        sftp.mkdir("fresh")
        with pytest.raises(OSError):
            sftp.rename("g3", "fresh/.git")
        for path in (".gitconfig", ".config"):
            with pytest.raises(OSError):
                if path == ".config":
                    sftp.mkdir(".config")
                    sftp.mkdir(".config/git")
                else:
                    sftp.open(path, "w").close()
        sftp.rename("g3", "g4")  # nothing protected in it: moves
    finally:
        client.close()
    assert fs.read_file("proj/.git/config") == b"[core]\n" and fs.read_file("proj/prod/a") == b"prod\n"
    assert not fs.exists("fresh/.git") and not fs.exists(".gitconfig") and not fs.exists(".config/git")
    assert fs.exists("g4/hooks/pre-commit")
