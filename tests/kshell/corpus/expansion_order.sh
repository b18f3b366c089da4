# The order of expansions (brace, tilde, parameter/arithmetic/command, splitting, glob, quote
# removal), results that are never re-expanded, and special variables such as LINENO.

#### expansion results are not expanded again
y=secret
x='$y'
echo $x "$x"

#### command substitution output is not re-parsed
x=$(echo '$HOME `echo no` $(echo no)')
echo "$x"

#### glob characters from a variable glob when unquoted
x='*.c'
echo $x
## seed: a.c b.c

#### brace expansion before tilde
echo {~,x}/d

#### brace expansion result is then globbed
echo {a,b}.*
## seed: a.txt b.md c.txt

#### tilde is not expanded from a variable
t='~'
echo $t

#### arithmetic result splits
IFS=0
echo $((100 + 5))

#### quote removal happens last
x='"a"'
echo $x "$x" \"b\"

#### empty quoted argument survives splitting
set -- "" ''
echo $#

#### splitting a parameter that is only IFS whitespace
x='   '
set -- $x
echo $#

#### adjacent expansion and literal join before splitting
x='a b'
set -- pre$x'post'
echo $# "$1" "$2"

#### glob of a word that contains a quoted part
echo "a"*".txt"
## seed: a1.txt a2.txt b.txt

#### eval expands twice
y=inner
x='$y'
eval echo $x

#### LINENO counts script lines
echo $LINENO
echo $LINENO

#### LINENO inside a multi-line command
if true; then
  echo $LINENO
fi

#### LINENO in a function is the line of the command
f() {
  echo "f at $LINENO"
}
f

#### aliases are not expanded in a non-interactive shell
alias greet='echo hello'
greet 2>/dev/null || echo "no alias expansion"

#### expand_aliases turns them on for later lines
shopt -s expand_aliases
alias greet='echo hello'
greet

#### nameref to another variable
declare -n ref=target
target=before
ref=after
echo $target

#### nameref as a function output parameter
set_it() { local -n out=$1; out="set by function"; }
set_it result
echo "$result"

#### parameter with special characters in the default
echo ${nosuch:-a}b}

#### command substitution inside a default value runs only when needed
x=set
echo ${x:-$(echo never >&2)}
echo ${nosuch:-$(echo used)}

#### assignment value with command substitution keeps spaces
x=$(echo "a   b")
echo "$x"

#### backslash-escaped dollar in double quotes
echo "\$HOME"

#### word splitting of an unquoted $@ with empty elements
set -- a '' b
for w in $@; do echo "[$w]"; done
for w in "$@"; do echo "<$w>"; done

#### "$*" with an empty IFS joins without separator
set -- a b c
IFS=
echo "$*"
unset IFS
echo "$*"

#### ${#@} and ${#*} after set
set -- x y z
echo ${#@}

#### indirect expansion of an array element
a=(x y)
n='a[1]'
echo ${!n}

#### nested quotes in command substitution in double quotes with a default
echo "$(echo "${nosuch:-"deep default"}")"
