# Pipelines and lists: |, !, PIPESTATUS, pipefail, &&, ||, ;, & with wait.

#### simple pipeline
echo hello | while read -r l; do echo "got $l"; done

#### three-stage pipeline
printf '1\n2\n3\n' | while read -r n; do echo $((n * 2)); done | while read -r m; do echo "m=$m"; done

#### pipeline status is the last command's
false | true
echo $?
true | false
echo $?

#### PIPESTATUS holds every stage
true | false | (exit 3)
echo "${PIPESTATUS[@]}"

#### PIPESTATUS after a simple command
false
echo "${PIPESTATUS[@]}"

#### PIPESTATUS after a negated pipeline
! true | false
echo "$? ${PIPESTATUS[@]}"

#### negation inverts the status
! false; echo $?
! true; echo $?

#### negation of a pipeline
! echo x | false
echo $?

#### pipefail reports the last failing stage
set -o pipefail
false | true
echo $?
(exit 2) | (exit 3) | true
echo $?
true | true
echo $?

#### pipefail off by default
(exit 2) | true
echo $?

#### variables set in a pipeline stage do not survive
x=old
echo new | read -r x
echo $x

#### lastpipe is not on in a non-interactive shell by default
x=0
printf '1\n2\n' | while read -r n; do x=$((x + n)); done
echo $x

#### and list
true && echo yes
false && echo no
echo end

#### or list
false || echo fallback
true || echo never

#### and-or chains are left associative
false && echo a || echo b
true || echo c && echo d

#### status of an and list that short-circuits
false && true
echo $?

#### semicolon separates commands
echo a; echo b ; echo c

#### newline in an and-or list after the operator
true &&
echo continued
false ||
echo other

#### pipe followed by newline continues
echo piped |
while read -r l; do echo "[$l]"; done

#### background job and wait
{ echo bg; } &
wait
echo after-wait

#### wait returns the job status
(exit 5) &
wait $!
echo "status $?"

#### assignment in a background job does not reach the shell
x=1 &
wait
echo $x

#### last background pid is set
true &
p=$!
wait
case $p in ''|*[!0-9]*) echo no-pid;; *) echo pid;; esac

#### pipeline of builtins reading stdin
printf 'a b\nc d\n' | while read -r x y; do echo "$y $x"; done

#### writer ends when the reader stops reading
i=0
while :; do echo "line $i"; i=$((i + 1)); done | { read -r a; read -r b; echo "$a / $b"; }

#### pipeline into a group
echo grouped | { read -r v; echo "v=$v"; }

#### pipeline into a subshell
echo sub | (read -r v; echo "v=$v")

#### stderr is not piped by default
{ echo out; echo err >&2; } | while read -r l; do echo "p: $l"; done

#### time-free pipeline with many stages
echo x | { read -r a; echo "$a$a"; } | { read -r a; echo "$a$a"; } | { read -r a; echo "$a$a"; }

#### negated and list
! false && echo negated-ok

#### exit status of a pipeline with a command not found
nosuchcmd 2>/dev/null | true
echo "${PIPESTATUS[@]}"

#### functions in a pipeline
up() { while read -r l; do echo "${l^^}"; done; }
echo quiet | up

#### pipeline output into command substitution
x=$(echo a | while read -r l; do echo "$l$l"; done)
echo $x

#### pipeline with here-string first
while read -r l; do echo "$l"; done <<< "hs" | while read -r l; do echo "2:$l"; done

#### exit in a pipeline stage exits only that stage
echo x | exit 3
echo "still here $?"

#### cd in a pipeline stage does not change the shell's directory
cd sub | true
pwd
## seed: sub/
