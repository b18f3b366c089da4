"""`komputer up`: state, agent, key, FUSE view, SSH and the repository's example image from one
command; SIGTERM stops it all."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kserver import need


def test_up_serves_ssh_and_the_mount_then_stops_cleanly(tmp_path: Path) -> None:
    need("ssh")
    reachable = Path(tempfile.mkdtemp(prefix="k-up-", dir="/tmp"))  # agents' programs reach the mount
    reachable.chmod(0o755)
    mnt = reachable / "mnt"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kshell.cli", "up", "--state", str(tmp_path / "state"), "--listen", "127.0.0.1:0",
         "--mountpoint", str(mnt), "--image", "image"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=Path(__file__).parents[2],
    )
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "running; Ctrl-C" in line:
                break
        out = "".join(lines)
        assert "running; Ctrl-C" in out, out
        assert re.search(r"host key SHA256:\S+", out)
        ssh_line = next(line.strip() for line in lines if line.strip().startswith("ssh "))
        argv = shlex.split(ssh_line) + ["-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
                                        "echo via-up > hello.txt; echo ok; python3 -c 'print(6 * 7)' > py.txt;"
                                        " curl -s http://api/hello; curl -s http://echo/x | jq -r .path;"
                                        " echo fast > /mnt/scratch/f && cat /mnt/scratch/f"]
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert result.stdout == "ok\nhello from the image\n/x\nfast\n", result.stderr
        assert "applied image 'example' as version 1" in out
        if "FUSE view of the state mounted" in out:
            assert (mnt / "home" / "agent" / "hello.txt").read_text() == "via-up\n"
            assert (mnt / "home" / "agent" / "py.txt").read_text() == "42\n"  # delegation, no settings
        else:
            assert "FUSE mount not available" in out
    finally:
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, rest
    assert "stopped" in rest
    assert not os.path.ismount(mnt)
    shutil.rmtree(reachable, ignore_errors=True)
