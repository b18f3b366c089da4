# Builtins about the shell itself: times, caller, enable, logout, suspend (bash 5.2's).

#### times prints the shell's and its children's CPU time
t=$(times)
[[ $t =~ ^[0-9]+m[0-9]+\.[0-9]{3}s\ [0-9]+m[0-9]+\.[0-9]{3}s$'\n'[0-9]+m[0-9]+\.[0-9]{3}s\ [0-9]+m[0-9]+\.[0-9]{3}s$ ]] && echo shape
times x > /dev/null; echo $?
times -x; echo $?
times -- > /dev/null; echo $?

#### caller in a -c string
caller; echo $?
f() { caller; caller 0; caller 1; echo $?; caller 0 1; echo $?; }
g() { f; }
g
f
caller -x; echo $?

#### caller with a bad number
f() { caller x; echo $?; caller -1; echo $?; }
f

#### caller in a script file
bash ./s.sh
## file: s.sh
f(){ caller 0; caller; caller 1; echo $?; }
g(){ f; }
g
f
caller; echo $?
caller 0; echo $?
## end

#### enable lists the builtins
enable
echo ---
enable -s
echo ---
n=0; while read -r line; do n=$((n + 1)); done < <(enable -p echo); echo $n

#### enable -n disables a builtin, enable turns it on again
enable -n times dirs
type -t times; echo $?
enable -n
while read -r line; do [[ $line == *-n* ]] && echo "$line"; done < <(enable -a)
builtin times; echo $?
times; echo $?
command -v dirs; echo $?
enable times
type -t times
enable -n

#### enable -n only in a subshell
( enable -n times; type -t times; echo $? )
type -t times

#### a disabled builtin that is also a program runs the program
enable -n echo
type -t echo
## bash: skip the corpus's bash has no /usr/bin/echo on its PATH
## k-differs: K's /usr/bin has echo, as a GNU/Linux system's
## k-stdout:
file
## end
## k-status: 0

#### enable errors
enable nosuch; echo $?
enable -n nosuch; echo $?
enable -d echo; echo $?
enable -d foo; echo $?
enable -x; echo $?
enable -f; echo $?
enable -f lib.so x; echo $?
enable -f /nonexistent/lib.so x; echo $?

#### logout in a shell that is not a login shell
logout; echo $?
logout 3; echo $?

#### suspend without job control
suspend; echo $?
suspend -x; echo $?
suspend x; echo $?
echo next
## status: 1

#### suspend -f does not stop the K shell
suspend -f; echo $?
## bash: skip bash stops itself (SIGSTOP) and waits for a SIGCONT nobody sends
## k-differs: the K shell does not stop itself (as kill -STOP $$): nothing could continue it
## k-stdout:
0
## end
## k-status: 0

#### umask -p, -S and symbolic modes as chmod's
umask 022; umask -p; umask -S; umask -S 027; umask; umask u=rwx,g=rx,o=; umask; umask -pS
umask 0777; umask a+r; umask; umask g-w,o=x; umask; umask ug=; umask; umask +w; umask; umask =; umask
umask 022; umask u=; umask; umask 1000; echo $?; umask; umask -- 077; umask

#### umask's errors
umask 999; echo $?; umask 8; echo $?; umask z=r; echo $?; umask u=q; echo $?; umask ,; echo $?
umask u+r,; echo $?; umask -x; echo $?; umask

#### declare -F names functions alone, -pF and a listing as declare -f lines
f() { :; }; g() { :; }; declare -F f g nosuch; echo $?; declare -F; typeset -F f; declare -pF f
typeset -p nosuch; echo $?
