"""Commands, compared with bash: lists, compound commands, functions, redirections, here-docs,
pipelines, errexit and friends, traps, subshell isolation, child shells and scripts."""

from __future__ import annotations

import pytest
from interp_support import assert_same

SEED_EXAMPLES = [
    "while read l; do echo $l; done > notes.txt <<'EOF'\nalpha\nbeta\nEOF\nwhile read l; do echo \"[$l]\"; done < notes.txt",
    "i=0; while test \"$i\" -lt 3; do echo \"$i\"; i=$((i + 1)); done",
    "path=/a/b/c.txt; echo ${path##*/} ${path%/*}",
    "VAR2=abc; echo ${VAR:-fallback} ${#VAR2}; false; echo $?",
    "echo note > ~/note.txt; read x < ~/note.txt; echo $x",
    "if test -f notes.txt; then echo yes; else echo no; fi",
]

CONTROL = [
    "false; echo $?; true && echo yes || echo no; false || echo fallback",
    "case foo.ts in *.js) echo js;; *.ts) echo ts;; esac",
    "x=5; if [ $x -gt 3 ]; then echo big; elif [ $x -gt 1 ]; then echo mid; else echo small; fi",
    "v=abc; case $v in a*|b*) echo first;& c*) echo fallthrough;; *) echo no;; esac",
    "case x in x) echo one;;& x) echo two;; esac; case y in x) echo no;; esac; echo $?",
    "for i in 1 2 3; do for j in a b; do [ $j = b ] && continue 2; [ $i = 3 ] && break 2; echo $i$j; done; done",
    "i=0; until [ $i -ge 3 ]; do echo u$i; ((i++)); done",
    "for ((i=0;i<3;i++)); do echo $i; done; for ((;;)); do break; done; echo out",
    "for x; do echo $x; done; set -- p q; for x; do echo $x; done",
    "for 1x in a; do echo; done; echo $?",
    "! true; echo $?; ! false; echo $?",
    "echo a; exit 3; echo b",
    "break; echo $?; continue; echo $?",
    "f() { return 7; echo no; }; f; echo $?; return 1; echo $?",
    "{ echo a; echo b; } > g.txt; while read x; do echo \"<$x>\"; done < g.txt",
    "echo a && { echo b; false; } || echo c",
]

FUNCTIONS = [
    "f() { local x=1; echo \"in f $1 $x\"; return 3; }; f arg; echo $?; echo ${x:-none}",
    "x=1; f() { x=2; local y=3; g; }; g() { echo \"g sees $y $x\"; }; f; echo \"$x ${y-unset}\"",
    "f() { echo \"$FUNCNAME\" \"$#\"; }; f 1 2; function g { echo g${1}; }; g x",
    "fact() { if [ $1 -le 1 ]; then echo 1; else local r=$(fact $(($1-1))); echo $(($1 * r)); fi; }; fact 10",
    "fib() { local n=$1; if (( n < 2 )); then echo $n; return; fi; echo $(( $(fib $((n-1))) + $(fib $((n-2))) )); }; fib 10",
    "f() { local -a la=(1 2); echo ${la[1]}; declare g=3; echo $g; }; f; echo ${g-none}",
    "echo() { builtin echo \"wrapped: $*\"; }; echo hi; command echo raw; unset -f echo; echo back",
    "f() { echo body; } > fout.txt; f; read l < fout.txt; echo $l",
    "f() { shift; echo $@; }; set -- a b; f x y z; echo $@",
]

REDIRECTIONS = [
    "echo a > out.txt; echo b >> out.txt; read first < out.txt; echo $first; exec 3< out.txt; read -u 3 l1; read -u 3 l2; echo $l1 $l2",
    "{ echo out; echo err >&2; } 2>&1 >/dev/null",
    "echo x >&2 2>/dev/null; echo y 2>/dev/null >&2",
    "echo hi > /dev/stderr; echo there 1>&2",
    "set -C; echo a > nc; echo b > nc; echo $?; echo c >| nc; echo ok",
    "cat < nonexistent; echo $?; echo x > /nodir/f; echo $?",
    "exec 3>log.txt; echo one >&3; echo two >&3; exec 3>&-; while read l; do echo \"L $l\"; done < log.txt",
    "echo x >&5; echo $?",
    "echo both &> all.txt; read v < all.txt; echo $v; { echo e >&2; } 2>&1 | while read q; do echo got $q; done",
    "read a <<< \"here string\"; echo $a; read b <<EOF\n$a expanded\nEOF\necho $b",
    "x=1; read <<EOF >/dev/null\n$x\nEOF\necho $? $REPLY",
    "while read -r l; do echo \"[$l]\"; done <<'EOF'\n  $notexpanded \\n\nEOF",
    "while read l; do echo \"$l\"; done <<-EOF\n\tindented\n\tEOF",
    "echo hi > ''; echo $?",
    "f=out2.txt; echo data > $f; read d < \"$f\"; echo $d",
]

PIPELINES = [
    "while :; do echo y; done | { read a; echo got $a; }; echo ${PIPESTATUS[@]}",
    "f() { echo f1; echo f2; }; f | while read l; do echo \"<$l>\"; done",
    "x=0; echo a | x=1; echo $x; echo a | read y; echo \"${y-unset}\"",
    "true | false; echo ${PIPESTATUS[@]} $?",
    "set -o pipefail; false | true; echo $?; true | false | true; echo ${PIPESTATUS[@]}",
    "echo one two | while read a b; do echo \"$b $a\"; done",
    "echo a | { read x; echo got $x; }",
    "{ echo e1 >&2; echo o1; } |& while read l; do echo \"[$l]\"; done",
]

ERREXIT_AND_TRAPS = [
    "set -e; false; echo notreached",
    "set -e; if false; then :; fi; false || true; echo reached",
    "set -e; f() { false; echo in-f; }; f || echo caught; echo end",
    "set -e; x=$(false); echo 'not reached'",
    "set -e; false && true; echo reached1; ! true; echo reached2",
    "set -e; (false); echo nope",
    "set -e; while false; do :; done; echo loop-ok; (( 0 )); echo nope",
    "trap 'echo \"err status $?\"' ERR; false; echo next",
    "trap 'echo bye' EXIT; echo hi",
    "trap 'echo exiting $?' EXIT; exit 5",
    "set -x; x=1; echo \"a b\" $x; set +x",
    "PS4='>> '; set -x; echo hi",
    "set -u; x=1; echo $x; echo ${y}; echo after",
]

ISOLATION_AND_SHELLS = [
    "x=1; (x=2; echo $x); echo $x",
    "cd /; (cd /tmp; pwd); pwd; (cd ..; pwd)",
    "f() { (exit 3); echo $?; }; f",
    "(set -e; false; echo no); echo $?",
    "x=outer; sh -c 'echo \"child: ${x-unset} $0 $1\"' name arg; export x; bash -c 'echo \"child2: $x\"'",
    "sh -c 'cd /; pwd'; pwd; bash -c 'exit 4'; echo $?",
    "echo 'echo sourced $1; y=fromsrc' > s.sh; . ./s.sh arg; echo $y; source s.sh",
    "echo 'echo script $0 $#; exit 7' > sc.sh; sh sc.sh a b; echo $?; bash ./sc.sh; echo $?",
    "./nothere; echo $?; /nothere/x; echo $?; nosuchcmd; echo $?",
    "echo 'echo hi' > noexec.sh; ./noexec.sh; echo $?",
    "eval 'x=1; y=2'; echo $x$y; eval 'for i in a b; do echo $i; done'",
    "eval 'echo ${'; echo after $?",
    "command -v echo; command -V echo; command echo via-command; builtin echo via-builtin",
    "type echo; type if; f(){ :; }; type -t f; type nosuch; echo $?",
    "x=1 sh -c 'echo $x'; echo ${x-unset}",
]

SYNTAX_ERRORS = [
    "echo \"unterminated",
    "echo ok; if then; echo after",
    "echo ok; fi",
    "echo first\necho ok; done\necho never",
]


@pytest.mark.parametrize("script", SEED_EXAMPLES)
def test_seed_examples_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", CONTROL)
def test_control_flow_matches_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", FUNCTIONS)
def test_functions_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", REDIRECTIONS)
def test_redirections_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", PIPELINES)
def test_pipelines_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", ERREXIT_AND_TRAPS)
def test_errexit_and_traps_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", ISOLATION_AND_SHELLS)
def test_subshells_and_child_shells_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", SYNTAX_ERRORS)
def test_syntax_errors_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)
