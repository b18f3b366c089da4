"""One session view (kshell.view): the same `deny` path rule and the same restricted mode refuse
the same writes through every front end, each saying so in its own interface's words: the K
shell over ssh, SFTP, scp, the agent's FUSE mount, `komputer sh --agent`, and the SDK's
`agent.exec` and `agent.fs`."""

from __future__ import annotations

import errno
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kserver import Bench, need

from kfs.agents.records import find_agent
from kfs.runtime.rules import add_rule
from kfs.vfs import VFS, PathFS
from kshell.server import ServerConfig
from kshell.server.config import Penalties

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuse"))
from kfs_mounts import Mount, komputer  # noqa: E402

DENIED = "/home/alice/vault/f"  # under a `deny` path rule of alice's
NOTES = "/home/alice/notes"  # anywhere a readonly session writes


@pytest.fixture
def served(make_server) -> Iterator[Bench]:  # noqa: ANN001
    b = make_server(ServerConfig(hostname="k", penalties=Penalties(exempt=("127.0.0.1/32",))))
    alice = find_agent(b.state, "alice")
    assert alice is not None
    root = PathFS(VFS(b.state, by="test"))
    root.mkdir("/home/alice/vault")
    root.chown("/home/alice/vault", alice.uid, alice.gid)  # alice's own: only the rule refuses
    add_rule(b.state, "deny", "~/vault", agent="alice", on="path", by="test")
    yield b
    assert not root.exists(DENIED) and not root.exists(NOTES)  # no front end wrote either


def _sftp(b: Bench, tmp_path: Path, target: str, *extra: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "up.txt").write_text("x\n")
    (tmp_path / "batch").write_text(f"put {tmp_path / 'up.txt'} {target}\n")
    argv = [need("sftp"), *b.ssh_options(port_flag="-P"), *extra, "-b", str(tmp_path / "batch"), "alice@127.0.0.1"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def test_the_k_shell_over_ssh_refuses_both(served: Bench) -> None:
    done = served.ssh(f"echo x > {DENIED}")
    assert done.returncode == 1 and b"Permission denied" in done.stderr, done.stderr
    done = served.ssh(f"echo x > {NOTES}", extra=["-o", "SetEnv=K_MODE=readonly"])
    assert done.returncode == 1 and b"Read-only file system" in done.stderr, done.stderr


def test_sftp_refuses_both(served: Bench, tmp_path: Path) -> None:
    done = _sftp(served, tmp_path, DENIED)
    assert done.returncode != 0 and "Permission denied" in done.stderr, done.stderr
    done = _sftp(served, tmp_path, NOTES, "-o", "SetEnv=K_MODE=readonly")
    assert done.returncode != 0 and "Permission denied" in done.stderr, done.stderr
    assert _sftp(served, tmp_path, "/home/alice/fine.txt").returncode == 0  # the rest as before
    PathFS(VFS(served.state)).unlink("/home/alice/fine.txt")


def test_the_agents_mount_refuses_both(served: Bench, tmp_path: Path) -> None:
    state_dir = served.root / "state"
    mounts = [Mount(state_dir, tmp_path / "full", options=(), extra=("--agent", "alice")).start(),
              Mount(state_dir, tmp_path / "ro", options=(), extra=("--agent", "alice", "--mode", "readonly")).start()]
    try:
        full, readonly = (m.path for m in mounts)
        with pytest.raises(OSError) as info:
            (full / DENIED.lstrip("/")).write_text("x")
        assert info.value.errno == errno.EACCES
        with pytest.raises(OSError) as info:
            (readonly / NOTES.lstrip("/")).write_text("x")
        assert info.value.errno == errno.EROFS
    finally:
        for m in mounts:
            m.stop()


def test_komputer_sh_as_the_agent_refuses_both(served: Bench) -> None:
    state = str(served.root / "state")
    done = komputer("sh", "--state", state, "--agent", "alice", "-c", f"echo x > {DENIED}", check=False)
    assert done.returncode == 1 and "Permission denied" in done.stderr, done.stderr
    done = komputer("sh", "--state", state, "--agent", "alice", "--mode", "readonly", "-c", f"echo x > {NOTES}",
                    check=False)
    assert done.returncode == 1 and "Read-only file system" in done.stderr, done.stderr
    done = komputer("sh", "--state", state, "--agent", "alice", "-c", "echo x > ~/fine; cat ~/fine; rm ~/fine",
                    check=False)
    assert (done.returncode, done.stdout) == (0, "x\n"), done.stderr


def test_scp_refuses_both(served: Bench, tmp_path: Path) -> None:
    (tmp_path / "up.txt").write_text("x\n")

    def scp(target: str, *extra: str) -> subprocess.CompletedProcess[str]:
        argv = [need("scp"), *served.ssh_options(port_flag="-P"), *extra, str(tmp_path / "up.txt"),
                f"alice@127.0.0.1:{target}"]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)

    for done in (scp(DENIED), scp(NOTES, "-o", "SetEnv=K_MODE=readonly")):
        assert done.returncode != 0 and "Permission denied" in done.stderr, done.stderr


def test_the_sdk_refuses_both(served: Bench) -> None:
    import asyncio

    from kshell.sdk import Komputer

    async def main() -> None:
        async with Komputer.boot(state=served.state) as computer:
            agent = await computer.login("alice")
            done = await agent.exec(f"echo x > {DENIED}")
            assert done.status == 1 and b"Permission denied" in done.stderr, done.stderr
            with pytest.raises(PermissionError):
                await agent.fs.write_file(DENIED, "x")
            readonly = await computer.login("alice", mode="readonly")
            done = await readonly.exec(f"echo x > {NOTES}")
            assert done.status == 1 and b"Read-only file system" in done.stderr, done.stderr
            with pytest.raises(OSError) as e:
                await readonly.fs.write_file(NOTES, "x")
            assert e.value.errno == errno.EROFS

    asyncio.run(asyncio.wait_for(main(), 120))


def test_sshfs_refuses_both(served: Bench, tmp_path: Path) -> None:
    need("sshfs")
    need("fusermount3")
    options = (f"IdentityFile={served.keys['alice']},StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,"
               "LogLevel=ERROR,BatchMode=yes,IdentitiesOnly=yes")
    readonly = "ssh_command=ssh -o SetEnv=K_MODE=readonly"  # sshfs hands ssh only the options it knows
    for extra, target, expected in ((None, "vault/f", errno.EACCES), (readonly, "notes", errno.EACCES)):
        mnt = tmp_path / f"mnt-{target.replace('/', '-')}"
        mnt.mkdir()
        argv = ["sshfs", "-p", str(served.port), "-o", options + (f",{extra}" if extra else ""),
                "alice@127.0.0.1:", str(mnt)]
        subprocess.run(argv, check=True, timeout=30)
        try:
            with pytest.raises(OSError) as e:
                (mnt / target).write_text("x")
            assert e.value.errno == expected  # SFTP's "permission denied", as the kernel hands it on
        finally:
            subprocess.run(["fusermount3", "-u", str(mnt)], check=False, timeout=30)
