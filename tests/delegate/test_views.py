"""A restricted session's programs see K through the agent's view (kshell.delegate.mounts): the
kernel asks the session's policy for every create, rename, link and write, so a delegated
program is refused what the K shell is refused, whether the path exists yet or not, and
leaves nothing behind; a session without a policy keeps the admin mount."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from delegation import run
from kserver import Bench

from kfs.runtime.rules import add_rule, remove_rule
from kshell.delegate.config import set_agent_overrides
from kshell.delegate.mounts import MOUNTINFO, VIEW

EROFS = "Read-only file system"


@pytest.fixture
def alice(mounted: Bench) -> Iterator[Bench]:
    """alice, full mode, with ~/proj holding a repository's .git/config."""
    status, _, err = run(mounted, "rm -rf proj repo; mkdir -p proj/.git; echo keep > proj/a; echo cfg > proj/.git/config")
    assert status == 0, err
    yield mounted
    set_agent_overrides(mounted.state, "alice", mode="full", scope=())


def limited(b: Bench) -> None:
    set_agent_overrides(b.state, "alice", mode="limited", scope=("~/proj",))


def views_of(b: Bench) -> list[str]:
    """The sources of the views mounted for this server's state."""
    state = str(b.root.resolve() / "state")
    return [line.split(" - ")[1].split()[1] for line in MOUNTINFO.read_text().splitlines()
            if " - fuse" in line and line.split(" - ")[1].split()[1].startswith(VIEW + ":")
            and line.split(" - ")[1].split()[1].endswith(":" + state)]


def test_a_limited_agents_program_cannot_create_protected_names_that_do_not_exist_yet(alice: Bench) -> None:
    limited(alice)
    status, out, err = run(alice, "cd proj; dash -c 'echo x > .mcp.json'; echo $?; dash -c 'mkdir .vscode'; echo $?; "
                                  "dash -c 'mkdir -p .git/hooks && echo > .git/hooks/pre-commit'; echo $?; "
                                  "dash -c 'echo ok > fine'; echo $?; ls -A; ls -A .git")
    assert out.split("\n")[:4] == ["2", "1", "1", "0"]
    assert "cannot create .mcp.json: Read-only file system" in err
    assert "mkdir: cannot create directory '.vscode': Read-only file system" in err
    assert "mkdir: cannot create directory '.git/hooks': Read-only file system" in err
    assert out.split("\n")[4:] == [".git", "a", "fine", "config", ""]  # nothing else was made


def test_git_init_in_a_limited_scope_cannot_write_its_config(alice: Bench) -> None:
    limited(alice)
    status, out, err = run(alice, "mkdir proj/repo && cd proj/repo && git init -q; echo $?; "
                                  "test -e .git/config; echo config=$?; test -e .git/hooks; echo hooks=$?")
    assert out.split("\n")[1:3] == ["config=1", "hooks=1"] and out.split("\n")[0] != "0"
    assert EROFS in err


def test_a_rule_denies_a_program_a_path_that_does_not_exist_yet(alice: Bench) -> None:
    rule = add_rule(alice.state, "deny", "~/proj/notyet", agent="alice", on="path")
    try:
        status, out, err = run(alice, "dash -c 'echo x > proj/notyet'; echo $?; dash -c 'mkdir -p proj/notyet/sub'; "
                                      "echo $?; dash -c 'echo ok > proj/other'; echo $?; ls proj")
        assert out == "2\n1\n0\na\nother\n"
        assert "cannot create proj/notyet: Permission denied" in err
        assert "mkdir: cannot create directory 'proj/notyet': Permission denied" in err
    finally:
        remove_rule(alice.state, rule.id)


def test_a_program_cannot_move_a_repository_configuration_in_or_out(alice: Bench) -> None:
    limited(alice)
    status, out, err = run(alice, "cd proj; dash -c 'mv .git g2'; echo $?; cat .git/config; "
                                  "mkdir other && cd other && dash -c 'mkdir g2 && echo evil > g2/config && mv g2 .git'; "
                                  "echo $?; test -e .git/config; echo config=$?")
    assert out == "1\ncfg\n1\nconfig=1\n"


def test_sessions_of_one_policy_share_one_view_and_a_full_session_keeps_the_admin_mount(alice: Bench) -> None:
    # the sources of what the sandbox has mounted: the admin mount (kfs:) or an agent's view
    probe = "dash -c 'grep -o \" kfs[-a-z]*:[^ ]*\" /proc/self/mountinfo | sort -u'"
    status, out, err = run(alice, probe)
    assert out.split() and all(s.startswith("kfs:") for s in out.split()), (out, err)  # full, no rules
    limited(alice)
    seen = [run(alice, probe)[1].split() for _ in range(2)]
    assert seen[0] == seen[1], seen  # the second session's program went through the same view
    assert len(seen[0]) == 1 and seen[0][0].startswith(f"{VIEW}:alice:limited:"), seen
    assert seen[0][0] in views_of(alice)


def daemons_of(b: Bench) -> list[int]:
    """The pids of the view daemons serving this server's state."""
    state = str(b.root.resolve() / "state")
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"--agent" in argv and state.encode() in argv and b"mount" in argv:
                found.append(int(pid))
    return found


def test_a_views_daemon_leaves_the_sessions_cgroup_and_goes_when_the_server_stops(make_mounted) -> None:  # noqa: ANN001
    b = make_mounted()
    pool = b.thread.server.pool
    if pool.cgroups is None:
        pytest.fail(f"cgroups are not usable here: {pool.cgroup_note} (run as root with cgroup v1 or v2)")
    set_agent_overrides(b.state, "alice", mode="readonly")
    status, out, err = run(b, "dash -c 'echo x > f'; echo $?")
    assert out == "2\n" and EROFS in err
    assert len(views_of(b)) == 1
    (daemon,) = daemons_of(b)
    groups = Path(f"/proc/{daemon}/cgroup").read_text()
    assert "/services\n" in groups and "/a-alice/" not in groups, groups
    b.thread.stop()
    assert views_of(b) == []


def test_a_program_writes_what_the_images_write_hook_allows_and_not_what_it_denies(make_mounted,  # noqa: ANN001
                                                                                   tmp_path: Path) -> None:
    """The agent's view runs the image's write hooks: `git init` works under an image whose
    hook guards only `locked` folders, and a program cannot write into one."""
    from kfs.runtime import image

    b = make_mounted()
    folder = tmp_path / "img"
    folder.mkdir()
    (folder / "komputer.toml").write_text('[[hooks]]\non = "write"\nhandler = "guard:check"\n')
    (folder / "guard.py").write_text("def check(ctx):\n"
                                     "    return ('deny', 'locked') if '/locked' in ctx.path else 'allow'\n")
    image.apply(b.state, image.load(folder), by="test")
    status, out, err = run(b, "git init -q repo; echo $?; test -f repo/.git/config; echo config=$?; "
                              "dash -c 'mkdir locked'; echo $?; test -e locked; echo locked=$?")
    assert out == "0\nconfig=0\n1\nlocked=1\n", err
