"""Property, over real ssh: whatever a limited agent does with mkdir, rename, hard links,
symlinks and writes (refusals ignored), through the K shell's own tools or through a delegated
program (python3 in the sandbox, writing through the agent's view), no protected or denied path
changes, and none appears.

The rules are checked against a model written here, not the policy's own code: the agent's
scope is ~/t/proj; `.vscode`, `.mcp.json` anywhere and a repository's `.git/config` and
`.git/hooks` are never written; a path rule denies ~/t/proj/prod. Names are drawn from a small
set of places so that sequences often build, move and link the guarded paths."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
from delegation import run
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as hs
from kserver import Bench

from kfs.agents.records import find_agent
from kfs.runtime.rules import add_rule, remove_rule
from kfs.vfs import VFS, PathFS
from kshell.delegate.config import set_agent_overrides

HOME = "/home/alice"
TOP = f"{HOME}/t"
# the places that matter (a repository's configuration moved away and back, the denied
# directory's parent renamed, new protected names) and a few that do not
PATHS = hs.sampled_from(["proj/.git", "proj/g", "proj/g/config", "proj/g/hooks/pre-commit", "proj/.git/config",
                         "proj/.git/hooks/pre-commit", "proj/prod", "proj/p2", "proj/p2/a", "proj/prod/a",
                         "proj/.vscode", "proj/.mcp.json", "proj/a", "a"])
OPS = hs.lists(hs.tuples(hs.sampled_from(["mkdir", "mv", "mv", "mv", "ln", "symlink", "write", "write"]), PATHS,
                         PATHS), min_size=1, max_size=8)
SEEDS = hs.lists(hs.sampled_from(["proj/.git/config", "proj/.git/hooks/pre-commit", "proj/prod/a", "proj/a",
                                  "proj/b/.vscode/s", "a/proj/.git/config", "b", "proj/prod/.git/config"]),
                 max_size=5, unique=True)


def guarded(rel: str) -> bool:
    """The model: a path (relative to ~/t) the agent may never change."""
    parts = rel.split("/")
    if parts[0] != "proj":
        return True  # outside the scope
    if {".vscode", ".mcp.json"} & set(parts):
        return True
    if any(parts[i] == ".git" and parts[i + 1] in ("config", "hooks") for i in range(len(parts) - 1)):
        return True
    return rel == "proj/prod" or rel.startswith("proj/prod/")  # the path rule


def snapshot(fs: PathFS) -> dict[str, str]:
    """Every guarded path under ~/t with what it is: a file's bytes, a link's target, a directory."""
    seen: dict[str, str] = {}
    for path, dirs, files in fs.walk(TOP):
        for name in [*dirs, *files]:
            full = f"{path}/{name}"
            rel = full[len(TOP) + 1:]
            if not guarded(rel):
                continue
            inode = fs.lstat(full)
            seen[rel] = ("dir" if inode.is_dir else f"link {fs.readlink(full)}" if inode.is_lnk
                         else fs.read_file(full).decode(errors="replace"))
    return seen


def shell_script(ops: list[tuple[str, str, str]]) -> str:
    """The operations as K shell tool commands (each may fail: the next one runs)."""
    forms = {"mkdir": "mkdir -p {a}", "mv": "mv {a} {b}", "ln": "ln {a} {b}", "symlink": "ln -s {a} {b}",
             "write": "printf changed > {a}"}
    return "cd ~/t; " + "".join(forms[op].format(a=a, b=b) + " 2>/dev/null; " for op, a, b in ops) + "true"


def program(ops: list[tuple[str, str, str]]) -> str:
    """The same operations done by a real program in the sandbox."""
    body = ("import os, json, sys\nos.chdir(os.path.expanduser('~/t'))\n"
            "calls = {'mkdir': lambda a, b: os.makedirs(a, exist_ok=True), 'mv': os.rename, 'ln': os.link,\n"
            "         'symlink': os.symlink, 'write': lambda a, b: open(a, 'w').write('changed')}\n"
            f"for op, a, b in json.loads({json.dumps(json.dumps(ops))}):\n"
            "    try:\n        calls[op](a, b)\n    except OSError:\n        pass\n")
    return f"python3 - <<'EOF'\n{body}EOF\n"


@pytest.fixture
def limited_alice(mounted: Bench) -> Iterator[tuple[Bench, PathFS]]:
    rule = add_rule(mounted.state, "deny", f"{TOP}/proj/prod", agent="alice", on="path")
    set_agent_overrides(mounted.state, "alice", mode="limited", scope=("~/t/proj",))
    try:
        yield mounted, PathFS(VFS(mounted.state, by="test"))
    finally:
        set_agent_overrides(mounted.state, "alice", mode="full", scope=())
        remove_rule(mounted.state, rule.id)
        PathFS(VFS(mounted.state, by="test")).rm(TOP, recursive=True, force=True)


def seed(root: PathFS, b: Bench, files: list[str]) -> None:
    """A fresh ~/t holding `files`, all alice's, written as root behind the agent's back."""
    alice = find_agent(b.state, "alice")
    assert alice is not None
    root.rm(TOP, recursive=True, force=True)
    root.mkdir(f"{TOP}/proj", parents=True)
    for i, rel in enumerate(files):
        root.mkdir(os.path.dirname(f"{TOP}/{rel}"), parents=True)
        root.write_file(f"{TOP}/{rel}", f"seed {i}".encode())
    for path, dirs, names in list(root.walk(TOP)):
        for p in [path, *(f"{path}/{n}" for n in [*dirs, *names])]:
            root.chown(p, alice.uid, alice.gid, follow=False)


@pytest.mark.parametrize("way", ["shell", "program"])
def test_no_sequence_changes_a_protected_or_denied_path(limited_alice: tuple[Bench, PathFS], way: str) -> None:
    b, root = limited_alice

    @settings(max_examples=40 if way == "shell" else 12, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(SEEDS, OPS)
    # the two attacks the property is about, always tried first: a repository's configuration
    # moved away, written and moved back; the denied directory moved away, written and moved back
    @example(["proj/.git/config"], [("mv", "proj/.git", "proj/g"), ("write", "proj/g/config", ""),
                                    ("mv", "proj/g", "proj/.git")])
    @example(["proj/prod/a"], [("mv", "proj/prod", "proj/p2"), ("write", "proj/p2/a", ""),
                               ("mv", "proj/p2", "proj/prod")])
    def check(files: list[str], ops: list[tuple[str, str, str]]) -> None:
        seed(root, b, files)
        before = snapshot(root)
        status, _, err = run(b, shell_script(ops) if way == "shell" else program(ops))
        assert status == 0, err
        after = snapshot(root)
        assert after == before, (ops, err)

    check()
