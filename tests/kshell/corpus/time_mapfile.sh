# The `time` reserved word (TIMEFORMAT, time -p, where its report goes, what it times) and
# the mapfile / readarray builtins (every option, errors, input from here-strings, files,
# pipes and process substitutions). Timings vary: the cases print them with %0R, fixed text,
# or digits masked by sed.

#### time reports with TIMEFORMAT on standard error
TIMEFORMAT='took %0R seconds'
time true
echo "status $?"

#### time times a whole pipeline and keeps its output
TIMEFORMAT='[%0R]'
time echo hello | while read -r w; do echo "got $w"; done

#### time returns the pipeline's status
TIMEFORMAT=
time false
echo "false: $?"
time true | false
echo "pipe: $?"
time (exit 7)
echo "subshell: $?"

#### time with ! in either order
TIMEFORMAT=T
time ! false
echo "a=$?"
! time false
echo "b=$?"
time ! true
echo "c=$?"

#### time -p prints POSIX format
{ time -p true; } 2>&1 | sed 's/[0-9]/N/g'
## tools: sed

#### time without TIMEFORMAT prints bash's default format
unset TIMEFORMAT
{ time true; } 2>&1 | sed 's/[0-9]/N/g'
## tools: sed

#### time alone times nothing
{ time; } 2>&1 | sed 's/[0-9]/N/g'
{ time -p; } 2>&1 | sed 's/[0-9]/N/g'
echo "status $?"
## tools: sed

#### time -- is time -p
{ time -- true; } 2>&1 | sed 's/[0-9]/N/g'
{ time -p -- true; } 2>&1 | sed 's/[0-9]/N/g'
## tools: sed

#### empty TIMEFORMAT prints nothing
TIMEFORMAT=''
time echo quiet
echo "status $?"

#### TIMEFORMAT escapes and precisions
TIMEFORMAT='%% %0R %0lR %0U %0lS a%'
time true
TIMEFORMAT='[%R] [%3R] [%4R] [%lR] [%2lU]'
{ time true; } 2>&1 | sed 's/[0-9]/N/g'
## tools: sed

#### TIMEFORMAT %P is a percentage with two decimals
TIMEFORMAT='cpu %P%%'
{ time true; } 2>&1 | sed -E 's/[0-9]+\.[0-9][0-9]/P/'
## tools: sed

#### an invalid TIMEFORMAT character prints an error and no report
TIMEFORMAT='x%Qy'
time true
echo "status $?"

#### the command's redirections do not take the report
TIMEFORMAT=REPORT
time echo out 2>/dev/null
time echo err >&2 2>/dev/null
echo done

#### redirecting a group that contains time takes the report
TIMEFORMAT=REPORT
{ time echo inside; } 2>report.txt
echo "file: $(< report.txt)"

#### time applies to the first pipeline of an and-list
TIMEFORMAT=T
{ time true && echo after; } 2>&1
{ time false || echo recovered; } 2>&1

#### time inside if, subshell and a list
TIMEFORMAT=T
if time false; then echo yes; else echo no; fi
(time true) && time false || echo failed

#### time runs in the current shell
TIMEFORMAT=
time x=5
time cd /
echo "x=$x pwd=$PWD"

#### nested time prints two reports
TIMEFORMAT='[%0R]'
time { time true; echo body; }

#### time break still reports
TIMEFORMAT=T
for i in 1 2 3; do
  time break
done 2>&1
echo "i=$i"

#### time return does not report
TIMEFORMAT=T
f() { time return 3; }
f
echo "f=$?"

#### time exit reports, then exits
TIMEFORMAT=T
time exit 3
echo not reached
## status: 3

#### time with set -e reports, then exits
TIMEFORMAT=T
set -e
time false
echo not reached
## status: 1

#### time with pipefail and PIPESTATUS
set -o pipefail
TIMEFORMAT=
time false | true
echo "$? ${PIPESTATUS[*]}"

#### time in a function prints back as bash does
f() { time -p ! false; }
declare -f f
g() { time; }
type g
h() { time -- echo x | read -r y; }
declare -f h

#### time after a pipe is an ordinary command name
echo x | time true
echo "status $?"

#### time -p then -p is a command
TIMEFORMAT=unused
{ time -p -p true; } 2>&1 | sed 's/[0-9]/N/g'
## tools: sed

#### time before a control operator is a syntax error
time &
## status: 2

#### time of a background job reports when it ends
TIMEFORMAT=job
time true &
wait
echo waited

#### type says time is a keyword
type time

#### mapfile reads lines into MAPFILE
mapfile <<< $'a\nb'
declare -p MAPFILE

#### mapfile -t removes the newlines
mapfile -t <<< $'one\ntwo\n\nfour'
declare -p MAPFILE

#### readarray is mapfile
readarray -t lines < list.txt
echo "${#lines[@]} [${lines[1]}] [${lines[2]}]"
## file: list.txt
first
second line
  third  
## end

#### mapfile from a pipe into a group
printf 'a\nb\n' | { mapfile -t x; echo ${#x[@]}; }
printf 'c\n' | mapfile -t y
echo "outside: ${#y[@]}"

#### mapfile from a process substitution
mapfile -t x < <(printf '%s\n' one two three)
echo "${#x[@]} ${x[2]}"

#### mapfile -d splits on another delimiter
mapfile -t -d , parts <<< 'a,b,,c'
declare -p parts
mapfile -d , parts <<< 'x,y'
declare -p parts

#### mapfile -d with several characters uses the first
mapfile -t -d ',;' parts <<< 'a,b;c,d'
declare -p parts

#### mapfile -d '' reads NUL-terminated records
mapfile -d '' z < <(printf 'a\0b c\0last')
declare -p z
mapfile -t -d '' z < <(printf 'x\0y\0')
declare -p z

#### a NUL byte ends a line's value
mapfile -t z < <(printf 'a\0b\nc\n')
declare -p z

#### mapfile -n reads a count of lines
mapfile -t -n 2 x < <(printf '%s\n' 1 2 3 4 5)
declare -p x
mapfile -t -n 0 x < <(printf '%s\n' 1 2 3)
declare -p x

#### mapfile -s skips lines
mapfile -t -s 2 x < <(printf '%s\n' 1 2 3 4 5)
declare -p x
mapfile -t -s 9 x < <(printf '%s\n' 1 2)
declare -p x

#### mapfile -O appends at an origin without clearing
x=(a b c d)
mapfile -t -O 2 x <<< $'X\nY\nZ'
declare -p x
mapfile -t -s 1 -n 2 -O 10 x < <(printf '%s\n' 1 2 3 4)
declare -p x

#### mapfile without -O clears the array
x=(a b c d)
mapfile -t x <<< q
declare -p x

#### mapfile -O keeps a scalar as element 0
s=scalar
mapfile -t -O 1 s <<< x
declare -p s

#### mapfile -u reads another descriptor
mapfile -t -u 3 x 3< list.txt
echo "${x[*]}"
exec 4<<< $'p\nq'
mapfile -t -u4 y
echo "${y[*]}"
## file: list.txt
a
b
## end

#### mapfile -C calls back with each index and line
mapfile -t -C 'echo cb' -c 1 q < <(printf '%s\n' a 'b c' "it's")
declare -p q

#### mapfile callback every quantum lines sees the array so far
show() { echo "at $1 [$2] have ${#q[@]}"; }
mapfile -t -C show -c 2 q < <(printf '%s\n' a b c d e)
declare -p q

#### mapfile callback without -t gets the newline
mapfile -C 'printf "<%s>"' -c 1 q <<< x
echo
mapfile -C 'echo never' q <<< x
echo "status $?"

#### mapfile with no input makes an empty array
mapfile x < /dev/null
echo "status $? count ${#x[@]}"
declare -p x
mapfile y <&-
echo "status $?"
declare -p y

#### mapfile leaves the rest of the input to the next reader
{ mapfile -t -n 1 a; read -r b; mapfile -t c; } <<< $'1\n2\n3\n4'
echo "[${a[*]}] [$b] [${c[*]}]"

#### mapfile keeps the last line without a newline and carriage returns
mapfile -t z < <(printf 'a\r\nb')
declare -p z

#### mapfile invalid numbers
mapfile -n x
echo "n: $?"
mapfile -n -1
echo "n-: $?"
mapfile -s 1x
echo "s: $?"
mapfile -O x
echo "O: $?"
mapfile -c 0
echo "c: $?"
mapfile -n ' 2' < /dev/null
echo "spaces: $?"

#### mapfile invalid descriptors
mapfile -u x
echo "u: $?"
mapfile -u 7
echo "closed: $?"
mapfile -u -1
echo "negative: $?"

#### mapfile invalid option and missing argument
mapfile -x
echo "x: $?"
readarray -q
echo "q: $?"
mapfile -n
echo "n: $?"
mapfile -C
echo "C: $?"

#### mapfile invalid array names
mapfile 1a <<< x
echo "status $?"
mapfile 'a[1]' <<< x
echo "status $?"

#### mapfile into a readonly array fails
readonly ro=(1 2)
mapfile ro <<< x
echo "status $?"
declare -p ro

#### mapfile into an associative array fails
declare -A as=([k]=v)
mapfile as <<< x
echo "status $?"
declare -p as

#### mapfile in a function fills a local array
f() { local -a arr; mapfile -t arr <<< "inside"; declare -p arr; }
f
declare -p arr 2>/dev/null || echo "no global arr"

#### mapfile through a name reference
declare -n r=target
mapfile -t r <<< $'n1\nn2'
declare -p target

#### mapfile into an integer array evaluates
declare -ai nums
mapfile -t nums < <(printf '1+1\n3*3\n')
declare -p nums

#### mapfile ignores extra names and takes --
mapfile -t -- m extra <<< dd
declare -p m
declare -p extra 2>/dev/null || echo "no extra"

#### mapfile clustered options
mapfile -tn1 m <<< $'a\nb'
declare -p m
mapfile -tO1 m <<< z
declare -p m

#### mapfile lines feed a loop
mapfile -t files < <(printf '%s\n' 'a b.txt' c.txt)
for f in "${files[@]}"; do echo "<$f>"; done
printf '%s\n' "${files[@]/%.txt/.md}"

#### mapfile status when the callback fails
mapfile -t -C 'false' -c 1 x <<< $'a\nb'
echo "status $? ${#x[@]}"
