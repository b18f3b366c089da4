"""Approvals and rules on paths and hosts, on the lowest rungs: the approval's life in KState
(ask, decide once, claim once, withdraw, expire, let go, orphans) with its events; path rules
in PathFS (deny is EACCES, allow passes a restricted mode, ask waits for the session's
decision and runs the same operation again, nobody to decide refuses); host rules in the
shell's host table; komputer.toml's agents and rules."""

from __future__ import annotations

import errno
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kfs.agents.records import add_agent, merged_settings
from kfs.journal import events_since
from kfs.kstate import KState
from kfs.runtime import approvals
from kfs.runtime.rules import Rule, RuleSet, add_rule, governance
from kfs.vfs import VFS, Cred, PathFS
from kfs.vfs.policy import NeedsApproval, PolicyDenial, Refusal
from kshell.server.config import load_config
from kshell.tools.net.hosts import FetchError, HostTable, Request
from tests.hang import clock_past

HOME = "/home/alice"


@pytest.fixture
def state(tmp_path: Path) -> Iterator[KState]:
    with KState(tmp_path / "state", create=True) as s:
        add_agent(VFS(s, by="test"), "alice")
        yield s


def ask(state: KState, **kw: object) -> dict:
    args = {"agent": "alice", "session": "work", "kind": "command", "action": "rm -r build", "rule": 1,
            "replay": {"argv": ["rm", "-r", "build"], "cwd": HOME}} | kw
    return approvals.ask(state, **args)  # type: ignore[arg-type]


def test_an_approval_is_decided_once_and_applied_once(state: KState) -> None:
    record = ask(state)
    assert [r["id"] for r in approvals.listing(state)] == [record["id"]]
    assert approvals.claim(state, record["id"]) is None  # pending: nothing to apply yet
    approvals.decide(state, record["id"], True, by="cli:0", reason="ok")
    with pytest.raises(ValueError, match=f"approval {record['id']} is allowed by cli:0 \\(ok\\)"):
        approvals.decide(state, record["id"], False, by="cli:0")
    with pytest.raises(LookupError):
        approvals.decide(state, 999, True, by="cli:0")
    assert approvals.listing(state) == []
    claimed = approvals.claim(state, record["id"])
    assert claimed is not None and claimed["status"] == "allowed"
    assert approvals.claim(state, record["id"]) is None  # the second taker gets nothing
    assert approvals.get(state, record["id"])["status"] == "applied"
    types = [e["type"] for e in events_since(state, 0, 1 << 30) if e.get("approval") == record["id"]]
    assert types == ["approval.ask", "approval.decide", "approval.apply"]
    assert all("replay" not in e for e in events_since(state, 0, 1 << 30))


def test_withdrawn_expired_and_orphaned_approvals(state: KState) -> None:
    gone = ask(state)
    approvals.withdraw(state, gone["id"], "interrupted")
    with pytest.raises(ValueError, match="withdrawn"):
        approvals.decide(state, gone["id"], True, by="cli:0")
    late = ask(state, timeout=0.05)
    clock_past(int(late["expires"] * 1e9) + 1_000_000)  # its timeout has passed (1 ms: past a float second's rounding)
    assert approvals.expire_due(state) == 1
    assert approvals.get(state, late["id"])["status"] == "expired"
    mine = ask(state)  # its waiter is this (live) process: no orphan until it lets go
    assert mine["id"] not in approvals.orphans(state, "alice", "work")
    approvals.let_go(state, mine["id"])
    assert approvals.orphans(state, "alice", "work") == [mine["id"]]  # late still has its (live) waiter
    assert approvals.orphans(state, "alice", "other") == []
    approvals.decide(state, mine["id"], False, by="cli:0", reason="no")
    taken = approvals.claim(state, mine["id"], waiter=False)
    assert taken is not None and taken["status"] == "rejected" and taken["reason"] == "no"


def test_one_agents_flood_of_asks_stops_at_its_bound_and_not_anothers(state: KState) -> None:
    mine = [ask(state, max_pending=4) for _ in range(4)]
    with pytest.raises(approvals.TooManyPending) as info:
        ask(state, action="rm -r more", max_pending=4)
    assert str(info.value) == "too many pending approvals (4); decide or withdraw some first"
    assert len(approvals.listing(state)) == 4  # the refused ask left no record
    bobs = ask(state, agent="bob", session="b", max_pending=4)  # another agent's count is its own
    assert bobs["status"] == "pending"
    refused = [e for e in events_since(state, 0, 1 << 30) if e["type"] == "approval.refuse"]
    assert [(e["agent"], e["action"], e["pending"]) for e in refused] == [("alice", "rm -r more", 4)]
    approvals.decide(state, mine[0]["id"], False, by="cli:0")  # decided: no longer pending
    approvals.withdraw(state, mine[1]["id"], "interrupted")
    late = ask(state, timeout=1e-9, max_pending=4)  # past its timeout at once: it counts no more
    assert [ask(state, max_pending=4)["status"] for _ in range(2)] == ["pending", "pending"]
    with pytest.raises(approvals.TooManyPending):
        ask(state, max_pending=4)
    assert late["status"] == "pending"
    assert ask(state, max_pending=0)["status"] == "pending"  # 0: no bound


def test_wait_returns_the_decision_or_gives_up(state: KState) -> None:
    record = ask(state)
    threading.Timer(0.2, lambda: approvals.decide(state, record["id"], True, by="cli:0")).start()
    decided = approvals.wait(state, record["id"], lambda: False, poll=0.02)
    assert decided is not None and decided["status"] == "allowed"
    other = ask(state)
    assert approvals.wait(state, other["id"], lambda: True) is None


def fs_with(state: KState, *rules: Rule, mode: str = "full") -> PathFS:
    from kfs.agents.records import find_agent
    from kfs.vfs.policy import WritePolicy

    vfs = VFS(state, by="test")
    alice = find_agent(state, "alice")
    assert alice is not None
    PathFS(vfs).mkdir(f"{HOME}/proj/keep", parents=True)
    PathFS(vfs).chown(f"{HOME}/proj", alice.uid, alice.gid)
    PathFS(vfs).chown(f"{HOME}/proj/keep", alice.uid, alice.gid)
    policy = WritePolicy.make(mode, HOME, ("~/proj",), rules=RuleSet(tuple(r.at_home(HOME) for r in rules)))
    return PathFS(vfs, cred=Cred(alice.uid, alice.gid), cwd=HOME, home=HOME, policy=policy)


def test_path_rules_come_before_the_mode(state: KState) -> None:
    fs = fs_with(state, Rule(1, "deny", "~/proj/keep", on="path"), Rule(2, "allow", "~/notes*", on="path"),
                 mode="limited")
    with pytest.raises(PolicyDenial) as info:
        fs.write_file("proj/keep/x", b"x")  # under a denied directory
    assert info.value.errno == errno.EACCES and "rule 1: deny path '/home/alice/proj/keep'" in info.value.why
    fs.write_file("notes.md", b"allowed outside the scope by a rule")
    fs.write_file("proj/other", b"the scope as before")
    with pytest.raises(Refusal):
        fs.write_file("elsewhere", b"x")
    with pytest.raises(Refusal):
        fs.write_file(".bashrc", b"x")  # the mandatory list before any rule
    assert fs.policy is not None and fs.policy.told == ["K: /home/alice/proj/keep/x: denied by policy "
                                                         "(rule 1: deny path '/home/alice/proj/keep')"]


def test_an_ask_on_a_path_waits_then_runs_the_same_operation(state: KState) -> None:
    fs = fs_with(state, Rule(1, "ask", "~/proj/*.env", on="path"))
    assert fs.policy is not None and fs.policy.mode == "full"
    with pytest.raises(PolicyDenial, match="Permission denied"):  # nobody to decide: refused, and said why
        fs.write_file("proj/a.env", b"x")
    assert "which only a shell session can wait for" in fs.policy.told[-1]
    asked: list[NeedsApproval] = []
    fs.policy.approve = lambda e: asked.append(e) or e.physical.endswith("a.env")
    fs.write_file("proj/a.env", b"A=1\n")
    fs.write_file("proj/a.env", b"A=2\n")  # granted for the session: asked once
    fs.chmod("proj/a.env", 0o600)
    assert [e.physical for e in asked] == [f"{HOME}/proj/a.env"]
    with pytest.raises(PermissionError):
        fs.write_file("proj/b.env", b"x")  # decided no
    assert not fs.exists("proj/b.env") and fs.read_file("proj/a.env") == b"A=2\n"


def test_host_rules_in_the_shells_host_table() -> None:
    table = HostTable({"api": {"/": "hi"}})
    table.rules = (Rule(1, "deny", "*.internal", on="host"), Rule(2, "ask", "api", on="host"))
    request = Request("GET", "http://db.internal/x", "db.internal", "/x", {}, b"")
    with pytest.raises(FetchError) as info:
        table.fetch(request, None)
    assert info.value.code == 7 and "denied by policy (rule 1: deny host '*.internal')" in info.value.message
    api = Request("GET", "http://api/", "api", "/", {}, b"")
    with pytest.raises(FetchError, match="which nothing here can wait for"):
        table.fetch(api, None)
    table.approve = lambda host, url, rule: (True, "")
    assert table.fetch(api, None).body == b"hi"


def test_komputer_toml_agents_and_policy(tmp_path: Path, state: KState) -> None:
    toml = tmp_path / "komputer.toml"
    toml.write_text('[agents.alice]\nmode = "limited"\nscope = ["~/proj"]\nallow_hosts = ["api"]\n\n'
                    '[[policy]]\naction = "ask"\npattern = "rm -r *"\n\n'
                    '[[policy]]\naction = "deny"\non = "path"\npattern = "~/proj/prod"\nagent = "alice"\n')
    config = load_config(toml)
    gov = governance(state, "alice", HOME, "full", config.configured("alice"))
    assert gov.policy is not None and gov.policy.mode == "limited" and gov.policy.allowed == (f"{HOME}/proj",)
    assert [(r.action, r.on, r.pattern) for r in gov.rules] == [
        ("ask", "command", "rm -r *"), ("deny", "path", f"{HOME}/proj/prod"), ("allow", "host", "api"),
        ("deny", "host", "*")]
    add_rule(state, "deny", "curl *", agent="alice")
    assert [r.pattern for r in governance(state, "alice", HOME, "full", config.configured("alice")).of("command")] \
        == ["rm -r *", "curl *"]  # the file's rules first, then the stored ones
    assert merged_settings({"mode": "plan"}, {"mode": "limited", "scope": ["x"]}) == {"mode": "plan", "scope": ["x"]}
    assert merged_settings({"mode": "full"}, {"mode": "readonly"})["mode"] == "readonly"  # the stricter
    for bad, message in (('[agents.a]\nmood = "x"\n', "unknown setting 'mood'"),
                         ('[agents.a]\nmode = "sometimes"\n', "mode 'sometimes'"),
                         ('[[policy]]\naction = "maybe"\npattern = "x"\n', "'maybe': expected allow, deny or ask"),
                         ('[[policy]]\naction = "deny"\non = "path"\npattern = "rel/x"\n', "expected an absolute path"),
                         ('[polcy]\n', "unknown section [polcy]")):
        toml.write_text(bad)
        with pytest.raises(ValueError, match=message.replace("[", "\\[").replace("(", "\\(")):
            load_config(toml)


def test_an_unnamed_sessions_approval_dies_with_its_waiter(state: KState) -> None:
    record = ask(state, resumable=False)
    kept = ask(state)
    assert approvals.abandon(state) == 0  # this process still waits for both
    approvals.let_go(state, record["id"])
    approvals.let_go(state, kept["id"])
    assert approvals.abandon(state) == 1
    assert approvals.get(state, record["id"])["status"] == "withdrawn"
    assert approvals.get(state, kept["id"])["status"] == "pending"  # a named session resumes it
