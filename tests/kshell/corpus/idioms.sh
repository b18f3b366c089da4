# Idioms agents write often, each a small combination of features: last argument, NUL-separated
# reads, the colon-default idiom, IFS-split reads, nocasematch, array slices, one-argument tests.

#### last positional argument by indirection
echo "${!#}"
## args: a b last

#### last positional argument by negative slice
echo "${@: -1}" "${@: -2:1}"
## args: a b c

#### "${@:0}" includes the shell name
set -- x y
echo "${@:0}"
## k-differs: $0 is the shell's name, "k" for K (bash -c gives "bash")
## k-stdout:
k x y
## end

#### prepend and append to every element
a=(x y z)
echo "${a[@]/#/-}" "${a[@]/%/+}"

#### replacement with an empty pattern anchored at the start
x=body
echo "${x/#/pre-}" "${x/%/-post}"

#### NUL-separated items read with read -d ''
printf '%s\0' 'a b' c 'd
e' | while IFS= read -r -d '' item; do echo "[$item]"; done

#### split a string into an array with read -a and IFS
IFS=: read -r -a parts <<< "usr:local:bin"
echo "${#parts[@]} ${parts[1]}"

#### split a line into fields and rejoin with another separator
line='a,b,c'
IFS=, read -r -a f <<< "$line"
(IFS=/; echo "${f[*]}")

#### colon-default idiom assigns once
: "${CONF:=default.conf}"
: "${CONF:=other.conf}"
echo "$CONF"

#### default assignment inside arithmetic
echo $(( ${n:=5} + 1 )) $n

#### count lines of a here-string with a loop
n=0
while read -r _; do n=$((n + 1)); done <<< "$(printf 'a\nb\nc')"
echo $n

#### nocasematch in [[ ]] and case
shopt -s nocasematch
[[ ABC == abc ]] && echo cond-match
case YES in yes) echo case-match;; esac

#### array slice with a negative offset
a=(a b c d e)
echo "${a[@]: -2}" "${a[@]: -3:1}"

#### one-argument test forms
[ -f ] && echo dash-f-alone-is-true
[ ! ] && echo bang-alone-is-true
[ -n ] && echo dash-n-alone-is-true

#### comparing an unset variable with empty
[ "$unset_var" = "" ] && echo empty-equal

#### test -z on an unset variable under set -u is an error
set -u
[[ -z $unset_var ]] && echo never
## status: 127

#### safe emptiness test under set -u
set -u
[[ -z ${unset_var:-} ]] && echo safe

#### cd to an empty string does nothing
cd ""
echo "status $? $PWD"

#### cd through dot segments
cd ./././d/.
pwd
## seed: d/

#### tilde-plus in a path
cd d
echo ~+/x
## seed: d/

#### C-style loop variable after the loop
for ((i = 0; i < 3; i++)); do :; done
echo $i

#### arithmetic with mixed bases
echo $(( 0x10 + 010 + 2#10 ))

#### comma expression in (( ))
x=5
(( x *= 2, x += 1 ))
echo $x

#### count of a sparse array
a[5]=x
a[9]=y
echo ${#a[@]}

#### empty here-string read succeeds
read -r line <<< ""
echo "status $? [$line]"

#### ANSI-C string in a default value
x=
printf '%s\n' "${x:-$'tab\there'}"

#### function forwarding all arguments
inner() { echo "$# [$1] [$2]"; }
outer() { inner "$@"; }
outer 'a b' c

#### function forwarding an array
show() { echo "$#: $*"; }
arr=('one two' three)
show "${arr[@]}"
show ${arr[@]}

#### return from a sourced file inside a function
echo 'return 5' > lib.sh
f() { source lib.sh; echo "source gave $?"; }
f

#### until loop with continue
i=0
until [ $i -ge 4 ]; do
  i=$((i + 1))
  [ $i -eq 2 ] && continue
  echo $i
done

#### printf padding of a command substitution
printf '%-6s|\n' "$(echo hi)"

#### star expansion of an array with a custom IFS
a=(x y z)
IFS=+
echo "${a[*]}"
printf '%s\n' "${a[*]}"

#### guard with an or-exit
check() { [ -n "$1" ] || { echo "missing arg" >&2; return 2; }; echo "got $1"; }
check
echo "status $?"
check ok

#### loop over lines of a variable
data=$'one\ntwo\nthree'
while IFS= read -r l; do echo "<$l>"; done <<< "$data"

#### string contains test with a glob
s='hello world'
[[ $s == *wor* ]] && echo contains
[[ $s != *xyz* ]] && echo lacks

#### string starts and ends with
f=report.final.md
[[ $f == report* ]] && echo starts
[[ $f == *.md ]] && echo ends

#### numeric check with a regex
for v in 42 -7 4.2 abc; do
  if [[ $v =~ ^-?[0-9]+$ ]]; then echo "$v int"; else echo "$v not-int"; fi
done

#### uppercase the first letter of each word
out=
for w in hello big world; do out+="${w^} "; done
echo "${out% }"

#### join arguments with a comma
join() { local IFS=,; echo "$*"; }
join a b c

#### max of numbers
max=0
for n in 3 17 5 11; do (( n > max )) && max=$n; done
echo $max

#### file extension and basename without tools
p=dir/sub/archive.tar.gz
file=${p##*/}
echo "${file%%.*} ${file#*.} ${p%/*}"

#### write lines to a file and count them
for i in 1 2 3; do echo "row $i"; done > rows.txt
n=0
while read -r _; do ((n++)); done < rows.txt
echo "$n rows"

#### append to a log and read it back
log() { echo "[$1] $2" >> app.log; }
log info started
log warn careful
while IFS= read -r l; do echo "$l"; done < app.log

#### default configuration from a sourced file
printf 'PORT=8080\nNAME="my app"\n' > env.sh
. ./env.sh
echo "$NAME on ${PORT:-80}"

#### exit status propagation through functions
ok() { return 0; }
bad() { return 3; }
ok && bad
echo $?
