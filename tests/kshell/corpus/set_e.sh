# set -e (errexit) and its exceptions, as bash has them.

#### set -e exits on a failing command
set -e
echo before
false
echo after
## status: 1

#### set -e exits with the failing command's status
set -e
(exit 7)
echo never
## status: 7

#### set -e ignores a failing if condition
set -e
if false; then echo no; fi
echo survived

#### set -e ignores a failing while condition
set -e
while false; do :; done
echo survived

#### set -e ignores all but the last command of an and-or list
set -e
false && echo no
false || echo rescued
echo survived

#### set -e exits when the last command of an or list fails
set -e
false || false
echo never
## status: 1

#### set -e ignores a negated command
set -e
! true
echo survived

#### set -e exits on a failing pipeline's last stage
set -e
true | false
echo never
## status: 1

#### set -e ignores failure of earlier pipeline stages
set -e
false | true
echo survived

#### set -e with pipefail exits on an early stage
set -eo pipefail
false | true
echo never
## status: 1

#### set -e is ignored inside a subshell on the left of ||
set -e
(false; echo inner-never) || echo "subshell failed"
echo survived

#### set -e exits when a subshell fails
set -e
(exit 3)
echo never
## status: 3

#### set -e and a failing brace group
set -e
{ false; echo never; }
## status: 1

#### set -e ignores failures inside a function called in a condition
set -e
f() { false; echo "f continues"; }
if f; then echo "f ok"; fi

#### set -e applies inside a function called normally
set -e
f() { false; echo never; }
f
echo never
## status: 1

#### set -e with a failing command substitution in an assignment
set -e
x=$(false)
echo never
## status: 1

#### set -e with a failing command substitution as an argument
set -e
echo "arg: $(false)"
echo survived

#### set -e with local hides the substitution status
set -e
f() { local x=$(false); echo "local hides it"; }
f

#### set +e turns it off
set -e
set +e
false
echo survived

#### set -o errexit is the same
set -o errexit
false
echo never
## status: 1

#### set -e and a failing arithmetic command
set -e
i=0
((i++))
echo never
## status: 1

#### set -e and an arithmetic command in a condition
set -e
if ((0)); then :; fi
echo survived

#### set -e and a failing test
set -e
[ 1 -eq 2 ]
echo never
## status: 1

#### set -e does not exit for a failing command in a loop condition
set -e
i=0
until [ $i -ge 2 ]; do i=$((i + 1)); done
echo "i=$i"

#### set -e exits inside a loop body
set -e
for i in 1 2 3; do
  echo $i
  [ $i -lt 2 ]
done
echo never
## status: 1

#### set -e with the EXIT trap
set -e
trap 'echo "exit trap $?"' EXIT
false
echo never
## status: 1

#### set -e and a command not found
set -e
nosuchcommand
echo never
## status: 127

#### set -e and a redirection failure
set -e
echo x < missing
echo never
## status: 1

#### set -e in a sourced-like eval
set -e
eval false
echo never
## status: 1

#### set -e ignores failure in a command list inside an if condition
set -e
if false; true; then echo "cond ok"; fi

#### set -e with return from a function
set -e
f() { return 1; }
f || echo "f failed"
f
echo never
## status: 1

#### set -e and a case with a failing branch
set -e
case x in x) false;; esac
echo never
## status: 1

#### set -e flag is visible in $-
set -e
case $- in *e*) echo e-set;; esac
