# set -a (allexport), set's argument parsing, set -o / shopt listings and formats, the status of
# a set -u error, and the options of the `bash` command (-i, -O, -o, --rcfile, -s, ...).

#### set -a exports plain assignments
set -a
FOO=bar
BAZ=qux
bash -c 'echo "[$FOO] [$BAZ]"'

#### set +a stops exporting; earlier variables stay unexported
BEFORE=b
set -a
DURING=d
set +a
AFTER=a
bash -c 'echo "[$BEFORE] [$DURING] [$AFTER]"'
declare -p BEFORE DURING AFTER

#### set -o allexport is the long form, and shows in $- and set -o
set -o allexport
echo $-
set -o | grep allexport
V1=one
set +o allexport
V2=two
bash -c 'echo "[$V1] [$V2]"'
## tools: grep

#### set -a exports what read, for, getopts, printf -v and arithmetic assign
set -a
read r <<< line
for f in loop; do :; done
getopts a g -a
printf -v p %s pv
(( n = 1 + 2 ))
let m=4
: ${d:=default}
s+=app
declare -p r f g p n m d s

#### set -a exports declare, local and typeset variables, with or without a value
set -a
declare D=1
declare E
typeset -i I=5
readonly R
fn() { local L=1; local M; declare N=2; declare -p L M N; }
fn
declare -p D E I R

#### set -a does not export arrays, but a scalar assignment to one does
set -a
a=(1 2)
b[3]=x
declare -A h=([k]=v)
declare -a g=1
c=(1); c=2
declare -p a b h g c

#### set -a: an existing variable named by declare without a value is not exported
x=1
set -a
declare x
declare -p x
y=2
declare -p y

#### set -a: a prefix assignment stays temporary
set -a
tmp=1 true
declare -p tmp 2>/dev/null || echo unset

#### a lone + is an ignored flag word
set -- a b
set +
echo "$# $*"
set -x + -v x y
case $- in *v*) echo verbose-on ;; esac
set +xv
echo "$*"

#### set - ends the flags, turns -x and -v off, and sets arguments only when given
set -- a b
set -
echo $#
set -x -v - c d
echo $- "$@"
set - +
echo "$@"
set + -
echo "$@"

#### set -- always sets the positional parameters
set -- a b
set --
echo $#
set -- -x
echo "$1" $-

#### an invalid flag is found before any flag applies
set -e -Z
echo "$? $-"
set -eZ
echo "$? $-"
set -? 2>/dev/null
echo "? gives $?"
set -i
echo $?

#### set -o with a bad name stops at it
set -x -o nosuch
echo "rc=$? $-"
set +x
set -o nosuch -u
echo "rc=$? $-"

#### set -o without a name lists the options and goes on
set -o -u | grep -E '^(nounset|errexit) '
set -ou | grep nounset
echo $-
set +o -- a | grep nounset
echo "$# $-"
## tools: grep

#### set -o takes one name per o, even in one word
set -oo xtrace errexit >/dev/null
echo $-
set +x +e
set -o errexit -o nounset
echo $-

#### emacs and vi are set -o options, one at a time
set -o | grep -E '^(emacs|vi) '
set -o emacs
set +o | grep -E ' (emacs|vi)$'
set -o vi
set -o | grep -E '^(emacs|vi) '
set +o vi
test -o emacs; echo "emacs $?"
[[ -o vi ]]; echo "vi $?"
## tools: grep

#### options without a letter: history, ignoreeof, posix, nolog, interactive-comments
set -o history -o nolog
set -o | grep -E '^(history|nolog) '
set -o ignoreeof
echo "IGNOREEOF=$IGNOREEOF"
set +o ignoreeof
echo "${IGNOREEOF-unset}"
set -o posix
echo "POSIXLY_CORRECT=$POSIXLY_CORRECT"
set +o posix
echo "${POSIXLY_CORRECT-unset}"
set +o interactive-comments
shopt -p interactive_comments
shopt -s interactive_comments
shopt -po interactive-comments
## tools: grep

#### set +o lists every option as a command
set -o pipefail -o errexit
set +o

#### shopt with no arguments lists every option with a non-interactive bash's defaults
shopt

#### shopt -p prints commands; -s and -u with no names list those on or off
shopt -p | head -3
shopt -p | grep xpg
shopt -s
shopt -pu | tail -2
## tools: grep head tail

#### shopt -p with names, and an invalid one
shopt -p extquote xpg_echo nosuch
echo status=$?

#### shopt -o and shopt -po print set options
shopt -po nounset
set -o nounset
shopt -po nounset
shopt -o nounset errexit
echo status=$?
shopt -po | grep -E 'errexit|noglob|nounset'
shopt -o | grep -E '^(braceexpand|hashall) '
## tools: grep

#### shopt -os and -ou list the set options on or off
shopt -os
shopt -pou | head -3
## tools: head

#### shopt -p -o validates option names
shopt -p -o errexit invalid nounset
echo status=$?

#### shopt -so sets a set option; a bad name is reported with status 0
shopt -so errexit
echo $-
shopt -uo errexit
shopt -so nosuch
echo status=$?
shopt -so pipefail
set -o | grep pipefail
## tools: grep

#### shopt -q answers by status only
shopt -q extquote; echo $?
shopt -q nullglob; echo $?
shopt -q extquote nullglob; echo $?
shopt -q; echo $?
shopt -oq errexit; echo $?

#### shopt errors: -s with -u, a bad flag, names after --
shopt -su nullglob; echo $?
shopt -x; echo $?
shopt -- -s; echo $?
shopt -s nullglob -u; echo $?

#### shopt cannot change login_shell
shopt -s login_shell; echo $?
shopt login_shell; echo $?

#### set -u error ends a -c string with 127
set -u
echo before
echo "[$unset]"
echo after
## status: 127

#### set -eu makes a set -u error end the shell with 1
set -eu
echo "[$unset]"
echo status=$?
## status: 1

#### ${x?} error status follows errexit too
bash -c 'echo ${x?oops}; echo no'; echo "rc=$?"
bash -ec 'echo ${x?oops}; echo no'; echo "rc=$?"

#### set -u error in a script file or on standard input exits with 1
printf 'set -u\necho $x\necho after\n' > u.sh
bash u.sh; echo "file rc=$?"
bash < u.sh; echo "stdin rc=$?"
bash -c '. ./u.sh; echo after'; echo "sourced rc=$?"
bash -c 'set -u; (echo $x); echo "subshell $?"'; echo "rc=$?"

#### $- shows c in subshells of a -c string, s for standard input
echo $-; (echo $-); echo $(echo $-)
bash -s <<< 'echo $-; (echo $-)'
bash -c 'set -ET; echo $-'

#### bash options: -e -u -x letters, combined, and -c anywhere among them
bash -euxc 'echo $-'
bash -c -e 'false; echo no'; echo "rc=$?"
bash -ce 'false; echo no'; echo "rc=$?"
bash -c 'echo $0 "$@"' zero a b
bash -c 'echo $-' -x

#### bash -o and +o set options by name
bash -o pipefail -c 'false | true; echo $?'
bash -o errexit -o nounset -c 'echo $-'
bash -o nosuch -c 'echo hi'; echo "rc=$?"

#### bash -O and +O set shopt options
bash +O nullglob -c 'echo foo *.nonexistent bar'
bash -O nullglob -c 'echo foo *.nonexistent bar'
bash -O extglob -O nullglob -c 'shopt -p extglob nullglob'
bash -O nosuch -c 'echo hi'; echo "rc=$?"

#### bash -O and -o without a name list the options
bash -O -c 'echo hi' | head -2; echo "rc=${PIPESTATUS[0]}"
bash +O < /dev/null | head -2
## tools: head

#### bash rejects an unknown option with its usage
bash -Z -c 'echo hi'; echo "rc=$?"
bash --nosuch -c 'echo hi'; echo "rc=$?"
bash -i --norc -c 'echo hi'; echo "rc=$?"

#### bash -c without a command, --rcfile without a file
bash -c; echo "rc=$?"
bash --rcfile; echo "rc=$?"

#### bash -s with arguments reads standard input
bash -s a b <<< 'echo $0 "$@" $-'
bash -xs a b <<< 'echo $-'
bash -- <<< 'echo $- $0'

#### bash --posix, --verbose, --login, --noprofile
bash --posix -c 'echo $POSIXLY_CORRECT; set -o | grep posix'
bash --verbose -c 'echo hi'
bash --noprofile -l -c 'shopt login_shell'
bash --login --noprofile -c 'shopt -p login_shell'
## tools: grep

#### bash -i is interactive: $-, emacs, history, expand_aliases
bash --norc -i -c 'echo $-; set -o | grep -E "^(emacs|history|histexpand) "; shopt expand_aliases' 2>/dev/null
bash --norc --noediting -i -c 'test -o emacs; echo $?' 2>/dev/null
bash -c 'test -o emacs; echo $?; echo $-'
## tools: grep

#### bash -i: a set -u error abandons only the command line
bash --norc -i -c 'set -u; echo before; echo $x; echo after
echo line2
echo ${y:?bad}; echo no
echo end' 2>&1 | grep -v 'job control\|terminal process'
echo "rc=${PIPESTATUS[0]}"
## tools: grep

#### bash -i: exit says so, subshells do not
bash --norc -i -c '(exit 2); echo $?; x=$(exit 3); echo $?; exit 4' 2>&1 | grep -v 'job control\|terminal process'
echo "rc=${PIPESTATUS[0]}"
## tools: grep

#### bash -i reads its --rcfile, or not with --norc; -c alone reads none
echo 'echo in rc; x=5' > rc1
bash --norc --rcfile ./rc1 -i -c 'echo "x=$x"' 2>/dev/null
bash --rcfile ./rc1 -c 'echo "x=$x"'
bash --rcfile ./rc1 -i -c 'echo "x=$x"' 2>/dev/null | grep -v '^$'
## tools: grep

#### BASH_ENV is read by a non-interactive bash
echo 'echo from env $0 $1' > envf
BASH_ENV=./envf bash -c 'echo main $0' a b
BASH_ENV='$PWD/envf' bash -c 'echo main2'
