# Errors: syntax errors (bash's message, the offending line, status 2) and runtime errors
# (bash's message with the line number, and the status).

#### unexpected fi
if true; then fi
## status: 2

#### unexpected done
done
## status: 2

#### unexpected then
then echo x
## status: 2

#### unexpected esac
esac
## status: 2

#### unexpected closing brace
}
## status: 2

#### unexpected closing parenthesis
)
## status: 2

#### unexpected double semicolon
echo a;;
## status: 2

#### unterminated single quote
echo 'abc
## status: 2

#### unterminated double quote
echo "abc
## status: 2

#### unterminated backquote
echo `abc
## status: 2

#### unterminated command substitution
echo $(echo
## status: 2

#### unterminated parameter expansion
echo ${x
## status: 2

#### unterminated arithmetic
echo $((1 +
## status: 2

#### unterminated if
if true; then echo
## status: 2

#### unterminated for loop
for x in a b; do
## status: 2

#### unterminated while loop
while true; do echo
## status: 2

#### unterminated case
case x in
## status: 2

#### unterminated brace group
{ echo a
## status: 2

#### unterminated subshell
( echo a
## status: 2

#### redirection without a target
echo >
## status: 2

#### pipe without a command after it
echo |
## status: 2

#### pipe at the start
| echo
## status: 2

#### and-and at the start
&& echo
## status: 2

#### empty subshell
( )
## status: 2

#### empty brace group
{ ; }
## status: 2

#### function without a body
f() echo
## status: 2

#### invalid for variable is a runtime error
for 1x in a; do :; done
## status: 1

#### syntax error on a later line: the lines before it run
echo first
echo second
if then
## status: 2

#### syntax error after a complete line in a compound command
echo start
for i in 1; do
  echo $i
done done
## status: 2

#### syntax error line number in a multi-line script
echo one
echo two
echo three )
## status: 2

#### bad substitution
echo ${x!}
## status: 1

#### bad substitution with a space
echo ${ x}
## status: 1

#### bad substitution does not stop the next line
echo ${x;y}
echo next
## status: 0

#### command not found
nosuchcommand arg
## status: 127

#### command not found keeps going
nosuchcommand
echo "after $?"

#### permission denied on a non-executable file
./data.txt
## status: 126
## file: data.txt
plain
## end

#### is a directory
./dir
## status: 126
## seed: dir/

#### unbound variable in the middle of a line
set -u
echo a; echo "$nope"; echo c
## status: 127

#### parameter null or not set message
v=
echo ${v:?is empty}
## status: 127

#### parameter not set message with a default text
echo ${nope?}
## status: 127

#### readonly assignment message
readonly c=1
c=2
## status: 1

#### readonly assignment in a function body continues
readonly c=1
f() { c=2; echo "in f"; }
f
echo "status $?"

#### division by zero message
echo $((7 / 0))
## status: 1

#### arithmetic syntax error message
echo $((1 +* 2))
## status: 1

#### arithmetic with an invalid variable name
x='a b'
echo $((x))
## status: 1

#### invalid arithmetic base
echo $((65#1))
## status: 1

#### cd error message
cd /definitely/not/here
echo "status $?"

#### cd to a file error message
cd file
## status: 1
## seed: file

#### redirection from a missing file message
read x < nofile
## status: 1

#### redirection to a directory message
echo x > dir
## status: 1
## seed: dir/

#### shift error message
shift 3
echo "status $?"

#### bad option to a builtin
echo ok
cd -x
echo "status $?"

#### unset of an invalid identifier
unset 'a-b'
echo "status $?"

#### declare of an invalid identifier
declare 'a b=1'
echo "status $?"

#### assignment to an invalid name is a command
1abc=5
echo "status $?"

#### local outside a function message
local v=1
## status: 1

#### return outside a function message
return 1
echo "status $?"

#### exit status of a syntax error in eval is 2 and the script goes on
eval 'echo ('
echo "after eval $?"

#### error inside a function reports its line
f() {
  echo in-f
  cd /nope
}
f
echo "status $?"

#### error in a sourced file reports the file
printf 'echo in-lib\ncd /nope\n' > lib.sh
source lib.sh
echo "status $?"

#### error in a script file reports the file name
printf 'echo in-script\nnosuch\n' > s.sh
bash s.sh
echo "status $?"

#### syntax error in a script file
printf 'echo ok\nif then\n' > s.sh
bash s.sh
echo "status $?"

#### syntax error in a command substitution
echo $(if)
## status: 127
## k-differs: bash 5.2 exits 127 after a syntax error inside $( ); K exits 2 on every syntax error
## k-status: 2

#### syntax error inside double brackets
[[ a b ]]
## k-differs: bash 5.2 reports syntax errors inside [[ ]] but exits 0; K exits 2 on every syntax error
## k-status: 2

#### syntax error in an array assignment
a=(1 2
## status: 1
## k-differs: bash 5.2 exits 1 for an unterminated compound assignment; K exits 2 on every syntax error
## k-status: 2

#### here-document warning at end of file is not an error
while read -r l; do echo "$l"; done <<EOF
body line

#### no traceback for a deeply nested expression
echo $(( ((((((((((1)))))))))) ))

#### error status of a failing builtin in a condition
if cd nowhere 2>/dev/null; then echo yes; else echo "no $?"; fi

#### getopts invalid option name message
getopts a 1bad
echo "status $?"
## args: -a

#### printf usage error
printf -x
echo "status $?"

#### too many arguments to return
f() { return 1 2; }
f
echo "status $?"
## status: 1

#### ambiguous redirect message
files='a b'
echo x > $files
echo "status $?"

#### unknown shopt option
shopt -s nosuch
echo "status $?"

#### set -o pipefail status with error message in a stage
nosuch 2>/dev/null | true
echo "${PIPESTATUS[0]}"

#### command not found for an empty command from a variable
e=''
"$e"
echo "status $?"

#### backquote syntax error is found when the substitution runs
echo `if`
echo after

#### unset with an invalid option
unset -x v
echo "status $?"

#### declare with an invalid option
declare -Z v
echo "status $?"

#### export with an invalid option
export -z v
echo "status $?"

#### shift with a negative count
shift -1
echo "status $?"
## args: a

#### exit with a negative status
exit -1
## status: 255

#### return with a negative status
f() { return -1; }
f
echo "status $?"

#### cd - without OLDPWD
unset OLDPWD
cd -
echo "status $?"

#### test with a missing operand after a binary operator
[ 1 -eq ]
echo "status $?"

#### test with a dangling -a
[ 1 -eq 1 -a ]
echo "status $?"

#### source without a file name
source
echo "status $?"

#### eval of an unterminated quote
eval 'echo "abc'
echo "status $?"

#### command with a missing program
command nosuchprog arg
echo "status $?"

#### type -p of a missing command
type -p nosuchprog
echo "status $?"

#### getopts without a variable name
getopts ab
echo "status $?"

#### bad array subscript expression ends the script
a=(1 2)
echo ${a[1 2]}
echo "status $?"
## status: 1

#### error message for a command in a pipeline
echo x | nosuchcmd
echo "status $?"

#### error message in a subshell carries the line
echo one
( cd /nope )
echo "status $?"

#### error message inside an if condition on a later line
if true; then
  cd /missing-dir
fi
echo "status $?"

#### the status of printf is its own, not its arguments'
printf '%s' "$(exit 3)"
echo "status $?"

#### indirect expansion through an empty name
x=
y=final
echo ${!x}
echo the next line runs
## status: 0

#### indirect expansion through a name with a space
x='a b'
echo ${!x}
## status: 1
