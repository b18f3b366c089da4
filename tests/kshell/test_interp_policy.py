"""Command rules in the K shell (Shell.govern, kshell.exec.scripts.judge): a wrapper that runs
a command is judged as that command, a K tool (env, timeout, xargs, find) or a program the shell
would delegate (nice, stdbuf); git is judged without its global options too; the image's command
hooks see the same lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from interp_support import KWorld

from kfs.runtime import image
from kfs.runtime.rules import Rule
from kshell.worker.hooks import session_hooks

EXAMPLE = Path(__file__).resolve().parents[2] / "image"


@pytest.mark.parametrize(("script", "shown"), [
    ("curl x", "curl x"),
    ("nice curl x", "nice curl x"),
    ("nice -n 5 curl x", "nice -n 5 curl x"),
    ("stdbuf curl x", "stdbuf curl x"),
    ("stdbuf -oL curl x", "stdbuf -oL curl x"),
    ("env -i curl x", "env -i curl x"),
    ("/usr/bin/env -i curl x", "/usr/bin/env -i curl x"),
    ("timeout 5 curl x", "timeout 5 curl x"),
    ("nohup curl x", "nohup curl x"),
    ("command curl x", "curl x"),
    ("exec curl x", "curl x"),
    ("echo u | xargs curl", "xargs curl"),
    ("find . -maxdepth 0 -exec curl {} \\;", "find . -maxdepth 0 -exec curl {} ;"),
    ("nice env -S 'timeout 5 curl' x", "nice env -S timeout 5 curl x"),
])
def test_deny_curl_refuses_every_wrapper_that_runs_curl(world: KWorld, script: str, shown: str) -> None:
    sh = world.shell()
    sh.govern([Rule(1, "deny", "curl*")])
    done = sh.run(script)
    assert done.status == 126
    assert done.stderr.decode() == f"K: {shown}: denied by policy (rule 1: deny 'curl*')\n"


def test_a_wrapper_running_something_else_is_not_refused(world: KWorld) -> None:
    sh = world.shell()
    sh.govern([Rule(1, "deny", "curl*")])
    done = sh.run("env -i A=1 echo curl; timeout 5 grep -c curl <<< curl; echo curl | xargs echo")
    assert (done.stdout, done.stderr, done.status) == (b"curl\n1\ncurl\n", b"", 0)


@pytest.mark.parametrize("script", ["git --no-pager push origin", "git -C d push origin", "git -c k=v push origin",
                                    "git --git-dir=x push origin", "nice git -C d push origin"])
def test_ask_on_git_push_catches_gits_global_options(world: KWorld, script: str) -> None:
    sh = world.shell()
    sh.govern([Rule(1, "ask", "git push*")])
    done = sh.run(script)
    assert done.status == 126
    assert done.stderr.decode() == f"K: {script}: needs an approval (rule 1: ask 'git push*'), which this shell " \
                                   "cannot wait for\n"


def test_the_images_push_hook_sees_git_without_its_global_options(world: KWorld) -> None:
    image.apply(world.state, image.load(EXAMPLE), by="test")
    hooks = session_hooks(world.state, image.current(world.state), "agent", "s1")
    assert hooks is not None
    sh = world.shell()
    sh.govern([], hooks.command)
    for script in ("git --no-pager push", "git -C d push origin", "timeout 5 git -c k=v push"):
        done = sh.run(script)
        assert done.status == 126, script
        assert done.stderr.decode() == f"K: {script}: needs an approval (image hook 1: ask 'hooks:ask_before_push': " \
                                       "pushing leaves the computer), which this shell cannot wait for\n"
    assert sh.run("git --no-pager log").stderr.decode() == "bash: line 1: git: command not found\n"
