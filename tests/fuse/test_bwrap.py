"""A mounted agent home bound into a container-like namespace with bubblewrap.

What a program writes inside the sandbox lands in KState, and what KState holds is what the
program reads: the bridge that lets K delegate real programs (python3, gcc, git) to a host.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from kfs_mounts import Mount, require_tool

from kfs.vfs import PathFS


def bwrap(home: Path, script: str) -> subprocess.CompletedProcess[str]:
    binary = require_tool("bwrap", "bubblewrap")
    cmd = [
        binary, "--die-with-parent", "--unshare-pid", "--unshare-net",
        "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
        "--bind", str(home), "/workspace", "--chdir", "/workspace",
        "sh", "-c", script,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)


def test_writes_inside_a_bwrap_sandbox_show_up_in_kstate(kfs_mount: Mount, peer: PathFS) -> None:
    peer.mkdir("/home/agent/project", parents=True)
    peer.write_file("/home/agent/project/input.txt", b"from KState\n")
    result = bwrap(
        kfs_mount.path / "home/agent",
        "cat project/input.txt > project/output.txt && echo built >> project/output.txt "
        "&& mkdir -p build/obj && printf x > build/obj/a.o && chmod 751 build/obj/a.o && ls project",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["input.txt", "output.txt"]
    assert peer.read_file("/home/agent/project/output.txt") == b"from KState\nbuilt\n"
    assert peer.read_file("/home/agent/build/obj/a.o") == b"x"
    assert peer.stat("/home/agent/build/obj/a.o").perm == 0o751
