"""`komputer sh --agent NAME [--session ID] [--mode M] [--fork N]`: a script run as the agent in
its session view (kshell.view), and `komputer sessions detach AGENT/SESSION`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kfs import forks
from kfs.agents.records import add_agent
from kfs.agents.sessions import acquire_session, holder_id, lease_alive, list_sessions, release_session
from kfs.kstate import KState
from kfs.runtime import image
from kfs.vfs import VFS, PathFS


def komputer(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`komputer ARGS...` on `state` (given to the last subcommand, before its operands)."""
    words = 2 if args[0] in ("sessions", "fork") else 1
    return subprocess.run([sys.executable, "-m", "kshell.cli", *args[:words], "--state", str(state), *args[words:]],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "LC_ALL": "C.UTF-8"})


@pytest.fixture
def state_dir(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "state"
    with KState(where, create=True) as state:
        vfs = VFS(state, by="test")
        add_agent(vfs, "alice")
        add_agent(vfs, "bob")
    yield where


def _events(state_dir: Path, kind: str) -> list[dict]:
    done = komputer(state_dir, "events", "--type", kind)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_script_runs_as_the_agent_in_its_home(state_dir: Path) -> None:
    done = komputer(state_dir, "sh", "--agent", "alice", "-c", 'id -un; pwd; echo "$HOME $USER $LOGNAME"; touch made')
    assert (done.returncode, done.stdout) == (0, "alice\n/home/alice\n/home/alice alice alice\n"), done.stderr
    with KState(state_dir) as state:
        made = PathFS(VFS(state)).stat("/home/alice/made")
        assert made.uid != 0  # the agent's file, not root's
        assert any(r["by"] == "cli:sh alice/-" for r in state_receipts(state))


def state_receipts(state: KState) -> list[dict]:
    from kfs.journal.receipts import receipts_since

    return [dict(r) for r in receipts_since(state, 0, 1000)]


def test_the_agent_cannot_write_what_is_not_its_own(state_dir: Path) -> None:
    done = komputer(state_dir, "sh", "--agent", "alice", "-c", "echo x > /home/bob/x")
    assert done.returncode == 1 and "Permission denied" in done.stderr


def test_an_unknown_agent_is_an_error(state_dir: Path) -> None:
    done = komputer(state_dir, "sh", "--agent", "carol", "-c", "true")
    assert done.returncode == 1
    assert done.stderr == "komputer sh: no agent 'carol' (komputer agent list shows them)\n"


def test_session_and_mode_need_an_agent(state_dir: Path) -> None:
    done = komputer(state_dir, "sh", "--mode", "readonly", "-c", "true")
    assert done.returncode == 2 and "need --agent NAME" in done.stderr


def test_a_named_session_is_resumed_and_saved_back(state_dir: Path) -> None:
    first = komputer(state_dir, "sh", "--agent", "alice", "--session", "work", "-c",
                     "mkdir -p proj; cd proj; export GREETING=hello; greet() { echo hi; }")
    assert first.returncode == 0, first.stderr
    again = komputer(state_dir, "sh", "--agent", "alice", "--session", "work", "-c", 'pwd; echo "$GREETING"; greet')
    assert (again.returncode, again.stdout) == (0, "/home/alice/proj\nhello\nhi\n"), again.stderr
    other = komputer(state_dir, "sh", "--agent", "alice", "-c", 'pwd; echo "[$GREETING]"')
    assert other.stdout == "/home/alice\n[]\n"  # without --session: a fresh session
    with KState(state_dir) as state:
        (record, lease), = list_sessions(state)
        assert (record.name, record.cwd, lease) == ("work", "/home/alice/proj", None)  # released at the end


def test_a_session_another_holder_has_is_refused(state_dir: Path) -> None:
    with KState(state_dir) as state:
        holder = holder_id(1)  # this test process: a live holder
        record = acquire_session(state, "alice", "busy", "/home/alice", holder, 60.0)
        done = komputer(state_dir, "sh", "--agent", "alice", "--session", "busy", "-c", "echo never")
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.startswith("komputer sh: session 'busy' is in use"), done.stderr
        release_session(state, record, holder)


def test_sessions_detach_releases_one_lease_and_keeps_the_session(state_dir: Path) -> None:
    with KState(state_dir) as state:
        holder = holder_id(1)
        record = acquire_session(state, "alice", "held", "/home/alice", holder, 60.0)
        record.cwd = "/tmp"
        from kfs.agents.sessions import save_session

        save_session(state, record)
        acquire_session(state, "bob", "held", "/home/bob", holder_id(2), 60.0)
    done = komputer(state_dir, "sessions", "detach", "alice/held")
    assert (done.returncode, done.stdout) == (0, "detached alice/held\n"), done.stderr
    with KState(state_dir) as state:
        leases = {(r.agent, r.name): lease for r, lease in list_sessions(state)}
        assert leases[("alice", "held")] is None  # released; the session stays
        assert leases[("bob", "held")] is not None and lease_alive(leases[("bob", "held")], 0)  # bob's untouched
    assert [(e["agent"], e["session"]) for e in _events(state_dir, "session.detach")] == [("alice", "held")]
    resumed = komputer(state_dir, "sh", "--agent", "alice", "--session", "held", "-c", "pwd")
    assert (resumed.returncode, resumed.stdout) == (0, "/tmp\n"), resumed.stderr


def test_sessions_detach_of_an_unknown_session_is_an_error(state_dir: Path) -> None:
    done = komputer(state_dir, "sessions", "detach", "alice/none")
    assert done.returncode == 1 and done.stderr == "komputer sessions detach: alice/none: no such session\n"
    assert komputer(state_dir, "sessions", "detach", "alice").returncode == 2


def test_the_agents_mode_and_the_forks_mode_hold(state_dir: Path) -> None:
    done = komputer(state_dir, "sh", "--agent", "alice", "--mode", "readonly", "-c", "echo x > f")
    assert done.returncode == 1 and "Read-only file system" in done.stderr
    with KState(state_dir) as state:
        number = forks.create(state, agent="alice", mode="readonly", by="test")
        theirs = forks.create(state, agent="bob", mode="full", by="test")
    done = komputer(state_dir, "sh", "--agent", "alice", "--fork", str(number), "-c", "echo x > f")
    assert done.returncode == 1 and "Read-only file system" in done.stderr
    done = komputer(state_dir, "sh", "--agent", "alice", "--fork", str(theirs), "-c", "true")
    assert done.returncode == 1 and done.stderr == f"komputer sh: fork {theirs} is not agent alice's " \
                                                  "(komputer fork create --agent alice)\n"


def test_fork_create_for_an_agent_holds_forks_max_per_agent(state_dir: Path) -> None:
    """`komputer fork create --agent` counts the agent's forks as komputer-api and the SDK do."""
    (state_dir / "komputer.toml").write_text("[ssh]\nforks_max_per_agent = 2\n")
    assert komputer(state_dir, "fork", "create", "--agent", "alice").returncode == 0
    with KState(state_dir) as state:
        forks.create(state, agent="alice", by="ssh alice/s")  # one it made itself
    done = komputer(state_dir, "fork", "create", "--agent", "alice")
    assert done.returncode == 1 and done.stderr == (
        "komputer fork: agent alice already has 2 forks (forks_max_per_agent); the operator merges or "
        "discards them (komputer fork list, komputer fork discard N)\n")
    assert komputer(state_dir, "fork", "create", "--agent", "bob").returncode == 0
    assert komputer(state_dir, "fork", "create").returncode == 0  # the operator's own: no agent's


def test_the_images_hooks_judge_the_agents_commands_and_sessions(state_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "img"
    folder.mkdir()
    (folder / "komputer.toml").write_text(
        '[[hooks]]\non = "command"\nhandler = "guard:command"\n'
        '[[hooks]]\non = "session_start"\nhandler = "guard:start"\n')
    (folder / "guard.py").write_text(
        "def command(ctx):\n    return ('deny', 'no rm here') if ctx.argv[0] == 'rm' else 'allow'\n"
        "def start(ctx):\n    return ('deny', 'bob rests') if ctx.agent == 'bob' else 'allow'\n")
    with KState(state_dir) as state:
        image.apply(state, image.load(folder), by="test")
    done = komputer(state_dir, "sh", "--agent", "alice", "-c", "touch f; rm f; echo $?")
    assert done.stdout == "126\n" and "no rm here" in done.stderr, done.stderr
    done = komputer(state_dir, "sh", "--agent", "bob", "-c", "echo never")
    assert (done.returncode, done.stdout) == (1, "")
    assert "K: this session is refused" in done.stderr and "bob rests" in done.stderr
    root = komputer(state_dir, "sh", "-c", "touch /f; rm /f; echo $?")  # root's shell as before
    assert root.stdout == "0\n", root.stderr
