# Quoting: single, double, backslash, $'...' (ANSI-C), quote removal, and quotes inside expansions.

#### single quotes keep everything literal
echo 'a $x `b` \n "c"'

#### double quotes expand variables but not globs
x=val
echo "x=$x *"

#### backslash escapes a space
echo a\ b

#### backslash escapes a dollar and a quote
echo \$x \" \'

#### backslash in double quotes escapes only special characters
echo "a\$b \"q\" \\ \a \n"

#### backslash newline is a line continuation
echo one \
two

#### backslash newline inside double quotes is removed
echo "ab\
cd"

#### backslash newline inside single quotes is kept
echo 'ab\
cd'

#### adjacent quoted parts join into one word
echo 'a'"b"c'd'"$HOME"

#### empty quotes make an empty argument
set -- '' "" a
echo $#

#### empty unquoted variable produces no argument
e=
set -- $e a $e
echo $#

#### ANSI-C quoting escapes
echo $'tab:\t|nl:\n|bs:\\|sq:\'|dq:\"'

#### ANSI-C quoting octal and hex
echo $'\101\x42\x43'

#### ANSI-C quoting unicode escape in the C locale stays an escape
echo $'\u00e9' | { read -r x; echo ${#x}; }

#### ANSI-C quoting unicode escape in a UTF-8 locale
LC_ALL=C.UTF-8
echo $'\u00e9' | { read -r x; echo ${#x} "$x"; }

#### ANSI-C quoting control escapes
printf '%s' $'\a\b\e\f\v\r' | { IFS= read -r -d '' x; echo ${#x}; }

#### ANSI-C quoting control-x escape
printf '%s\n' $'\cA' | { IFS= read -r x; printf '%d\n' "'$x"; }

#### dollar double-quote is a plain double quote in the C locale
echo $"hello"

#### single quote inside double quotes
echo "it's"

#### double quote inside single quotes
echo 'say "hi"'

#### quoting a glob suppresses it
echo "*" '*' \*
## seed: a b

#### partial quoting of a glob
echo "a"*
## seed: ab ac b

#### hash in the middle of a word is not a comment
echo a#b #comment
echo #whole

#### quoted hash is not a comment
echo '#' "#x"

#### quotes inside command substitution inside double quotes
echo "$(echo "inner quoted")"

#### nested command substitution with quotes
echo "$(echo "$(echo 'deep')")"

#### backquotes with escaped backquotes
echo `echo \`echo nested\``

#### backslash inside backquotes
echo `echo a\\\\b`

#### double quotes keep newlines from command substitution
x="$(printf 'a\nb')"
echo "$x"
echo $x

#### quotes in parameter default word
x=
echo "${x:-"a  b"}" ${x:-"a  b"}

#### single quotes inside ${} in double quotes are literal
x=
echo "${x:-'lit'}"

#### tilde in quotes is not expanded
echo "~" '~' ~/x
x="~"
echo $x

#### quoting keeps multiple spaces
echo "a    b"   c     d

#### escaped newline at end of script
echo a\

#### quoted assignment value with spaces
x="a b  c"
echo "$x"

#### unquoted assignment value is not split
y="1 2   3"
x=$y
echo "$x"

#### quote removal on variable values does not happen
x='"quoted"'
echo $x

#### backslash in variable value is not re-interpreted
x='a\tb'
echo $x

#### dollar-single-quote inside double quotes is literal
echo "$'x'"

#### printf with quoted format
printf '%s|%s\n' "a b" 'c d'

#### echo of a quoted empty string
echo ""
echo ''
echo x"" ''y

#### backslash before ordinary character is removed
echo \a\b\c

#### double backslash
echo \\ "\\" '\\'

#### quoted keywords are plain words
'if' 2>/dev/null; echo $?
"echo" if then fi

#### quoted brace is not a group
echo '{' "}"

#### special characters quoted
echo '|' '&' ';' '<' '>' '(' ')'

#### escaped special characters
echo \| \& \; \< \> \( \)

#### here a word with embedded quotes and variables
n=3
echo "n is '$n'" 'n is "$n"'

#### comment after a semicolon and inside a loop header line
for i in 1 2; do # comment here
  echo $i # and here
done # and after

#### line continuation inside a pipeline and a list
echo a \
  | while read -r l; do echo "[$l]"; done \
  && echo ok

#### line continuation in the middle of a word
ec\
ho joined

#### keywords recognised after a semicolon and newline only
echo if; if true; then echo then; fi

#### braces as words after a command
echo { } {} x{

#### a word that starts with a hash inside quotes in an argument list
set -- a '#b' c
echo $#

#### quoted case pattern with a space
case "a b" in "a b") echo spaced;; esac

#### semicolons and ampersands inside quotes
echo 'a;b&c|d'

#### dollar at the end of a word and before a quote
echo a$ "b$" $'c'

#### nested double quotes inside command substitution inside double quotes
x="outer $(echo "inner \"quoted\" text") end"
echo "$x"

#### single quote inside an ANSI-C string
echo $'it\'s'

#### empty command substitution and empty arithmetic
echo "[$()]" "[$(( ))]"
