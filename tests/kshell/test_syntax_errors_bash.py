"""Syntax errors (and here-document warnings) compared with real bash, message for message.

Each case runs `bash -n -c SOURCE` (parse only: nothing in the source is executed) and compares
every line bash prints, after its `bash: -c: line N: ` prefix, line number included, with the
ShellSyntaxError (or ParseWarning) the K parser produces. Bash's exit status is recorded too:
2 for a syntax error, except where bash 5.2 itself is inconsistent (noted per case); the K
shell always exits 2 on a syntax error.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from kshell.syntax import ShellSyntaxError, parse

_PREFIX = re.compile(r"^bash: (?:-c: )?(?:line (\d+): )?(.*)$")

# (source, bash's exit status)
CASES: list[tuple[str, int]] = [
    ("if true; then fi", 2),
    ("echo $(", 2),
    ("case x in", 2),
    ("echo 'abc", 2),
    ('echo "abc', 2),
    ("echo `abc", 2),
    ("if true; then echo", 2),
    ("echo ${x", 2),
    ("echo $((1+", 2),
    ("for", 2),
    ("for x in a b; do", 2),
    (")", 2),
    (";;", 2),
    ("echo a;;", 2),
    ("echo >", 2),
    ("echo > ;", 2),
    ("echo |", 2),
    ("| echo", 2),
    ("f() echo", 2),
    ("{ echo; ", 2),
    ("}", 2),
    ("[[ a", 2),
    ("[[ a == b", 2),
    ("[[ -n", 2),
    ("[[", 2),
    ("(( 1 + ", 2),
    ("echo $[ 1", 2),
    ("case x in a) echo;; b", 2),
    ("then", 2),
    ("done", 2),
    ("esac", 2),
    ("cat <<", 2),
    ("echo (a)", 2),
    ("echo a ( b", 2),
    ("function", 2),
    ("echo & &", 2),
    ("echo ;;&", 2),
    ("echo $'abc", 2),
    ("echo <(ls", 2),
    ("echo ((", 2),
    ("x=$(( 1 )", 2),
    ("for ((i=0;i<3)); do :; done", 2),
    ("for ((i=0;i<3;i++;x)); do :; done", 2),
    ("for x y", 2),
    ("if true; then :; elif :; fi", 2),
    ("if true; else :; fi", 2),
    ("case x in a|) :;; esac", 2),
    ("case x in |a) :;; esac", 2),
    ("a=1 f() { :; }", 2),
    ("f() { :; } >", 2),
    ("( )", 2),
    ("{ ; }", 2),
    ("echo a | ! b", 2),
    ("echo a=(1 2)", 2),
    ("echo $(if true; then", 2),
    ('echo $( echo "a', 2),
    ("echo hi\nfi\necho", 2),
    ("if true; then\n  echo a\n  fi fi\nfi", 2),
    ("if true\nthen echo\n\n\n", 2),
    ("cat <<EOF\na\nb\nEOF\nfi", 2),
    ("cat <<EOF; fi\na\nEOF", 2),
    ('echo "a\nb\nc" )', 2),
    ("for i in.3}\\\n; do :; done", 2),
    # here-documents ended by end of file are warnings; the script is fine
    ("echo hi\ncat <<EOF\nabc", 0),
    ("cat <<EOF; cat <<E2\na\nEOF\nb\n", 0),
    ("while :; do\n  cat <<-END\n  x\ndone\n", 2),
    ("! t<<rue; true || false && echo o", 0),
    # bash 5.2 reports these syntax errors but exits 127 (command substitution) ...
    ("echo $(fi)", 127),
    # ... 1 (compound array assignment) or 0 (errors inside [[ ]])
    ("a=(1 2", 1),
    ("[[ a = ]]", 0),
    ("[[ ( a ]]", 0),
    ("[[ a b ]]", 0),
    ("[[ a ) ]]", 0),
]


def bash_report(bash: str, src: str) -> tuple[int, list[tuple[int | None, str]]]:
    result = subprocess.run(["bash", "-n", "-c", src], executable=bash, check=False,
                            capture_output=True, text=True, timeout=10)
    lines = []
    for line in result.stderr.splitlines():
        m = _PREFIX.match(line)
        assert m, f"unexpected bash output: {line!r}"
        lines.append((int(m.group(1)) if m.group(1) else None, m.group(2)))
    return result.returncode, lines


def k_report(src: str) -> list[tuple[int | None, str]]:
    try:
        program = parse(src)
    except ShellSyntaxError as e:
        return [(w.lineno, f"warning: {w.message}") for w in e.warnings] + [
            (e.lineno, message) for message in e.messages]
    return [(w.lineno, f"warning: {w.message}") for w in program.warnings]


@pytest.mark.parametrize(("src", "status"), CASES, ids=[repr(src) for src, _ in CASES])
def test_syntax_error_matches_bash(bash: str, src: str, status: int) -> None:
    bash_status, expected = bash_report(bash, src)
    assert bash_status == status
    assert expected, "bash reported nothing"
    assert k_report(src) == expected
