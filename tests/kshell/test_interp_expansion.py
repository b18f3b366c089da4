"""Word expansion, compared with bash: parameters and every operator form, arithmetic,
command substitution, braces, tilde, IFS splitting, globbing on the VFS, quoting."""

from __future__ import annotations

import pytest
from interp_support import assert_same, run_k

PARAMETERS = [
    "echo ${VAR:-fallback}; VAR=; echo ${VAR:-fb2} ${VAR-unset}; echo ${U:=set}; echo $U; echo ${U:+alt}",
    "x=abc/def/ghi.txt; echo ${x##*/} ${x#*/} ${x%/*} ${x%%/*} ${x/def/X} ${x//[a-c]/_} ${#x}",
    "x=abc/def/ghi.txt; echo ${x:2:3} ${x: -3} ${x^^} ${x/#abc/Z} ${x/%txt/md}",
    "x=hello; echo ${x:1} ${x:1:2} ${x: -2:1} ${x:10} \"${x:0:0}\" ${x:1:-1}",
    "x=abcabc; echo ${x/b/B} ${x//b/B} ${x/#a/A} ${x/%c/C} ${x/b} ${x//[ac]/}",
    "p=/usr/local/bin/script.sh; echo ${p##*/} ${p%/*} ${p%.sh} ${p#/usr} ${p%%/local*}",
    "x=Hello; echo ${x^} ${x,} ${x,,} ${x^^l} ${x~~} 2>/dev/null; echo ${x^^[el]}",
    "unset x; echo ${x-a} ${x:-b}; x=; echo ${x-a} ${x:-b} ${x+plus} ${x:+cplus}",
    "echo ${x=assigned} $x",
    "x=${x:-$(echo computed)}; echo $x",
    "echo ${x:?oops}; echo after",
    "echo ${x:?}",
    "unset v; : ${v:?must be set}; echo after",
    "set -u; echo ${novar:-ok}; echo $novar; echo after",
    "set -- a 'b c' d; for x in \"$@\"; do echo \"[$x]\"; done; for x in $*; do echo \"<$x>\"; done; echo \"$*\" $#",
    "set -- a b c; echo \"${@:2}\" \"${@: -1}\" \"${*:1:2}\" ${#@}",
    "set -- ; for x in \"$@\"; do echo never; done; echo \"[$@]\" \"[$*]\"",
    "IFS=-; set -- a b c; echo \"$*\"; IFS=; echo \"$*\"",
    "pre_a=1 pre_b=2; echo ${!pre_*}; for n in \"${!pre_@}\"; do echo $n; done",
    "x=y; y=final; echo ${!x}",
    "x='a b'; echo ${x@Q}; y=$'t\\tab'; echo ${y@Q}",
    "echo ${#}; f() { echo $# $1 ${10} ${11}; }; f 1 2 3 4 5 6 7 8 9 ten eleven",
    "echo ${x!}; echo after",
]

ARRAYS = [
    "a=(x y z); echo ${a[@]} ${#a[@]} ${!a[@]} ${a[1]} \"${a[@]:1}\"; a+=(w); echo ${a[-1]}",
    "declare -A m=([k]=v [j]=w); echo ${m[k]} ${#m[@]}; m[z]=1; echo ${m[z]} ${#m[@]}",
    "arr=(a b c d e); echo \"${arr[@]:1:2}\" \"${arr[*]: -2}\"; unset 'arr[1]'; echo ${#arr[@]} ${!arr[@]}",
    "a=(1 2 3); for x in \"${a[@]}\"; do echo $x; done; b=(\"${a[@]}\" 4); echo ${#b[@]}",
    "a[5]=five; a[1]=one; echo ${a[@]} ${!a[@]} ${#a[@]}",
    "a=(one two); echo $a ${a[0]} ${#a} ${#a[1]}",
    "a=(x 'y z'); printf '[%s]' \"${a[@]}\"; echo; printf '[%s]' ${a[@]}; echo; printf '[%s]' \"${a[*]}\"; echo",
    "a=(pre-a pre-b); echo ${a[@]#pre-} ${a[@]/a/A} ${a[@]^^}",
    "declare -a arr=(x y); declare -p arr; declare -A as=([k]=v); declare -p as",
    "s='a,b,c'; IFS=, read -ra parts <<< \"$s\"; echo ${#parts[@]} ${parts[2]}",
    "a=(1 2); a+=3; echo ${a[@]}; i=1; a[i+1]=x; echo ${a[2]}",
    "echo ${undefined[@]} end; a=(); echo \"${#a[@]}\"",
]

ARITHMETIC = [
    "echo $((1+2*3)) $((7/2)) $((-7/2)) $((-7%3)) $((2**10)) $((1<<65)) $((16#ff)) $((0x10)) $((010))",
    "echo $(( 2 + 3 * 4 )) $(( (2+3) * 4 )) $(( 10 % 3 )) $(( -2 ** 2 )) $(( 1 && 0 )) $(( 5 & 3 ))",
    "echo $(( 5 | 3 )) $(( 5 ^ 3 )) $(( ~5 )) $(( !0 )) $(( 3 > 2 ? 10 : 20 )) $(( 1, 2 ))",
    "echo $((9223372036854775807 + 1)) $((2#1010)) $((36#z)) $((64#_)) $((-9223372036854775807 - 1))",
    "x=3; echo $((x++)) $x $((++x)) $((x--)) $x $((x+=5)) $((x<<2)) $((x>>1))",
    "x=1+2; echo $((x*2)) $(( x ))",
    "echo $((1/0)); echo after",
    "echo $((1 / 0 + 2))",
    "x=$((1/0)); echo after $?",
    "(( 1/0 )); echo after $?",
    "(( 5 > 3 )) && echo gt; ((x=4, x*=2)); echo $x; (( 0 )); echo $?",
    "echo $(( 2 ** -1 ))",
    "a=(1 2 3); echo $(( a[1] + a[2] )); (( a[0] += 5 )); echo ${a[0]}",
    "declare -i n=5; n+=3; echo $n; n='2*4'; echo $n",
    "let x=5 y=x+1; echo $x $y; let 0; echo $?",
    "echo $(( $(echo 3) + 4 ))",
    "i=5; echo $(( i == 5 ? i * 2 : 0 ))",
]

SUBSTITUTION = [
    "echo $(echo sub) `echo back` \"$(printf '%s\\n' a b)\"",
    "echo \"$(echo -n a; echo)\" x; echo \"$(printf 'a\\n\\n\\n')\" y",
    "x=$(exit 4); echo $?",
    "echo `echo \\`echo nested\\``",
    "x=$(echo 'a  b'); echo $x; echo \"$x\"",
    "f() { echo from-f; }; echo $(f) $(f | while read l; do echo \"<$l>\"; done)",
]

BRACES_TILDE_QUOTES = [
    "echo {1..5} {a..c} x{1,2}y {01..03} {1..10..3} {c..a} {5..1}",
    "echo a{b,c{d,e}}f {x,} '{q,r}' \"{s,t}\" \\{u,v}",
    "x=1; echo {$x,2} {a..c}{1..2}",
    "echo ~ ~/x \"~\"; x=~; echo $x; y=a:~/b; echo $y",
    "echo $'a\\tb' \"q\\\"x\" 'single' a\\ b 'a'\"b\"c\\d",
    "x=5; echo \"${x}px\" \"$x\"\"y\" '$x' \"\\$HOME\" \"a\\\\b\" \"\\`\"",
    "echo \"$((1+1))\" '$((1+1))'",
]

SPLITTING_GLOBBING = [
    "IFS=:; x='a:b::c'; for i in $x; do echo \"[$i]\"; done",
    "x='  a  b  '; echo [$x]; echo \"[$x]\"",
    "IFS=' :'; x=' a : b:c '; printf '[%s]' $x; echo",
    "x=''; set -- $x; echo $#; set -- \"$x\"; echo $#",
    "x='*'; echo \"$x\"; set -f; echo *; set +f",
    "shopt -s nullglob; echo none*; shopt -u nullglob; echo none*",
    "shopt -s failglob; echo none*; echo after",
]


@pytest.mark.parametrize("script", PARAMETERS)
def test_parameter_expansion_matches_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", ARRAYS)
def test_arrays_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", ARITHMETIC)
def test_arithmetic_matches_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", SUBSTITUTION)
def test_command_substitution_matches_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", BRACES_TILDE_QUOTES)
def test_brace_tilde_and_quotes_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


@pytest.mark.parametrize("script", SPLITTING_GLOBBING)
def test_splitting_and_globbing_match_bash(bash: str, script: str) -> None:
    assert_same(bash, script)


FILES = {"a.ts": "", "b.ts": "", ".h.ts": "", "src/x.c": "", "src/sub/y.c": "", "x1": "", "x2": "",
         "y1": "", "Upper.TS": ""}

GLOBS = [
    "for file in *.ts; do echo \"$file\"; done",
    "echo .*ts; shopt -s dotglob; echo *.ts",
    "echo x*; echo ?1; echo [xy]2; echo [!x]*; echo [[:digit:]]* src/*",
    "echo */*.c; shopt -s globstar; echo **/*.c; echo src/**",
    "shopt -s nocaseglob; echo *.ts",
    "echo 'x'*; echo \"x*\"; x='x*'; echo $x \"$x\"",
    "echo nomatch/*.c src/nomatch*",
]


@pytest.mark.parametrize("script", GLOBS)
def test_globbing_on_the_vfs_matches_bash(bash: str, script: str) -> None:
    assert_same(bash, script, FILES)


def test_brace_expansion_is_bounded() -> None:
    r = run_k("echo {1..10}{1..10}{1..10}{1..10}{1..10}{1..10}; echo same-line\necho never")
    assert r.stderr == b"bash: line 1: brace expansion: too many words (limit 100000)\n"
    assert (r.stdout, r.status) == (b"", 1)


def test_process_substitution_reads_a_vfs_temp_file() -> None:
    r = run_k("while read l; do echo got $l; done < <(echo a; echo b); echo end")
    assert r.stdout == b"got a\ngot b\nend\n"


def test_process_substitution_path_is_removed_afterwards() -> None:
    r = run_k("p=<(echo hi); read x < $p; echo $x; f() { read y < \"$1\"; echo $y; }; f <(echo z)")
    assert r.stdout == b"hi\nz\n"
