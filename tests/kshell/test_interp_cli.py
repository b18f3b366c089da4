"""`komputer sh`: -c with NAME and ARGS, a host FILE, or the script on stdin; real stdio bytes
and the script's exit status; the agent's home is the working directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def komputer(tmp_path: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kshell.cli", "sh", "--state", str(tmp_path / "st"), *args],
                          input=stdin, capture_output=True, cwd=ROOT, timeout=60)


def test_sh_dash_c_with_name_and_arguments(tmp_path: Path) -> None:
    p = komputer(tmp_path, "-c", 'echo "$0 $1 $#"; pwd; exit 3', "nm", "a1")
    assert p.stdout == b"nm a1 1\n/home/agent\n"
    assert p.returncode == 3


def test_sh_reads_the_script_from_stdin(tmp_path: Path) -> None:
    p = komputer(tmp_path, stdin=b"echo from stdin\nnosuch\n")
    assert p.stdout == b"from stdin\n"
    assert p.stderr == b"komputer: line 2: nosuch: command not found\n"
    assert p.returncode == 127


def test_sh_runs_a_host_file_with_arguments_and_real_stdin(tmp_path: Path) -> None:
    script = tmp_path / "s.sh"
    script.write_text('read x; echo "$0:$1:$x"\n')
    p = komputer(tmp_path, str(script), "A", stdin=b"input\n")
    assert p.stdout == f"{script}:A:input\n".encode()
    assert p.returncode == 0


def test_sh_state_persists_between_runs(tmp_path: Path) -> None:
    komputer(tmp_path, "-c", "echo kept > f.txt")
    p = komputer(tmp_path, "-c", "read v < /home/agent/f.txt; echo $v")
    assert p.stdout == b"kept\n"


def test_sh_syntax_error_reports_like_bash_dash_c(tmp_path: Path) -> None:
    p = komputer(tmp_path, "-c", "echo ok; fi", "bash")
    assert p.stdout == b""
    assert p.stderr == b"bash: -c: line 1: syntax error near unexpected token `fi'\nbash: -c: line 1: `echo ok; fi'\n"
    assert p.returncode == 2


def test_sh_takes_the_callers_locale_as_bash_does(tmp_path: Path) -> None:
    """`LC_ALL=C.UTF-8 komputer sh` counts characters; `LC_ALL=C` counts bytes, as bash does."""
    import os

    script = "x='h\u00e9llo'; echo ${#x} \"$LC_ALL\"".encode()
    for locale, length in (("C.UTF-8", b"5"), ("C", b"6")):
        env = {**os.environ, "LC_ALL": locale}
        p = subprocess.run([sys.executable, "-m", "kshell.cli", "sh", "--state", str(tmp_path / "st"), "-c", script],
                           capture_output=True, cwd=ROOT, timeout=60, env=env)
        assert p.stdout == length + b" " + locale.encode() + b"\n", p.stderr
