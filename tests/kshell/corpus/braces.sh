# Brace expansion (before every other expansion) and tilde expansion.

#### comma list
echo a{b,c,d}e

#### numeric range
echo {1..5}

#### descending range
echo {5..1}

#### range with a step
echo {0..10..3} {10..0..5}

#### negative numbers in a range
echo {-2..2}

#### zero-padded range
echo {01..10}
echo {001..3}

#### letter range
echo {a..e} {e..a}

#### letter range with a step
echo {a..k..3}

#### nested braces
echo {a,b{1,2},c}

#### two brace groups make a cross product
echo {a,b}{1,2}

#### prefix and suffix around a range
echo file{1..3}.txt

#### brace with one element is literal
echo {a} {}

#### brace with an empty element
echo x{,y}z

#### quoted braces are literal
echo "{a,b}" '{1..3}' \{a,b\}

#### brace expansion happens before parameter expansion
x=1 y=2
echo {$x,$y}

#### variables in a range are not expanded first
n=3
echo {1..$n}

#### brace expansion in a for loop
for i in {1..3}; do echo -n "$i "; done
echo

#### brace expansion in an assignment is not done
x={a,b}
echo "$x"

#### brace expansion makes separate words
set -- {x,y,z}
echo $#

#### brace expansion with globs
echo {a,b}*.txt
## seed: a1.txt b1.txt b2.txt c1.txt

#### invalid range is literal
echo {1..a} {a..1}

#### brace with spaces is not expanded
echo {a, b}

#### escaped comma inside braces
echo {a\,b,c}

#### dollar-brace is not a brace expansion
x=v
echo ${x}{1,2}

#### brace expansion of paths
echo app/{src,test}/main

#### large range counts
set -- {1..1000}
echo $# ${1000}

#### range with step sign ignored
echo {1..10..-3}

#### tilde expands to HOME
echo ~

#### tilde with a path
echo ~/docs/file

#### tilde of a named user that does not exist stays literal
echo ~nosuchuser-xyz/x

#### tilde not at the start of a word
echo a~ x=~

#### tilde after a colon in an assignment
PATHLIKE=~/bin:~/lib
echo $PATHLIKE

#### tilde plus and minus
cd sub
echo ~+ ~-
## seed: sub/

#### tilde follows a changed HOME
HOME=/elsewhere
echo ~ ~/x

#### quoted tilde is literal
echo "~" '~/x' \~

#### tilde in a variable value is not expanded again
x='~'
echo $x/y
