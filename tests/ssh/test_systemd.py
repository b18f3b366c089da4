"""The systemd units pass `systemd-analyze verify`; the sample config parses to the defaults."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest

UNITS = Path(__file__).parents[2] / "systemd"


def test_units_verify(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.fail("systemd-analyze is missing: install systemd (apt-get install -y systemd)")
    fake = tmp_path / "komputer"  # verify checks that ExecStart names an executable
    fake.write_text("#!/bin/sh\n")
    fake.chmod(stat.S_IRWXU)
    units = sorted(UNITS.glob("*.service"))
    assert {u.name for u in units} == {"komputer-ssh.service", "komputer-fuse.service"}
    for unit in units:
        (tmp_path / unit.name).write_text(unit.read_text().replace("/usr/local/bin/komputer", str(fake)))
    result = subprocess.run(["systemd-analyze", "verify", *(str(tmp_path / u.name) for u in units)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "komputer" not in result.stderr, result.stderr


def test_ssh_unit_is_hardened() -> None:
    text = (UNITS / "komputer-ssh.service").read_text()
    for line in ("NoNewPrivileges=yes", "ProtectSystem=strict", "ReadWritePaths=/var/lib/komputer",
                 "PrivateTmp=yes",
                 "CapabilityBoundingSet=CAP_SETUID CAP_SETGID CAP_KILL\n", "Type=notify", "Restart=on-failure"):
        assert line in text


def test_fuse_unit_unmounts_on_stop() -> None:
    text = (UNITS / "komputer-fuse.service").read_text()
    assert "fusermount3 -uz /mnt/komputer" in text
    assert "CapabilityBoundingSet=CAP_SYS_ADMIN" in text and "NoNewPrivileges=yes" in text
