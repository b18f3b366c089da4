"""What governance costs, in one run: the same work with and without a policy.

  vfs     create (a new 100-byte file), stat and 4 KiB write (over an existing file) through
          the path API, as an agent in limited mode with 100 path rules (none matching the
          files: every rule is tried) against the same agent with no policy (goal: <= 10% on
          each, ratio <= 1.10); a rename of a file, and of a directory of 100 files (the policy
          judges every path a rename moves, at both places).
  shell   `find . -type f | xargs grep -l needle` over 10,000 files in the K shell, with 100
          command rules and 100 path rules in force against none (ratio K-with / K-without).
  patterns  a pathological pattern (`/[[[...`, `*a*a...`) compiled into a path and a command rule
          set, at 1, 2 and 4 KiB (the most a rule may have: rules.MAX_PATTERN) with the ratio to
          the half size (linear: ~2; fnmatch.translate's quadratic scan made `/[[[...` 5 KB 0.7 s,
          20 KB 8 s, 120 KB 4 min 40 s); 5, 20 and 120 KB refused by add_rule (and, bound
          aside, what compiling them would cost now); a session's governance with a 4 KiB rule
          against the next session's, which reuses the compiled expressions (rules.joined).

    .venv/bin/python bench/policy.py [--files N] [--ops N] [--only vfs|shell|patterns]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kfs.agents.records import add_agent  # noqa: E402
from kfs.kstate import KState  # noqa: E402
from kfs.runtime import rules as rules_module  # noqa: E402
from kfs.runtime.rules import MAX_PATTERN, CommandRules, Rule, RuleSet, add_rule, glob_regex, governance  # noqa: E402
from kfs.vfs import VFS, Cred, PathFS  # noqa: E402
from kfs.vfs.policy import WritePolicy  # noqa: E402

HOME = "/home/alice"


def path_rules(n: int) -> RuleSet:
    """n rules of the usual shapes (directories, globs), none of which matches the bench's files."""
    shapes = ("~/secrets{}", "~/proj/prod{}/*", "*/.env{}", "/srv/data{}/*.db", "~/deploy{}/*.key")
    return RuleSet(tuple(Rule(i, ("deny", "ask")[i % 2], shapes[i % len(shapes)].format(i), on="path").at_home(HOME)
                         for i in range(n)))


def command_rules(n: int) -> list[Rule]:
    return [Rule(i, "deny", f"tool{i} *") for i in range(n - 1)] + [Rule(n, "allow", "*")]


def best(fn: Callable[[], None], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_vfs(state: KState, ops: int) -> list[tuple[str, float, float]]:
    vfs = VFS(state, by="bench")
    root = PathFS(vfs)
    root.mkdir(f"{HOME}/proj/plain", parents=True)
    root.mkdir(f"{HOME}/proj/ruled", parents=True)
    for d in ("proj", "proj/plain", "proj/ruled"):
        root.chown(f"{HOME}/{d}", 1000, 1000)
    cred = Cred(1000, 1000)
    plain = PathFS(vfs, cred=cred, cwd=f"{HOME}/proj/plain", home=HOME)
    policy = WritePolicy.make("limited", HOME, ("~/proj",), rules=path_rules(100))
    ruled = PathFS(vfs, cred=cred, cwd=f"{HOME}/proj/ruled", home=HOME, policy=policy)
    block = os.urandom(4096)
    rows = []
    round_no = [0]

    def creates(fs: PathFS) -> Callable[[], None]:
        def run() -> None:
            round_no[0] += 1
            for i in range(ops):
                fs.write_file(f"c{round_no[0]}-{i}", b"x" * 100)
        return run

    moved: set[tuple[int, str]] = set()  # (id of the PathFS, name) renamed to name + "~" now

    def renames(fs: PathFS, names: list[str]) -> Callable[[], None]:
        """Each name to name + "~", or back where it is there now (one name listed many
        times: a directory renamed again and again)."""
        def run() -> None:
            for name in names:
                key = (id(fs), name)
                there = key in moved
                fs.rename(name + "~" * there, name + "~" * (not there))
                moved.symmetric_difference_update({key})
        return run

    # the first round of creates made c1-* in plain's directory and c2-* in ruled's
    for name, make in (
        ("create", creates),
        ("stat", lambda fs: lambda: [fs.stat(f"c{1 + (fs is ruled)}-{i}") for i in range(ops)]),
        ("4 KiB write", lambda fs: lambda: [fs.write_file(f"c{1 + (fs is ruled)}-{i}", block) for i in range(ops)]),
        ("file rename", lambda fs: renames(fs, [f"c{1 + (fs is ruled)}-{i}" for i in range(ops)])),
        ("dir rename", lambda fs: renames(fs, ["t"] * (ops // 10))),
    ):
        if name == "dir rename":
            for fs in (plain, ruled):
                fs.mkdir("t/sub", parents=True)
                for i in range(100):
                    fs.write_file(f"t/sub/f{i}", b"x")
        t_plain, t_ruled = [], []
        for _ in range(3):  # interleaved, so drift hits both sides alike
            t_plain.append(best(make(plain), 1))
            t_ruled.append(best(make(ruled), 1))
        n = ops // 10 if name == "dir rename" else ops
        rows.append((name, statistics.median(t_ruled) / n * 1e6, statistics.median(t_plain) / n * 1e6))
    return rows


def bench_shell(state: KState, files: int) -> tuple[float, float]:
    from kshell.session import Shell

    vfs = VFS(state, by="bench")
    root = PathFS(vfs)
    top = f"{HOME}/tree"
    for i in range(files):
        if i % 100 == 0:
            root.mkdir(f"{top}/d{i // 100}", parents=True)
        root.write_file(f"{top}/d{i // 100}/f{i}.txt", b"some text\n" * 5 + (b"needle\n" if i % 97 == 0 else b""))
    script = "cd ~/tree && find . -type f | xargs grep -l needle | wc -l"

    def shell(governed: bool) -> Shell:
        policy = WritePolicy.make("limited", HOME, ("~/tree",), rules=path_rules(100)) if governed else None
        fs = PathFS(vfs, cred=Cred(0, 0), cwd=HOME, home=HOME, policy=policy)
        sh = Shell(fs, name="k", env={"HOME": HOME})
        if governed:
            sh.govern(command_rules(100))
        return sh

    outputs = {}

    def run(governed: bool) -> Callable[[], None]:
        sh = shell(governed)

        def go() -> None:
            outputs[governed] = sh.run(script).stdout

        return go

    t_plain, t_ruled = [], []
    for _ in range(3):
        t_plain.append(best(run(False), 1))
        t_ruled.append(best(run(True), 1))
    assert outputs[True] == outputs[False], outputs
    return statistics.median(t_ruled), statistics.median(t_plain)


def compile_time(pattern: str) -> float:
    """Seconds to compile `pattern` as a path rule set and a command rule set, nothing cached
    (the re module's own cache neither)."""
    glob_regex.cache_clear()
    rules_module.joined.cache_clear()
    re.purge()
    start = time.perf_counter()
    RuleSet((Rule(1, "deny", pattern, on="path"),))
    CommandRules((Rule(1, "deny", pattern),))
    return time.perf_counter() - start


def bench_patterns(state: KState) -> None:
    shapes = {"/[[[...": lambda n: "/" + "[" * (n - 1), "*a*a...": lambda n: "*a" * (n // 2)}
    print(f"{'pattern':<9} {'size':>7} {'compile':>10} {'ratio to half':>14}")
    for name, make in shapes.items():
        previous = None
        for n in (MAX_PATTERN // 4, MAX_PATTERN // 2, MAX_PATTERN):
            took = statistics.median(compile_time(make(n)) for _ in range(5))
            ratio = f"{took / previous:.2f}" if previous else ""
            print(f"{name:<9} {n:>7,} {took * 1000:>7.2f} ms {ratio:>14}")
            previous = took
    for n in (5_000, 20_000, 120_000):
        pattern = "/" + "[" * (n - 1)
        start = time.perf_counter()
        try:
            add_rule(state, "deny", pattern, on="path")
            verdict = "stored"
        except ValueError as e:
            verdict = f"refused ({e})"
        refused = time.perf_counter() - start
        print(f"/[[[... {n:>7,}: add_rule {verdict} in {refused * 1e6:.0f} us; compiled anyway: "
              f"{compile_time(pattern) * 1000:.1f} ms")
    add_rule(state, "deny", "/" + "[" * (MAX_PATTERN - 1), agent="alice", on="path")
    add_rule(state, "deny", "*a" * (MAX_PATTERN // 2), agent="alice")
    glob_regex.cache_clear()
    rules_module.joined.cache_clear()
    re.purge()
    times = []
    for _ in range(2):
        start = time.perf_counter()
        CommandRules(governance(state, "alice", HOME).rules)
        times.append(time.perf_counter() - start)
    print(f"session with two 4 KiB rules: governance {times[0] * 1000:.1f} ms, the next session's "
          f"{times[1] * 1000:.1f} ms ({rules_module.joined.cache_info().hits} rule sets reused)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--ops", type=int, default=2_000)
    parser.add_argument("--only", choices=("vfs", "shell", "patterns"))
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kbench-policy."))
    try:
        with KState(tmp / "state", create=True) as state:
            add_agent(VFS(state, by="bench"), "alice")
            if args.only in (None, "vfs"):
                print(f"{'vfs operation':<14} {'limited+100 rules':>18} {'no policy':>10} {'ratio':>6}  goal <= 1.10")
                for name, ruled, plain in bench_vfs(state, args.ops):
                    print(f"{name:<14} {ruled:>15.1f} us {plain:>7.1f} us {ruled / plain:>6.2f}")
            if args.only in (None, "shell"):
                ruled, plain = bench_shell(state, args.files)
                print(f"\nfind | xargs grep -l, {args.files:,} files: {ruled * 1000:.0f} ms with 100 command + 100 "
                      f"path rules, {plain * 1000:.0f} ms without: ratio {ruled / plain:.2f}\n")
            if args.only in (None, "patterns"):
                bench_patterns(state)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
