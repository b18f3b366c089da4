# Conditionals: test / [ and [[ ]] (patterns, regex with BASH_REMATCH, file tests, -nt, -v).

#### test string equality
test abc = abc && echo eq
test abc = abd || echo ne
[ abc != abd ] && echo neq

#### test empty and non-empty
[ -z "" ] && echo empty
[ -n "x" ] && echo nonempty
[ -n "" ] || echo not-nonempty

#### test with a single argument is true when non-empty
[ x ] && echo one-arg
[ "" ] || echo empty-arg

#### test integer comparisons
[ 3 -eq 3 ] && echo eq
[ 3 -ne 4 ] && echo ne
[ 2 -lt 10 ] && echo lt
[ 10 -gt 2 ] && echo gt
[ 5 -le 5 ] && echo le
[ 5 -ge 6 ] || echo not-ge

#### test integer comparison with a non-integer
[ abc -eq 1 ]
echo "status $?"

#### test negation and grouping
[ ! -z x ] && echo not-empty
[ \( 1 -eq 1 \) -a \( 2 -eq 3 -o 1 -eq 1 \) ] && echo grouped

#### test -a and -o
[ -n a -a -n b ] && echo and
[ -z a -o -n b ] && echo or

#### missing closing bracket
[ 1 -eq 1
echo "status $?"

#### test with too many arguments
[ a b c ]
echo "status $?"

#### unary operator expected
[ -z a b ]
echo "status $?"

#### test file existence
[ -e f.txt ] && echo exists
[ -e nope ] || echo missing
## seed: f.txt

#### test regular file and directory
[ -f f.txt ] && echo file
[ -d d ] && echo dir
[ -f d ] || echo dir-is-not-file
[ -d f.txt ] || echo file-is-not-dir
## seed: f.txt d/

#### test non-empty file
echo data > full
: > empty
[ -s full ] && echo full-has-data
[ -s empty ] || echo empty-is-empty

#### test readable writable
echo x > f
[ -r f ] && echo readable
[ -w f ] && echo writable

#### test executable bit from the seeded mode
[ -x run.sh ] && echo run-is-x
[ -x plain.sh ] || echo plain-not-x
## file: run.sh 755
echo hi
## end
## file: plain.sh 644
echo hi
## end

#### test on a directory is executable
[ -x dir ] && echo dir-searchable
## seed: dir/

#### test string ordering with escaped angle brackets
[ a \< b ] && echo less
[ b \> a ] && echo greater

#### test -v for set variables
x=1
[ -v x ] && echo x-set
[ -v nosuch ] || echo nosuch-unset

#### test -o for shell options
set -o noglob
[ -o noglob ] && echo noglob-on
[ -o errexit ] || echo errexit-off

#### test -t on a non-terminal
[ -t 0 ] || echo not-a-tty

#### test with a glob word does not glob
[ "*" = "*" ] && echo star

#### double-bracket string equality
[[ abc == abc ]] && echo eq
[[ abc = abc ]] && echo single-eq
[[ abc != abd ]] && echo ne

#### double-bracket pattern match
[[ hello.txt == *.txt ]] && echo glob-match
[[ hello.txt == "*.txt" ]] || echo quoted-literal

#### double-bracket pattern from a variable
p='h*'
[[ hello == $p ]] && echo var-pattern
[[ hello == "$p" ]] || echo quoted-var

#### double-bracket does not split or glob
x='a b'
[[ $x == 'a b' ]] && echo no-split
[[ -n $nosuch ]] || echo empty-ok

#### double-bracket regex match
[[ abc123 =~ ^[a-z]+([0-9]+)$ ]] && echo "match ${BASH_REMATCH[0]} ${BASH_REMATCH[1]}"

#### regex with several groups
if [[ "key=value" =~ ^([^=]+)=(.*)$ ]]; then
  echo "${BASH_REMATCH[1]} -> ${BASH_REMATCH[2]} (${#BASH_REMATCH[@]})"
fi

#### regex no match clears BASH_REMATCH
[[ abc =~ (b) ]]
[[ abc =~ z ]]
echo "status $? [${BASH_REMATCH[*]}]"

#### quoted regex is literal
[[ a.c =~ "a.c" ]] && echo literal-dot
[[ abc =~ "a.c" ]] || echo quoted-no-match

#### regex from a variable
re='^[0-9]+$'
[[ 42 =~ $re ]] && echo number
[[ 4x2 =~ $re ]] || echo not-number

#### invalid regex returns 2
re='('
[[ a =~ $re ]]
echo "status $?"

#### double-bracket and or not
[[ -n a && -z "" ]] && echo and
[[ -z a || -n b ]] && echo or
[[ ! -z a ]] && echo not
[[ ( -n a || -z a ) && -n b ]] && echo parens

#### double-bracket short-circuit does not evaluate the right side
[[ -z a && $(echo evaluated >&2) ]]
echo done

#### double-bracket string ordering
[[ apple < banana ]] && echo less
[[ b > a ]] && echo greater

#### double-bracket integer comparison
[[ 10 -gt 9 ]] && echo numeric-gt
[[ 10 > 9 ]] || echo string-lt

#### double-bracket arithmetic in integer operands
x=3
[[ x+1 -eq 4 ]] && echo arith

#### double-bracket file tests
[[ -f a.txt && -d d && ! -e nope ]] && echo files-ok
## seed: a.txt d/

#### newer-than and older-than
echo old > old.txt
[[ old.txt -nt nosuch ]] && echo newer-than-missing
[[ nosuch -ot old.txt ]] && echo missing-older

#### same file test
echo x > f
[[ f -ef f ]] && echo same
[[ f -ef ./f ]] && echo same-path

#### double-bracket -v on array elements
a=(x '')
[[ -v a[1] ]] && echo set-empty
[[ -v a[2] ]] || echo unset-2

#### double-bracket empty string with no operator
[[ "" ]] || echo empty-false
[[ x ]] && echo word-true

#### double-bracket status 1 on false
[[ a == b ]]
echo $?

#### double-bracket with a pattern character class
[[ x9 == x[0-9] ]] && echo class
[[ xa == x[!0-9] ]] && echo negclass

#### double-bracket pattern alternation needs extglob in bash
[[ foo == @(foo|bar) ]] && echo extglob-in-cond

#### double-bracket with newlines inside
if [[ -n a &&
      -n b ]]; then echo multiline; fi

#### test builtin with -eq and spaces
[ " 5 " -eq 5 ] && echo spaced

#### test compares strings not numbers with =
[ 01 = 1 ] || echo string-compare
[ 01 -eq 1 ] && echo numeric-compare

#### double-bracket == with a right-hand side that is quoted in part
[[ abc == a"b"* ]] && echo partial-quote

#### test -h and -L on a non-link
echo x > f
[ -L f ] || echo not-link

#### test -nt between two files of the same moment is false
echo a > a
[ a -nt a ] || echo not-newer-than-itself

#### invalid operator in double brackets is a syntax error
[[ a -zz b ]]
echo not reached
## k-differs: bash 5.2 reports syntax errors inside [[ ]] but exits 0; K exits 2 on every syntax error
## k-status: 2

#### [ builtin requires the closing bracket even with no arguments
[
echo "status $?"

#### test with no arguments is false
test
echo "status $?"

#### test -d on the home directory via tilde
[ -d ~ ] && echo home-is-dir

#### double-bracket with command substitution
[[ $(echo yes) == yes ]] && echo cmdsub

#### regex with an anchor and an alternation
for w in cat dog cow; do [[ $w =~ ^(cat|cow)$ ]] && echo "$w ok"; done

#### BASH_REMATCH of an optional group that did not match
[[ ab =~ a(x)?b ]] && echo "[${BASH_REMATCH[1]}] ${#BASH_REMATCH[@]}"
