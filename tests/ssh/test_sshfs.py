"""sshfs mounts an agent's home over K's SFTP: host tools write, the K shell and the VFS read."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from kserver import Bench, need
from test_sftp import agent_fs


def test_sshfs_mount_of_the_agent_home(bench: Bench, tmp_path: Path) -> None:
    need("sshfs")
    need("fusermount3")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    opts = (f"IdentityFile={bench.keys['alice']},StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,"
            "LogLevel=ERROR,BatchMode=yes,IdentitiesOnly=yes")
    subprocess.run(["sshfs", "-p", str(bench.port), "-o", opts, "alice@127.0.0.1:", str(mnt)],
                   check=True, timeout=30)
    try:
        (mnt / "from-host").mkdir()
        subprocess.run(["sh", "-c", f"printf 'written by the host\\n' > {mnt}/from-host/note.txt"], check=True)
        subprocess.run(["cp", "/etc/hostname", str(mnt / "from-host" / "copied")], check=True)
        (mnt / "from-host" / "note.txt").chmod(0o600)
        assert (mnt / "from-host" / "note.txt").read_text() == "written by the host\n"
        fs = agent_fs(bench)
        assert fs.read_file("from-host/note.txt") == b"written by the host\n"
        assert fs.stat("from-host/note.txt").mode & 0o777 == 0o600
        assert fs.read_file("from-host/copied") == Path("/etc/hostname").read_bytes()
        shell = bench.ssh('read line < from-host/note.txt; echo "k shell sees: $line"')
        assert shell.stdout == b"k shell sees: written by the host\n"
        fs.write_file("from-k.txt", b"written in K\n")
        time.sleep(0.1)
        assert (mnt / "from-k.txt").read_text() == "written in K\n"
    finally:
        subprocess.run(["fusermount3", "-u", str(mnt)], check=False, timeout=30)
