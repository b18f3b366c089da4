"""Restricted modes on every path in, over real clients: K tools and redirections, SFTP (and
scp), delegated python3 in the sandbox; each write refused as a Unix user expects (EROFS,
"Read-only file system"; SFTP permission denied) plus one line naming the mode; reads go on;
the session's own K_MODE narrows the agent's, never widens it; the ssh remote fails closed."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from delegation import run
from kserver import Bench, need

from kshell.delegate.config import set_agent_overrides


@pytest.fixture
def alice(mounted: Bench) -> Iterator[Bench]:
    status, _, err = run(mounted, "rm -rf proj .plan; mkdir -p proj/.git .plan; echo keep > proj/a; "
                                  "echo cfg > proj/.git/config")
    assert status == 0, err
    yield mounted
    set_agent_overrides(mounted.state, "alice", mode="full")


def mode(b: Bench, name: str, scope: tuple[str, ...] | None = None) -> None:
    set_agent_overrides(b.state, "alice", mode=name, scope=scope)


def test_readonly_refuses_k_tools_redirections_and_programs_and_names_the_mode(alice: Bench) -> None:
    mode(alice, "readonly")
    status, out, err = run(alice, "cat proj/a; echo x > proj/b; rm proj/a; python3 -c 'open(\"proj/c\", \"w\")'; ls proj")
    assert out == "keep\na\n"
    lines = err.splitlines()
    assert lines[0] == "k: line 1: proj/b: Read-only file system"
    assert lines[1] == "rm: cannot remove 'proj/a': Read-only file system"
    assert "OSError: [Errno 30] Read-only file system: 'proj/c'" in err
    assert lines[-1] == "K: this session is in readonly mode"
    assert status == 0  # ls, the last command, succeeded


def test_plan_and_limited_write_only_where_they_may(alice: Bench) -> None:
    mode(alice, "plan")
    status, out, err = run(alice, "echo p > .plan/p && python3 -c 'open(\".plan/q\", \"w\").write(\"q\")' && cat .plan/q; "
                                  "echo x > proj/x")
    assert out == "q" and "proj/x: Read-only file system" in err
    assert err.splitlines()[-1] == "K: this session is in plan mode (writes only under /home/alice/.plan)"
    mode(alice, "limited", ("~/proj",))
    status, out, err = run(alice, "cd proj && echo 1 > x && python3 -c 'open(\"y\", \"w\").write(\"2\")' && cat x y; "
                                  "python3 -c 'open(\".git/config\", \"w\")'; echo z > ../z; ln -s /etc e; echo h > e/h")
    assert out == "1\n2"
    assert "Read-only file system: '.git/config'" in err  # the deny list holds inside the scope, in the sandbox too
    assert "../z: Read-only file system" in err and "e/h: Read-only file system" in err


def test_sftp_and_scp_writes_are_refused_as_permission_denied(alice: Bench, tmp_path: Path) -> None:
    mode(alice, "readonly")
    src = tmp_path / "up.txt"
    src.write_text("up\n")
    batch = tmp_path / "batch"
    for command in (f"put {src} proj/up.txt", "rename proj/a proj/b", "rm proj/a", "mkdir proj/d", "chmod 600 proj/a"):
        batch.write_text(command + "\n")
        done = subprocess.run([need("sftp"), *alice.ssh_options(port_flag="-P"), "-b", str(batch), "alice@127.0.0.1"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode != 0, command
        assert "Permission denied" in done.stderr or "permission denied" in done.stderr.lower(), (command, done.stderr)
    batch.write_text(f"get proj/a {tmp_path / 'down.txt'}\n")
    done = subprocess.run([need("sftp"), *alice.ssh_options(port_flag="-P"), "-b", str(batch), "alice@127.0.0.1"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and (tmp_path / "down.txt").read_text() == "keep\n"
    done = subprocess.run([need("scp"), *alice.ssh_options(port_flag="-P"), str(src), "alice@127.0.0.1:proj/scp.txt"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    status, out, _ = run(alice, "ls proj")
    assert out == "a\n"


def test_a_session_narrows_itself_with_k_mode_but_never_widens(alice: Bench) -> None:
    status, out, err = run(alice, "echo x > proj/n; echo $?", extra=["-o", "SetEnv=K_MODE=readonly"])
    assert out == "1\n" and "K: this session is in readonly mode" in err
    mode(alice, "readonly")
    status, out, err = run(alice, "echo x > proj/n; echo $?", extra=["-o", "SetEnv=K_MODE=full"])
    assert out == "1\n"


def test_a_restricted_mode_fails_closed_with_the_ssh_remote(make_mounted) -> None:  # noqa: ANN001
    b = make_mounted(remote="ssh", ssh_host="nobody@127.0.0.1", ssh_root="/srv/k")
    set_agent_overrides(b.state, "alice", mode="readonly")
    status, out, err = run(b, "python3 -c 'print(1)'")
    assert status == 126 and out == ""
    assert "readonly mode, and the ssh remote is not a sandbox" in err


def test_an_authorized_keys_mode_is_a_floor_for_its_sessions_and_sftp(alice: Bench, tmp_path: Path) -> None:
    from kserver import keygen

    from kfs.agents import add_key

    key = keygen(tmp_path / "ro_key", "alice-readonly")
    add_key(alice.state, "alice", 'environment="K_MODE=readonly" ' + (tmp_path / "ro_key.pub").read_text())
    alice.keys["alice-ro"] = key
    done = alice.ssh("echo x > proj/k; echo $?", key="alice-ro", extra=["-o", "SetEnv=K_MODE=full"])
    assert done.stdout == b"1\n" and b"K: this session is in readonly mode" in done.stderr
    assert alice.ssh("echo x > proj/k; echo $?").stdout == b"0\n"  # alice's own key: full
    batch = tmp_path / "batch"
    batch.write_text("mkdir proj/by-sftp\n")
    done = subprocess.run([need("sftp"), *alice.ssh_options("alice-ro", port_flag="-P"), "-b", str(batch),
                           "alice@127.0.0.1"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "denied" in done.stderr.lower()


def test_the_servers_mode_is_a_floor_for_every_agent(make_mounted, tmp_path: Path) -> None:  # noqa: ANN001
    from dataclasses import replace

    from delegation import config

    from kshell.server.config import load_config

    b = make_mounted()
    b.server.config = replace(b.server.config, mode="readonly")  # as `mode = "readonly"` in [ssh] sets it
    status, out, err = run(b, "echo x > f; echo $?", extra=["-o", "SetEnv=K_MODE=full"])
    assert out == "1\n" and "K: this session is in readonly mode" in err
    toml = tmp_path / "komputer.toml"
    toml.write_text('[ssh]\nmode = "sometimes"\n')
    with pytest.raises(ValueError, match="mode 'sometimes'"):
        load_config(toml)
    assert config().mode == "full"


def test_policy_rules_deny_tools_and_programs_with_126_and_an_event(alice: Bench) -> None:
    from kfs.journal import events_since
    from kfs.runtime.rules import add_rule, remove_rule

    rules = [add_rule(alice.state, "deny", "rm -r*"), add_rule(alice.state, "deny", "python3 *", agent="alice"),
             add_rule(alice.state, "allow", "*")]
    try:
        status, out, err = run(alice, "mkdir -p d; rm -r d; echo rm=$?; python3 -c 'print(1)'; echo py=$?; "
                                      "find . -maxdepth 0 -exec rm -r d ';'; ls -d d")
        assert out == "rm=126\npy=126\nd\n"
        assert f"K: rm -r d: denied by policy (rule {rules[0].id}: deny 'rm -r*')" in err
        assert f"K: python3 -c print(1): denied by policy (rule {rules[1].id}: deny 'python3 *')" in err
        denials = [e for e in events_since(alice.state, 0, 1 << 30) if e["type"] == "policy.deny"]
        assert {e["command"] for e in denials} >= {"rm -r d", "python3 -c print(1)"}
        status, out, _ = run(alice, "python3 -c 'print(2)'", user="bob")  # bob has only the global rules
        assert out == "2\n"
    finally:
        for rule in rules:
            remove_rule(alice.state, rule.id)


def test_a_limited_agent_runs_only_the_commands_it_is_allowed(alice: Bench) -> None:
    set_agent_overrides(alice.state, "alice", mode="limited", scope=("~/proj",), commands=("ls", "cat proj/*"))
    try:
        status, out, err = run(alice, "ls proj; cat proj/a; echo builtin; python3 -c 'print(1)'; echo $?; "
                                      "cat /etc/passwd; echo $?")
        assert out == "a\nkeep\nbuiltin\n126\n126\n"
        assert "K: python3 -c print(1): denied by policy (not in the limited mode's command list)" in err
        assert "K: cat /etc/passwd: denied by policy" in err
    finally:
        set_agent_overrides(alice.state, "alice", commands=())


WRAPPED_CURL = ("nice curl x", "nice -n 5 curl x", "stdbuf curl x", "stdbuf -oL curl x", "env -i curl x",
                "/usr/bin/env -i curl x", "timeout 5 curl x", "/usr/bin/timeout 5 curl x", "nohup curl x",
                "command curl x", "echo u | xargs curl", "/usr/bin/xargs curl < /dev/null",
                "find . -maxdepth 0 -exec curl {} \\;", "nice git --no-pager -C . push x")


def test_a_command_rule_judges_what_a_wrapper_runs_host_wrappers_included(alice: Bench) -> None:
    """`nice` and `stdbuf` are host programs here (and /usr/bin/env, timeout, xargs by path):
    the host's wrapper would run the host's curl, so the K shell reads the wrapper's options
    and judges curl before it delegates; `exec curl` ends the session with curl's 126."""
    from kfs.runtime.rules import add_rule, remove_rule

    rules = [add_rule(alice.state, "deny", "curl*", agent="alice"), add_rule(alice.state, "deny", "git push*")]
    try:
        status, out, err = run(alice, "".join(f"{line}; echo $?; " for line in WRAPPED_CURL) + "exec curl x")
        assert status == 126
        assert out.split() == ["126"] * len(WRAPPED_CURL)
        shown = [line.replace("echo u | ", "").replace("command ", "").replace(" < /dev/null", "").replace("\\", "")
                 for line in WRAPPED_CURL]
        assert err.splitlines() == [f"K: {line}: denied by policy (rule {rules['git' in line].id}: deny "
                                    f"'{rules['git' in line].pattern}')" for line in [*shown, "curl x"]]
    finally:
        for rule in rules:
            remove_rule(alice.state, rule.id)


def test_a_command_rule_on_curl_takes_the_network_from_programs(make_mounted) -> None:  # noqa: ANN001
    """What a delegated program runs inside its sandbox (python3 fetching, its own curl) is out
    of the K shell's sight: a rule that denies curl leaves programs without the network, as a
    host rule does."""
    from delegation import komputer

    from kfs.runtime.rules import add_rule, remove_rule

    b = make_mounted()
    done = komputer("agent", "set", "--state", str(b.root / "state"), "alice", "--network", "on")
    assert done.returncode == 0, done.stderr
    # the sandbox's network devices, from its own namespace's /proc/net/dev: no traffic is sent
    devices = "python3 -c 'print(*sorted(line.split(\":\")[0].strip() for line in open(\"/proc/net/dev\").readlines()[2:]))'"
    rule = add_rule(b.state, "deny", "curl*", agent="alice")
    status, out, err = run(b, devices)
    assert out == "lo\n", err  # no way out at all
    remove_rule(b.state, rule.id)
    status, out, err = run(b, devices)
    assert out == "lo tap0\n", err  # the outside, through slirp4netns


def test_path_rules_hold_for_delegated_programs_through_the_agents_view(alice: Bench) -> None:
    """A program cannot wait for a decision: what a rule denies or asks about is refused in its
    sandbox (EACCES, as the agent's view refuses it), and nothing else."""
    from kfs.runtime.rules import add_rule, remove_rule

    rule = add_rule(alice.state, "deny", "~/proj/a", agent="alice", on="path")
    try:
        status, out, err = run(alice, "python3 -c 'open(\"proj/a\", \"w\")'; "
                                      "python3 -c 'open(\"proj/b\", \"w\").write(\"b\")' && cat proj/b")
        assert "Permission denied: 'proj/a'" in err and out == "b"
        remove_rule(alice.state, rule.id)
        rule = add_rule(alice.state, "ask", "~/proj/*.env", agent="alice", on="path")
        status, out, err = run(alice, "python3 -c 'open(\"proj/c.env\", \"w\")'; "
                                      "python3 -c 'open(\"proj/c\", \"w\").write(\"c\")' && cat proj/a proj/c")
        assert "Permission denied: 'proj/c.env'" in err and out == "keep\nc"
    finally:
        remove_rule(alice.state, rule.id)


def test_sshfs_writes_follow_the_mode_and_the_path_rules(alice: Bench, tmp_path: Path) -> None:
    """sshfs, as a container host would use it: reads work, a write the mode refuses or a path
    rule denies is "Permission denied" (SFTP's status), the scope's other writes go through."""
    from kfs.runtime.rules import add_rule, remove_rule

    need("sshfs")
    need("fusermount3")
    mode(alice, "limited", ("~/proj",))
    rule = add_rule(alice.state, "deny", "~/proj/frozen*", agent="alice", on="path")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    options = (f"IdentityFile={alice.keys['alice']},StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,"
               "LogLevel=ERROR,BatchMode=yes,IdentitiesOnly=yes")
    subprocess.run([need("sshfs"), "-p", str(alice.port), "-o", options, "alice@127.0.0.1:", str(mnt)],
                   check=True, timeout=30)
    try:
        assert (mnt / "proj/a").read_text() == "keep\n"
        (mnt / "proj/new.txt").write_text("in scope\n")
        for path in ("outside.txt", "proj/frozen.txt", "proj/.git/config"):
            with pytest.raises(PermissionError):
                (mnt / path).write_text("x")
        with pytest.raises(PermissionError):
            (mnt / "proj/a").rename(mnt / "proj/frozen-a")
    finally:
        subprocess.run(["fusermount3", "-u", str(mnt)], check=False, timeout=30)
        remove_rule(alice.state, rule.id)
    assert run(alice, "cat proj/new.txt; ls proj")[1] == "in scope\na\nnew.txt\n"
