"""What agents write never drives an operator's terminal: `komputer approvals`, `decide`, `ps`,
`sessions` and `fork diff` print agent text (commands, session names, paths) with its control
characters escaped, as `ls -b` and `git status` do, so a CR, ESC[2K and a newline cannot make an
approval read `rm -r build` while the action is `rm -r /home/alice/proj`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from kfs import forks
from kfs.agents.records import add_agent
from kfs.kstate import KState
from kfs.runtime import approvals, procs
from kfs.terminal import printable
from kfs.vfs import VFS, Cred, PathFS

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "rm -r /home/alice/proj\r\x1b[2Krm -r build\nsecond line\u202e\x9b"
CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def unescape(shown: str) -> str:
    """The inverse of `printable`: proves its escapes are unambiguous."""
    simple = {"\\": "\\", "n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}

    def one(m: re.Match[str]) -> str:
        body = m.group(1)
        if body in simple:
            return simple[body]
        return chr(int(body[1:], 16) if body.startswith("u") else int(body, 8))

    return re.sub(r"\\(u[0-9a-f]{4}|[0-7]{3}|.)", one, shown)


@given(hs.text())
def test_printable_text_has_no_controls_and_reads_back(text: str) -> None:
    shown = printable(text)
    assert not CONTROLS.search(shown) and "\n" not in shown
    assert unescape(shown) == text


@pytest.fixture
def state(tmp_path: Path) -> Iterator[KState]:
    with KState(tmp_path / "state", create=True) as s:
        add_agent(VFS(s, by="test"), "alice")
        yield s


def komputer(state: KState, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "kshell.cli", "--state", str(state.path), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def assert_escaped(out: str, lines: int) -> None:
    assert not CONTROLS.search(out), out
    assert len(out.splitlines()) == lines, out
    assert "\\r\\033[2Krm -r build\\nsecond line\\u202e\\233" in out


def test_approvals_and_decide_escape_the_agents_command(state: KState) -> None:
    record = approvals.ask(state, agent="alice", session="work", kind="command", action=HOSTILE, rule=1,
                           replay={"argv": ["rm"], "cwd": "/home/alice"})
    assert_escaped(komputer(state, "approvals"), 1)
    listed = komputer(state, "approvals", "--json")  # JSON escapes on its own and keeps the text whole
    assert json.loads(listed)["action"] == HOSTILE
    assert_escaped(komputer(state, "decide", str(record["id"]), "reject"), 1)
    assert_escaped(komputer(state, "approvals", "--all"), 1)


def test_ps_escapes_the_command_line(state: KState) -> None:
    procs.start(state, agent="alice", session="work", front="ssh exec", cmd=HOSTILE, cwd="/home/alice")
    assert_escaped(komputer(state, "ps"), 2)


def test_sessions_escape_a_stored_name(state: KState) -> None:
    """A state written before session names were checked may hold any name: it is shown escaped."""
    record = {"agent": "alice", "name": HOSTILE, "cwd": "/home/alice", "shell": {}, "created": 0, "updated": 0,
              "ephemeral": False}
    state.write(lambda txn: txn.put("sessions", f"alice/{HOSTILE}".encode(), json.dumps(record).encode()))
    assert_escaped(komputer(state, "sessions"), 2)


def test_fork_diff_escapes_a_path(state: KState) -> None:
    number = forks.create(state, agent="alice", by="test")
    fs = PathFS(VFS(forks.view(state, number), by="test"), cred=Cred(0, 0))
    fs.write_file("/home/alice/" + HOSTILE.replace("/", "_"), b"x")
    out = komputer(state, "fork", "diff", str(number))
    assert not CONTROLS.search(out) and len(out.splitlines()) == 1, out
    assert out.startswith("A /home/alice/rm -r _home_alice_proj\\r\\033[2K")
