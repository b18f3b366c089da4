# Subshell isolation of cwd, variables, functions, options and traps; child shells (bash -c, sh
# file, bash file); process substitution.

#### subshell variables do not leak
x=1
(x=2; echo "in $x")
echo "out $x"

#### subshell sees parent variables
x=parent
(echo "sub sees $x")

#### subshell cd does not leak
(cd sub && pwd)
pwd
## seed: sub/

#### subshell functions do not leak
(f() { echo f; }; f)
f 2>/dev/null || echo "no f outside"

#### subshell options do not leak
(set -f; echo *)
echo *
## seed: a

#### subshell exit status
(exit 42)
echo $?

#### subshell exit does not exit the parent
(exit 1)
echo still-running

#### nested subshells
x=0
(x=1; (x=2; echo $x); echo $x)
echo $x

#### subshell unset does not leak
x=keep
(unset x; echo "[${x-unset}]")
echo $x

#### subshell export does not leak
(export SUBVAR=1)
echo "[${SUBVAR-unset}]"

#### subshell with redirection
(echo a; echo b) > out.txt
while read -r l; do echo "r $l"; done < out.txt

#### subshell shares the file system
(echo made > made.txt)
read -r l < made.txt
echo "$l"

#### subshell $$ equals the parent's
p=$$
(test "$$" = "$p" && echo same-pid)

#### BASH_SUBSHELL counts depth
echo $BASH_SUBSHELL
(echo $BASH_SUBSHELL; (echo $BASH_SUBSHELL))

#### bash -c runs in a child shell
x=parent
bash -c 'echo "child sees [$x]"; x=child'
echo $x

#### bash -c sees exported variables
export EX=exported
NOTEX=plain
bash -c 'echo "$EX [$NOTEX]"'

#### bash -c positional parameters
bash -c 'echo "$0 $1 $2 $#"' name a b

#### bash -c exit status
bash -c 'exit 6'
echo $?

#### sh -c works like bash -c
sh -c 'echo from sh $1' zero one

#### bash -c cd does not leak
bash -c 'cd sub; pwd'
pwd
## seed: sub/

#### bash -c syntax error message
bash -c 'if then'
echo "status $?"

#### bash running a script file
printf 'echo "script args: $*"\nexit 3\n' > s.sh
bash s.sh x y
echo "status $?"

#### sh running a script file
echo 'echo "name $0"' > t.sh
sh t.sh

#### bash on a missing script file
bash missing.sh
echo "status $?"

#### script file does not change the caller
printf 'v=inside\ncd sub\n' > s.sh
v=outside
bash s.sh
echo "$v $PWD"
## seed: sub/

#### temporary environment for a child shell
V=temp bash -c 'echo "child V=$V"'
echo "parent V=[${V-unset}]"

#### exported function is not needed for child shells
f() { echo f; }
bash -c 'f' 2>/dev/null || echo "no f in child"

#### process substitution as input
while read -r l; do echo "got $l"; done < <(echo a; echo b)

#### process substitution as a file argument
read -r l < <(echo from-procsub)
echo "$l"

#### process substitution with source
source <(echo 'psv=sourced')
echo $psv

#### command substitution is a subshell
x=1
y=$(x=2; echo $x)
echo "$x $y"

#### group versus subshell
x=0
{ x=1; }
(x=2)
echo $x

#### trap -p in a subshell shows the parent's EXIT trap, which the subshell does not run
trap 'echo parent' EXIT
(trap -p EXIT; echo "subshell ends")
trap - EXIT

#### subshell in a pipeline with a loop
printf 'a\nb\n' | (while read -r l; do echo "[$l]"; done)

#### exit in a brace group exits the shell
{ echo in-group; exit 4; }
echo never
## status: 4

#### readonly inherited by a subshell
readonly R=1
(R=2) 2>/dev/null || echo "readonly in subshell"

#### subshell shift does not leak
(shift; echo "$1")
echo "$1"
## args: a b
