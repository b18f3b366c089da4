# The last Oils spec cases where K and bash differed: `!` and set -e turned on inside, break and
# continue with bad counts, a moved descriptor bash never reopens, `readonly -a` without a
# value, the history builtin, associative arrays in bash's hash order, ${a[@]@K}, slices of
# associative arrays, and a K file earlier on PATH shadowing a tool.

#### set -e turned on inside a function run by ! applies
foo() { set -e; false; echo "not reached"; }
! foo
echo "not reached either"
## status: 1

#### set -e already on: what ! runs is exempt
set -e
foo() { false; echo "in foo"; }
! foo
g() { set -e; false; echo "in g"; }
! g
echo end

#### ! exempts its own command from the ERR trap, not the commands inside a group
trap 'echo ERR' ERR
! false
! { false; echo x; }
f() { false; echo in; }
! f
echo done

#### break with too many arguments abandons the command
for x in a b c; do echo $x; break 1 2; done; echo "same line"
echo "next line $?"
## status: 1

#### continue with too many arguments abandons the command
for x in a b c; do echo $x; continue 1 2 3; done; echo "same line"
echo "next line $?"
## status: 1

#### break and continue counts out of range leave every loop, failing
for j in x y; do for i in 1 2; do break 0; echo in; done; echo mid; done; echo "after $?"
for j in x y; do for i in 1 2; do continue -1; echo in; done; echo mid; done; echo "after $?"

#### a non-numeric loop count ends the shell with 128
for i in 1 2; do break x; echo in; done; echo after
## status: 128

#### break counts with blanks and signs
for i in 1 2; do for j in 1 2; do break " 2 "; done; echo in; done; echo "after $?"
for i in 1 2; do break +1; done; echo "after $?"

#### the status of a loop left by break is break's
for i in 1 2; do if [ $i = 2 ]; then break; fi; false; done; echo $?
i=0; while :; do i=$((i+1)); if [ $i = 2 ]; then break; fi; false; done; echo $?

#### a move N>&M- on a builtin to a closed N leaves M closed (bash)
exec 7>f.txt
: 6>&7-
echo world >&7 || echo "7 closed"
exec 7>f.txt
{ echo in group; } 6>&7-
echo again >&7 || echo "7 closed again"
exec 7>f.txt 6>g.txt
: 6>&7-
echo kept >&7 && echo "7 kept while 6 was open"
cat f.txt
## tools: cat

#### a move to a program leaves the source open
exec 7>f.txt
cat </dev/null 6>&7-
echo world >&7 && cat f.txt
## tools: cat

#### readonly -a without a value makes a readonly name, not an array
readonly -a a
declare -a b; readonly b
readonly -A c
readonly -a d=(1 2)
declare -p a b c d

#### the history list of a non-interactive shell
history; echo "status $?"
history -s first entry; history -s second; history
history -d 1; history; history 1
history -p a b
history -c; history; echo "cleared $?"

#### history usage errors
history -5; echo "status $?"
history f; echo "status $?"
history -d 9; echo "status $?"
history too many args; echo "status $?"
history 1 2; echo "not reached"
echo "next $?"
## status: 1

#### history -w and -r use a file
history -s one; history -s two
history -w hist.txt; cat hist.txt
history -c; history -r hist.txt; history
## tools: cat

#### associative arrays iterate in bash's hash order
declare -A a=([one]=1 [two]=2 [three]=3 [four]=4 ["k e y"]=5 [a]=7 [b]=8 [c]=9)
echo "${!a[@]}"
echo "${a[@]}"
declare -p a
for k in "${!a[@]}"; do printf '%s=%s;' "$k" "${a[$k]}"; done; echo

#### an unset key set again moves to the head of its bucket
declare -A a=([x]=1 [y]=2 [z]=3 [w]=4)
unset 'a[x]'; a[x]=again
echo "${!a[@]}"
a[y]=changed
echo "${a[@]}"

#### a large associative array keeps bash's order after its table grows
declare -A big
for i in $(seq 3000); do big[k$i]=$i; done
keys=("${!big[@]}"); echo "${keys[0]} ${keys[1]} ${keys[1500]} ${keys[2999]}"
## tools: seq

#### set shows associative arrays in hash order
typeset -A __assoc
__assoc['k e y']='v a l'
__assoc[a]=b
set | grep '^__'
## tools: grep

#### ${a[@]@K} gives keys and quoted values as one word
b=(x 'y z' $'a\nb'); echo "${b[@]@K}"; printf '<%s>' "${b[@]@K}"; echo
declare -A a=([x]=1 ['k y']='v"$') ; echo "${a[@]@K}"; printf '<%s>' "${a[*]@K}"; echo
c=([3]=q); echo "${c[@]@K}"; e=(); printf '[%s]' "${e[@]@K}"; echo
x="it's"; echo "${x@K}" "${b[1]@K}"

#### slices of associative arrays count from 1
declare -A a=([x]=1 [y]=2 [z]=3)
echo "${!a[@]}"
echo "0:1 ${a[@]:0:1}|1:1 ${a[@]:1:1}|2:1 ${a[@]:2:1}|3 ${a[@]:3}|-1 ${a[@]: -1}|-2:1 ${a[@]: -2:1}"

#### an executable file earlier on PATH shadows a tool
mkdir -p bin _tmp
printf '#!/bin/sh\necho my date\n' > bin/date; chmod +x bin/date
touch _tmp/date; chmod +x _tmp/date
PATH=$PWD/bin:/usr/bin:/bin
type date; command -v date; date; env date
PATH=_tmp:/usr/bin:/bin; type date
PATH=/usr/bin:$PWD/bin; date -d @0 +%Y
## tools: date env chmod mkdir touch

#### a pattern after // that starts with a slash keeps it
x='/_/'; echo ${x////c}; echo ${x//'/'/c}; echo "${x///}" "${x/#//S}" "${x/%//E}" "${x///_}"
x='slash / brace } hi'; echo 'ambiguous:' ${x///}
HOST_PATH=/foo/bar/baz; echo ${HOST_PATH////\\/}
y=a/c/d; echo "${y///c}" "${y//\//-}"

#### a leading ~ in a default is expanded outside quotes, in a pattern or replacement always
HOME=/home/me; path=$HOME/git; echo "${path//~/z}" ${path/~/z} ${path#~} "${path#~}" ${u:-~} "${u:-~}" ${path/#~/T} ${path%~} ${u:-~/x} ${path/~\/git/Q}
HOME=/h; p=/h/git; echo ${p/git/~} "${p/git/~}" ${p/git/~/x} ${u2:=~} ${v:+x} ${p:+~} "${p:+~}" ${p##~/} "${p%%~}"
echo ${x:-a~} ${x:-'~'} "${x:-~/q}"
dir=${XDG_NOPE:-~/.config}; echo "$dir"

#### case changes that map one character to several keep it
LC_ALL=C.UTF-8
small=$'\u00DF'; echo ${small^} ${small^^} ${small,,}; s=ǆ; echo ${s^}; x=ﬀ; echo ${x^^}; y=straße; echo ${y^^} ${y~~}

#### ${a[@]@k} gives keys and values as separate words
a=(x "y z"); printf "<%s>" "${a[@]@k}"; echo; printf "<%s>" ${a[@]@k}; echo
declare -A A=([k]=v); printf "<%s>" "${A[@]@k}"; echo
x=hi; printf "<%s>" "${x@k}" "${a[1]@k}" "${a[*]@k}"; echo
set -- p q; printf "<%s>" "${@@k}"; echo

#### ${A@a} of a declared array, and ${!r@a} of what r names
declare -A A=(["x"]=y); echo ${A@a} - ${A[@]@a}; declare -a e; echo "[${e@a}]" "[${undef@a}]"
declare -r r; echo "[${r@a}]"
a=(1 2 3); r='a[0]'; echo ${!r@a}; r=A; echo ${!r@a}
set -u; echo "${A@a}"; (echo ${undef@a}); echo "stat: $?"

#### getopts with an invalid name, at the end, and after the arguments changed
set -- -c foo -h
getopts 'hc:' opt-; echo "status=$? opt=$opt OPTARG=$OPTARG OPTIND=$OPTIND"
getopts "c:" opt -c10; echo "OPTIND=$OPTIND opt=$opt OPTARG=$OPTARG"
getopts "c:" opt -c10; echo "OPTIND=$OPTIND opt=$opt OPTARG=${OPTARG-unset}"
OPTIND=1; set -- -c -d -e foo
while getopts "cde:" opt; do echo "-$opt"; done; echo "OPTIND=$OPTIND"
set -- -f
while getopts "f:" opt; do echo _; done; echo "OPTIND=$OPTIND"
set --
while getopts "h" opt; do echo _; done; echo "OPTIND=$OPTIND"

#### local lists the function's own variables; eval refuses options
f(){ local a=1 b; local -a arr=(1 2); local; echo ---; local -p; g=1; }; f
eval -z; echo $?; eval -- echo hi; eval -xyz; echo $?

#### an empty subscript is a bad subscript or a bad substitution
a=(1 2 3)
a[]=42
echo status=$?
echo ${a[@]}
echo ${a[]}
echo status=$?

#### a loop whose last pass ends with continue has continue's status
for i in 1 2; do if [ $i = 1 ]; then false; else false; continue; fi; done; echo $?
i=0; while [ $i -lt 2 ]; do i=$((i+1)); false; continue; done; echo $?
for ((j=0;j<2;j++)); do false; continue; done; echo $?
for i in 1; do for j in 1; do false; continue 2; done; done; echo $?

#### hash: an empty table, names found or not, -t, -r and usage
hash; echo rc=$?; hash nosuch; echo rc=$?; hash ls; echo rc=$?
hash -t nope; echo rc=$?
hash -r; hash; hash -x; echo rc=$?; hash echo; echo rc=$?
## tools: ls
