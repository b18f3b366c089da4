# Field splitting on IFS, and command substitution ($( ) and backquotes).

#### default IFS splits on runs of blanks
x='  a   b	c
d  '
for w in $x; do echo "<$w>"; done

#### custom IFS splits on each character
x='a:b::c'
IFS=:
for w in $x; do echo "<$w>"; done

#### IFS whitespace and non-whitespace together
x=' a , b ,, c '
IFS=' ,'
for w in $x; do echo "<$w>"; done

#### trailing non-whitespace separator does not make an empty field
x='a:b:'
IFS=:
set -- $x
echo $#

#### leading non-whitespace separator makes an empty field
x=':a'
IFS=:
set -- $x
echo $# "<$1>"

#### empty IFS disables splitting
x='a b c'
IFS=
set -- $x
echo $#

#### unset IFS splits like the default
x='a  b	c'
unset IFS
set -- $x
echo $#

#### quoted expansion is not split
x='a b c'
set -- "$x"
echo $#

#### splitting applies to command substitution results
set -- $(echo one two three)
echo $# $2

#### splitting of an arithmetic result
IFS=1
set -- $((515))
echo $# "$1|$2"

#### splitting does not apply to assignment
x='a   b'
y=$x
echo "$y"

#### IFS change affects later expansions only
x='a-b'
IFS=- eval 'set -- $x'
echo $#

#### splitting happens before globbing
x='*.txt b'
set -- $x
echo $# "$@"
## seed: one.txt two.txt

#### IFS set inside function with local
f() { local IFS=,; x='p,q'; set -- $x; echo $#; }
f
x='p,q'
set -- $x
echo $#

#### "$@" is not re-split by IFS
IFS=b
set -- "a b" c
for w in "$@"; do echo "<$w>"; done

#### $* unquoted with IFS set
set -- 'a b' c
IFS=:
for w in $*; do echo "<$w>"; done

#### command substitution strips trailing newlines
x=$(printf 'a\n\n\n')
echo "[$x]"

#### command substitution keeps inner newlines
x=$(printf 'a\n\nb\n')
echo "[$x]"

#### backquote command substitution
x=`echo hi`
echo $x

#### nested command substitution
echo $(echo $(echo $(echo deep)))

#### command substitution status becomes $?
x=$(exit 7)
echo $?

#### command substitution does not change the parent's variables
x=1
y=$(x=2; echo $x)
echo $x $y

#### command substitution of an empty output
x=$(true)
echo "[$x]"

#### command substitution with a case statement inside
x=$(case a in a) echo matched;; esac)
echo $x

#### command substitution with parentheses in a case pattern
x=$(case a in (a) echo paren;; esac)
echo $x

#### command substitution with a comment inside
x=$(echo yes # a comment with ) paren
)
echo $x

#### command substitution stderr is not captured
x=$(echo out; echo err >&2)
echo "got $x"

#### command substitution capturing stderr
x=$(echo err 2>&1 >&2)
echo "got $x"

#### command substitution in a for list
for w in $(echo a b c); do echo "w=$w"; done

#### command substitution with here-document inside
x=$(while read l; do echo "L:$l"; done <<EOF
one
two
EOF
)
echo "$x"

#### dollar-paren-less-than reads a file
echo content > f.txt
x=$(< f.txt)
echo "$x"

#### exit inside command substitution exits only the substitution
x=$(echo a; exit 3; echo b)
echo "$x $?"

#### function defined in command substitution does not leak
x=$(f() { echo inner; }; f)
echo $x
type f >/dev/null 2>&1 || echo "no f"

#### cd in command substitution does not leak
mkdir_ok=$(cd / && pwd)
echo $mkdir_ok
pwd

#### command substitution of a builtin that fails
x=$(cd /nonexistent-dir 2>&1)
echo "$x"

#### word splitting of a substitution with globs
x=$(echo '*.md')
echo $x
echo "$x"
## seed: a.md b.md

#### backquotes inside double quotes
echo "`echo a   b`"

#### dollar in backquotes
x=v
echo `echo $x`

#### arithmetic inside command substitution
echo $(echo $((6*7)))

#### long output through command substitution
x=$(i=0; while [ $i -lt 500 ]; do echo line$i; i=$((i+1)); done)
echo ${#x}
