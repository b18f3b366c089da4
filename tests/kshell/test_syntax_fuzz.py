"""The parser never raises anything but ShellSyntaxError and never takes long: random text over
a shell alphabet, random bytes, and random edits of a corpus of valid scripts."""

from __future__ import annotations

import subprocess
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kshell.syntax import Parser, ShellSyntaxError, is_complete, parse
from kshell.syntax.ast import Program
from tests.hang import HANG

CORPUS = [
    "echo hello world\n",
    'name=${1:-world}\necho "hello, $name"\n',
    "mkdir -p app/{src,test}\ncd app && ls -la\n",
    'for file in *.ts; do\n  echo "found $file"\ndone\n',
    "i=0\nwhile [ $i -lt 5 ]; do\n  i=$((i + 1))\ndone\necho $i\n",
    'path=/a/b/c.txt\necho "${path##*/}" "${path%/*}" "${path%.txt}"\n',
    'echo "${VAR:-fallback}" ${#VAR} $?\n',
    "cat > notes.md <<'EOF'\n# Notes\n$HOME is not expanded\nEOF\n",
    "cat <<EOF\nuser: $USER\ndate: $(date +%F)\nsum: $((1 + 2))\nEOF\n",
    ("if [[ -f config && $mode == prod* ]]; then\n  echo prod\nelif [ -d /tmp ]; then\n"
     "  echo tmp\nelse\n  echo other\nfi\n"),
    ('case "$1" in\n  start|stop) echo "$1ing" ;;\n  -h|--help) usage; exit 0 ;;\n'
     '  *) echo "unknown: $1" >&2; exit 1 ;;\nesac\n'),
    "usage() {\n  echo \"usage: $0 [-v] file\" >&2\n  return 2\n}\n",
    "function log { printf '%s %s\\n' \"$(date +%s)\" \"$*\" >> /tmp/log; }\n",
    ("arr=(one two 'three four')\narr+=(five)\nfor x in \"${arr[@]}\"; do echo \"$x\"; done\n"
     "echo ${#arr[@]} ${!arr[@]}\n"),
    "declare -A ages=([alice]=30 [bob]=25)\nfor k in \"${!ages[@]}\"; do echo $k; done\n",
    "for ((i = 0; i < 10; i++)); do\n  (( i % 2 == 0 )) && continue\n  echo $i\ndone\n",
    "grep -v '^#' file | sort | uniq -c | sort -rn | head -n 3\n",
    "{ echo a; echo b; } > out.txt 2>&1\n( cd /tmp && pwd )\n",
    "set -euo pipefail\ntrap 'echo done' EXIT\n",
    'while IFS=: read -r user _ uid _; do\n  echo "$user $uid"\ndone < /etc/passwd\n',
    "x=$(echo $(echo nested) `echo back`)\necho \"$x\"\n",
    "result=$(\n  case $x in\n    a) echo A ;;\n    *) echo other ;;\n  esac\n)\n",
    "[[ $line =~ ^([a-z]+)=(.*)$ ]] && echo \"${BASH_REMATCH[1]}\"\n",
    "until false; do break; done; ! true; true || false && echo ok\n",
    "exec 3<> /tmp/fd; echo hi >&3; exec 3>&-\n",
    "diff <(sort a) <(sort b) > /dev/null && echo same\n",
    "printf '%s\\n' $'tab\\there' \"quote\\\"d\" 'single'\n",
    "s='hello world'\necho ${s^^} ${s,,} ${s/world/there} ${s:0:5} ${s: -5}\n",
    "read -r -p 'name? ' answer <<< \"bob\"\necho \"$answer\"\n",
    "ls *.log 2>/dev/null | while read -r f; do gzip \"$f\"; done &\nwait\n",
    "shift; set -- a b c; echo \"$#\" \"$@\" \"$*\"\n",
    "local_var() { local a=1 b; b=$((a * 2)); echo $b; }\n",
    "echo one \\\n  two \\\n  three\n",
    "if ! command -v jq >/dev/null; then echo 'no jq' >&2; fi\n",
    "n=$(( (3 + 4) * 2 ** 3 / 4 % 5 ))\n(( n > 3 )) && echo big\n",
    "cat <<-EOF\n\tindented $n\n\tEOF\necho after\n",
    "f() { [[ $# -gt 0 ]] || return 1; echo \"$1\"; shift; f \"$@\"; }\nf a b c\n",
    "select_x=1; time_x=2; echo $select_x $time_x\n",
    "echo ~ ~/docs PATH=~/bin:$PATH\n",
    "for i in {1..3}; do for j in a b; do echo $i$j; done; done\n",
]

ALPHABET = list("abx01 \t\n;&|()<>{}[]$`\\\"'#=~*?!@%^,:/-+.") + [
    "if ", "then ", "fi", "do ", "done", "case ", " in ", "esac", "$(", "${", "$((", "))",
    "<<", "<<-", "EOF\n", "[[ ", " ]]", "((", "for ", "while ", "function ", ";;", "=~",
    "\\\n", "a=(", "$'", "`", "\x00", "é", "\udcff",
]


def parses_or_syntax_error(src: str) -> None:
    """The whole contract: a Program or a ShellSyntaxError, nothing else, and no runaway parse
    (the bound catches one, not a slow machine)."""
    start = time.perf_counter()
    try:
        assert isinstance(parse(src), Program)
    except ShellSyntaxError as e:
        assert e.messages and e.lineno >= 1
    assert isinstance(is_complete(src), bool)
    assert time.perf_counter() - start < HANG


FUZZ = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.lists(st.sampled_from(ALPHABET), max_size=60).map("".join))
def test_random_shell_text_only_raises_syntax_errors(src: str) -> None:
    parses_or_syntax_error(src)


@FUZZ
@given(st.binary(max_size=300).map(lambda b: b.decode("utf-8", "surrogateescape")))
def test_random_bytes_only_raise_syntax_errors(src: str) -> None:
    parses_or_syntax_error(src)


_EDIT = st.tuples(st.sampled_from(["delete", "insert", "duplicate"]), st.floats(0, 1),
                  st.integers(1, 12), st.sampled_from(ALPHABET))


def mutate(src: str, edits: list[tuple[str, float, int, str]]) -> str:
    for kind, where, size, piece in edits:
        at = int(where * len(src))
        if kind == "delete":
            src = src[:at] + src[at + size:]
        elif kind == "insert":
            src = src[:at] + piece + src[at:]
        else:
            src = src[:at] + src[at:at + size] * 2 + src[at + size:]
    return src


@FUZZ
@given(st.sampled_from(CORPUS), st.lists(_EDIT, min_size=1, max_size=5))
def test_mutated_scripts_only_raise_syntax_errors(src: str, edits: list) -> None:
    parses_or_syntax_error(mutate(src, edits))


@pytest.mark.parametrize("src", CORPUS, ids=range(len(CORPUS)))
def test_corpus_scripts_are_valid_for_bash_and_for_k(bash: str, src: str) -> None:
    result = subprocess.run(["bash", "-n", "-c", src], executable=bash, check=False,
                            capture_output=True, text=True, timeout=10)
    assert (result.returncode, result.stderr) == (0, "")
    program = parse(src)
    assert program.commands and not program.warnings


def test_parse_line_over_the_corpus_matches_parse() -> None:
    for src in CORPUS:
        parser = Parser(src)
        commands = []
        while (line := parser.parse_line()) is not None:
            commands.extend(line)
        assert tuple(commands) == parse(src).commands
