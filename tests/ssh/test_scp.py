"""scp in SFTP mode (OpenSSH 9's default) and legacy mode (-O), both ways, -r and -p."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from kserver import Bench, need
from test_sftp import agent_fs


def scp(bench: Bench, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [need("scp"), *bench.ssh_options(port_flag="-P"), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def tree(root: Path) -> Path:
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "top.txt").write_text("top\n")
    (root / "sub" / "data.bin").write_bytes(os.urandom(70_000))
    (root / "sub" / "deeper" / "x.sh").write_text("echo x\n")
    (root / "sub" / "deeper" / "x.sh").chmod(0o751)
    os.utime(root / "top.txt", ns=(1_400_000_000_000_000_000, 1_500_000_000_000_000_000))
    return root


@pytest.mark.parametrize("mode", [[], ["-O"]], ids=["sftp-mode", "legacy-O"])
def test_scp_upload_and_download_a_file(bench: Bench, tmp_path: Path, mode: list[str]) -> None:
    data = os.urandom(500_000)
    (tmp_path / "f.bin").write_bytes(data)
    name = f"scp{len(mode)}.bin"
    up = scp(bench, *mode, str(tmp_path / "f.bin"), f"alice@127.0.0.1:{name}")
    assert up.returncode == 0, up.stderr
    assert agent_fs(bench).read_file(name) == data
    down = scp(bench, *mode, f"alice@127.0.0.1:{name}", str(tmp_path / "back.bin"))
    assert down.returncode == 0, down.stderr
    assert (tmp_path / "back.bin").read_bytes() == data


@pytest.mark.parametrize("mode", [[], ["-O"]], ids=["sftp-mode", "legacy-O"])
def test_scp_overwrites_a_longer_file(bench: Bench, tmp_path: Path, mode: list[str]) -> None:
    name = f"shrink{len(mode)}.txt"
    agent_fs(bench).write_file(name, b"a much longer previous content\n")
    (tmp_path / "short").write_text("short\n")
    assert scp(bench, *mode, str(tmp_path / "short"), f"alice@127.0.0.1:{name}").returncode == 0
    assert agent_fs(bench).read_file(name) == b"short\n"


@pytest.mark.parametrize("mode", [[], ["-O"]], ids=["sftp-mode", "legacy-O"])
def test_scp_recursive_with_modes_and_times(bench: Bench, tmp_path: Path, mode: list[str]) -> None:
    src = tree(tmp_path / "src")
    dest = f"tree{len(mode)}"
    up = scp(bench, *mode, "-rp", str(src), f"alice@127.0.0.1:{dest}")
    assert up.returncode == 0, up.stderr
    fs = agent_fs(bench)
    assert fs.read_file(f"{dest}/sub/data.bin") == (src / "sub" / "data.bin").read_bytes()
    assert stat.S_IMODE(fs.stat(f"{dest}/sub/deeper/x.sh").mode) == 0o751
    assert fs.stat(f"{dest}/top.txt").mtime // 10**9 == 1_500_000_000
    back = tmp_path / f"back{len(mode)}"
    down = scp(bench, *mode, "-rp", f"alice@127.0.0.1:{dest}", str(back))
    assert down.returncode == 0, down.stderr
    assert (back / "sub" / "data.bin").read_bytes() == (src / "sub" / "data.bin").read_bytes()
    assert stat.S_IMODE((back / "sub" / "deeper" / "x.sh").stat().st_mode) == 0o751
    assert (back / "top.txt").stat().st_mtime_ns // 10**9 == 1_500_000_000


def test_scp_of_a_missing_file_fails(bench: Bench, tmp_path: Path) -> None:
    result = scp(bench, "alice@127.0.0.1:does-not-exist", str(tmp_path / "x"))
    assert result.returncode != 0
    assert "No such file" in result.stderr
