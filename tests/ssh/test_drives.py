"""The image's drives over real ssh: K tools and the real `sftp` client on a memory drive and a
host drive, the memory drive shared by every session and SFTP of a server run and empty again
after a restart, files an agent makes on a host drive its own, a read-only host drive."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest
from kserver import Bench, ServerThread, need

from kfs.runtime import image
from kshell.server import ServerConfig

MANIFEST = """[drives.scratch]
path = "/mnt/scratch"
kind = "memory"
max_bytes = "1M"
agent_max_bytes = "1M"  # the drive's own bound first (each agent's share: test_disk_quota)

[drives.data]
path = "/mnt/data"
kind = "host"
source = "{data}"

[drives.ref]
path = "/srv/ref"
kind = "host"
source = "{ref}"
readonly = true
"""


@pytest.fixture
def served(make_server, tmp_path: Path) -> tuple[Bench, Path]:  # noqa: ANN001
    """A server whose image mounts a 1M memory drive at /mnt/scratch, the temp directory `data`
    at /mnt/data and `ref` read-only at /srv/ref."""
    data, ref = tmp_path / "data", tmp_path / "ref"
    for d in (data, ref):
        d.mkdir()
        d.chmod(0o777)
    (data / "given.txt").write_text("from the host\n")
    (ref / "manual.txt").write_text("read me\n")
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "komputer.toml").write_text(MANIFEST.format(data=data, ref=ref))
    b = make_server(ServerConfig())
    image.apply(b.state, image.load(tmp_path / "img"), by="test")
    return b, data


def alice_uid(b: Bench) -> int:
    agent = b.server.find_agent("alice")
    assert agent is not None
    return agent.uid


def ssh(b: Bench, command: str) -> str:
    done = b.ssh(command)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


def test_k_tools_on_both_drives(served: tuple[Bench, Path]) -> None:
    b, data = served
    assert ssh(b, "ls /mnt; ls -ld /mnt/scratch | cut -c1-10") == "data\nscratch\ndrwxrwxrwt\n"
    assert ssh(b, "cd /mnt/scratch && echo one > a && mkdir -p d/e && cp a d/e/b && mv d/e/b /mnt/data/b "
                  "&& cat /mnt/data/b && ls -R && pwd") == "one\n.:\na\nd\n\n./d:\ne\n\n./d/e:\n/mnt/scratch\n"
    assert ssh(b, "find /mnt -type f | sort; du -s /mnt/scratch/d; stat -c '%n %s %U' /mnt/data/b") == (
        "/mnt/data/b\n/mnt/data/given.txt\n/mnt/scratch/a\n8\t/mnt/scratch/d\n/mnt/data/b 4 alice\n")
    assert (data / "b").read_text() == "one\n"
    assert (data / "b").stat().st_uid == alice_uid(b)  # the agent's file, as in K
    assert ssh(b, "mv ~/.profile /mnt/scratch/ 2>/dev/null; mkdir ~/t && echo x > ~/t/x && mv ~/t /mnt/data/ "
                  "&& ls ~/t 2>&1; cat /mnt/data/t/x; rm -r /mnt/scratch/d; ls /mnt/scratch") == (
        "ls: cannot access '/home/alice/t': No such file or directory\nx\na\n")
    assert ssh(b, "ln -s /mnt/data ~/data && cat ~/data/given.txt && cd ~/data && ls && pwd -P") == (
        "from the host\nb\ngiven.txt\nt\n/mnt/data\n")
    df = ssh(b, "df -T").splitlines()
    assert [(line.split()[0], line.split()[-1]) for line in df] == [
        ("Filesystem", "on"), ("kfs", "/"), ("host", "/mnt/data"), ("memory", "/mnt/scratch"), ("host", "/srv/ref")]
    assert df[3].split()[2] == "1024"  # the memory drive's own size: its max_bytes
    done = b.ssh("head -c 2000000 /dev/zero > /mnt/scratch/big")
    assert done.returncode == 1 and b"No space left on device" in done.stderr
    assert ssh(b, "cat /mnt/scratch/a") == "one\n"  # another session, the same drive


def test_a_readonly_host_drive(served: tuple[Bench, Path]) -> None:
    b, _ = served
    done = b.ssh("cat /srv/ref/manual.txt; echo x > /srv/ref/x; rm /srv/ref/manual.txt; touch /srv/ref/y")
    assert done.stdout == b"read me\n"
    assert done.stderr.decode().splitlines() == [
        "k: line 1: /srv/ref/x: Read-only file system",
        "rm: cannot remove '/srv/ref/manual.txt': Read-only file system",
        "touch: cannot touch '/srv/ref/y': Read-only file system"]


def test_a_host_drive_never_sets_setuid_or_setgid_on_the_host(served: tuple[Bench, Path]) -> None:
    b, data = served
    assert ssh(b, "cd /mnt/data && echo x > own.txt && chmod 4755 own.txt && chmod g+s own.txt && mkdir d && "
                  "chmod 2775 d && stat -c '%a %A' own.txt d") == "755 -rwxr-xr-x\n775 drwxrwxr-x\n"
    assert [oct((data / n).stat().st_mode & 0o7777) for n in ("own.txt", "d")] == ["0o755", "0o775"]


def sftp(b: Bench, commands: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "batch").write_text(commands)
    argv = [need("sftp"), *b.ssh_options(port_flag="-P"), "-b", str(tmp_path / "batch"), "alice@127.0.0.1"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def test_sftp_on_both_drives(served: tuple[Bench, Path], tmp_path: Path) -> None:
    b, data = served
    blob = os.urandom(300_000)
    (tmp_path / "up.bin").write_bytes(blob)
    done = sftp(b, f"""
        cd /mnt/scratch
        put {tmp_path / 'up.bin'} up.bin
        mkdir sub
        put {tmp_path / 'up.bin'} /mnt/data/up.bin
        chmod 600 /mnt/data/up.bin
        put {tmp_path / 'up.bin'} /mnt/data/suid.bin
        chmod 4755 /mnt/data/suid.bin
        get /mnt/data/given.txt {tmp_path / 'given.txt'}
        get up.bin {tmp_path / 'back.bin'}
        ls -l /mnt
        -rename up.bin /mnt/data/moved.bin
        rename up.bin sub/up.bin
        df /mnt/scratch
        """, tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "back.bin").read_bytes() == blob and (tmp_path / "given.txt").read_text() == "from the host\n"
    assert (data / "up.bin").read_bytes() == blob and (data / "up.bin").stat().st_uid == alice_uid(b)
    assert oct((data / "up.bin").stat().st_mode & 0o777) == "0o600"
    assert oct((data / "suid.bin").stat().st_mode & 0o7777) == "0o755"  # never setuid on the host
    assert "Failure" in done.stderr and not (data / "moved.bin").exists()  # across drives: EXDEV
    assert "1024" in done.stdout.split("Size")[-1]  # statvfs of the memory drive: its own 1M
    digest = hashlib.sha256(blob).hexdigest()
    assert ssh(b, "sha256sum /mnt/scratch/sub/up.bin | cut -d' ' -f1") == digest + "\n"  # SFTP's file, the shell's drive


def test_the_memory_drive_is_empty_after_a_restart(served: tuple[Bench, Path]) -> None:
    b, data = served
    ssh(b, "echo lost > /mnt/scratch/f; echo kept > /mnt/data/f")
    drives_dir = Path(os.environ["KOMPUTER_DRIVES_DIR"]) / f"komputer-drives-{b.state.fs_uuid}"
    assert (drives_dir / "scratch").is_dir()
    b.thread.stop()
    assert not drives_dir.exists()  # the server's stop removed it
    b.thread = ServerThread(b.root / "state", b.thread.config).start(b.state)
    assert ssh(b, "ls -A /mnt/scratch; cat /mnt/data/f") == "kept\n"
    assert (data / "f").read_text() == "kept\n"


PYTHON_MANIFEST = """[drives.crm]
path = "/mnt/crm"
kind = "python"
handler = "crmdrive:CRMDrive"

[drives.ref]
path = "/mnt/ref"
kind = "python"
handler = "crmdrive:CRMDrive"
readonly = true
"""

CRM_DRIVE = '''
class CRMDrive:
    """Files in a dict, made at mount."""

    def mount(self, ctx):
        self.files = {"/a.txt": b"for " + ctx.agent.encode() + b"\\n"}

    def stat(self, path):
        if path == "/":
            return {"type": "dir", "size": 0, "mtime": 0.0}
        data = self.files.get(path)
        return None if data is None else {"type": "file", "size": len(data), "mtime": 0.0}

    def readdir(self, path):
        return sorted(p[1:] for p in self.files)

    def read(self, path):
        return self.files[path]

    def write(self, path, data):
        self.files[path] = data
'''


@pytest.fixture
def python_drives(make_server, tmp_path: Path) -> Bench:  # noqa: ANN001
    """A server whose image serves a dict-backed class at /mnt/crm, and read-only at /mnt/ref."""
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "komputer.toml").write_text(PYTHON_MANIFEST)
    (tmp_path / "img" / "crmdrive.py").write_text(CRM_DRIVE)
    b = make_server(ServerConfig())
    image.apply(b.state, image.load(tmp_path / "img"), by="test")
    return b


def test_a_python_drive(python_drives: Bench, tmp_path: Path) -> None:
    b = python_drives
    assert ssh(b, "ls /mnt/crm; cat /mnt/crm/a.txt; echo x > /mnt/crm/b.txt; cat /mnt/crm/b.txt") == (
        "a.txt\nfor alice\nx\n")
    done = b.ssh("cat /mnt/ref/a.txt; echo x > /mnt/ref/b.txt")
    assert done.stdout == b"for alice\n"
    assert done.stderr.decode() == "k: line 1: /mnt/ref/b.txt: Read-only file system\n"
    done = sftp(b, "ls /mnt/crm\n", tmp_path)  # SFTP runs no image code: not supported there
    assert done.returncode != 0
