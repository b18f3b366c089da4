"""The generated 2,000-line script that bench/shell.py times: valid bash, and parsed whole.

No timing is asserted here (timings belong to bench/, which prints them beside bash's)."""

from __future__ import annotations

import random
import subprocess

from kshell.syntax import parse

_BLOCKS = [
    lambda i: [f"x{i}=$((i + {i}))", f'echo "value: $x{i} ${{name:-default}}"'],
    lambda i: [f"for f in a b c {i}; do", '  echo "$f" | tr a-z A-Z', "done"],
    lambda i: [f"if [[ -n $x && $i -gt {i} ]]; then", f"  echo big{i} >> /tmp/out.$$",
               "elif [ -f /etc/passwd ]; then", "  : ok", "else", "  echo small", "fi"],
    lambda i: ["case $i in", f"  {i}|{i + 1}) echo hit ;;", "  *.txt) echo text ;;", "  *) ;;",
               "esac"],
    lambda i: [f"f{i}() {{", '  local a=$1 b="${2:-x}"', '  echo "${a%.*} ${b##*/} ${#a}"',
               "  return 0", "}"],
    lambda i: [f"arr{i}=(one two 'three four' \"$HOME\")",
               f'echo "${{arr{i}[@]}}" ${{#arr{i}[@]}}'],
    lambda i: [f"while (( i < {i % 7} )); do", "  i=$((i+1))", "done"],
    lambda i: ["out=$(echo hello | sed -e 's/h/H/' 2>/dev/null)", 'echo "$out"'],
    lambda i: ["cat <<EOF", f"line {i} with $HOME and $(date +%s)", "EOF"],
    lambda i: [f"[ -d /tmp ] && echo yes{i} || echo no{i}  # comment here"],
    lambda i: [f"for ((j = 0; j < {i % 5}; j++)); do echo $j; done"],
    lambda i: [f"s='{i}'; t=\"${{s/1/one}}\"; u=${{t^^}}", "printf '%s\\n' \"$u\""],
]


def generate_script(lines: int, seed: int = 42) -> str:
    """A deterministic script of `lines` lines mixing every common construct."""
    rng = random.Random(seed)
    out = ["#!/bin/bash", "i=0; name=k"]
    i = 0
    while True:
        block = rng.choice(_BLOCKS)(i)
        if len(out) + len(block) > lines:
            break
        out.extend(block)
        i += 1
    out.extend([": pad"] * (lines - len(out)))
    return "\n".join(out) + "\n"


def test_generated_script_is_valid_bash(bash: str) -> None:
    result = subprocess.run(["bash", "-n", "-c", generate_script(2000)], executable=bash,
                            check=False, capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stderr) == (0, "")


def test_two_thousand_lines_parse_into_every_command() -> None:
    program = parse(generate_script(2000))
    assert len(program.commands) > 500
