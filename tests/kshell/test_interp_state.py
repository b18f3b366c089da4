"""Shell state that changes how later input is read, resolved or shown, compared with bash:
aliases, name references, the locale's character set, set -x / set -v traces, `{var}>`
descriptors and a subshell's view of its parent's traps."""

from __future__ import annotations

import pytest
from interp_support import assert_same

ALIASES = [
    "alias g='echo hi'\ng 2>/dev/null || echo off",
    "shopt -s expand_aliases\nalias g='echo hello' e='echo '\ng; e g; e e g",
    "shopt -s expand_aliases\nalias two='echo one; echo two' kw='if true; then echo kw; fi'\ntwo\nkw",
    "shopt -s expand_aliases\nalias r1=r2 r2=r1 ls='ls -l'\nr1; echo $?",
    "shopt -s expand_aliases\nalias g='echo hi'\na=1 g x; >/dev/stdout g y; a=1 >/dev/null g z; echo $?",
    "shopt -s expand_aliases\nalias g='echo hi'\necho $(g sub) \"$(g dq)\" `g bt`; case g in g) g case;; esac",
    "shopt -s expand_aliases\nalias g='echo hi'; g same-line 2>/dev/null; echo $?\ng next-line",
    "alias ll='ls -l'; type ll; shopt -s expand_aliases; type ll; type -t ll; command -v ll; command -V ll",
    "alias a=1 'b c=2' =x; echo $?; alias; alias a nope; unalias a nope; echo $?; unalias -a; alias",
]

NAMEREFS = [
    "declare -n r=t; t=1; r=2; echo $t ${!r} ${#r}; declare -p r",
    "f() { local -n out=$1; out=set; }; f res; echo $res",
    "add() { local -n acc=$1; acc+=(\"$2\"); }; l=(); add l x; add l 'y z'; printf '<%s>' \"${l[@]}\"; echo",
    "a=(1 2 3); declare -n r=a; r[1]=B; echo \"${r[@]}\" ${#r[@]} \"${!r[@]}\"",
    "a=(1 2 3); declare -n e=a[2]; echo $e; e=C; echo \"${a[@]}\"",
    "declare -n r; declare -p r; r=t; t=v; echo $r; unset r; declare -p t; unset -n r; declare -p r",
    "declare -n s=s; echo $?; declare -n b=1; echo $?; n=4; declare -n m=n; (( m *= 2 )); echo $n",
]

LOCALE = [
    "x=héllo; echo ${#x} ${x:1:2} ${x^^} ${x#h?}",
    "LC_ALL=C.UTF-8; x=héllo; echo ${#x} ${x:1:1} ${x^^} ${x#h?}",
    "echo $'\\u00e9|\\u41|\\U0001F600'; printf '\\u00e9\\n'; echo -e '\\u00e9'",
    "LC_ALL=C.UTF-8\necho $'\\u00e9' | { read -r x; echo ${#x} \"$x\"; }",
    "x=$(printf '[%c]' ''); echo ${#x}; printf '[%3c][%c]\\n' é ab",
]

TRACES = [
    "set -x; (( 1 + 2 )); ((x=1)); for ((i=0; i<1; i++)); do :; done; for ((;;)); do break; done",
    "set -x; a=5; [[ $a == 5 && ( -n x || -z y ) ]]; [[ ! -z $a ]]; [[ ! ( a == b ) ]]; [[ a == \"*\" ]]",
    "set -x; [[ 5 =~ \"5.\"x ]]; [[ '' == '' ]]; [[ -z '' ]]; [ 1 = 1 ]",
    "set -x; a=$(echo 1) b=; x+=y; arr=(1 'two words' $'x\\ty'); a[1]+=z; declare -i n; n=1+2",
    "set -x; echo $'a\\tb' a^b a#b '#a' '~x' x~ $'\\x01' \"it's\" é >/dev/null",
    "set -x; export A=1 B; readonly -a R=(1 'a b'); declare -A h=([k]=v); y=2 true",
    "set -x; case \"x y\" in *) :;; esac; for i in \"a b\" c; do :; done",
    "set -v\necho a; echo b\nif true; then\n  echo c\nfi\neval 'echo e'\nset +v\necho quiet",
    "trap 'echo \"line $LINENO\"' ERR\ntrue\nfalse\nf() {\n  false\n}\nf",
]

DESCRIPTORS_AND_TRAPS = [
    "exec {fd}>named.txt; echo $fd; echo via >&$fd; exec {fd}>&-; read -r l < named.txt; echo $l",
    "exec {a}>&1 {b}>&2; echo $a $b; echo x >&$a; exec {a}>&- {b}>&-; unset u; exec {u}>&-; echo $?",
    "readonly ro=1; exec {ro}>/dev/null; echo $?",
    "trap 'echo p' EXIT; (trap -p); (trap 'echo i' INT; trap -p); x=$(trap -p EXIT); echo \"$x\"; trap - EXIT",
    "[[ -z a && $(echo evaluated >&2) ]]; echo done",
    "x=; printf '%s\\n' \"${x:-$'tab\\there'}\" \"${x:-$\"dq\"}\" \"${x:-'sq'}\"",
    "a=(1 2)\necho ${a[1 2]}\necho not reached",
    "a=(1 2); x=$(echo ${a[1 2]}); echo \"after [$x]\"; echo $((1 2)); echo reached",
]


@pytest.mark.parametrize("script", ALIASES)
def test_aliases_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", NAMEREFS)
def test_name_references_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", LOCALE)
def test_the_c_locale_counts_bytes_like_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", TRACES)
def test_traces_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", DESCRIPTORS_AND_TRAPS)
def test_descriptors_traps_and_discards_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)
