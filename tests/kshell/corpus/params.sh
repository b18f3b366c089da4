# Parameter expansion: $x, ${x}, positional and special parameters, and every ${x OP word} form.

#### plain variable
x=hello
echo $x ${x}

#### variable next to text needs braces
x=ab
echo ${x}cd $xcd.

#### unset variable expands to nothing
echo "[$nosuch]"

#### assignment with no value is empty, not unset
x=
echo "[${x-unset}]" "[${x:-empty}]"

#### positional parameters
echo "$1" "$2" "$3"
## args: a b c

#### positional beyond 9 needs braces
echo "${10}" "$10"
## args: 1 2 3 4 5 6 7 8 9 ten

#### $# counts positionals
echo $#
## args: a 'b c' d

#### $# is zero without arguments
echo $#

#### quoted $@ keeps each argument whole
for a in "$@"; do echo "<$a>"; done
## args: 'a b' c '' d

#### quoted $* joins with the first IFS character
echo "$*"
IFS=:
echo "$*"
IFS=
echo "$*"
## args: a b c

#### unquoted $@ and $* split
for a in $@; do echo "<$a>"; done
for a in $*; do echo "[$a]"; done
## args: 'a b' c

#### empty "$@" produces no words
set --
for a in "$@"; do echo "never"; done
echo "n=$#"

#### "$@" with text around it
set -- a b c
for w in "x$@y"; do echo "<$w>"; done

#### "${@:2}" slices positionals
set -- a b c d
echo "${@:2}"
echo "${@:2:2}"
echo "${*:3}"

#### $? after true and false
true; echo $?
false; echo $?

#### $? of a command not found
nosuchcmd 2>/dev/null
echo $?

#### $? after an assignment with command substitution
x=$(false)
echo $?
x=$(exit 3)
echo $?

#### $$ is a number
case $$ in *[!0-9]*|'') echo bad;; *) echo num;; esac

#### $0 is the shell name
echo "$0"
## k-differs: the K shell runs under its own name; the runner gives it "k" (bash -c gives "bash")
## k-stdout:
k
## end

#### $- holds option letters
set -e
case $- in *e*) echo has-e;; esac
set +e
case $- in *e*) echo still;; *) echo no-e;; esac

#### default value with colon when null
x=
echo ${x:-dflt} ${y:-dflt2}

#### default value without colon keeps null
x=
echo "[${x-dflt}]" "[${y-dflt2}]"

#### default does not assign
echo ${y:-one}
echo "[$y]"

#### assign default with colon
echo ${y:=set}
echo $y

#### assign default without colon keeps null
x=
echo "[${x=new}]"
echo "[${z=new}]" "$z"

#### alternative value with and without colon
x=
y=v
echo "[${x:+alt}]" "[${x+alt}]" "[${y:+alt}]" "[${u+alt}]"

#### error if unset with message
x=${nosuch:?custom message}
echo not reached
## status: 127

#### error if unset default message
echo ${nosuch?}
echo not reached
## status: 127

#### error if null with colon
x=
echo ${x:?}
## status: 127

#### error if unset does not fire for null without colon
x=
echo "[${x?}]"

#### default word is expanded
d=deep
echo ${nosuch:-$d/er}
echo "${nosuch:-"quoted $d"}"

#### default word with spaces stays one field when quoted
set -- "${nosuch:-a b c}"
echo $#
set -- ${nosuch:-a b c}
echo $#

#### length of a variable
x=hello
echo ${#x}
y=
echo ${#y} ${#nosuch}

#### length of positionals
echo ${#}
echo ${#@}
## args: a b c

#### length of a multibyte string in the C locale counts bytes
x=héllo
echo ${#x}

#### length of a multibyte string in a UTF-8 locale counts characters
LC_ALL=C.UTF-8
x=héllo
echo ${#x} ${x:1:1} ${x^^}

#### remove shortest prefix
p=/usr/local/lib/file.tar.gz
echo ${p#*/}
echo ${p#/usr}

#### remove longest prefix
p=/usr/local/lib/file.tar.gz
echo ${p##*/}

#### remove shortest suffix
p=/usr/local/lib/file.tar.gz
echo ${p%.*}
echo ${p%/*}

#### remove longest suffix
p=/usr/local/lib/file.tar.gz
echo ${p%%.*}

#### trimming with no match leaves value
x=abc
echo ${x#z} ${x%z} ${x##z} ${x%%z}

#### trimming with character class pattern
x=123abc456
echo ${x##*[0-9]} ${x%%[a-z]*} ${x#[0-9]}

#### trimming pattern from a variable
x=prefix-body
p=prefix-
echo ${x#$p}
q='*-'
echo ${x#$q} "${x#"$q"}"

#### trimming pattern with quoted star is literal
x='a*b*c'
echo "${x#*\*}" "${x#'a*'}"

#### replace first match
x=aXbXc
echo ${x/X/-}

#### replace all matches
x=aXbXc
echo ${x//X/-}

#### replace anchored at start and end
x=abcabc
echo ${x/#abc/X} ${x/%abc/Y} ${x/#bc/Z}

#### replace with empty replacement deletes
x=a.b.c
echo ${x//./} ${x/./}

#### replace with glob pattern
x=hello.world.txt
echo ${x/*./} ${x//[aeiou]/_}

#### replacement in each positional
set -- ab cb
echo "${@/b/X}"

#### substring with offset
x=abcdefgh
echo ${x:2} ${x:2:3} ${x:0:1}

#### substring with negative offset needs a space
x=abcdefgh
echo ${x: -3} ${x: -3:2} ${x:(-2)}

#### substring with negative length
x=abcdefgh
echo ${x:1:-2}

#### substring offset beyond the end is empty
x=abc
echo "[${x:5}]" "[${x:1:0}]"

#### substring with arithmetic offset
x=abcdefgh
i=1
echo ${x:i+1:2}

#### uppercase and lowercase all
x='Hello World'
echo ${x^^} ${x,,}

#### uppercase and lowercase first character
x=hello
y=WORLD
echo ${x^} ${y,}

#### case modification with a pattern
x=banana
echo ${x^^a} ${x^^[bn]}

#### names matching a prefix
abc1=1 abc2=2 abd=3
echo ${!abc*}
echo "${!abc@}"

#### indirect expansion
name=target
target=value
echo ${!name}

#### indirect expansion of a positional
n=2
echo ${!n}
## args: one two three

#### nested default inside default
echo ${a:-${b:-${c:-deep}}}

#### ${x} followed by brackets is not an array
x=v
echo ${x}[0]

#### special parameter $_ is the last argument
echo a b c >/dev/null
echo $_

#### assignment before command is temporary for builtins that are not special
x=outer
x=inner true
echo $x

#### assignments on one line take effect left to right
a=1 b=$a c=$b
echo $a $b $c

#### shift moves positionals
shift
echo "$@"
shift 2
echo "$@" $#
## args: a b c d

#### set -- replaces positionals
set -- x y
echo $# "$1$2"

#### set -- with no arguments clears
set --
echo $#
## args: a b

#### $@ inside a function is the function's arguments
f() { echo "$#: $*"; }
f one two
echo "$#: $*"
## args: top

#### unbound variable with set -u
set -u
echo $nosuch
echo not reached
## status: 127

#### set -u allows defaults
set -u
echo "${nosuch:-ok}" "${nosuch-ok2}" "[${nosuch+x}]"

#### set -u with $@ empty is fine
set -u
echo "[$@]" "[$*]"

#### set -u with positional beyond count fails
set -u
echo "$3"
## status: 127
## args: a

#### length under set -u fails for unset
set -u
echo ${#nosuch}
## status: 127

#### digit-leading word is not a variable name
echo $1abc
## args: X

#### dollar before non-name is literal
echo $ $. "$" a$
echo "$%"

#### PWD and HOME at start
echo "$PWD"
echo "$HOME"

#### assignment keeps glob characters literal
x=*
echo "$x"

#### tilde in assignment value expands
x=~/dir
echo $x

#### IFS default value
printf '%s' "$IFS" | { read -r -d '' v; printf '[%s]\n' "${#IFS}"; }

#### variable holding a command name
cmd=echo
$cmd hi there

#### integer variable with declare -i
declare -i n=2+3
echo $n
n+=4
echo $n
n=x
echo $n

#### += appends to a string
s=ab
s+=cd
s+=$s
echo $s

#### trimming with # on the positional list
set -- a.txt b.txt
echo "${@%.txt}"

#### ${#} vs ${#*}
echo ${#} ${#*}
## args: 1 2 3 4

#### parameter expansion inside double quotes with single quotes in word
x=
echo "${x:-'q'}"
echo ${x:-'q'}

#### pattern substitution with slash in replacement
p=a/b/c
echo ${p//\//:}

#### unset a variable
x=1
unset x
echo "[${x-gone}]"

#### readonly variable cannot be assigned
readonly r=1
r=2
echo after $r

#### readonly variable cannot be unset
readonly r=1
unset r
echo $? $r

#### bare array name length is element zero's length
a=(abcd e)
echo ${#a}

#### lowercase with a pattern
x=ABCDEF
echo ${x,,[A-C]}

#### indices with star
a=(p q r)
echo "${!a[*]}"

#### quoted default word keeps its spaces when unquoted outside
set -- ${nosuch-"a  b"}
echo $# "[$1]"

#### alternative with a quoted variable
y='v w'
x=1
set -- ${x:+"$y"}
echo $# "[$1]"

#### substring with a negative length past the start
x=abc
echo "[${x:1:-1}]"
