# case: patterns, alternatives, ;; ;& ;;&, quoting in patterns, status.

#### case matches a literal
case hello in hello) echo matched;; esac

#### case falls to the default pattern
case zzz in a) echo a;; *) echo default;; esac

#### case with alternatives
for x in apple kiwi plum; do
  case $x in apple|plum) echo "$x: a or p";; *) echo "$x: other";; esac
done

#### case with glob patterns
for f in a.txt b.md c; do
  case $f in *.txt) echo text;; *.md) echo markdown;; *) echo none;; esac
done

#### case with character classes
for c in a Z 5 -; do
  case $c in [a-z]) echo lower;; [A-Z]) echo upper;; [0-9]) echo digit;; *) echo other;; esac
done

#### case with negated character class
case x in [!abc]) echo not-abc;; esac

#### case with question mark
case ab in ?) echo one;; ??) echo two;; esac

#### first matching branch wins
case abc in a*) echo first;; ab*) echo second;; esac

#### no match gives status 0
case x in y) echo y;; esac
echo $?

#### case status is the branch's status
case x in x) (exit 3);; esac
echo $?

#### fall through with ;&
case a in
  a) echo A;&
  b) echo B;;
  c) echo C;;
esac

#### continue testing with ;;&
case abc in
  a*) echo starts-a;;&
  *c) echo ends-c;;&
  x*) echo never;;
  *) echo any;;
esac

#### optional open parenthesis on patterns
case b in (a) echo a;; (b) echo b;; esac

#### quoted pattern is literal
case '*' in '*') echo star;; esac
case x in '*') echo wrong;; *) echo right;; esac

#### escaped glob character in a pattern
case 'a?' in a\?) echo escaped;; esac
case ab in a\?) echo wrong;; *) echo no-match;; esac

#### pattern from a variable is a glob
p='*.c'
case main.c in $p) echo glob-var;; esac

#### quoted variable in a pattern is literal
p='*.c'
case main.c in "$p") echo wrong;; *) echo literal;; esac

#### word is expanded but not split
x='a b'
case $x in 'a b') echo whole;; esac

#### case on an empty word
case "" in '') echo empty;; *) echo nonempty;; esac

#### last branch without ;;
case x in x) echo no-terminator
esac

#### case with multiple commands in a branch
case y in y) echo one; echo two;; esac

#### case in a function with return
kind() { case $1 in *.sh) return 0;; *) return 1;; esac; }
kind a.sh && echo script
kind a.txt || echo not-script

#### case with newline layout
case "$1" in
  start)
    echo starting
    ;;
  stop)
    echo stopping
    ;;
  *)
    echo "usage"
    ;;
esac
## args: stop

#### case keyword words as the subject
case in in in) echo in-in;; esac

#### case on a number with ranges
for n in 3 42 100; do
  case $n in [0-9]) echo single;; [0-9][0-9]) echo double;; *) echo big;; esac
done

#### case pattern with bracket containing dash and bracket
case ']' in []-]) echo bracket;; esac
case - in [a-]) echo dash;; esac

#### case with extglob pattern
shopt -s extglob
case foo.tar.gz in *.@(gz|bz2)) echo compressed;; esac
case abc in +([a-c])) echo only-abc;; esac
case x in !(y)) echo not-y;; esac

#### case with a tilde pattern
case $HOME in ~) echo home;; esac
case ~ in "$HOME") echo same;; esac

#### case with empty branch body
case a in a) ;; esac
echo "status $?"

#### esac as an argument elsewhere
echo esac
