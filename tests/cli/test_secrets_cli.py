"""`komputer secrets set` as an operator types it: the value from stdin (one trailing newline
dropped) or `--file` (as is), never from the command line; `list` shows handles, never values."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kfs.kstate import KState
from kfs.runtime import secrets

ROOT = Path(__file__).resolve().parents[2]


def komputer(tmp_path: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KOMPUTER_STATE": str(tmp_path / "state"), "KOMPUTER_SECRET_KEY": str(tmp_path / "key")}
    return subprocess.run([sys.executable, "-m", "kshell.cli", *args], cwd=ROOT, input=stdin.decode(),
                          capture_output=True, text=True, timeout=60, env=env)


def test_a_secret_is_set_from_stdin_or_a_file_and_never_from_the_command_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert komputer(tmp_path, "init").returncode == 0
    piped = komputer(tmp_path, "secrets", "set", "api_token", stdin=b"TOKEN-1\n")
    assert piped.returncode == 0, piped.stderr
    assert "api_token stored (7 bytes" in piped.stdout and "TOKEN" not in piped.stdout + piped.stderr
    (tmp_path / "value").write_bytes(b"line one\nline two\n")
    from_file = komputer(tmp_path, "secrets", "set", "--file", str(tmp_path / "value"), "--agent", "alice", "other")
    assert from_file.returncode == 0, from_file.stderr
    on_line = komputer(tmp_path, "secrets", "set", "third", "VALUE")
    assert on_line.returncode == 2 and "never from the command line" in on_line.stderr
    listed = komputer(tmp_path, "secrets", "list")
    assert [line.split()[:2] for line in listed.stdout.splitlines()] == [["api_token", "*"], ["other", "alice"]]
    assert "TOKEN" not in listed.stdout
    monkeypatch.setenv(secrets.KEY_ENV, str(tmp_path / "key"))
    with KState(tmp_path / "state", create=False) as state:
        assert secrets.reveal(state, "api_token") == b"TOKEN-1"
        assert secrets.reveal(state, "other") == b"line one\nline two\n"
