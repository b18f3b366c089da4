# Redirections on VFS files: > >> < 2> 2>&1 &> >| <> n>&m n<&- and /dev/null, /dev/stdin...

#### output to a file then read it back
echo hello > f.txt
while read -r l; do echo "got $l"; done < f.txt

#### append to a file
echo one > f
echo two >> f
echo three >> f
while read -r l; do echo "$l"; done < f

#### truncate on second write
echo long-first-line > f
echo short > f
while read -r l; do echo "$l"; done < f

#### redirection with no command creates an empty file
> empty.txt
test -f empty.txt && echo exists
test -s empty.txt || echo empty

#### input redirection from a missing file
read x < missing.txt
echo "status $?"

#### output redirection into a missing directory
echo x > nodir/f
echo "status $?"

#### stderr to a file
{ echo out; echo err >&2; } 2> err.txt
echo ---
while read -r l; do echo "file: $l"; done < err.txt

#### stderr to stdout
{ echo out; echo err >&2; } 2>&1

#### order of redirections matters
{ echo out; echo err >&2; } 2>&1 > f.txt
echo ---
while read -r l; do echo "f: $l"; done < f.txt

#### both streams with ampersand-greater
{ echo out; echo err >&2; } &> both.txt
while read -r l; do echo "b: $l"; done < both.txt

#### both streams appended with ampersand-double-greater
echo first > both.txt
{ echo out; echo err >&2; } &>> both.txt
while read -r l; do echo "b: $l"; done < both.txt

#### stdout to stderr
echo to-err >&2
echo to-out

#### redirect to /dev/null
echo gone > /dev/null
echo err-gone 2>/dev/null >&2
echo visible

#### read from /dev/null gives end of file
read x < /dev/null
echo "status $? [$x]"

#### write to /dev/stderr and /dev/stdout
echo e > /dev/stderr
echo o > /dev/stdout

#### read from /dev/stdin
read x < /dev/stdin
echo "got $x"
## stdin:
from-stdin
## end

#### noclobber refuses to overwrite
echo a > f
set -C
echo b > f
echo "status $?"
while read -r l; do echo "$l"; done < f

#### noclobber is bypassed by >|
echo a > f
set -C
echo b >| f
while read -r l; do echo "$l"; done < f

#### noclobber allows appending and new files
set -o noclobber
echo a > new
echo b >> new
while read -r l; do echo "$l"; done < new

#### read-write redirection opens without truncating
echo abcdef > f
echo XY 1<> f
while read -r l; do echo "$l"; done < f

#### duplicate a custom file descriptor
exec 3> f3.txt
echo via-3 >&3
exec 3>&-
while read -r l; do echo "$l"; done < f3.txt

#### read through a custom input descriptor
printf 'l1\nl2\n' > in.txt
exec 4< in.txt
read -r a <&4
read -r b <&4
exec 4<&-
echo "$a $b"

#### writing to a closed descriptor fails
exec 3>&-
echo x >&3
echo "status $?"

#### bad file descriptor message
echo x >&7
echo "status $?"

#### closing stdout makes echo fail
echo x >&-
echo "status $?"

#### redirection applies to a compound command
if true; then echo a; echo b; fi > f
for i in 1 2; do echo $i; done >> f
while read -r l; do echo "[$l]"; done < f

#### redirection on a while loop input
printf '1\n2\n3\n' > nums
sum=0
while read -r n; do sum=$((sum + n)); done < nums
echo $sum

#### redirection before the command name
> f.txt echo before
while read -r l; do echo "$l"; done < f.txt

#### redirection in the middle of arguments
echo a > f.txt b c
while read -r l; do echo "$l"; done < f.txt

#### redirection target from a variable
name=out.txt
echo data > "$name"
while read -r l; do echo "$l"; done < out.txt

#### ambiguous redirect from an empty variable
e=
echo x > $e
echo "status $?"

#### ambiguous redirect from a multi-word variable
v='a b'
echo x > $v
echo "status $?"

#### redirection target glob that matches one file
echo old > only.log
echo new > *.log
while read -r l; do echo "$l"; done < only.log

#### exec redirection affects the rest of the script
exec > out.txt
echo line1
echo line2
exec >&2
while read -r l; do echo "r: $l"; done < out.txt

#### exec with stderr to a file
exec 2> e.txt
echo oops >&2
exec 2>&1
while read -r l; do echo "saw $l"; done < e.txt

#### file descriptor saved and restored
exec 5>&1
exec > f.txt
echo hidden
exec 1>&5 5>&-
echo shown
while read -r l; do echo "f: $l"; done < f.txt

#### redirect a function call
f() { echo in-f; echo err-f >&2; }
f > o.txt 2> e.txt
while read -r l; do echo "o: $l"; done < o.txt
while read -r l; do echo "e: $l"; done < e.txt

#### redirect inside a function body definition
f() { echo body; } > fout.txt
f
f
while read -r l; do echo "$l"; done < fout.txt

#### redirect to a directory fails
echo x > .
echo "status $?"

#### input from a directory fails on read
read x < .
echo "status $?"

#### redirection error skips the command
echo should-not-print < missing
echo "status $?"

#### redirection error on a compound command
{ echo inner; } < missing
echo "status $?"

#### here-string
read -r a b <<< "first second"
echo "$b $a"

#### here-string adds a newline
while read -r l; do echo "[$l]"; done <<< 'x'

#### here-string with expansion
v=world
read -r l <<< "hello $v"
echo "$l"

#### here-string with multiple lines
while read -r l; do echo "[$l]"; done <<< "$(printf 'a\nb')"

#### pipe stdout and stderr with |&
{ echo out; echo err >&2; } |& while read -r l; do echo "p: $l"; done

#### digits directly before redirect are a descriptor
echo hi 1>f.txt
echo 2 2>/dev/null
while read -r l; do echo "$l"; done < f.txt

#### spaced digit is an argument
echo 2 > f.txt
while read -r l; do echo "[$l]"; done < f.txt

#### redirect with braces-delimited variable descriptor
exec {fd}> named.txt
echo via-named >&$fd
exec {fd}>&-
while read -r l; do echo "$l"; done < named.txt

#### multiple output redirections: the last wins
echo x > a.txt > b.txt
test -s a.txt || echo a-empty
while read -r l; do echo "b: $l"; done < b.txt

#### redirecting stdin of read from a here-document in a loop
while read -r k v; do echo "$k=$v"; done <<EOF
a 1
b 2
EOF

#### write into a subdirectory
echo x > sub/f.txt
test -f sub/f.txt && echo ok
## seed: sub/

#### tilde in redirection target
echo tilde > ~/t.txt
while read -r l; do echo "$l"; done < t.txt

#### file descriptor dup to a missing descriptor in input
read x <&9
echo "status $?"
