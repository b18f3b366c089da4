"""bench/shell.py: the K shell against bash on the same machine, on four scripts and start-up.

(a) a 100,000-iteration arithmetic `while` loop, (b) parsing and running a generated 2,000-line
script, (c) `for i in {1..20000}` building a string, (d) 1,000 command substitutions,
(s) start-up: `komputer sh -c true` as a process against `bash -c true`, the median of 20 runs
each (goal: under 0.06 s), what every short `ssh host cmd` an agent runs pays.

K runs in-process (`kshell.Shell` on a fresh VFS, timed around `.run`); bash runs as `bash -c`
(timed around the subprocess, so its start-up, about a millisecond, is included). Both must print
the same output with the same status in every run, or the bench stops there (bench/agree.py).
Prints seconds for each and the ratio K/bash (lower is better; the target is 3x or less).
Run: .venv/bin/python bench/shell.py [--repeat N] [--only a,c]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # ahead of bench/, whose native.py would shadow the `native` package

from agree import agree  # noqa: E402

import kshell  # noqa: E402
from kfs.kstate import KState  # noqa: E402
from kfs.vfs import ROOT as ROOT_CRED  # noqa: E402
from kfs.vfs import VFS, PathFS  # noqa: E402

HOME = "/home/agent"
ENV = {"LC_ALL": "C", "PATH": "/nonexistent", "PS4": "+ "}

ARITH_LOOP = """\
s=0 i=0
while [ "$i" -lt 100000 ]; do
  s=$((s + i * 2 % 7))
  i=$((i + 1))
done
echo "$s $i"
"""

STRING_BUILD = """\
s=
for i in {1..20000}; do
  s="$s$i,"
done
echo "${#s}"
"""

COMMAND_SUBSTITUTIONS = """\
n=0
for i in {1..1000}; do
  x=$(echo "$i")
  n=$((n + x))
done
echo "$n"
"""


def generated_script(lines: int = 2000) -> str:
    """A deterministic script of `lines` lines mixing what agents write: assignments, parameter
    operations, functions, if/case/for, arithmetic, tests, here-strings, redirections."""
    out: list[str] = ["total=0", "names=()", "declare -A seen"]
    block = 0
    while True:
        b = block
        chunk = [
            f"# block {b}",
            f"path{b}=/srv/app/v{b}/file{b}.tar.gz",
            f'base=${{path{b}##*/}}; dir=${{path{b}%/*}}; stem=${{base%%.*}}',
            f"f{b}() {{",
            '  local n=$1 acc=0',
            f'  for ((j = 0; j < n; j++)); do acc=$((acc + j * {b % 5 + 1})); done',
            '  echo "$acc"',
            "}",
            f'r=$(f{b} {b % 7 + 3})',
            f'if [ "$r" -gt {b % 20} ] && [[ $stem == file* ]]; then',
            '  total=$((total + r))',
            "else",
            "  total=$((total - 1))",
            "fi",
            f'case {b % 4} in',
            '  0) names+=("zero");;',
            '  1|2) names+=("small");;',
            '  *) names+=("other");;',
            "esac",
            f'seen[k{b % 13}]=$((${{seen[k{b % 13}]:-0}} + 1))',
            f'for w in alpha beta gamma; do x{b}="${{x{b}:-}}${{w:0:1}}"; done',
            f'read -r first rest <<< "w{b} two three"',
            f'printf "%s:%d\\n" "$first" "{b}" > /dev/null',
            f'echo "${{dir}} ${{#base}} ${{x{b}^^}}" >> log.txt',
        ]
        if len(out) + len(chunk) > lines - 1:
            break
        out += chunk
        block += 1
    while len(out) < lines - 1:
        out.append(f"total=$((total + {len(out) % 3}))")
    out.append('echo "$total ${#names[@]} ${#seen[@]}"')
    return "\n".join(out) + "\n"


CASES: list[tuple[str, str, Callable[[], str]]] = [
    ("a", "while loop, 100,000 arithmetic iterations", lambda: ARITH_LOOP),
    ("b", "parse and run a 2,000-line script", generated_script),
    ("c", "for i in {1..20000} building a string", lambda: STRING_BUILD),
    ("d", "1,000 command substitutions", lambda: COMMAND_SUBSTITUTIONS),
]


def run_k(script: str) -> tuple[float, bytes, int]:
    """Seconds for Shell.run on a fresh KState; the state's creation is not timed."""
    state_dir = tempfile.mkdtemp(prefix="kbench-shell-")
    state = KState(os.path.join(state_dir, "state"), create=True)
    try:
        vfs = VFS(state, by="bench")
        PathFS(vfs, cred=ROOT_CRED, cwd="/", home=HOME).mkdir(HOME, parents=True)
        fs = PathFS(vfs, cred=ROOT_CRED, cwd=HOME, home=HOME)
        shell = kshell.Shell(fs, name="k", env=dict(ENV, HOME=HOME, PWD=HOME))
        start = time.perf_counter()
        result = shell.run(script)
        elapsed = time.perf_counter() - start
    finally:
        state.close()
        shutil.rmtree(state_dir, ignore_errors=True)
    if result.status != 0 or result.stderr:
        sys.stderr.write(f"K: status {result.status}: {result.stderr.decode(errors='replace')[:500]}\n")
    return elapsed, result.stdout, result.status


def run_bash(bash: str, script: str) -> tuple[float, bytes, int]:
    """Seconds for `bash -c SCRIPT` in a fresh temp directory, process start-up included."""
    home = tempfile.mkdtemp(prefix="kbench-bash-")
    try:
        start = time.perf_counter()
        proc = subprocess.run([bash, "-c", script], capture_output=True, cwd=home,
                              env=dict(ENV, HOME=home), stdin=subprocess.DEVNULL)
        elapsed = time.perf_counter() - start
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if proc.returncode != 0 or proc.stderr:
        sys.stderr.write(f"bash: status {proc.returncode}: {proc.stderr.decode(errors='replace')[:500]}\n")
    return elapsed, proc.stdout, proc.returncode


def startup(argv: list[str], runs: int = 20) -> float:
    """The median wall time of `runs` runs of `argv` (a process each, start to exit)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=1, help="runs per shell and case; the best is kept")
    parser.add_argument("--only", default="", help="comma-separated case letters, e.g. a,c")
    args = parser.parse_args()
    bash = shutil.which("bash")
    if bash is None:
        sys.exit("bash not found: install bash to run this benchmark")
    wanted = set(args.only.split(",")) if args.only else None
    print(f"{'case':<48}{'K s':>9}{'bash s':>9}{'K/bash':>9}")
    for key, title, make in CASES:
        if wanted and key not in wanted:
            continue
        script = make()
        k_runs = [run_k(script) for _ in range(args.repeat)]
        b_runs = [run_bash(bash, script) for _ in range(args.repeat)]
        k_best = min(r[0] for r in k_runs)
        b_best = min(r[0] for r in b_runs)
        for k_run, b_run in zip(k_runs, b_runs):
            agree(f"({key}) {title}", k_run[1:], b_run[1:], "bash")
        print(f"({key}) {title:<44}{k_best:>9.3f}{b_best:>9.3f}{k_best / b_best:>8.2f}x")
    if not wanted or "s" in wanted:
        state_dir = tempfile.mkdtemp(prefix="kbench-start-")
        try:
            komputer = [os.path.join(os.path.dirname(sys.executable), "komputer"), "sh", "--state", state_dir]
            subprocess.run([*komputer, "-c", "true"], check=True)  # the state's creation is not timed
            said = [subprocess.run([*shell, "-c", "echo $((6*7)) ok"], capture_output=True).stdout
                    for shell in (komputer, [bash])]
            agree("(s) start-up", *said, "bash")  # both shells run and answer alike
            k_time = startup([*komputer, "-c", "true"])
            b_time = startup([bash, "-c", "true"])
        finally:
            shutil.rmtree(state_dir, ignore_errors=True)
        title = "start-up: komputer sh -c true (median of 20)"
        print(f"(s) {title:<44}{k_time:>9.3f}{b_time:>9.3f}{k_time / b_time:>8.2f}x")


if __name__ == "__main__":
    main()
