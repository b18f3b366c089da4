"""sshfs mounts an agent's home over K's SFTP: host tools write, the K shell and the VFS read."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

from kserver import Bench, need
from test_sftp import agent_fs


def test_sshfs_mount_of_the_agent_home(bench: Bench, tmp_path: Path) -> None:
    need("sshfs")
    need("fusermount3")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["sshfs", "-p", str(bench.port), "-o", _sshfs_options(bench), "alice@127.0.0.1:", str(mnt)],
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
        fs.write_file("from-k.txt", b"written in K\n")  # committed: sshfs never looked the name up before
        assert (mnt / "from-k.txt").read_text() == "written in K\n"
    finally:
        subprocess.run(["fusermount3", "-u", str(mnt)], check=False, timeout=30)



def _sshfs_options(bench: Bench) -> str:
    return (f"IdentityFile={bench.keys['alice']},StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,"
            "LogLevel=ERROR,BatchMode=yes,IdentitiesOnly=yes")


def _contains_symlinks() -> bool:
    """sshfs 3.7.3-1.2 (Debian 12's security update) and 3.7.6 refuse, by default, to hand the
    kernel an absolute symlink target or one with `..` (EPERM), whatever the server."""
    shown = subprocess.run(["sshfs", "-h"], capture_output=True, text=True)
    return "no_contain_symlinks" in shown.stdout + shown.stderr


def test_sshfs_reads_and_makes_symlinks(bench: Bench, tmp_path: Path) -> None:
    """sshfs asks READLINK of every link it meets; `ln -s` through the mount is SYMLINK."""
    need("sshfs")
    need("fusermount3")
    fs = agent_fs(bench)
    fs.write_file("target.txt", b"through the link\n")
    fs.symlink("target.txt", "rel-link")
    fs.symlink("/home/alice/target.txt", "abs-link")
    fs.symlink("../alice/missing", "dotdot-link")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    trusting = ",no_contain_symlinks" if _contains_symlinks() else ""
    subprocess.run(["sshfs", "-p", str(bench.port), "-o", _sshfs_options(bench) + trusting,
                    "alice@127.0.0.1:", str(mnt)], check=True, timeout=30)
    try:
        assert os.readlink(mnt / "rel-link") == "target.txt"
        assert os.readlink(mnt / "abs-link") == "/home/alice/target.txt"
        assert os.readlink(mnt / "dotdot-link") == "../alice/missing"
        assert (mnt / "rel-link").read_text() == "through the link\n"
        ls = subprocess.run(["ls", "-l", str(mnt)], capture_output=True, text=True, check=True)
        assert "rel-link -> target.txt" in ls.stdout
        os.symlink("target.txt", mnt / "made-on-host")
        assert fs.readlink("made-on-host") == "target.txt"
    finally:
        subprocess.run(["fusermount3", "-u", str(mnt)], check=False, timeout=30)


def test_sshfs_contains_absolute_symlinks_as_it_does_for_sftp_server(bench: Bench, tmp_path: Path) -> None:
    """By default a containing sshfs refuses absolute and `..` targets with EPERM: the same as
    against OpenSSH's own sftp-server (run here through sshfs's ssh_command), not a K error.
    An older sshfs passes them through from both."""
    need("sshfs")
    need("fusermount3")
    sftp_server = Path("/usr/lib/openssh/sftp-server")
    assert sftp_server.exists(), "install openssh-sftp-server"
    fs = agent_fs(bench)
    fs.symlink("/home/alice/target.txt", "contained-abs")
    fs.symlink("plain", "contained-rel")
    real = tmp_path / "real"
    real.mkdir()
    (real / "contained-abs").symlink_to("/home/alice/target.txt")
    (real / "contained-rel").symlink_to("plain")
    wrap = tmp_path / "sftp-server.sh"
    wrap.write_text(f"#!/bin/sh\nexec {sftp_server}\n")
    wrap.chmod(0o755)
    seen = {}
    for name, source, opts in (
        ("k", "alice@127.0.0.1:", ["-p", str(bench.port), "-o", _sshfs_options(bench)]),
        ("openssh", f"localhost:{real}", ["-o", f"ssh_command={wrap}"]),
    ):
        mnt = tmp_path / f"mnt-{name}"
        mnt.mkdir()
        subprocess.run(["sshfs", *opts, source, str(mnt)], check=True, timeout=30)
        try:
            outcome = []
            for link in ("contained-rel", "contained-abs"):
                try:
                    outcome.append(os.readlink(mnt / link))
                except OSError as e:
                    outcome.append(e.errno)
            seen[name] = outcome
        finally:
            subprocess.run(["fusermount3", "-u", str(mnt)], check=False, timeout=30)
    expected = errno.EPERM if _contains_symlinks() else "/home/alice/target.txt"
    assert seen["k"] == seen["openssh"] == ["plain", expected]
