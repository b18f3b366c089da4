"""chown, chgrp and groups: against GNU for ids no one names (on the host or in K) and for root;
names from K's own agents (never the host's) and Linux's EPERM for an agent on K alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from differential import Case, Dir, Link, assert_same

from kfs.agents.records import add_agent
from kfs.kstate import KState
from kfs.vfs import ROOT, VFS, Cred, PathFS
from kshell import Result, Shell

F = {"a": "x\n", "b": "y\n", "d/": Dir(), "d/e/": Dir(), "d/e/x": "z\n", "l": Link("a")}
OWN = "stat -c '%n %u %g' a b l d d/e d/e/x"

CASES = [
    Case("chown_user", f"chown 4242 a; {OWN}", F),
    Case("chown_user_group", f"chown 4242:4243 a; {OWN}", F),
    Case("chown_group_only", f"chown :4243 a; {OWN}", F),
    Case("chown_root_colon", f"chown 4242:4243 a; chown -v root: a; {OWN}", F),
    Case("chown_verbose", "chown -v 4242 a; chown -v 4242 a; chown -v :4243 a; chown -v 4244:4245 a", F),
    Case("chown_changes", "chown -c 4242 a b; chown -c 4242 a b", F),
    Case("chown_empty_spec", "chown -v '' a; chown -v : a", F),
    Case("chown_follows_link", f"chown 4242 l; {OWN}", F),
    Case("chown_no_dereference", "chown -h 4242 l; stat -c '%n %u' a; stat -c '%n %u' l", F),
    Case("chown_recursive", f"chown -R 4242:4243 d; {OWN}", F),
    Case("chown_recursive_verbose_postorder", "chown -Rv 4242 d", F),
    Case("chown_from", f"chown 7 a; chown --from=7 4242 a b; {OWN}", F),
    Case("chown_reference", f"chown 4242:4243 a; chown -v --reference=a b; {OWN}", F),
    Case("chown_numeric_plus", f"chown +0:+4243 a; {OWN}", F),
    Case("chown_invalid_user", "chown nosuchuser a; echo $?", F),
    Case("chown_invalid_group", "chown root:nosuchgroup a; echo $?", F),
    Case("chown_missing_operand", "chown; echo $?; chown root; echo $?", F),
    Case("chown_missing_file", "chown 1 nope; echo $?; chown -f 1 nope; echo $?", F),
    Case("chown_bad_option", "chown -z 1 a; echo $?", F),
    Case("chgrp", f"chgrp 4246 a; {OWN}", F),
    Case("chgrp_verbose", "chgrp -v 4246 a; chgrp -v 4246 a; chgrp -c 4246 a", F),
    Case("chgrp_recursive", f"chgrp -R 4246 d; {OWN}", F),
    Case("chgrp_invalid", "chgrp nosuchgroup a; echo $?", F),
    Case("chgrp_missing", "chgrp; echo $?; chgrp 0; echo $?", F),
    Case("agent_chown_eperm", "chown 0 a; echo $?", F, user=1000),
    Case("agent_chgrp_eperm", "chgrp 0 a; echo $?", F, user=1000),
    Case("agent_chown_to_self", "chown 1000 a; echo $?", F, user=1000),
    Case("groups_root", "groups; groups root", F),
    Case("groups_nosuch", "groups nosuchuser; echo $?", F),
]


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_owners_match_gnu(case: Case) -> None:
    assert_same(case)


class Agents:
    """A fresh state with agents alice and bob, and shells as either or as root in /tmp."""

    def __init__(self, root: Path) -> None:
        self.state = KState(root / "state", create=True)
        self.vfs = VFS(self.state, by="test")
        self.alice = add_agent(self.vfs, "alice")
        self.bob = add_agent(self.vfs, "bob")

    def run(self, script: str, who: str = "root") -> Result:
        agent = {"alice": self.alice, "bob": self.bob}.get(who)
        cred = ROOT if agent is None else Cred(agent.uid, agent.gid)
        home = "/root" if agent is None else agent.home
        fs = PathFS(self.vfs, cred=cred, cwd="/tmp", home=home)
        return Shell(fs, name="bash", env={"HOME": home, "LC_ALL": "C"}).run(script)


@pytest.fixture
def agents(tmp_path: Path) -> Iterator[Agents]:
    made = Agents(tmp_path)
    try:
        yield made
    finally:
        made.state.close()


def test_root_gives_a_file_to_an_agent_by_name(agents: Agents) -> None:
    r = agents.run("touch f; chown -v alice:bob f; stat -c '%U %G' f")
    assert r.stdout.decode() == "changed ownership of 'f' from root:root to alice:bob\nalice bob\n"


def test_user_colon_takes_the_agents_own_group(agents: Agents) -> None:
    r = agents.run("touch f; chown bob: f; stat -c '%U %G' f")
    assert r.stdout.decode() == "bob bob\n"


def test_an_agent_cannot_give_away_its_file(agents: Agents) -> None:
    r = agents.run("touch f; chown bob f; echo $?; chgrp bob f; echo $?", who="alice")
    assert r.stdout.decode() == "1\n1\n"
    assert r.stderr.decode() == ("chown: changing ownership of 'f': Operation not permitted\n"
                                 "chgrp: changing group of 'f': Operation not permitted\n")


def test_an_agent_may_chgrp_to_its_own_group(agents: Agents) -> None:
    r = agents.run("touch f; chgrp alice f; echo $?; stat -c %G f", who="alice")
    assert r.stdout.decode() == "0\nalice\n"


def test_host_names_are_not_k_names(agents: Agents) -> None:
    r = agents.run("touch f; chown daemon f; echo $?")
    assert r.stdout.decode() == "1\n"
    assert r.stderr.decode() == "chown: invalid user: 'daemon'\n"


def test_groups_of_an_agent(agents: Agents) -> None:
    assert agents.run("groups", who="alice").stdout.decode() == "alice\n"
    assert agents.run("groups alice bob").stdout.decode() == "alice : alice\nbob : bob\n"
