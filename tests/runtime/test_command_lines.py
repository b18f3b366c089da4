"""The command lines a command rule judges for one argv (kfs.runtime.command_lines): a wrapper's
command found by reading the wrapper's options as GNU coreutils, findutils and util-linux do,
git's line without its global options; the command rules matched as one expression
(kfs.runtime.rules.CommandRules) deciding as rule by rule would; and what a rule on curl or wget
means for delegated programs' network (kfs.runtime.rules.withholds_network)."""

from __future__ import annotations

import shlex
import shutil
import subprocess

import pytest

from kfs.runtime.command_lines import lines, split_string
from kfs.runtime.rules import CommandRules, Rule, first, withholds_network


def judged(line: str, env: dict[str, str] | None = None) -> list[str]:
    """The lines, each as the rules see it: its words joined by spaces."""
    return [" ".join(words) for words in lines(shlex.split(line), (env or {}).get)]


@pytest.mark.parametrize(("line", "inner"), [
    ("nice curl x", "curl x"),
    ("nice -n 5 curl x", "curl x"),
    ("nice -n5 curl x", "curl x"),
    ("nice -5 curl x", "curl x"),
    ("nice --10 curl x", "curl x"),
    ("nice --adjustment=3 curl x", "curl x"),
    ("nice --adj 3 curl x", "curl x"),
    ("nice -- curl x", "curl x"),
    ("stdbuf -oL curl x", "curl x"),
    ("stdbuf -o L -e 0 curl x", "curl x"),
    ("stdbuf --output=L curl x", "curl x"),
    ("env -i curl x", "curl x"),
    ("env -i - A=1 B=2 curl x", "curl x"),
    ("env -u HOME -C /tmp curl x", "curl x"),
    ("env --default-signal curl x", "curl x"),
    ("env -S 'curl x' y", "curl x y"),
    ("env -iS'-u A curl' x", "curl x"),
    ("timeout 5 curl x", "curl x"),
    ("timeout -s KILL -k 1 5s curl x", "curl x"),
    ("timeout --foreground --preserve-status 5 curl x", "curl x"),
    ("nohup curl x", "curl x"),
    ("nohup -- curl x", "curl x"),
    ("setsid -w curl x", "curl x"),
    ("command curl x", "curl x"),
    ("command -p curl x", "curl x"),
    ("exec -a name curl x", "curl x"),
    ("xargs curl x", "curl x"),
    ("xargs -0 -n 1 -P4 -I{} curl {}", "curl {}"),
    ("xargs -i curl {}", "curl {}"),
    ("find . -name '*.txt' -exec curl {} ;", "curl {}"),
    ("find . -execdir curl -F f=@{} x {} +", "curl -F f=@{} x {}"),
    ("/usr/bin/nice curl x", "curl x"),
])
def test_a_wrapper_is_judged_with_the_command_it_runs(line: str, inner: str) -> None:
    assert judged(line) == [" ".join(shlex.split(line)), inner]


def test_wrappers_nest_to_any_depth() -> None:
    assert judged("nice env -i timeout 5 stdbuf -oL xargs curl x") == [
        "nice env -i timeout 5 stdbuf -oL xargs curl x", "env -i timeout 5 stdbuf -oL xargs curl x",
        "timeout 5 stdbuf -oL xargs curl x", "stdbuf -oL xargs curl x", "xargs curl x", "curl x"]


def test_each_exec_of_find_is_a_line_of_its_own() -> None:
    assert judged("find . -exec grep -l x {} + -ok rm {} ;")[1:] == ["grep -l x {}", "rm {}"]


@pytest.mark.parametrize("line", ["nice --help curl x", "nice -n", "timeout 5", "command -v curl", "env -0",
                                  "nohup --version curl"])
def test_a_wrapper_that_runs_nothing_adds_no_line(line: str) -> None:
    assert judged(line) == [line]


def test_an_option_k_does_not_know_makes_every_later_word_a_possible_command() -> None:
    # a newer env's `--argv0 NAME` (or a typo): NAME or what follows may be the command
    assert judged("env --argv0 name curl x")[1:] == ["name curl x", "curl x", "x"]


def test_env_split_string_reads_as_env_does() -> None:
    assert split_string(r"""a\_b "c d" 'e\'f' g\tx ${V}z # comment""", {"V": "v w"}.get) == \
        ["a", "b", "c d", "e'f", "g\tx", "v wz"]
    assert split_string(r"curl x\c rest", {}.get) == ["curl", "x"]
    assert judged("env -S'${T} x'", {"T": "curl"})[-1] == "curl x"


@pytest.mark.parametrize(("line", "git"), [
    ("git --no-pager push origin", "git push origin"),
    ("git -C d push origin", "git push origin"),
    ("git -c k=v push", "git push"),
    ("git --git-dir=x push", "git push"),
    ("git --git-dir x --work-tree y push", "git push"),
    ("git -p --bare --namespace n --literal-pathspecs push", "git push"),
    ("/usr/lib/git-core/git-push origin", "git push origin"),
    ("git -c alias.p=push p origin", "git push origin"),
    ("git -c 'alias.p=!curl x' p", "curl x"),
])
def test_git_is_judged_without_its_global_options_too(line: str, git: str) -> None:
    assert judged(line) == [" ".join(shlex.split(line)), git]


def test_git_without_global_options_is_one_line() -> None:
    assert judged("git push origin") == ["git push origin"]
    assert judged("git --help push") == ["git --help push"]


def test_the_table_agrees_with_the_hosts_own_wrappers(tmp_path) -> None:  # noqa: ANN001
    """What the host's coreutils and findutils run, by a probe program named `probe`."""
    for tool in ("nice", "stdbuf", "env", "timeout", "nohup", "xargs", "find"):
        assert shutil.which(tool), f"install {tool} (coreutils, findutils)"
    probe = tmp_path / "probe"
    probe.write_text("#!/bin/sh\necho \"probe $*\"\n")
    probe.chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "T": "probe"}
    for line in ("nice -n 5 probe a", "nice -5 probe a", "stdbuf -oL -e0 probe a", "env -u HOME A=1 probe a",
                 "env -S'-u A ${T} a'", "timeout -s KILL 5 probe a", "nohup probe a", "find . -maxdepth 0 -exec probe a ;"):
        ran = subprocess.run(shlex.split(line), capture_output=True, text=True, env=env, cwd=tmp_path, check=True)
        assert ran.stdout.splitlines()[-1] == "probe a", line
        assert judged(line, env)[-1] == "probe a", line


def test_a_rule_on_curl_or_wget_withholds_the_network_from_programs() -> None:
    def rule(action: str, pattern: str) -> Rule:
        return Rule(1, action, pattern)

    assert withholds_network([rule("deny", "curl*")])
    assert withholds_network([rule("ask", "wget *")])
    assert withholds_network([rule("deny", "curl *internal*")])
    assert withholds_network([rule("allow", "ls"), rule("deny", "*")])  # a limited list without curl
    assert not withholds_network([rule("allow", "curl *"), rule("allow", "wget"), rule("deny", "*")])
    assert not withholds_network([rule("deny", "rm -r*"), rule("ask", "git push*")])
    assert not withholds_network([])


def test_command_rules_as_one_expression_decide_as_the_first_matching_rule() -> None:
    patterns = ["rm -r*", "curl", "git push*", "*", "python3 -c *", "/usr/bin/curl*", "c?rl", "[gw]get *", "git",
                "ls -l", "x*y z", "tool7 *", "*.sh"]
    subjects = ["rm -r d", "rm d", "curl x", "/usr/bin/curl x", "/opt/curl", "git push origin", "git status", "wget u",
                "python3 -c print(1)", "ls -l", "ls", "x1y z", "tool7 a", "./run.sh", "git", "a\nb", ""]
    for start in range(len(patterns)):
        found = [Rule(i, ("allow", "deny", "ask")[i % 3], p) for i, p in enumerate(patterns[start:] + patterns[:start])]
        found.append(Rule(99, "deny", "/srv/*", on="path"))  # not a command rule: never decides
        joined = CommandRules(found)
        for subject in subjects:
            assert joined.first(subject) == first(found, subject), (start, subject)
    assert CommandRules(()).first("anything") is None and not CommandRules(())

