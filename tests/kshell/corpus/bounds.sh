# Bounds: K's hard limits (loop iterations, wall time, recursion depth, brace words, output bytes,
# variable size). Bash has none of them, so every case here is a deliberate difference: `## k-limits`
# lowers K's limit for the case (kshell.limits.Limits fields) so that a small script hits it; bash
# runs the same script to its end, or is skipped where the script would never end.

#### loop iteration limit stops a long while loop
i=0
while [ $i -lt 3000 ]; do i=$((i + 1)); done
echo "i=$i"
## k-limits: loop_iterations=1000
## k-differs: K bounds loop iterations per command (a limit bash does not have)
## k-stdout:
## end
## k-stderr:
.*loop iteration limit exceeded.*
## end
## k-status: 1

#### loop iteration limit stops an endless loop
while :; do :; done
echo never
## bash: skip the loop never ends in bash
## k-limits: loop_iterations=1000
## k-differs: K bounds loop iterations per command; bash would spin forever
## k-stdout:
## end
## k-stderr:
.*loop iteration limit exceeded.*
## end
## k-status: 1

#### loop iteration limit counts nested loops
for a in {1..40}; do for b in {1..40}; do :; done; done
echo done
## k-limits: loop_iterations=1000
## k-differs: K counts every iteration of every loop in one command
## k-stdout:
## end
## k-stderr:
.*loop iteration limit exceeded.*
## end
## k-status: 1

#### loops under the limit run normally
for a in {1..10}; do for b in {1..10}; do :; done; done
echo done
## k-limits: loop_iterations=1000

#### endless C-style for loop is bounded
for ((;;)); do :; done
## bash: skip the loop never ends in bash
## k-limits: loop_iterations=500
## k-differs: K bounds loop iterations per command; bash would spin forever
## k-stdout:
## end
## k-stderr:
.*loop iteration limit exceeded.*
## end
## k-status: 1

#### endless until loop writing output is bounded
until false; do echo y; done
## bash: skip the loop never ends in bash
## k-limits: loop_iterations=5
## k-differs: K bounds loop iterations per command; bash would spin forever
## k-stdout:
y
y
y
y
y
## end
## k-stderr:
.*loop iteration limit exceeded.*
## end
## k-status: 1

#### wall time limit stops a busy loop
while :; do :; done
## bash: skip the loop never ends in bash
## k-limits: wall_time=0.3
## k-differs: K bounds the wall time of each command; bash would spin forever
## k-stdout:
## end
## k-stderr:
.*(time|wall).*
## end
## k-status: 1

#### unbounded recursion is stopped by the depth limit
f() { f; }
f
echo never
## bash: skip bash recurses until it runs out of stack and crashes
## k-limits: recursion_depth=100
## k-differs: K bounds function recursion depth; bash has no default bound
## k-stdout:
## end
## k-stderr:
.*(recursion|nesting|depth).*
## end
## k-status: 1

#### recursion deeper than the limit fails in K
f() { if [ $1 -gt 0 ]; then f $(($1 - 1)); else echo bottom; fi; }
f 150
## k-limits: recursion_depth=100
## k-differs: K bounds function recursion depth; bash has no default bound
## k-stdout:
## end
## k-stderr:
.*(recursion|nesting|depth).*
## end
## k-status: 1

#### recursion within the limit works
f() { if [ $1 -gt 0 ]; then f $(($1 - 1)); else echo bottom; fi; }
f 50
## k-limits: recursion_depth=100

#### FUNCNEST bounds recursion in bash too
FUNCNEST=50
f() { f; }
f
echo "status $?"

#### brace expansion word limit
echo {1..5000} > /dev/null
echo after
## k-limits: brace_words=1000
## k-differs: K bounds the words one brace expansion may produce
## k-stdout:
## end
## k-stderr:
.*brace expansion.*
## end
## k-status: 1

#### brace expansion cross product word limit
echo {1..50}{1..50} > /dev/null
## k-limits: brace_words=1000
## k-differs: K bounds the words one brace expansion may produce
## k-stdout:
## end
## k-stderr:
.*brace expansion.*
## end
## k-status: 1

#### brace expansion under the limit
set -- {1..500}
echo $#
## k-limits: brace_words=1000

#### output bytes limit per command
for i in {1..300}; do echo 012345678; done
## k-limits: output_bytes=100
## k-differs: K bounds the bytes one command may write; it writes the first 100 and fails
## k-stdout:
012345678
012345678
012345678
012345678
012345678
012345678
012345678
012345678
012345678
012345678
## end
## k-stderr:
.*output.*limit.*
## end
## k-status: 1

#### variable size limit
s=x
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do s=$s$s; done
echo ${#s}
## k-limits: variable_bytes=1000
## k-differs: K bounds the size of one variable's value
## k-stdout:
## end
## k-stderr:
.*variable size limit.*
## end
## k-status: 1

#### bounded command substitution output
x=$(for i in {1..300}; do echo 0123456789; done)
echo ${#x}
## k-limits: output_bytes=1000
## k-differs: K bounds the bytes one command may write, inside $( ) too
## k-stdout:
## end
## k-stderr:
.*limit.*
## end
## k-status: 1
