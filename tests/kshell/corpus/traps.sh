# trap for EXIT and ERR (signals come with the SSH issue).

#### EXIT trap runs at the end
trap 'echo bye' EXIT
echo hello

#### EXIT trap runs on exit with a status
trap 'echo "exiting with $?"' EXIT
exit 3
## status: 3

#### EXIT trap can change nothing about the status unless it exits
trap 'echo trap; true' EXIT
false
## status: 1

#### exit inside the EXIT trap sets the final status
trap 'exit 9' EXIT
echo body
## status: 9

#### EXIT trap with signal number 0
trap 'echo zero' 0
echo body

#### EXIT trap replaced
trap 'echo first' EXIT
trap 'echo second' EXIT

#### EXIT trap removed with a dash
trap 'echo never' EXIT
trap - EXIT
echo body

#### EXIT trap removed with an empty action
trap 'echo never' EXIT
trap '' EXIT
echo body

#### trap -p prints the trap
trap 'echo hi' EXIT
trap -p EXIT
trap - EXIT

#### trap with no arguments lists traps
trap 'echo x' EXIT
trap
trap - EXIT

#### EXIT trap in a subshell runs when the subshell ends
(trap 'echo sub-exit' EXIT; echo in-sub)
echo after

#### EXIT trap is not inherited by subshells
trap 'echo parent-exit' EXIT
(echo child)
x=$(echo subst)
echo $x

#### EXIT trap sees variables set later
trap 'echo "v=$v"' EXIT
v=late

#### EXIT trap runs after set -e exit
set -e
trap 'echo cleanup' EXIT
false
echo never
## status: 1

#### EXIT trap runs after an unbound variable error
set -u
trap 'echo cleanup' EXIT
echo $nosuch
## status: 127

#### ERR trap runs on failure
trap 'echo "err trap: $?"' ERR
false
echo continuing

#### ERR trap not run for conditions
trap 'echo err' ERR
if false; then :; fi
false || true
! true
echo done

#### ERR trap runs for a failing last command of an and-or list
trap 'echo err' ERR
true && false
echo done

#### ERR trap and set -e together
set -e
trap 'echo "caught $?"' ERR
(exit 4)
echo never
## status: 4

#### ERR trap is not inherited by functions without errtrace
trap 'echo err-top' ERR
f() { false; echo in-f; }
f
echo done

#### ERR trap inherited with set -E
set -E
trap 'echo err-trapped' ERR
f() { false; echo in-f; }
f

#### trap with an invalid signal name
trap 'echo x' NOSUCHSIG
echo "status $?"

#### trap action with quotes and variables
name=world
trap "echo \"bye $name\"" EXIT

#### trap in a function persists
f() { trap 'echo from-f' EXIT; }
f
echo body

#### EXIT trap output order with command output
trap 'echo three' EXIT
echo one
echo two

#### exit status inside EXIT trap after exit
trap 'echo "status in trap $?"' EXIT
(exit 5)
## status: 5

#### trap -p without traps prints nothing
trap -p
echo done

#### ERR trap sees LINENO
trap 'echo "error on line $LINENO"' ERR
true
false
echo done

#### EXIT trap in a command substitution
x=$(trap 'echo trapped' EXIT; echo body)
echo "$x"

#### trap lists in signal order, single-quoted, with multi-line actions
trap 'echo test' TERM 2 EXIT
trap 'echo 1
echo 2' USR1
trap "echo it's" HUP
trap
trap -p INT EXIT
trap -p NOPE; echo "st=$?"

#### trap resets with a leading signal number, a lone condition or -
trap "echo INT" INT
trap "echo EXIT" EXIT
trap 0 2
trap; echo ---
trap "echo INT" INT; trap "echo USR1" USR1
trap INT; trap - USR1
trap; echo ---
trap " 42 " QUIT; trap -p QUIT; trap 03 QUIT; trap -p QUIT; echo end

#### trap options and usage errors
trap -1 EXIT; echo "st=$?"
trap 'echo x'; echo "st=$?"
trap -l | head -2
## tools: head

#### trap on URG and USR1 runs on kill $$; an ignored signal does nothing
trap 'echo SIGURG' URG
kill -URG $$
trap 'echo usr1 $?' USR1
false; kill -USR1 $$; echo "after $?"
trap '' TERM; kill $$; echo ignored
kill -WINCH $$; echo winch

#### kill $$ without a trap ends the shell with 128+N
bash -c 'bash -c "echo before; kill -TERM \$\$; echo not reached"; echo "st=$?"' 2>/dev/null
bash -c 'bash -c "kill -USR2 \$\$"; echo "st=$?"' 2>/dev/null

#### an EXIT trap's exit status or set -e failure ends a subshell or child shell with it
( trap "exit 3" EXIT; true ); echo $?
( set -e; trap "false; echo no" EXIT; true ); echo $?
bash -e -c "trap 'nosuch' EXIT; echo a" 2>/dev/null; echo "after $?"
x=$(trap "echo in-trap; exit 5" EXIT; echo out); echo "$x $?"
