# Shell options other than -e: -u, -x (trace with PS4), -f, -C, -o pipefail, -v, set -o listing.

#### set -x traces simple commands
set -x
echo hello
x=1

#### set -x traces expanded words with quotes where needed
set -x
v='a b'
echo "$v" plain

#### set -x traces pipelines and compound commands
set -x
if true; then echo in; fi
for i in 1 2; do :; done

#### set -x trace of arithmetic and test commands
set -x
(( 1 + 2 ))
[[ a == a ]]
[ 1 = 1 ]

#### set -x in a subshell and a command substitution
set -x
x=$(echo sub)
(echo paren)

#### PS4 changes the trace prefix
PS4='>> '
set -x
echo traced

#### PS4 is expanded
n=7
PS4='[$n] '
set -x
echo t

#### set +x stops tracing and is itself traced
set -x
echo on
set +x
echo off

#### set -x traces a function call and its body
f() { echo "in f $1"; }
set -x
f arg

#### set -x with redirections
set -x
echo to-null > /dev/null

#### set -x traces the empty string argument
set -x
echo '' "a'b"

#### set -u unbound variable message
set -u
echo "$undefined_var"
## status: 127

#### set -u in a function exits the shell
set -u
f() { echo $missing; echo never; }
f
echo never
## status: 127

#### set -u with arrays
set -u
a=(1)
echo ${a[0]}
echo ${a[5]}
## status: 127

#### set -u with an empty array
set -u
a=()
echo "${a[@]}" ok

#### set +u allows unset variables again
set -u
set +u
echo "[$undefined_var]"

#### set -f turns off globbing
set -f
echo *
## seed: a b

#### set -C noclobber message
echo a > f
set -C
echo b > f
## status: 1

#### set -o lists options
set -o | while read -r name state; do case $name in errexit|nounset|pipefail|noglob) echo "$name $state";; esac; done

#### set -o after changes
set -eu -o pipefail
set -o | while read -r name state; do case $name in errexit|nounset|pipefail) echo "$name $state";; esac; done

#### set +o prints commands
set -o pipefail
set +o | while read -r l; do case $l in *pipefail*|*errexit*) echo "$l";; esac; done

#### set with an invalid option
set -Q
echo "status $?"

#### set -o with an invalid name
set -o nosuchoption
echo "status $?"

#### options combined in one word
set -ef
case $- in *e*f*|*f*e*) echo both;; esac

#### set -- after options
set -f -- x y
echo "$# $1 $2"

#### set -v echoes input lines
set -v
echo verbose

#### set -n reads but does not execute
set -n
echo not-run

#### options are inherited by subshells
set -f
(echo *)
## seed: a

#### shopt -p prints an option as a command
shopt -p nullglob
shopt -s nullglob
shopt -p nullglob

#### shopt -o reaches set options
shopt -so pipefail
set -o | while read -r n s; do case $n in pipefail) echo "$n $s";; esac; done

#### xtrace of a failed command still shows it
set -x
false
echo $?

#### set -x trace of an arithmetic assignment
set -x
x=$((1 + 2))
echo "$x"

#### set -x trace of a function with quoted arguments
f() { :; }
set -x
f a 'b c'

#### set -x trace of an array assignment
set -x
a=(1 'two words')

#### set -x trace of ANSI-C quoted arguments
set -x
echo $'a\tb' >/dev/null

#### set -x trace of a double-bracket test with an empty word
set -x
[[ -n $nosuch ]]
echo done

#### set -x trace of export and local
set -x
export A=1
f() { local l=2; }
f

#### set -x trace of a while loop condition
set -x
while false; do :; done

#### set -x with LINENO in PS4
PS4='+$LINENO: '
set -x
echo one
echo two

#### set -x trace of a case statement
set -x
case a in a) echo matched;; esac
