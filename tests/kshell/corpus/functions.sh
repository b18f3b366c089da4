# Functions: both definition forms, arguments, local, return, recursion, scope, redefinition.

#### define and call a function
greet() { echo "hello $1"; }
greet world

#### function keyword form
function greet { echo "hi $1"; }
greet there

#### function keyword with parentheses
function greet() { echo "hey"; }
greet

#### function body as a subshell
f() ( echo in-sub; x=changed )
x=orig
f
echo $x

#### function arguments are positional parameters
f() { echo "$# [$1] [$2] [$*]"; }
f a 'b c'

#### caller's positionals are restored after the call
f() { set -- x y z; echo "in $#"; }
f
echo "out $# $1"
## args: one two

#### return sets the status
f() { return 3; }
f
echo $?

#### return without argument uses last status
f() { false; return; }
f
echo $?

#### function status is its last command's
f() { true; false; }
f
echo $?

#### return stops the function
f() { echo a; return; echo b; }
f

#### return outside a function
return
echo "status $?"

#### return with a non-numeric argument
f() { return abc; }
f
echo "status $?"

#### return value is taken modulo 256
f() { return 257; }
f
echo $?

#### global variables are visible and changeable
x=1
f() { x=2; y=new; }
f
echo $x $y

#### local variables do not leak
x=global
f() { local x=local; echo "in $x"; }
f
echo "out $x"

#### local without value
f() { local x; echo "[${x-unset}]"; x=set; }
x=outer
f
echo $x

#### dynamic scoping reaches called functions
x=global
inner() { echo "inner sees $x"; }
outer() { local x=outer-local; inner; }
outer

#### local in nested function shadows
f() { local v=f; g; echo "f: $v"; }
g() { local v=g; echo "g: $v"; }
f

#### assignment in called function changes the caller's local
f() { local v=1; g; echo "after g: $v"; }
g() { v=2; }
f
echo "global: [${v-unset}]"

#### local outside a function is an error
local x=1
echo "status $?"

#### recursion
fact() { if [ $1 -le 1 ]; then echo 1; else echo $(( $1 * $(fact $(($1 - 1))) )); fi; }
fact 10

#### recursion with local counters
count() { local n=$1; [ $n -eq 0 ] && return; echo $n; count $((n - 1)); }
count 3

#### fibonacci by recursion
fib() { if (( $1 < 2 )); then echo $1; else echo $(( $(fib $(($1-1))) + $(fib $(($1-2))) )); fi; }
fib 12

#### redefining a function
f() { echo first; }
f
f() { echo second; }
f

#### unset -f removes a function
f() { echo f; }
unset -f f
f
echo "status $?"

#### function name with dashes and dots
my-func.x() { echo dashed; }
my-func.x

#### function overrides a builtin name
echo() { builtin echo "wrapped: $*"; }
echo hi

#### command bypasses a function
echo() { builtin echo wrapped; }
command echo plain

#### FUNCNAME inside a function
f() { echo "$FUNCNAME ${FUNCNAME[1]-}"; g; }
g() { echo "${FUNCNAME[@]}"; }
f

#### function defined inside another function is global
outer() { inner() { echo inner-ok; }; }
outer
inner

#### function with redirection on the definition
f() { echo to-file; } > out.txt
f
read -r l < out.txt
echo "file has $l"

#### function reading stdin
f() { while read -r l; do echo "f got $l"; done; }
printf 'a\nb\n' | f

#### function output captured
f() { echo captured; }
x=$(f)
echo "[$x]"

#### local -a array and local -i integer
f() { local -a arr=(1 2 3); local -i n=2+2; echo "${#arr[@]} $n"; }
f

#### local with an exported variable
f() { local -x E=inner; g; }
g() { echo "g sees $E"; }
E=outer
f
echo $E

#### declare in a function is local
f() { declare d=inside; echo $d; }
f
echo "[${d-unset}]"

#### declare -g in a function is global
f() { declare -g gv=global-value; }
f
echo $gv

#### type of a function
f() { echo x; }
type -t f

#### function with a here-document body input
f() { read -r l; echo "got $l"; }
f <<EOF
doc
EOF

#### calling an undefined function
nofunc arg
echo "status $?"

#### function name same as a variable
x() { echo function-x; }
x=variable
x
echo $x

#### positional count in nested calls
f() { echo "f $#"; g a b c; echo "f again $#"; }
g() { echo "g $#"; }
f 1

#### shift inside a function
f() { shift; echo "$@"; }
f a b c

#### return from a sourced-like eval inside a function
f() { eval 'return 4'; echo never; }
f
echo $?

#### function definition status is zero
false
f() { :; }
echo $?

#### local array and global array of the same name
a=(g1 g2)
f() { local a=(l1); echo "${a[@]}"; }
f
echo "${a[@]}"

#### function with keyword body if
f() if true; then echo if-body; fi
f
