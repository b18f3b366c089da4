"""Policy rules on command lines: `allow` or `deny` (and, once approvals exist, `ask`) for a
shell glob matched against a command's words joined by spaces, for one agent or for all.

Rules are kept in the "keys" database under `policy/<id>`, in the order they were added; the
first rule that matches decides, and a command no rule matches is allowed. A session reads
its rules when it starts.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass

from kfs.journal import append_event
from kfs.kstate import KState, Txn
from kfs.kstate.schema import U64

PREFIX = b"policy/"
ACTIONS = ("allow", "deny", "ask")


@dataclass(frozen=True, slots=True)
class Rule:
    id: int
    action: str
    pattern: str
    agent: str | None = None  # None: every agent
    note: str = ""  # what made it, when not `komputer policy add` (a limited mode's command list)

    def matches(self, command: str) -> bool:
        """The pattern against the whole command line, or (a pattern without a space) its name."""
        name = command.split(" ", 1)[0]
        return fnmatch.fnmatchcase(command, self.pattern) or " " not in self.pattern and \
            fnmatch.fnmatchcase(name.rsplit("/", 1)[-1], self.pattern)

    def describe(self) -> str:
        return f"not in the {self.note}'s command list" if self.note else \
            f"rule {self.id}: {self.action} '{self.pattern}'"


def add_rule(state: KState, action: str, pattern: str, agent: str | None = None, by: str = "cli") -> Rule:
    if action not in ACTIONS:
        raise ValueError(f"{action!r}: expected allow, deny or ask")
    if action == "ask":
        raise ValueError("ask needs approvals, which K does not have yet: use allow or deny")
    if not pattern:
        raise ValueError("an empty pattern matches nothing")

    def body(txn: Txn) -> Rule:
        rule = Rule(txn.incr(b"next_policy_rule"), action, pattern, agent)
        txn.put("keys", PREFIX + U64.pack(rule.id),
                json.dumps({"action": action, "pattern": pattern, "agent": agent}).encode())
        append_event(txn, "policy.add", rule=rule.id, action=action, pattern=pattern, agent=agent, by=by)
        return rule

    return state.write(body)


def remove_rule(state: KState, rule_id: int, by: str = "cli") -> bool:
    def body(txn: Txn) -> bool:
        gone = txn.delete("keys", PREFIX + U64.pack(rule_id))
        if gone:
            append_event(txn, "policy.remove", rule=rule_id, by=by)
        return gone

    return state.write(body)


def rules(state: KState, agent: str | None = None) -> list[Rule]:
    """The rules in force for `agent` (every rule when None), oldest first."""
    with state.read() as txn:
        found = [Rule(U64.unpack(bytes(k[len(PREFIX):]))[0], **json.loads(v)) for k, v in txn.scan("keys", PREFIX)]
    return [r for r in found if agent is None or r.agent in (None, agent)]


def decide(found: list[Rule], command: str) -> Rule | None:
    """The first rule that matches `command` (None: no rule does, and it is allowed)."""
    return next((r for r in found if r.matches(command)), None)
