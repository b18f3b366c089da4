# Behaviours the Oils spec tests showed K getting wrong, against bash: printf %b octal escapes
# with and without the leading 0 and bash's warnings, integer overflow, %(fmt)T with TZ, `?`
# and brackets on multi-byte characters in a UTF-8 locale, globskipdots, ${!ref} of an unset
# ref, PIPESTATUS before any pipeline, lastpipe, break/continue in a subshell, xargs running sh.

#### printf %b octal with and without the leading zero
printf '%b|' 'a\101b' '\0101' '\1234' '\01234' 'x\1y' '\8' '\18'; echo

#### printf %b hex, unicode and stop
printf '%b|' '\x41\x4g' '\u263a' '\U0001F600' 'ab\cde'; echo "rc=$?"

#### printf %b and the format warn of a lone \x or \u
printf '%b\n' '\x' '\u'; printf 'a\xb\n'; printf '\u\n'; echo "rc=$?"

#### echo -e keeps octal without a leading zero literal
echo -e 'a\101b\0101c\1' '\x' '\u'

#### printf %b with a precision and a width
printf '[%5.2b][%-4b]\n' 'a\tb' '\x41'

#### printf integers out of range are clamped with a warning
printf '%d %d\n' 9223372036854775808 -9223372036854775809; echo "rc=$?"

#### printf unsigned conversions clamp at 2^64-1
printf '%u %x %o\n' 18446744073709551616 99999999999999999999 -1; echo "rc=$?"

#### printf %d of leading blanks
printf '<%d><%d>\n' ' 12' '	-3'

#### printf %(fmt)T follows TZ given before the command
TZ=UTC printf '%(%Y-%m-%d %H)T\n' 0; TZ=Asia/Tokyo printf '%(%H %Z)T\n' 0

#### printf %(fmt)T follows an exported TZ
export TZ=America/New_York; printf '%(%H)T\n' 0

#### case ? matches one multi-byte character in UTF-8
LC_ALL=C.UTF-8
case é in ?) echo one;; *) echo other;; esac
case é in ??) echo two;; *) echo other;; esac

#### case ? matches one byte in the C locale
LC_ALL=C
case é in ?) echo one;; ??) echo two;; esac

#### [[ == ]] with ? and a bracket on multi-byte text
LC_ALL=C.UTF-8
[[ é == ? ]] && echo q; [[ ñ == [ñn] ]] && echo b; [[ aé == a? ]] && echo aq

#### glob ? matches a multi-byte name in UTF-8
LC_ALL=C.UTF-8
touch é ab
echo ?; echo ??; echo [é]
## tools: touch

#### glob brackets with a bracket inside
touch '[' ']' a
echo [[]; echo []]; echo [][]
## tools: touch

#### globskipdots is on by default and can be turned off
touch .h
echo .*
shopt -u globskipdots; echo .*
shopt -s globskipdots; echo .*
## tools: touch

#### shopt globskipdots is listed on
shopt globskipdots

#### ${!ref} of an unset ref is an error
echo "${!r}"; echo "after $?"
## status: 1

#### ${!ref} through array references
a=(x y); r='a[@]'; printf '<%s>' "${!r}"; echo; r='a[1]'; echo "${!r}"; r='a[*]'; echo "${!r}"

#### PIPESTATUS before any pipeline is empty
echo "[${PIPESTATUS[@]}] ${#PIPESTATUS[@]}"; true | false; echo "${PIPESTATUS[@]}"

#### lastpipe runs the last stage in this shell
shopt -s lastpipe
echo hi | read x; echo "x=$x"
i=0; printf 'a\nb\nc\n' | while read l; do i=$((i+1)); done; echo "i=$i"

#### lastpipe off keeps the last stage in a subshell
echo hi | read x; echo "x=$x"

#### lastpipe and exit in the last stage
shopt -s lastpipe
echo 1 | { read v; exit 3; }
echo notreached
## status: 3

#### lastpipe and PIPESTATUS
shopt -s lastpipe
false | true | read x; echo "${PIPESTATUS[@]}"

#### break in a subshell is not the loop's
for i in 1 2; do (echo in; break; echo after); done

#### continue in a background job is not the loop's
for i in 1 2; do { continue; } & wait; echo $i; done

#### break in a pipeline stage or a command substitution is silent
for i in 1 2; do echo $i; true | break; done; for i in 1 2; do x=$(break); echo $i; done

#### xargs runs sh
printf 'a\nb\n' | xargs -I{} sh -c 'echo "got {}"'
printf 'x y\n' | xargs bash -c 'echo "$0 $1"'
## tools: xargs

#### xargs sh with find-style names
printf 'one two\n' | xargs -n1 sh -c 'printf "<%s>\n" "$0"'
## tools: xargs

#### a writer whose reader left ends quietly with 141
cat /dev/zero | head -c 10 >/dev/null; echo ${PIPESTATUS[@]}
yes | head -1; echo ${PIPESTATUS[@]}
## tools: cat head yes seq

#### sed and awk as writers to a closed pipe
yes | sed 1q; echo ${PIPESTATUS[@]}
yes | awk 'NR==2{exit}1'; echo ${PIPESTATUS[@]}
## tools: yes sed awk

#### a function name with quoting or an expansion is no identifier
$foo-bar() { echo x; }; echo "rc=$?"
foo-$(echo hi)() { echo x; }; echo "after $?"
f\o() { echo x; }; "g"() { echo y; }; echo "$?"
a.b-c() { echo ok; }; a.b-c

#### a redirection failure of an assignment-only command is an error under errexit
set -o errexit
assign=foo > /
echo "not reached"
## status: 1

#### a redirection failure of an assignment-only command can be handled
assign=foo > / || echo handled; echo "next $assign"

#### a {var} descriptor stays open after its command
: {v}>g; echo x >&$v; cat g; exec {v}>&-
echo {w}>/dev/null; first=$w; echo {w}>/dev/null; echo $((w - first))
## tools: cat

#### a closed {var} descriptor is a bad descriptor, named as written
exec {fd}>f; echo hi >&$fd; exec {fd}>&-; cat f; echo b >&$fd; echo $?
## tools: cat

#### 1>&file is >&file
echo one 1>&f2; cat f2; echo "status=$?"
## tools: cat

#### /bin/false and the other builtins that are programs
/bin/false; echo $?; /usr/bin/true; echo $?; /bin/echo hi; /usr/bin/[ 1 = 1 ] && echo yes
set -e; false || /bin/false; echo bad
## status: 1

#### patsub_replacement: & is the matched text
x=abc; echo ${x/b/[&]} "${x/b/[&]}" ${x/b/\&} ${x/b/"&"} ${x//?/<&>}
r="&&"; echo ${x/b/$r} "${x/b/$r}"
echo ${x/#a/<&>} ${x/%c/<&>} ${x/#/X&} ${x/b*/[&&]}
a=(ab cb); echo "${a[@]/b/[&]}"

#### patsub_replacement off keeps & literal
shopt -u patsub_replacement; x=abc; echo ${x/b/[&]}

#### >& to several words or to a split word is an ambiguous redirect
set -- '2 3' 'c d'; echo hi 1>& "$@"; echo "rc=$?"; echo hi >& "$@"; echo "rc=$?"
x='a b'; echo hi >& $x; echo "rc=$?"; echo hi >& "$x"; cat "a b"
## tools: cat

#### PIPESTATUS after simple commands, assignments, subshells, [[ ]] and (( ))
false | true; x=1; echo "${PIPESTATUS[@]}"
x=$(exit 5); echo "${PIPESTATUS[@]}"
(exit 3); echo "${PIPESTATUS[@]}"
{ false; (exit 2); }; echo "${PIPESTATUS[@]}"
false | true; [[ a ]]; echo "${PIPESTATUS[@]}"
false | true; (( 0 )); echo "${PIPESTATUS[@]}"
(exit 3) >/dev/null; echo "${PIPESTATUS[@]}"
f() { (exit 6); }; f; echo "${PIPESTATUS[@]}"

#### PIPESTATUS under ! keeps the command's own status, but [[ ]] and (( )) keep the inverted one
! false; echo "${PIPESTATUS[@]}"; ! (exit 3); echo "${PIPESTATUS[@]}"; ! { true; }; echo "${PIPESTATUS[@]}"
! [[ a ]]; echo "${PIPESTATUS[@]}"; ! (( 0 )); echo "${PIPESTATUS[@]}"

#### PIPESTATUS assigned or unset is set again by the next command
PIPESTATUS=(9 9); echo "${PIPESTATUS[@]}"
f() { local PIPESTATUS=(4 4); echo "${PIPESTATUS[@]}"; }; f; echo "${PIPESTATUS[@]}"
unset PIPESTATUS; echo "${PIPESTATUS[@]}"

#### nested backquotes, three levels, in and out of double quotes
echo `echo \`echo \\\`echo hi\\\`\``
echo "`echo \`echo hi\``"; echo `echo "\`echo hi\`"`
echo `echo \$(echo hi)`; x=`printf "%s" "a\\\\b"`; echo "$x"

#### foo\=bar is a word, not an assignment
foo\=bar; echo $?; FOO\=bar=x; echo $?; echo foo\=bar; "a=b"; echo $?; a=1\=2; echo "$a"

#### glob bracket expressions that start with [ or ]
touch '[' ']' '-' a '[a' ']b' 'a]' '!' '^'
echo [[]*; echo []]*; echo *[]]; echo []-]; echo [!]-]*; echo [\]]; echo [[]a; echo []a-]; echo [!!]; echo [a-]
case ']' in []a]) echo y1;; esac; case '[' in [[]) echo y2;; esac; case x in [!]]) echo y3;; esac
x=abc; echo ${x/[]a]/X} ${x//[![]/Y} ${x#[[]} ${x%[]c]}
[[ ']' == []] ]] && echo e; [[ '[' == [[] ]] && echo d
## tools: touch

#### declare -p shows the arrays the shell keeps: PIPESTATUS, DIRSTACK, FUNCNAME
false | true; declare -p PIPESTATUS; (exit 3); declare -p PIPESTATUS
declare -p DIRSTACK; f() { declare -p FUNCNAME; }; f
