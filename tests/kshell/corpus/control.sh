# Compound commands: if/elif/else, for in, for ((;;)), while, until, break, continue, groups.

#### if then fi
if true; then echo yes; fi

#### if else
if false; then echo yes; else echo no; fi

#### if elif else
x=2
if [ $x = 1 ]; then echo one; elif [ $x = 2 ]; then echo two; else echo other; fi

#### if with multiple elif
for x in a b c d; do
  if [ $x = a ]; then echo A
  elif [ $x = b ]; then echo B
  elif [ $x = c ]; then echo C
  else echo other
  fi
done

#### if condition is a list; its last status decides
if false; true; then echo last-wins; fi

#### if status is zero when no branch runs
if false; then echo x; fi
echo $?

#### if status is the branch's status
if true; then (exit 4); fi
echo $?

#### if on one line with newlines inside
if true
then
  echo multi
fi

#### nested if
if true; then if false; then echo a; else echo b; fi; fi

#### for over words
for w in one two three; do echo $w; done

#### for over an empty list does nothing
for w in; do echo never; done
echo done

#### for without in iterates positional parameters
for a; do echo "<$a>"; done
## args: 'x y' z

#### for without in and a newline
for a
do
  echo "$a"
done
## args: p q

#### for loop variable persists after the loop
for v in a b c; do :; done
echo $v

#### for over a glob
for f in *.txt; do echo "file $f"; done
## seed: b.txt a.txt c.log

#### for over an unmatched glob keeps the pattern
for f in *.none; do echo "got $f"; done

#### C-style for loop
for ((i = 0; i < 3; i++)); do echo $i; done

#### C-style for with empty parts
i=0
for ((; i < 2; )); do echo $i; i=$((i + 1)); done

#### C-style for with an empty condition runs until break
for ((i = 0; ; i++)); do [ $i -ge 2 ] && break; echo $i; done

#### C-style for with braces body
for ((i=3; i>0; i--)) { echo $i; }

#### while loop counts
i=0
while [ $i -lt 3 ]; do echo $i; i=$((i + 1)); done

#### until loop
i=0
until [ $i -ge 3 ]; do echo $i; i=$((i + 1)); done

#### while with a false condition never runs
while false; do echo never; done
echo $?

#### loop status is the last body command's
for i in 1 2; do (exit $i); done
echo $?

#### break leaves the loop
for i in 1 2 3 4; do
  [ $i = 3 ] && break
  echo $i
done

#### continue skips to the next iteration
for i in 1 2 3 4; do
  [ $i = 2 ] && continue
  echo $i
done

#### break 2 leaves two loops
for a in 1 2; do
  for b in x y; do
    [ $b = y ] && break 2
    echo $a$b
  done
done
echo out

#### continue 2 continues the outer loop
for a in 1 2; do
  for b in x y; do
    [ $b = y ] && continue 2
    echo $a$b
  done
  echo never
done

#### break with a too-large count leaves all loops
for a in 1 2; do for b in 1 2; do break 5; done; echo never; done
echo done

#### break outside a loop is a no-op with status 0
break
echo "status $?"

#### continue outside a loop
continue
echo "status $?"

#### break with a bad argument
for i in 1; do break 0; done
echo "status $?"

#### break with a non-numeric argument
for i in 1 2; do break x; echo in; done
echo "status $?"
## status: 128

#### while with break inside if
i=0
while true; do
  i=$((i + 1))
  if [ $i -gt 3 ]; then break; fi
done
echo $i

#### while read loop over a file
printf 'a\nb\nc\n' > f
n=0
while read -r l; do n=$((n + 1)); done < f
echo $n

#### while read keeps the last line without a newline
printf 'a\nb' > f
while read -r l || [ -n "$l" ]; do echo "[$l]"; done < f

#### until with a command list condition
n=0
until n=$((n + 1)); [ $n -eq 3 ]; do echo $n; done

#### brace group runs in the current shell
x=1
{ x=2; echo in; }
echo $x

#### brace group needs a terminator
{ echo a; echo b; }

#### brace group on several lines
{
  echo one
  echo two
}

#### brace group status
{ true; false; }
echo $?

#### subshell group
(echo in-subshell; exit 3)
echo $?

#### nested loops with counters
for i in 1 2; do for j in a b; do echo -n "$i$j "; done; done
echo

#### loop over a variable list
list="a b c"
for x in $list; do echo $x; done

#### loop over quoted list is one item
list="a b c"
for x in "$list"; do echo "[$x]"; done

#### for loop over brace expansion
for i in {1..3}; do echo n$i; done

#### for loop variable named like a keyword
for do in 1; do echo $do; done 2>/dev/null || echo syntax

#### keywords as arguments
echo if then else fi for do done while

#### if with and-or condition
if true && false || true; then echo ok; fi

#### negated condition in if
if ! false; then echo negated; fi

#### while with arithmetic counter and string building
s=
i=0
while [ $i -lt 5 ]; do s="$s$i"; i=$((i + 1)); done
echo $s

#### break inside a while inside a function
f() { while true; do return 7; done; }
f
echo $?

#### break in a function does not affect caller loop in bash
f() { break; }
for i in 1 2 3; do f; echo $i; done

#### case inside a loop with continue
for x in a b c; do
  case $x in b) continue;; esac
  echo $x
done

#### loop with semicolon before do on separate lines
for x in 1 2
do echo $x
done

#### empty lines and comments inside compound commands
if true; then
  # a comment

  echo commented # trailing
fi

#### for loop iterates words produced after splitting and globbing
x='*.md plain'
for w in $x; do echo "$w"; done
## seed: z.md y.md
