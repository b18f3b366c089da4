"""A rule's pattern is bounded and compiled in linear time, once per process: a pattern over
MAX_PATTERN is refused where rules are made (`komputer policy add`, komputer.toml) and skipped
with a warning where an older state stored one; the largest one allowed compiles in a number of
steps that doubles when its size does (no clock: Python's own steps, traced); the translation
matches exactly what fnmatch.fnmatchcase matches; a second session with the same rules
compiles nothing."""

from __future__ import annotations

import fnmatch
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_image_refusals import komputer

from kfs.kstate import KState
from kfs.kstate.schema import U64
from kfs.runtime import rules
from kfs.runtime.rules import MAX_PATTERN, PREFIX, CommandRules, Rule, RuleSet, add_rule, glob_regex, governance
from kfs.vfs import VFS, Cred, PathFS
from kfs.vfs.policy import PolicyDenial
from kshell.server.config import load_config

HOME = "/home/alice"


def test_policy_add_refuses_a_120_kb_pattern(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert komputer(state, "init").returncode == 0
    done = komputer(state, "policy", "add", "--path", "deny", "/" + "[" * 120_000)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"komputer policy add: pattern too long: 120001 bytes (at most {MAX_PATTERN})\n"
    largest = "/" + "[" * (MAX_PATTERN - 1)  # the bound itself is allowed
    assert komputer(state, "policy", "add", "--path", "deny", largest).returncode == 0
    listed = komputer(state, "policy", "list")
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == 1


def test_the_bound_is_in_bytes_and_holds_in_komputer_toml(tmp_path: Path, state: KState) -> None:
    wide = "/" + "é" * (MAX_PATTERN // 2)  # 2,049 characters, 4,097 bytes
    with pytest.raises(ValueError, match=f"pattern too long: {MAX_PATTERN + 1} bytes"):
        add_rule(state, "deny", wide, on="path")
    toml = tmp_path / "komputer.toml"
    toml.write_text(f'[[policy]]\naction = "deny"\npattern = "{"[" * 5000}"\n')
    with pytest.raises(ValueError, match=r"komputer.toml: \[\[policy\]\] 1: pattern too long: 5000 bytes \(at most 4096\)\Z"):
        load_config(toml)


def test_a_stored_oversize_rule_is_skipped_with_a_warning(state: KState, caplog: pytest.LogCaptureFixture) -> None:
    """A rule stored before the bound (written as add_rule wrote it then) is not compiled: the
    session starts, obeys the rules around it, and the log says which rule was left out."""
    from kfs.agents.records import add_agent

    add_agent(VFS(state, by="test"), "alice")
    add_rule(state, "deny", f"{HOME}/secret", on="path")

    def old(txn):  # noqa: ANN001, ANN202
        rule_id = txn.incr(b"next_policy_rule")
        txn.put("keys", PREFIX + U64.pack(rule_id),
                json.dumps({"action": "deny", "pattern": "/" + "[" * 120_000, "agent": None, "on": "path"}).encode())

    state.write(old)
    add_rule(state, "deny", "curl *")
    with caplog.at_level(logging.WARNING, logger="kfs.runtime.rules"):
        gov = governance(state, "alice", HOME)
    assert [r.id for r in gov.rules] == [1, 3]
    assert [m for m in caplog.messages if "skipped" in m] == [
        f"rule 2: deny path '/{'[' * 60} skipped: its pattern is 120001 bytes (at most {MAX_PATTERN})"]
    fs = PathFS(VFS(state, by="test"), cred=Cred(0, 0), home=HOME, policy=gov.policy)
    fs.mkdir(HOME, parents=True)
    with pytest.raises(PolicyDenial):
        fs.write_file(f"{HOME}/secret", b"x")


def steps(fn: Callable[[], object]) -> int:
    """How many Python lines and calls `fn` runs (the translation and the re module's compiler
    are Python): a count of operations, the same on every machine and under any load."""
    count = 0

    def tracer(frame, event, arg):  # noqa: ANN001, ANN202
        nonlocal count
        count += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


PATHOLOGICAL: dict[str, Callable[[int], str]] = {
    "unterminated [": lambda n: "/" + "[" * (n - 1),  # fnmatch scanned to the end for each
    "] then [": lambda n: "/]" + "[" * (n - 2),
    "one bracket of [": lambda n: "/[" + "[" * (n - 3) + "]",
    "inverted ranges": lambda n: "/[" + "z-a" * ((n - 3) // 3) + "]",  # fnmatch copied what follows, for each
    "[! and !": lambda n: "[" + "!" * (n - 1),
    "stars": lambda n: "*a" * (n // 2),
    "stars and brackets": lambda n: "*[a-" * (n // 4),
}


@pytest.mark.parametrize("shape", PATHOLOGICAL)
def test_the_largest_pattern_compiles_in_linear_steps(shape: str) -> None:
    """Doubling the pattern up to MAX_PATTERN at most doubles (and a bit) the steps that compile
    it into a path rule set and a command rule set; the quadratic translation made the ratio ~4."""

    def compile_at(n: int) -> int:
        pattern = PATHOLOGICAL[shape](n)
        assert len(pattern.encode()) <= n
        glob_regex.cache_clear()
        rules.joined.cache_clear()
        return steps(lambda: (RuleSet((Rule(1, "deny", pattern, on="path"),)), CommandRules((Rule(1, "deny", pattern),))))

    quarter, half, full = (compile_at(MAX_PATTERN // d) for d in (4, 2, 1))
    assert half / quarter < 2.2 and full / half < 2.2, (quarter, half, full)


GLOBS = st.one_of(
    st.lists(st.sampled_from(["a", "b", "z", "*", "?", "[", "]", "!", "^", "-", "\\", "&", "~", "|", "/", ".", "(",
                              "é", "\n"]), max_size=14).map("".join),
    st.text(max_size=10),
)
NAMES = st.one_of(
    st.lists(st.sampled_from(["a", "b", "z", "[", "]", "!", "^", "-", "\\", "&", "/", ".", "é", "\n", "y"]),
             max_size=10).map("".join),
    st.text(max_size=6),
)


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GLOBS, st.lists(NAMES, max_size=6))
def test_translation_is_fnmatchs(pattern: str, names: list[str]) -> None:
    """The same expression as fnmatch.translate's (inside its `(?s:...)\\Z`), and so the same
    matches as fnmatch.fnmatchcase, on patterns full of brackets, ranges and stars."""
    import re

    assert glob_regex(pattern) == fnmatch.translate(pattern)[4:-3]
    compiled = re.compile(glob_regex(pattern), re.S)
    for name in names + [pattern]:
        assert (compiled.fullmatch(name) is not None) == fnmatch.fnmatchcase(name, pattern), name


def test_a_second_session_reuses_the_compiled_rules(state: KState) -> None:
    """Every session of an agent builds its rule sets from the store; the expressions are
    compiled by the first only (rules.joined's misses), whatever the size of the patterns."""
    from kfs.agents.records import add_agent

    add_agent(VFS(state, by="test"), "alice")
    add_rule(state, "deny", "/" + "[" * (MAX_PATTERN - 1), on="path")
    add_rule(state, "ask", "rm -r *")
    first = governance(state, "alice", HOME)
    first_commands = CommandRules(first.rules)  # as the shell's worker makes them (Shell.govern)
    before = rules.joined.cache_info()
    second = governance(state, "alice", HOME)
    second_commands = CommandRules(second.rules)
    after = rules.joined.cache_info()
    assert after.misses == before.misses and after.hits == before.hits + 3  # paths, lines, names
    assert second.policy is not None and first.policy is not None
    assert second.policy.rules._re is first.policy.rules._re and second_commands._line is first_commands._line
    assert second_commands.first("rm -r /") is second.rules[1]
