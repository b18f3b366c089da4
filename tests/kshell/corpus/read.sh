# read: one variable, several, -r, IFS, -a, -d, -n, -p, REPLY, end of file, loops.

#### read one line
read line
echo "[$line]"
## stdin:
hello world
## end

#### read splits into several variables
read a b c
echo "[$a] [$b] [$c]"
## stdin:
one two three four
## end

#### read leaves missing variables empty
read a b c
echo "[$a] [$b] [$c]"
## stdin:
only
## end

#### read without -r treats backslashes
read x
echo "[$x]"
## stdin:
a\tb\\c\ d
## end

#### read -r keeps backslashes
read -r x
echo "[$x]"
## stdin:
a\tb\\c
## end

#### read without -r joins continued lines
read x
echo "[$x]"
## stdin:
first \
second
## end

#### read strips leading and trailing IFS whitespace
read x
echo "[$x]"
## stdin:
   padded   
## end

#### IFS= read keeps whitespace
IFS= read -r x
echo "[$x]"
## stdin:
   padded   
## end

#### read with a custom IFS
IFS=: read -r user pass uid
echo "$user $uid"
## stdin:
root:x:0:0:root
## end

#### read with no variable uses REPLY
read
echo "[$REPLY]"
## stdin:
  reply line  
## end

#### read at end of file returns 1
read x
echo "status $? [$x]"

#### read a last line without a newline fills the variable and returns 1
printf 'no-newline' | { read x; echo "status $? [$x]"; }

#### read in a loop over stdin
n=0
while read -r l; do n=$((n + 1)); echo "$n: $l"; done
## stdin:
a
b
c
## end

#### read -a into an array
read -r -a arr
echo "${#arr[@]} ${arr[2]}"
## stdin:
x y z
## end

#### read -d with a delimiter
read -r -d , first
echo "[$first]"
## stdin:
a,b,c
## end

#### read -d empty reads to end of input
read -r -d '' all
echo "status $? [$all]"
## stdin:
l1
l2
## end

#### read -n reads a number of characters
read -r -n 3 part
echo "[$part]"
## stdin:
abcdef
## end

#### read -N reads exactly n characters
read -r -N 4 part
echo "[$part]"
## stdin:
ab
cdef
## end

#### read -p prompt goes to stderr only on a terminal
read -r -p "prompt: " x
echo "[$x]"
## stdin:
val
## end

#### read -s is accepted
read -r -s x
echo "[$x]"
## stdin:
secret
## end

#### read -u from a descriptor
exec 3<<EOF
fd3-line
EOF
read -r -u 3 x
echo "[$x]"

#### read into an invalid name
read 1x
echo "status $?"
## stdin:
a
## end

#### read with an invalid option
read -Z x
echo "status $?"

#### read the last field takes the rest
read -r a rest
echo "[$a] [$rest]"
## stdin:
one   two   three  
## end

#### read with IFS non-whitespace keeps empty fields
IFS=, read -r a b c
echo "[$a] [$b] [$c]"
## stdin:
x,,z
## end

#### read from a file in a loop with a counter
printf 'k1 v1\nk2 v2\n' > kv.txt
while read -r k v; do echo "$k=>$v"; done < kv.txt

#### read does not consume past its line
read -r first
read -r second
echo "$second $first"
## stdin:
1
2
3
## end

#### read in a pipeline sets variables only in that stage
echo piped | { read -r v; echo "inside [$v]"; }
echo "outside [${v-}]"

#### while read with IFS= and -r preserves everything
while IFS= read -r l; do echo "<$l>"; done
## stdin:
  lead
trail  
back\slash
## end

#### read one character at a time
while read -r -n 1 c; do echo -n "[$c]"; done
echo
## stdin:
abc
## end

#### read with a here-string and several variables
read -r x y <<< "10 20"
echo $((x + y))

#### read with a non-whitespace IFS keeps inner spaces
IFS=, read -r a b <<< "x, y"
echo "[$a] [$b]"

#### read -n splits the characters it read
read -n 2 -r a b <<< "x yz"
echo "[$a] [$b]"

#### read -d with a letter delimiter
read -r -d x v <<< "abcxdef"
echo "[$v]"
