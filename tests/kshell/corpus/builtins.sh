# The language's builtins: cd, pwd, true, false, :, export, unset, declare, readonly, eval, exec,
# exit, shift, type, command, builtin, source / ., and PATH lookup of VFS files.

#### true false and colon
true; echo $?
false; echo $?
: ignored args; echo $?

#### cd and pwd
cd d
pwd
cd ..
pwd
## seed: d/

#### cd updates PWD and OLDPWD
cd d
echo "$PWD $OLDPWD"
## seed: d/

#### cd with no argument goes home
cd d
cd
pwd
## seed: d/

#### cd dash goes back and prints the directory
cd d
cd -
pwd
## seed: d/

#### cd into a missing directory
cd nosuchdir
echo "status $?"

#### cd into a file
cd f.txt
echo "status $?"
## seed: f.txt

#### cd with too many arguments
cd a b
echo "status $?"
## seed: a/ b/

#### cd with a relative path and dot-dot
cd a/b/../b
pwd
## seed: a/b/

#### cd with a trailing slash
cd a/
pwd
## seed: a/

#### cd to HOME with a changed HOME
HOME=$PWD/h
cd
pwd
## seed: h/

#### cd with an unset HOME
unset HOME
cd
echo "status $?"

#### pwd -L and -P on plain directories
cd d
pwd -L
pwd -P
## seed: d/

#### cd to two leading slashes keeps them in PWD
cd //
pwd
echo "$PWD"
pwd -P
cd home
pwd
cd ..
pwd
cd //home/..
pwd

#### cd to three or more leading slashes is the root
cd ///
pwd
cd ///home
pwd
cd ////.
pwd -P

#### cd -P and cd dash with two leading slashes
cd -P //home
pwd
pwd -P
cd //./home//
pwd
cd /
cd -
cd /home
pwd

#### pwd with a bad option
pwd -z
echo "status $?"

#### export marks a variable for children
export A=1
bash -c 'echo "A=$A"'

#### export after assignment
B=2
export B
bash -c 'echo "B=$B"'

#### export -n removes the export
export C=3
export -n C
bash -c 'echo "C=[$C]"'
echo "C=$C"

#### export -p lists exported variables
export ZZ_TEST=1
export -p | while read -r l; do case $l in *ZZ_TEST*) echo "$l";; esac; done

#### export of an invalid name
export 1bad=x
echo "status $?"

#### unset a variable and a function
v=1
f() { :; }
unset v
unset -f f
echo "[${v-unset}]"
type f 2>/dev/null || echo "f gone"

#### unset -v leaves a function alone
f() { echo still-f; }
unset -v f
f

#### unset a name that is both prefers the variable
f=var
f() { echo func; }
unset f
echo "[${f-unset}]"
f

#### declare prints a variable
v='hello world'
declare -p v

#### declare -i integer attribute
declare -i i
i='3 * 4'
echo $i

#### declare -u and -l case attributes
declare -u up=hello
declare -l low=WORLD
echo $up $low
up+=more
echo $up

#### declare -r makes a readonly variable
declare -r ro=1
ro=2
echo "$ro status $?"

#### declare -x exports
declare -x DX=exp
bash -c 'echo "DX=$DX"'

#### declare -f prints a function
f() { echo body; }
declare -f f

#### declare -F lists function names
f() { :; }
g() { :; }
declare -F

#### readonly -p lists readonly variables
readonly RO1=a
readonly -p | while read -r l; do case $l in *RO1*) echo "$l";; esac; done

#### readonly on an existing variable
x=5
readonly x
x=6
echo "x=$x"

#### eval runs a string
eval 'echo evaluated; x=5'
echo $x

#### eval concatenates arguments
eval echo a '"b   c"'

#### eval builds variable names
for i in 1 2; do eval "var$i=value$i"; done
echo $var1 $var2

#### eval with a syntax error
eval 'if then'
echo "status $?"

#### eval status
eval false
echo $?
eval
echo $?

#### exec replaces the shell with a builtin-free command not found
exec nosuchprogram
echo never
## status: 127

#### exec with only redirections keeps the shell
exec 3>&1
echo still-here >&3

#### exit with a status
echo before
exit 5
echo never
## status: 5

#### exit without a status uses the last status
false
exit
## status: 1

#### exit with a too-large status
exit 300
## status: 44

#### exit with a non-numeric argument
exit abc
## status: 2

#### exit with too many arguments
exit 1 2
echo "status $?"
## status: 1

#### shift with a count
shift 2
echo "$*"
## args: a b c d

#### shift beyond the count fails
shift 5
echo "status $? $#"
## args: a b

#### shift with a bad argument
shift x
echo "status $?"
## args: a

#### type of builtins, keywords and functions
f() { :; }
type echo
type if
type f | while read -r l; do echo "$l"; done

#### type -t kinds
f() { :; }
type -t echo if f [[

#### type of a missing command
type nosuchcmd
echo "status $?"

#### command -v of builtins and functions
f() { :; }
command -v echo
command -v f
command -v if

#### command -v of a missing command
command -v nosuchcmd
echo "status $?"

#### command -V describes
command -V echo

#### command runs a builtin bypassing functions
cd() { echo "fake cd"; }
command cd d
pwd
## seed: d/

#### builtin runs a builtin
builtin echo via-builtin
builtin nosuch
echo "status $?"

#### source runs a file in the current shell
printf 'sv=from-file\nsf() { echo sourced-f; }\n' > lib.sh
source lib.sh
echo $sv
sf

#### dot is source
echo 'dotv=1' > lib.sh
. ./lib.sh
echo $dotv

#### source with arguments
echo 'echo "args: $*"' > lib.sh
source lib.sh x y
echo "after: $*"
## args: top

#### source of a missing file
source missing.sh
echo "status $?"

#### return in a sourced file
printf 'echo one\nreturn 3\necho never\n' > lib.sh
source lib.sh
echo "status $?"

#### source changes the cwd of the caller
echo 'cd d' > lib.sh
source lib.sh
pwd
## seed: d/

#### source sets options for later commands
echo 'set -f' > lib.sh
source lib.sh
echo *
## seed: a b

#### running a VFS script by path
./run.sh arg
echo "status $?"
## file: run.sh 755
echo "run.sh got $1"
exit 4
## end

#### running a script without the execute bit
./plain.sh
echo "status $?"
## file: plain.sh 644
echo never
## end

#### running a missing path
./nothing.sh
echo "status $?"

#### running a directory
./d
echo "status $?"
## seed: d/

#### PATH lookup of a VFS executable
PATH=$PWD/bin
tool a b
echo "status $?"
## file: bin/tool 755
echo "tool ran with $*"
## end

#### PATH lookup of a non-executable file
PATH=$PWD/bin
tool
echo "status $?"
## file: bin/tool 644
echo never
## end

#### command not found
nosuchcmd
echo "status $?"

#### command not found with a slash
./nosuch/cmd
echo "status $?"

#### hash-bang script runs through the shell
./hb.sh
## file: hb.sh 755
#!/bin/bash
echo "hash-bang ok"
## end

#### getopts read printf and test are builtins
type -t getopts read printf test

#### assignment before a special builtin does not persist outside posix mode
x=1
x=2 :
echo $x

#### let returns 1 for zero
let "z = 0"
echo $?

#### exec replaces the shell with a child shell
exec bash -c 'echo replaced; exit 3'
echo never
## status: 3

#### exec in a subshell replaces only the subshell
(exec bash -c 'echo in-sub')
echo "after $?"

#### exec with a temporary assignment before it
V=val exec bash -c 'echo "V=$V"'

#### command -p still runs builtins
command -p echo via-command-p

#### builtin cd in a function named cd
cd() { builtin cd "$@" && echo "moved to $PWD"; }
cd d
## seed: d/

#### unset, alias and unalias read their options as bash's other builtins do
f() { :; }; x=1
unset -fv f x; echo "status $?"; type -t f; echo "${x-unset}"
unset -x x; echo "status $?"
alias a=b
unalias -a -x; echo "status $?"; alias
alias -p -q; echo "status $?"
unalias -- a; alias; echo "status $?"
