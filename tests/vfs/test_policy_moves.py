"""What a rename or a link makes reachable, judged by the session's policy at the PathFS (the
view the K shell, SFTP, scp and sshfs all write through): every path of a moved tree at its old
place and at its new one, and a hard link's source, against the mandatory list, the path rules
and the mode's scope. A write never changes a protected or denied path by another name."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable

import pytest

from kfs.kstate import KState
from kfs.runtime.rules import Rule, RuleSet
from kfs.vfs import VFS, Cred, PathFS
from kfs.vfs.namespace import RENAME_EXCHANGE
from kfs.vfs.policy import PolicyDenial, Refusal, WritePolicy

HOME = "/home/a"
AGENT = Cred(1000, 1000)


@pytest.fixture
def root(state: KState) -> PathFS:
    """A home with a repository (config, a hook), owned by the agent."""
    fs = PathFS(VFS(state))
    fs.mkdir(f"{HOME}/proj/.git/hooks", parents=True)
    fs.write_file(f"{HOME}/proj/.git/config", b"[core]\n")
    fs.write_file(f"{HOME}/proj/.git/hooks/pre-commit", b"#!/bin/sh\n")
    fs.mkdir(f"{HOME}/proj/prod", parents=True)
    fs.write_file(f"{HOME}/proj/prod/a", b"prod")
    fs.write_file(f"{HOME}/proj/src.c", b"int x;\n")
    for path, _, files in list(fs.walk(HOME)):
        for p in [path, *(f"{path}/{f}" for f in files)]:
            fs.chown(p, 1000, 1000)
    return fs


def rules(*spec: tuple[str, str]) -> RuleSet:
    return RuleSet(tuple(Rule(i, action, pattern, on="path").at_home(HOME)
                         for i, (action, pattern) in enumerate(spec, 1)))


def agent(root: PathFS, mode: str = "limited", scope: tuple[str, ...] = ("~",), **kw: object) -> PathFS:
    return PathFS(root.vfs, cred=AGENT, cwd=HOME, home=HOME, policy=WritePolicy.make(mode, HOME, scope, **kw))


def unchanged(root: PathFS) -> None:
    assert root.read_file(f"{HOME}/proj/.git/config") == b"[core]\n"
    assert root.read_file(f"{HOME}/proj/.git/hooks/pre-commit") == b"#!/bin/sh\n"
    assert root.read_file(f"{HOME}/proj/prod/a") == b"prod"


def test_a_git_directory_cannot_be_moved_away_to_write_its_hooks(root: PathFS) -> None:
    fs = agent(root)
    with pytest.raises(Refusal) as info:
        fs.rename("proj/.git", "g2")  # .git/config and .git/hooks would change (go) with it
    assert info.value.errno == errno.EROFS
    with pytest.raises(Refusal):
        fs.rename("proj", "moved")  # a parent of them: the same paths go
    unchanged(root)
    assert fs.read_file("proj/.git/config") == b"[core]\n"


def test_a_directory_shaped_as_a_repository_cannot_be_moved_into_place(root: PathFS) -> None:
    fs = agent(root)
    fs.mkdir("other/hooks", parents=True)
    fs.write_file("other/hooks/pre-commit", b"evil")
    fs.write_file("other/config", b"[core]\nfsmonitor = evil\n")
    fs.mkdir("fresh")
    with pytest.raises(Refusal):
        fs.rename("other", "fresh/.git")  # its config and hooks would become fresh/.git's
    with pytest.raises(Refusal):
        fs.rename("other", "proj/.git", RENAME_EXCHANGE)
    assert not root.exists(f"{HOME}/fresh/.git")
    unchanged(root)


def test_renaming_a_parent_of_a_denied_path_is_denied(root: PathFS) -> None:
    """`mv proj proj_moved; echo x > proj_moved/prod/a; mv proj_moved proj` would change the
    denied ~/proj/prod/a: the first rename is a write to it, in every mode (full included)."""
    for mode in ("full", "limited"):
        fs = agent(root, mode, rules=rules(("deny", "~/proj/prod")))
        with pytest.raises(PolicyDenial) as info:
            fs.rename("proj", "proj_moved")
        assert info.value.errno == errno.EACCES
        fs.rename("proj/src.c", "proj/main.c")  # a rename that moves nothing denied goes on
        fs.rename("proj/main.c", "proj/src.c")
    unchanged(root)


def test_a_tree_cannot_be_moved_under_a_denied_path_nor_a_glob_rule_matched_by_name(root: PathFS) -> None:
    fs = agent(root, "full", rules=rules(("deny", "~/staging/prod"), ("deny", "*/.env")))
    fs.mkdir("build/prod", parents=True)
    fs.write_file("build/prod/a", b"x")
    with pytest.raises(PolicyDenial):
        fs.rename("build", "staging")  # staging/prod/a would appear: a write to the denied path
    root.mkdir(f"{HOME}/build/deep")
    root.write_file(f"{HOME}/build/deep/.env", b"SECRET=1")
    with pytest.raises(PolicyDenial):
        fs.rename("build", "build2")  # build/deep/.env, matched by */.env, would move
    assert root.read_file(f"{HOME}/build/deep/.env") == b"SECRET=1"


def test_an_ask_rule_under_a_moved_tree_waits_for_its_decision(root: PathFS) -> None:
    asked: list[str] = []

    def approve(e: Exception) -> bool:
        asked.append(e.physical)  # type: ignore[attr-defined]
        return True

    fs = agent(root, "full", rules=rules(("ask", "~/proj/prod")))
    fs.policy.approve = approve  # type: ignore[union-attr]
    fs.rename("proj", "proj2")
    assert asked == [f"{HOME}/proj/prod"] and root.read_file(f"{HOME}/proj2/prod/a") == b"prod"


def test_a_hard_link_judges_its_source(root: PathFS) -> None:
    fs = agent(root, scope=("~/proj",))
    root.write_file(f"{HOME}/outside", b"out")
    root.chown(f"{HOME}/outside", 1000, 1000)
    for source in ("proj/.git/config", "outside"):  # a writable second name of a file it may not write
        with pytest.raises(Refusal):
            fs.link(source, "proj/second")
        assert not root.exists(f"{HOME}/proj/second")
    fs.link("proj/src.c", "proj/src2.c")  # both names in scope: as before
    denied = agent(root, "full", rules=rules(("deny", "~/proj/prod")))
    with pytest.raises(PolicyDenial):
        denied.link("proj/prod/a", "proj/a2")


def test_rm_r_of_a_parent_of_a_protected_path_is_refused(root: PathFS) -> None:
    with pytest.raises(Refusal):
        agent(root).rm("proj", recursive=True)
    with pytest.raises(PolicyDenial):
        agent(root, "full", rules=rules(("deny", "~/proj/prod"))).rm("proj", recursive=True)
    unchanged(root)


@pytest.mark.parametrize("path", [".gitconfig", ".config/git/config", ".config/git/attributes"])
def test_gits_own_configuration_is_never_written_in_a_restricted_mode(root: PathFS, path: str) -> None:
    root.mkdir(f"{HOME}/.config", 0o755)
    root.chown(f"{HOME}/.config", 1000, 1000)
    fs = agent(root)
    with pytest.raises(Refusal):
        fs.mkdir(".config/git")
    root.mkdir(f"{HOME}/.config/git")
    root.chown(f"{HOME}/.config/git", 1000, 1000)
    with pytest.raises(Refusal):
        fs.write_file(path, b"[core]\nhooksPath = /tmp/evil\n")
    assert not root.exists(f"{HOME}/{path}")
    with pytest.raises(Refusal):
        fs.rename(".config", "cfg")  # git's configuration goes with it


def test_a_directory_holding_git_cannot_become_dot_config(root: PathFS) -> None:
    fs = agent(root)
    fs.mkdir("cfg/git", parents=True)
    fs.write_file("cfg/git/config", b"[core]\nfsmonitor = evil\n")
    with pytest.raises(Refusal):
        fs.rename("cfg", ".config")
    assert not root.exists(f"{HOME}/.config")


def test_a_policy_that_cannot_refuse_anything_under_a_place_watches_nothing() -> None:
    """The cost rule: a rename walks the moved tree in full only where a rule, a hook or a
    glob scope could judge a path under it otherwise than the place itself; a glob with a
    literal tail only by name."""
    policy = WritePolicy.make("limited", HOME, ("~/proj",), rules=rules(
        ("deny", "~/secrets"), ("deny", "/srv/*.db"), ("deny", "~/proj/prod"), ("deny", "*/.env"),
        ("deny", "~/proj/x*")))
    assert policy is not None
    assert policy.watch((f"{HOME}/proj/lib",)) == (False, frozenset({b".env"}), ())  # /srv/*.db: not here
    full = WritePolicy.make("full", HOME, rules=policy.rules)
    assert full is not None and full.watch(("/srv/x",)) == (False, frozenset({b".env"}), (b".db",))
    assert policy.watch((f"{HOME}/proj",))[0]  # ~/proj/prod and ~/proj/x* lie under it
    assert policy.watch((f"{HOME}/proj/lib", f"{HOME}/proj"))[0]
    quiet = WritePolicy.make("full", HOME, rules=rules(("deny", "~/secrets"), ("allow", "~/proj/a/b")))
    assert quiet is not None and quiet.watch((f"{HOME}/proj/lib",)) == (False, frozenset(), ())
    assert quiet.watch((f"{HOME}/proj/a",))[0] and not quiet.watch((f"{HOME}/secrets/x",))[0]
    under_a_glob = WritePolicy.make("full", HOME, rules=rules(("deny", "/srv/*")))
    assert under_a_glob is not None and under_a_glob.watch(("/srv/x/y",))[0] and not under_a_glob.watch(("/x",))[0]
    globbed = WritePolicy.make("limited", HOME, ("~/*.d",))
    assert globbed is not None and globbed.watch((f"{HOME}/x.d",))[0]  # a glob scope: each path of its own


def test_random_moves_never_change_a_protected_or_denied_path(state: KState) -> None:
    """Property: whatever a limited agent does by mkdir, rename, link, symlink and write
    (refusals ignored), with random protected names among its files and random path rules, the
    content and existence of every protected or denied path stays as it was."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as hs

    names = ["a", "b", "c", ".git", "config", "hooks", "prod", ".vscode", "x.env"]
    paths = hs.lists(hs.sampled_from(names), min_size=1, max_size=3).map("/".join)
    counter = iter(range(10**9))

    @settings(max_examples=100, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(hs.lists(paths, min_size=1, max_size=6), hs.sampled_from([("~/w",), ("~/w/a", "~/w/b"), ("~",)]), hs.data())
    def check(seed: list[str], scope: tuple[str, ...], data: hs.DataObject) -> None:
        # operands and rules drawn mostly from the seeded files' own paths and their parents
        near = sorted({"/".join(p.split("/")[:i]) for p in seed for i in range(1, p.count("/") + 2)})
        operand = hs.sampled_from(near)
        anywhere = hs.one_of(operand, paths)
        spec = data.draw(hs.lists(hs.tuples(hs.sampled_from(["deny", "ask"]), hs.sampled_from(near).map(
            lambda p: f"~/w/{p}")), max_size=3))
        steps = data.draw(hs.lists(hs.tuples(
            hs.sampled_from(["mkdir", "rename", "rename", "link", "symlink", "write", "exchange", "rm"]), operand,
            anywhere), max_size=8))
        top = f"{HOME}/run{next(counter)}"  # each example in a home of its own
        root = PathFS(VFS(state), home=top)
        root.mkdir(f"{top}/w", parents=True)
        for i, p in enumerate(seed):  # files at random places: some are protected or denied
            with_parent = f"{top}/w/{p}"
            try:
                root.mkdir(os.path.dirname(with_parent), parents=True)
                root.write_file(with_parent, f"seed {i}".encode())
            except OSError:
                pass
        for path, _, files in list(root.walk(top)):
            for q in [path, *(f"{path}/{f}" for f in files)]:
                root.chown(q, 1000, 1000, follow=False)
        ruleset = RuleSet(tuple(Rule(i, a, p, on="path").at_home(top) for i, (a, p) in enumerate(spec, 1)))
        policy = WritePolicy.make("limited", top, scope, rules=ruleset)
        assert policy is not None
        fs = PathFS(root.vfs, cred=AGENT, cwd=f"{top}/w", home=top, policy=policy)

        def guarded(path: str) -> bool:
            return policy.denied(path) or ruleset.first(path) is not None or policy._outside(path)  # noqa: SLF001

        def snapshot() -> dict[str, bytes | None]:
            seen = {}
            for path, dirs, files in root.walk(top):
                for name in [*dirs, *files]:
                    q = f"{path}/{name}"
                    if guarded(q):
                        inode = root.lstat(q)
                        seen[q] = root.read_file(q) if inode.is_reg else b"<%o>" % inode.mode
            return seen

        before = snapshot()
        calls: dict[str, Callable[[str, str], object]] = {
            "mkdir": lambda a, b: fs.mkdir(a, parents=True), "rename": fs.rename, "link": fs.link,
            "symlink": lambda a, b: fs.symlink(a, b), "write": lambda a, b: fs.write_file(a, b"changed"),
            "exchange": lambda a, b: fs.rename(a, b, RENAME_EXCHANGE),
            "rm": lambda a, b: fs.rm(a, recursive=True, force=True),
        }
        for op, a, b in steps:
            with contextlib.suppress(OSError):
                calls[op](a, b)
        after = snapshot()
        for path, content in before.items():
            assert after.get(path) == content, (path, steps)
        for path in set(after) - set(before):  # nothing new appears at a guarded path either
            raise AssertionError((path, steps))

    check()
