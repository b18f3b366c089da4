"""Policy rules: `allow`, `deny` or `ask` (wait for a person's decision: kfs.runtime.approvals)
for a shell glob, for one agent or for all, on one of three things:

- `command`: a command line (its words joined by spaces; a pattern without a space also
  matches the command's name),
- `path`: the path a write reaches (symlinks and `..` resolved; `~/` is the agent's home; a
  pattern without glob characters also covers everything under it),
- `host`: a host that curl or wget reaches.

Rules are kept in the "keys" database under `policy/<id>`, in the order they were added;
komputer.toml's `[[policy]]` rules come before them. The first rule that matches decides, and
what no rule matches is allowed (a restricted mode still applies). A session reads its rules
when it starts.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from kfs.accounts import agent_settings
from kfs.agents.records import merged_settings
from kfs.journal import append_event
from kfs.kstate import KState, Txn
from kfs.kstate.schema import U64
from kfs.vfs.policy import WritePolicy, effective_mode, stricter

PREFIX = b"policy/"
ACTIONS = ("allow", "deny", "ask")
SUBJECTS = ("command", "path", "host")

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Rule:
    id: int
    action: str
    pattern: str
    agent: str | None = None  # None: every agent
    note: str = ""  # what made it, when not `komputer policy add` (a limited mode's list, komputer.toml)
    on: str = "command"  # what the pattern is matched against: command, path or host
    reason: str = ""  # why, when an image hook decided (its own words)

    def matches(self, subject: str) -> bool:
        if self.on == "command":
            name = subject.split(" ", 1)[0].rsplit("/", 1)[-1]
            glob = _compiled(glob_regex(self.pattern))
            return glob.fullmatch(subject) is not None or " " not in self.pattern and glob.fullmatch(name) is not None
        return _compiled(self.regex()).fullmatch(subject.lower() if self.on == "host" else subject) is not None

    def regex(self) -> str:
        """The path or host pattern as a regular expression (a path without glob characters
        also covers what is under it; hosts are matched in lower case)."""
        if self.on == "host":
            return glob_regex(self.pattern.lower())
        if not any(c in self.pattern for c in "*?["):
            return re.escape(self.pattern.rstrip("/") or "/") + "(?:/.*)?"
        return glob_regex(self.pattern)

    def describe(self) -> str:
        if self.note.endswith("mode"):
            return f"not in the {self.note}'s {self.on} list"
        what = "" if self.on == "command" else f"{self.on} "
        why = f": {self.reason}" if self.reason else ""
        return f"{self.note or 'rule'} {self.id}: {self.action} {what}'{self.pattern}'{why}"

    def at_home(self, home: str) -> Rule:
        """The rule with a path pattern's `~/` made the agent's home."""
        if self.on != "path" or not (self.pattern == "~" or self.pattern.startswith("~/")):
            return self
        return replace(self, pattern=home.rstrip("/") + self.pattern[1:])


MAX_PATTERN = 4096  # bytes of a rule's pattern (UTF-8): a rule is a glob, not a document


def oversize(pattern: str) -> int:
    """The pattern's size in bytes when it is over MAX_PATTERN, else 0: such a rule is refused
    where rules are made (check) and skipped, with a warning, where stored ones are read
    (in_force), so that no tenant's rule costs another's session its time."""
    size = len(pattern.encode("utf-8", "surrogatepass"))
    return size if size > MAX_PATTERN else 0


@functools.lru_cache(maxsize=4096)
def glob_regex(pattern: str) -> str:
    """A shell glob as a regular expression matching exactly what fnmatch.fnmatchcase matches
    (`*` also matches `/`, `[!..]` negates, a backslash is literal, an inverted range matches
    nothing), made in time linear in the pattern: fnmatch.translate scans to the end again for
    every `[` with no `]` after it, so a 120 KB `[[[...` took minutes (bench/policy.py). A `*`
    before a fixed part is an atomic `(?>.*?fixed)`, as fnmatch makes it: the earliest place of
    the fixed part is as good as any later one, so a match never backtracks into it (no
    exponential `*a*a*a*b`). It names no group, so many can be joined into one (RuleSet)."""
    segments: list[list[str]] = [[]]  # the fixed parts between `*`s
    i, n = 0, len(pattern)
    closes = True  # whether a `]` may follow: once a scan finds none, no `[` opens a bracket
    while i < n:
        c = pattern[i]
        i += 1
        if c == "*":
            if segments[-1] or len(segments) == 1:
                segments.append([])
        elif c == "?":
            segments[-1].append(".")
        elif c == "[" and closes:
            j = i + (i < n and pattern[i] == "!")
            j += j < n and pattern[j] == "]"
            end = pattern.find("]", j)
            closes = end >= 0
            if closes:
                segments[-1].append(_bracket(pattern, i, end))
                i = end + 1
            else:
                segments[-1].append("\\[")
        else:
            segments[-1].append(re.escape(c))
    out = ["".join(segments[0])]
    out += [f"(?>.*?{''.join(fixed)})" for fixed in segments[1:-1]]
    if len(segments) > 1:
        out.append(".*" + "".join(segments[-1]))
    return "".join(out)


def _bracket(pattern: str, start: int, end: int) -> str:
    """The bracket expression pattern[start:end] (after its `[`, before its `]`) as fnmatch
    reads it: chunks split at each range's `-`, an inverted range dropped with its ends, `\\`,
    `-` and set operations escaped, in one pass (fnmatch joins the chunks of each dropped range
    by copying what follows, again and again)."""
    stuff = pattern[start:end]
    if "-" in stuff:
        chunks: list[str] = []
        k = start + 2 if pattern[start] == "!" else start + 1
        while (k := pattern.find("-", k, end)) >= 0:
            chunks.append(pattern[start:k])
            start, k = k + 1, k + 3
        if start < end:
            chunks.append(pattern[start:end])
        else:
            chunks[-1] += "-"
        # from the last chunk back, as fnmatch: a range whose start is after its end goes, and
        # the chunks on either side become one; `pieces` is that one, its first piece last
        kept: list[str] = []
        pieces = [chunks[-1]]
        for chunk in reversed(chunks[:-1]):
            if chunk[-1] > pieces[-1][0]:
                pieces[-1] = pieces[-1][1:]
                if not pieces[-1]:
                    pieces.pop()
                if len(chunk) > 1:
                    pieces.append(chunk[:-1])
                if not pieces:  # the first chunk went whole: nothing is left to compare
                    pieces.append("")
            else:
                kept.append("".join(reversed(pieces)))
                pieces = [chunk]
        kept.append("".join(reversed(pieces)))
        stuff = "-".join(s.replace("\\", r"\\").replace("-", r"\-") for s in reversed(kept))
    else:
        stuff = stuff.replace("\\", r"\\")
    stuff = re.sub(r"([&~|])", r"\\\1", stuff)
    if not stuff:
        return "(?!)"  # an empty set: nothing matches
    if stuff == "!":
        return "."
    if stuff[0] == "!":
        return f"[^{stuff[1:]}]"
    return f"[\\{stuff}]" if stuff[0] in "^[" else f"[{stuff}]"


@functools.lru_cache(maxsize=4096)
def _compiled(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.S)


class RuleSet:
    """The rules on paths (or hosts), matched as one regular expression: the first rule that
    matches decides, and a hundred rules cost one match, not a hundred (bench/policy.py). The
    expression is compiled once per process for the same rules (`joined`), not once per session."""

    def __init__(self, rules: tuple[Rule, ...] = ()) -> None:
        self.rules = rules
        self._re = joined(tuple(r.regex() for r in rules))
        self._lower = bool(rules) and rules[0].on == "host"
        # `first(subject)`: the first rule that matches (None: none does), remembered, since a
        # session writes the same paths again and again (a log, a file written in chunks)
        self.first = functools.lru_cache(maxsize=4096)(self._first)

    def _first(self, subject: str) -> Rule | None:
        if self._re is None:
            return None
        m = self._re.fullmatch(subject.lower() if self._lower else subject)
        return None if m is None else self.rules[int(m.lastgroup[1:])]  # type: ignore[index]


    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)


class CommandRules:
    """The rules on command lines, matched as two regular expressions (the whole line; the
    command's name, for patterns without a space) whatever their number: the first rule that
    matches either decides, as `first` says (bench/policy.py)."""

    def __init__(self, rules: tuple[Rule, ...] | list[Rule] = ()) -> None:
        self.rules = tuple(r for r in rules if r.on == "command")
        self._line = joined(tuple(glob_regex(r.pattern) for r in self.rules))
        # the names' expression keeps every rule's group number: a rule with a space never matches
        self._name = joined(tuple(glob_regex(r.pattern) if " " not in r.pattern else None for r in self.rules))

    def first(self, subject: str) -> Rule | None:
        """The first rule that matches `subject`, a command line (None: none does)."""
        if self._line is None:
            return None
        line = self._line.fullmatch(subject)
        found = len(self.rules) if line is None else int(line.lastgroup[1:])  # type: ignore[index]
        if self._name is not None:
            name = self._name.fullmatch(subject.split(" ", 1)[0].rsplit("/", 1)[-1])
            if name is not None:
                found = min(found, int(name.lastgroup[1:]))  # type: ignore[index]
        return self.rules[found] if found < len(self.rules) else None

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)


@functools.lru_cache(maxsize=64)
def joined(regexes: tuple[str | None, ...]) -> re.Pattern[str] | None:
    """Rules' expressions as one whose group `r<i>` is rule i's (None: a rule left out), so
    that the first rule that matches is the group a match names; None when none is left.
    Cached by the expressions (what the rules' patterns are, in order), so that every session
    with the same rules, in this process, shares one compiled expression: `joined.cache_info()`
    counts the sessions that did not compile. Bounded (64 sets: an agent's sessions share one,
    and an expression holds its patterns, up to MAX_PATTERN each)."""
    alternatives = "|".join(f"(?P<r{i}>{regex})" for i, regex in enumerate(regexes) if regex is not None)
    return re.compile(alternatives, re.S) if alternatives else None


def check(action: str, pattern: str, on: str = "command") -> None:
    """ValueError for a rule that could never be right."""
    if action not in ACTIONS:
        raise ValueError(f"{action!r}: expected allow, deny or ask")
    if on not in SUBJECTS:
        raise ValueError(f"{on!r}: a rule is on a command, a path or a host")
    if not pattern:
        raise ValueError("an empty pattern matches nothing")
    if size := oversize(pattern):
        raise ValueError(f"pattern too long: {size} bytes (at most {MAX_PATTERN})")
    if on == "path" and not pattern.startswith(("/", "~")) and not pattern.startswith("*"):
        raise ValueError(f"path pattern {pattern!r}: expected an absolute path or glob (or ~/...)")


def add_rule(state: KState, action: str, pattern: str, agent: str | None = None, by: str = "cli",
             on: str = "command") -> Rule:
    check(action, pattern, on)

    def body(txn: Txn) -> Rule:
        rule = Rule(txn.incr(b"next_policy_rule"), action, pattern, agent, on=on)
        txn.put("keys", PREFIX + U64.pack(rule.id),
                json.dumps({"action": action, "pattern": pattern, "agent": agent, "on": on}).encode())
        append_event(txn, "policy.add", rule=rule.id, action=action, pattern=pattern, agent=agent, on=on, by=by)
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


def in_force(state: KState, agent: str, home: str, mode: str, settings: dict,
             configured: tuple[dict, ...] = ()) -> list[Rule]:
    """The rules an agent's session obeys, in order: komputer.toml's `[[policy]]` (`configured`),
    the stored ones, then, in limited `mode`, the agent's command and host lists (anything else
    denied); path patterns' `~/` made the agent's `home`."""
    found = [Rule(i, d["action"], d["pattern"], d.get("agent"), note="komputer.toml rule", on=d.get("on", "command"))
             for i, d in enumerate(configured, 1) if d.get("agent") in (None, agent)]
    found += rules(state, agent)
    if mode == "limited":
        for on, key in (("command", "commands"), ("host", "hosts")):
            if settings.get(key):
                found += [Rule(0, "allow", p, on=on) for p in settings[key]]
                found.append(Rule(0, "deny", "*", note="limited mode", on=on))
    return [r.at_home(home) for r in found if not _skipped(r)]


def _skipped(rule: Rule) -> bool:
    """Whether a rule is over MAX_PATTERN: one stored before the bound (or put in the store some
    other way) is left out with a warning, never compiled: what it would have decided, the
    rules after it and the mode decide (a limited mode's list still ends in its `deny *`)."""
    if size := oversize(rule.pattern):
        log.warning("%s skipped: its pattern is %d bytes (at most %d)", rule.describe()[:80], size, MAX_PATTERN)
    return bool(size)


NETWORK_TOOLS = ("curl", "wget")  # what a command rule on them means for delegated programs (withholds_network)


def withholds_network(found: tuple[Rule, ...] | list[Rule]) -> bool:
    """Whether a command rule denies or asks for curl or wget (any of their command lines, before
    an `allow` of them all): then delegated programs get no network, as with a host rule that
    denies or asks. K sees what it is asked to run, not what a program does in its sandbox
    (`python3 -c 'urllib...'`, a host curl run by a script): the sandbox's network is what holds
    there. K's own curl and wget do not need it."""
    for tool in NETWORK_TOOLS:
        for rule in found:
            if rule.on != "command":
                continue
            if rule.action == "allow" and rule.matches(f"{tool} \0"):  # every line with arguments
                break
            name = rule.pattern.split(" ", 1)[0].rsplit("/", 1)[-1]  # the glob on the command's name
            if rule.action != "allow" and _compiled(glob_regex(name)).fullmatch(tool) is not None:
                return True
    return False


def first(found: list[Rule], subject: str, on: str = "command") -> Rule | None:
    """The first rule on `on` that matches `subject` (None: no rule does, and it is allowed)."""
    return next((r for r in found if r.on == on and r.matches(subject)), None)


def fork_bounds(fork: dict | None) -> tuple[str, ...] | None:
    """What a fork lets any write in it reach: a limited fork's scope (an empty one: nothing),
    None for another fork or none. It narrows the agent's own scope, never widens it: an agent
    whose scope is `~` writes only under `~/proj` in a fork made `--mode limited --scope ~/proj`."""
    if fork is None or fork["mode"] != "limited":
        return None
    return tuple(fork.get("scope") or ())


def fork_policy(state: KState, fork: dict) -> WritePolicy | None:
    """The policy of `komputer mount --fork N`: the fork's mode, scope and the mandatory list,
    `~/` being its agent's home (None for a `full` fork: the administrator's mount)."""
    from kfs.agents.records import find_agent

    found = find_agent(state, fork["agent"]) if fork.get("agent") else None
    home = found.home if found is not None else "/"
    return WritePolicy.make(fork["mode"], home, tuple(fork.get("scope") or ()), bounds=fork_bounds(fork))


@dataclass(frozen=True, slots=True)
class Governance:
    """What one session of an agent obeys: its settings (komputer.toml's and the stored ones,
    kfs.agents.records.merged_settings), its write policy (None: no restriction at all), its
    rules in force (commands, paths, hosts)."""

    settings: dict
    policy: WritePolicy | None
    rules: tuple[Rule, ...]

    def of(self, on: str) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.on == on)


def governance(state: KState, agent: str, home: str, session_mode: str = "full",
               configured: dict | None = None, *, runs_hooks: bool = False, fork: dict | None = None) -> Governance:
    """The one way every front end (the shell's worker, SFTP, an agent's mount) learns what a
    session of `agent` obeys; `configured`: what komputer.toml says of the agent
    (ServerConfig.configured). A front end that does not run the image's code (`runs_hooks`
    false: an agent's mount, in kfs, which loads none) refuses every write where an image write
    hook would judge it, naming the hook: an agent cannot go around a hook by writing another
    way (fail closed). The shell's worker and SFTP run the hooks (kshell.worker.hooks).
    `fork`: the record of the fork the session works in (kfs.forks): its mode is a floor, and
    a limited fork's scope bounds every write (`fork_bounds`)."""
    configured = configured or {}
    if fork is not None:
        session_mode = stricter(session_mode or "full", fork["mode"])
    settings = merged_settings(agent_settings(state, agent), configured.get("settings"))
    if fork is not None and fork.get("scope") and not settings.get("scope"):
        settings = {**settings, "scope": list(fork["scope"])}  # the scope of a limited session in it
    found = tuple(in_force(state, agent, home, effective_mode(settings, session_mode), settings,
                           tuple(configured.get("policy") or ())))
    policy = WritePolicy.of_agent(settings, home, session_mode, RuleSet(tuple(r for r in found if r.on == "path")),
                                  fork_bounds(fork))
    if not runs_hooks:
        from kfs.runtime import image

        record = image.current(state)
        hook = next((h for h in record["spec"]["hooks"] if h["on"] == "write" and (h["agents"] is None or agent in h["agents"])),
                    None) if record is not None else None
        if hook is not None:
            refusal = Rule(hook["index"], "deny", hook["handler"], note="image hook", on="path",
                           reason="it judges writes over ssh and sftp only")
            policy = policy or WritePolicy("full", home)
            policy.hook = lambda path: refusal
    return Governance(settings, policy, found)
