"""Approvals over real ssh: an `ask` rule pauses the command (one line on the channel, the
approval in KState, an event); `komputer decide` allows it (the same command runs on, inside
its script, its output reaching the agent) or rejects it (126 and the reason); Ctrl-C withdraws
it; a connection that goes away leaves it for the session, whose resume (K_SESSION) applies the
decision; a server killed meanwhile changes nothing of that. Write and host rules pause the
same way."""

from __future__ import annotations

import http.server
import json
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kserver import HANG, Bench, keygen, need
from test_process_recovery import free_port, serve

from kfs.journal import events_since
from kfs.kstate import KState
from kfs.runtime import approvals
from kfs.runtime.rules import add_rule, remove_rule
from kshell.delegate.config import set_agent_overrides

ROOT = Path(__file__).resolve().parents[2]


def komputer(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kshell.cli", *args, "--state", str(state)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def pending(state: KState, timeout: float = HANG) -> dict:
    """The one pending approval, once it is there."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = approvals.listing(state)
        if found:
            assert len(found) == 1, found
            return found[0]
        time.sleep(0.05)
    raise AssertionError("no approval was asked")


def start(b: Bench | tuple[int, Path], command: str, *, session: str | None = None) -> subprocess.Popen[bytes]:
    """ssh alice@ the bench's server (or a (port, key) one's) running `command`, in the background."""
    if isinstance(b, tuple):
        port, key = b
        argv = [need("ssh"), "-p", str(port), "-i", str(key), "-o", "StrictHostKeyChecking=no", "-o",
                "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "BatchMode=yes", "-F", "/dev/null"]
    else:
        argv = [need("ssh"), *b.ssh_options("alice")]
    if session is not None:
        argv += ["-o", f"SetEnv=K_SESSION={session}"]
    return subprocess.Popen([*argv, "alice@127.0.0.1", command], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)


@pytest.fixture
def rules(bench: Bench) -> Iterator[list]:
    made: list = []
    yield made
    for rule in made:
        remove_rule(bench.state, rule.id)
    for record in approvals.listing(bench.state, approvals.OPEN):  # nothing left for the next test
        approvals.withdraw(bench.state, record["id"], "test over")


def test_ask_then_allow_runs_the_same_command_inside_its_script(bench: Bench, rules: list) -> None:
    rules.append(add_rule(bench.state, "ask", "rm -r *", agent="alice"))
    p = start(bench, "mkdir -p build/x; echo before; rm -r build; echo rm=$?; ls -d build 2>&1; echo after")
    record = pending(bench.state)
    assert record["action"] == "rm -r build" and record["agent"] == "alice" and record["kind"] == "command"
    listed = komputer(bench.root / "state", "approvals")
    assert listed.returncode == 0 and listed.stdout.split()[0] == str(record["id"])
    assert "rm -r build" in listed.stdout
    decided = komputer(bench.root / "state", "decide", str(record["id"]), "allow")
    assert decided.returncode == 0, decided.stderr
    out, err = p.communicate(timeout=30)
    assert out.decode().splitlines() == ["before", "rm=0", "ls: cannot access 'build': No such file or directory",
                                         "after"]
    assert f"K: waiting for approval {record['id']}: rm -r build" in err.decode()
    again = komputer(bench.root / "state", "decide", str(record["id"]), "reject")
    assert again.returncode == 1 and f"approval {record['id']} is applied" in again.stderr
    kinds = [(e["type"], e.get("by")) for e in events_since(bench.state, 0, 1 << 30) if e.get("approval") == record["id"]]
    assert kinds[0] == ("approval.ask", None) and kinds[1][0] == "approval.decide" and kinds[1][1].startswith("cli:")
    assert kinds[2][0] == "approval.apply"


def test_ask_then_reject_fails_with_126_and_the_reason(bench: Bench, rules: list) -> None:
    rules.append(add_rule(bench.state, "ask", "touch *", agent="alice"))
    p = start(bench, "touch made; echo status=$?; ls made")
    record = pending(bench.state)
    decided = komputer(bench.root / "state", "decide", str(record["id"]), "reject", "--reason", "not today")
    assert decided.returncode == 0
    out, err = p.communicate(timeout=30)
    assert out.decode() == "status=126\n"
    assert f"K: touch made: approval {record['id']} rejected by cli:" in err.decode()
    assert "(not today)" in err.decode() and "No such file or directory" in err.decode()
    event = next(e for e in events_since(bench.state, 0, 1 << 30)
                 if e["type"] == "approval.decide" and e["approval"] == record["id"])
    assert event["decision"] == "reject" and event["reason"] == "not today"


def test_an_allowed_wrapper_is_not_asked_again_for_the_command_it_runs(bench: Bench, rules: list) -> None:
    """`timeout 5 rm -r d` is judged with the `rm -r d` it runs: asked once; K's timeout then
    runs rm, which the same rule does not ask about again."""
    rules.append(add_rule(bench.state, "ask", "rm -r *", agent="alice"))
    p = start(bench, "mkdir -p d/x; timeout 5 rm -r d; echo rm=$?; ls -d d 2>&1")
    record = pending(bench.state)
    assert record["action"] == "timeout 5 rm -r d"
    assert komputer(bench.root / "state", "decide", str(record["id"]), "allow").returncode == 0
    out, err = p.communicate(timeout=30)
    assert out.decode().splitlines() == ["rm=0", "ls: cannot access 'd': No such file or directory"]
    every = ("pending", *approvals.DECIDED, "applied", "withdrawn")
    assert [r["action"] for r in approvals.listing(bench.state, every) if r["id"] >= record["id"]] == \
        ["timeout 5 rm -r d"]


def test_a_path_rule_asks_before_the_write_and_a_host_rule_before_the_fetch(bench: Bench, rules: list) -> None:
    rules.append(add_rule(bench.state, "ask", "~/guarded/*", agent="alice", on="path"))
    rules.append(add_rule(bench.state, "deny", "/home/alice/locked", agent="alice", on="path"))
    rules.append(add_rule(bench.state, "deny", "*.example.org", agent="alice", on="host"))
    p = start(bench, "mkdir -p guarded locked; echo hi > guarded/f; echo more >> guarded/f; cat guarded/f; "
                     "echo no > locked/x; curl -sS http://api.example.org/; echo curl=$?")
    record = pending(bench.state)
    assert record["kind"] == "write" and record["action"] == "write /home/alice/guarded/f"
    komputer(bench.root / "state", "decide", str(record["id"]), "allow")
    out, err = p.communicate(timeout=30)
    assert out.decode() == "hi\nmore\ncurl=7\n"  # the second write to the same path did not ask again
    text = err.decode()
    assert "mkdir: cannot create directory 'locked': Permission denied" in text  # the directory itself is ruled
    assert "locked/x: Permission denied" in text
    assert f"K: /home/alice/locked: denied by policy (rule {rules[1].id}: deny path '/home/alice/locked')" in text
    assert "Failed to connect to api.example.org: denied by policy" in text


def test_ctrl_c_withdraws_and_a_timeout_expires(make_server, tmp_path: Path) -> None:  # noqa: ANN001
    from kshell.server.config import ServerConfig

    b = make_server(ServerConfig(approval_timeout=1.0))
    add_rule(b.state, "ask", "rm *")
    started = time.monotonic()
    done = b.ssh("touch f; rm f; echo rm=$?; ls f")
    assert done.stdout == b"rm=126\nf\n" and 1.0 <= time.monotonic() - started < HANG  # waited its 1 s, no hang
    assert b"no decision within 1 s" in done.stderr
    p = subprocess.Popen([need("ssh"), "-tt", *b.ssh_options("alice"), "alice@127.0.0.1", "rm f; echo rm=$?"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    record = pending(b.state)
    assert p.stdin is not None
    p.stdin.write(b"\x03")
    p.stdin.flush()
    p.communicate(timeout=30)
    assert approvals.get(b.state, record["id"])["status"] == "withdrawn"


def test_disconnect_decide_resume_and_a_server_killed_meanwhile(tmp_path: Path) -> None:
    """ask -> the connection goes away -> the server is SIGKILLed -> restarted: still pending,
    decided -> the session resumed with K_SESSION gets the result."""
    state_dir = tmp_path / "state"
    for args in (["init"], ["agent", "add", "alice"]):
        assert komputer(state_dir, *args).returncode == 0
    key = keygen(tmp_path / "alice_key")
    assert komputer(state_dir, "keys", "add", "alice", str(key) + ".pub").returncode == 0
    assert komputer(state_dir, "policy", "add", "ask", "cat *").returncode == 0
    port = free_port()
    server = serve(state_dir, port)
    b = (port, key)
    try:
        p = start(b, "echo secret-result > out; cat out; echo after", session="work")
        with KState(state_dir, create=False) as state:
            record = pending(state)
        p.kill()  # the client goes away while the command waits
        p.wait()
        server.kill()  # and then the server, without a chance to clean up
        server.wait()
        server = serve(state_dir, port)
        listed = komputer(state_dir, "approvals")
        assert listed.stdout.startswith(f"{record['id']} alice/work command ") and "cat out" in listed.stdout
        assert komputer(state_dir, "decide", str(record["id"]), "allow").returncode == 0
        resumed = start(b, "echo status=$?", session="work")
        out, err = resumed.communicate(timeout=60)
        assert out.decode() == "secret-result\nstatus=0\n", err
        assert f"K: approval {record['id']} was allowed by cli:" in err.decode()
        with KState(state_dir, create=False) as state:
            assert approvals.get(state, record["id"])["status"] == "applied"
        again = start(b, "echo nothing-left", session="work")
        assert again.communicate(timeout=60)[0] == b"nothing-left\n"
    finally:
        server.kill()
        server.wait()


def test_a_limited_agents_host_list(bench: Bench, rules: list) -> None:
    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello\n")

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]
    set_agent_overrides(bench.state, "alice", mode="limited", scope=("~/",), hosts=("127.0.0.1",), network=True)
    try:
        done = bench.ssh(f"curl -s http://127.0.0.1:{port}/; curl -sS http://localhost:{port}/; echo curl=$?")
        assert done.stdout == b"hello\ncurl=7\n"
        assert b"Failed to connect to localhost: denied by policy (not in the limited mode's host list)" in done.stderr
    finally:
        set_agent_overrides(bench.state, "alice", mode="full", hosts=(), network=False)
        httpd.shutdown()


def test_komputer_toml_sets_modes_and_rules(make_server) -> None:  # noqa: ANN001
    from kshell.server.config import ServerConfig

    b = make_server(ServerConfig(agents={"alice": {"mode": "readonly"}},
                                 policy=({"action": "deny", "pattern": "date*", "agent": "bob"},)))
    done = b.ssh("echo x > f; date >/dev/null; echo $?")
    assert b"f: Read-only file system" in done.stderr and done.stdout == b"0\n"
    done = b.ssh("echo x > f && cat f; date; echo $?", user="bob")
    assert done.stdout == b"x\n126\n"
    assert b"K: date: denied by policy (komputer.toml rule 1: deny 'date*')" in done.stderr


def test_approvals_follow_and_json(bench: Bench, rules: list) -> None:
    rules.append(add_rule(bench.state, "ask", "cp *", agent="alice"))
    follow = subprocess.Popen([sys.executable, "-m", "kshell.cli", "approvals", "--follow", "--json", "--state",
                               str(bench.root / "state")], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:  # no wait for --follow to start: it lists what is pending, then follows from before that
        p = start(bench, "echo a > a; cp a b; cat b")
        assert follow.stdout is not None
        ready, _, _ = select.select([follow.stdout], [], [], 60)  # a hang fails, never blocks the suite
        assert ready, "komputer approvals --follow printed nothing in 60 s"
        line = json.loads(follow.stdout.readline())
        assert line["action"] == "cp a b" and line["status"] == "pending" and "replay" not in line
        komputer(bench.root / "state", "decide", str(line["id"]), "allow")
        assert p.communicate(timeout=30)[0] == b"a\n"
    finally:
        follow.kill()
        follow.wait()


def until(check, what: str, timeout: float = HANG):  # noqa: ANN001, ANN201
    """check()'s first true value, polled until `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"never: {what}")


def test_a_flood_of_asks_stops_at_the_agents_bound_and_spares_another_agent(make_server) -> None:  # noqa: ANN001
    """alice's eight background `rm`s: four wait, four fail at once with 126 and say why (an
    event each); bob still asks and is decided. alice's client goes away: her unnamed
    session's approvals are withdrawn; a named session's stay, still bounded."""
    from kshell.server.config import ServerConfig

    b = make_server(ServerConfig(approvals_max_pending=4))
    add_rule(b.state, "ask", "rm *")
    flood = start(b, "for i in 1 2 3 4 5 6 7 8; do rm f$i & done; wait; echo done")

    def alices(status: str = "pending") -> list[dict]:
        return [r for r in approvals.listing(b.state, (status,)) if r["agent"] == "alice"]

    def refused() -> list[dict]:
        return [e for e in events_since(b.state, 0, 1 << 30) if e["type"] == "approval.refuse"]

    until(lambda: len(alices()) == 4 and len(refused()) == 4, "four pending and four refused")
    assert {e["agent"] for e in refused()} == {"alice"} and {e["pending"] for e in refused()} == {4}
    bob = subprocess.Popen([need("ssh"), *b.ssh_options("bob"), "bob@127.0.0.1", "touch g; rm g; echo rm=$?"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    bobs = until(lambda: [r for r in approvals.listing(b.state) if r["agent"] == "bob"], "bob's approval")
    assert komputer(b.root / "state", "decide", str(bobs[0]["id"]), "allow").returncode == 0
    assert bob.communicate(timeout=30)[0] == b"rm=0\n"
    flood.kill()  # alice's client goes away while her approvals wait
    flood.wait()
    assert flood.stderr is not None
    told = flood.stderr.read().decode()
    assert told.count("too many pending approvals (4); decide or withdraw some first") == 4, told
    assert until(lambda: not alices() and len(alices("withdrawn")) == 4, "withdrawn on the hangup")
    named = start(b, "for i in 1 2 3 4 5 6; do rm h$i & done; wait", session="work")
    until(lambda: len(alices()) == 4 and len(refused()) == 6, "a named session's flood bounded too")
    named.kill()
    named.wait()
    again = start(b, "rm one-more; echo rm=$?", session="work")
    out, err = again.communicate(timeout=60)  # the named session's four still wait: one more is refused
    assert out == b"rm=126\n" and b"K: rm one-more: too many pending approvals (4)" in err, err
    assert len(alices()) == 4 and {r["session"] for r in alices()} == {"work"}


def test_background_jobs_that_outlive_their_exec_keep_waiting_within_the_bound(make_server) -> None:  # noqa: ANN001
    """An unnamed session's exec that starts jobs and returns: the client is gone, the jobs live
    on and their approvals stay pending (two, the bound; the third job fails at once); one
    allowed then runs."""
    from kshell.server.config import ServerConfig

    b = make_server(ServerConfig(approvals_max_pending=2))
    add_rule(b.state, "ask", "rm *")
    done = b.ssh("touch f1 f2 f3; for i in 1 2 3; do rm f$i & done; echo started")
    assert done.returncode == 0 and done.stdout == b"started\n"  # the client has left
    waiting = until(lambda: len(approvals.listing(b.state)) == 2 and approvals.listing(b.state), "two pending")
    assert {r["action"] for r in waiting} <= {"rm f1", "rm f2", "rm f3"}
    assert all(r["waiter"] is not None for r in waiting)  # their jobs still wait for them
    until(lambda: [e for e in events_since(b.state, 0, 1 << 30) if e["type"] == "approval.refuse"], "the refusal")
    assert komputer(b.root / "state", "decide", str(waiting[0]["id"]), "allow").returncode == 0
    gone = waiting[0]["action"].split()[1]
    until(lambda: gone not in b.ssh("ls").stdout.decode().split(), f"{gone} removed by its allowed job")
