"""The language builtins, compared with bash: echo, printf, read, test/[, [[ ]], declare and
friends, set/shopt, shift, getopts, cd/pwd, export/readonly/unset."""

from __future__ import annotations

import pytest
from interp_support import assert_same

ECHO_PRINTF = [
    "echo -e 'a\\nb\\x41\\0101'; echo -n x; echo -E 'a\\nb'; echo -neE; echo -- -n",
    "printf '%s\\n' one two; printf '%5d|%-5s|%05.1f|%x|%o|%c|%%\\n' 42 ab 3.14159 255 8 zed",
    "printf '%q\\n' 'a b' 'x$y' \"it's\" ''; printf '%b\\n' 'a\\tb\\c' 'never'",
    "printf '%d\\n' abc; echo $?; printf '%d %d\\n' 12x 3; echo $?",
    "printf '%s %s\\n' 1 2 3; printf 'no args\\n'; printf '%s|' ; echo",
    "printf -v out '%03d' 7; echo $out; printf '%+d % d %#x %#o %e %g\\n' 5 5 255 8 1234.5 0.0001",
    "printf '%-8s|%8s|%.2s\\n' left right truncate; printf '%*d|%-*d|\\n' 5 1 4 2",
    "printf \"%d %d\\n\" \"'A\" '\"b'; printf '%i %u %X\\n' -3 7 3054",
    "printf '%z'; echo $?",
    "printf '\\101\\x42\\u0043\\n'; printf 'tab\\there\\n'",
]

READ = [
    "read a b <<< 'one two three'; echo \"$a|$b\"",
    "read -r x <<< 'a\\b'; echo \"$x\"; read y <<< 'a\\b'; echo \"$y\"",
    "IFS= read -r -d '' all <<< 'multi\nline'; echo \"$all\"",
    "read -n 3 c <<< 'abcdef'; echo $c; read -N 2 d <<< 'xy'; echo $d",
    "read a b c <<< '1 2'; echo \"[$a][$b][$c]\"",
    "echo 'a:b:c' | { IFS=: read -r x y; echo \"$x|$y\"; }",
    "s=$'line1\\nline2'; while IFS= read -r line; do echo \"[$line]\"; done <<< \"$s\"",
    "read x < /dev/null; echo $? \"[$x]\"",
    "printf 'no newline' | { read x; echo $? $x; }",
    "read -a arr <<< 'p q r'; echo ${#arr[@]} ${arr[1]}; read <<< 'rep ly'; echo \"$REPLY\"",
    "read -d , f <<< 'a,b'; echo $f; read 1bad <<< x; echo $?",
    "read x <<< '  lead and trail  '; echo \"[$x]\"; IFS= read y <<< '  keep  '; echo \"[$y]\"",
]

TESTS = [
    "x='a b'; [ $x = 'a b' ]; echo $?",
    "[ -f /nonexistent ]; echo $?; [ abc \\< abd ]; echo $?; [ 1 -eq 1 -a 2 -eq 2 ]; echo $?; [ ! -z '' ]; echo $?",
    "test; echo $?; test x; echo $?; [ ]; echo $?; [ -n ]; echo $?; [ ! ]; echo $?",
    "[ 1 -eq a ]; echo $?; [ a b ]; echo $?; [ 1 -eq ]; echo $?; [ x; echo $?",
    "[ \\( 1 -eq 1 \\) -o 1 -eq 2 ]; echo $?; [ -d . ] && [ -e . ]; echo $?",
    "echo x > f; [ -f f -a -s f -a -r f -a -w f ]; echo $?; [ -x f ]; echo $?; [ -d f ]; echo $?",
    "[ f1 -nt f2 ]; echo $?; [ -z \"$unset\" ]; echo $?; [ 0 -lt -1 ]; echo $?",
    "[[ 1 -lt 2 && ( a == b || c == c ) ]]; echo $?; [[ ! -e /nope ]]; echo $?",
    "[[ x == \"*\" ]]; echo $?; [[ * == \"*\" ]]; echo $?; y='a*'; [[ abc == $y ]]; echo $?; [[ abc == \"$y\" ]]; echo $?",
    "[[ 'a.b' =~ a\\.b ]] && echo re1; re='^([0-9]+)-([0-9]+)$'; [[ 12-34 =~ $re ]] && echo ${BASH_REMATCH[2]} ${BASH_REMATCH[0]}",
    "[[ abc =~ ^(a)(x)?c ]]; echo $? ${#BASH_REMATCH[@]}; [[ 5 -gt 10 ]]; echo $?; [[ 1+1 -eq 2 ]]; echo $?",
    "[[ -z '' && -n x ]] && echo ok; [[ abc < abd ]] && echo lt; [[ -v HOME ]] && echo set",
    "[[ 1 -eq 1/0 ]]; echo after $?",
    "shopt -s nocasematch; [[ ABC == abc ]] && echo ci; case X in x) echo cix;; esac",
]

VARIABLES = [
    "declare -i n=5; n+=3; echo $n; declare -l lo=HeLLo; declare -u up=world; echo $lo $up",
    "x=1; readonly x; declare -p x; x=2; echo $?; unset x; echo $?",
    "readonly r=1; r=2 echo hi; echo after $?",
    "export FOO=bar; declare -p FOO; export -n FOO; declare -p FOO",
    "n=5; declare -p n; declare -x e=1; declare -p e; declare -p nosuch; echo $?",
    "f() { local x=in; }; f; echo ${x-unset}; local y=1; echo $?",
    "declare -A a; a[x]=1; declare -a b; b[2]=z; declare -p a b",
    "f() { declare -g G=global; local L=l; }; f; echo $G ${L-nol}",
    "x=1; unset x; echo ${x-gone}; a=(1 2 3); unset 'a[0]'; echo ${a[@]}; unset a; echo ${#a[@]}",
    "set -- 1 2 3 4 5; shift 2; echo $@; shift 10; echo $?; echo $#; shift -1; echo $?",
    "set -- a b c; echo $#; set --; echo $#; set -o > /dev/null; echo done",
    "set -o errexit; echo $-; set +e; set -o pipefail; shopt -o pipefail; set -o nosuch; echo $?",
    "shopt -s extglob; shopt extglob; shopt -u extglob; shopt -q extglob; echo $?; shopt -s nosuch; echo $?",
    "getopts_test() { while getopts 'ab:c' opt; do case $opt in a) echo A;; b) echo \"B=$OPTARG\";; c) echo C;; \\?) echo bad;; esac; done; shift $((OPTIND-1)); echo \"rest: $*\"; }; getopts_test -a -b val -c file1 file2",
    "getopts 'x:' o -y; echo \"$o $?\"; OPTIND=1; getopts ':x:' o -x; echo \"$o $OPTARG\"",
    "while getopts 'ab' o -ab -a; do echo $o $OPTIND; done; echo end $OPTIND",
    "cd /; pwd; cd -; cd /nonexist; echo $?; cd /tmp; echo $OLDPWD; cd; pwd",
    "cd /tmp; cd ..; pwd; cd a b; echo $?; cd -P /tmp; pwd -P; echo $PWD",
    "x=outer; f() { local x=inner; unset x; echo ${x-unset-in-f}; }; f; echo $x",
]


@pytest.mark.parametrize("script", ECHO_PRINTF)
def test_echo_and_printf_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", READ)
def test_read_matches_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", TESTS)
def test_conditionals_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", VARIABLES)
def test_variable_builtins_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)
