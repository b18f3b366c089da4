# The directory stack: pushd, popd, dirs (-c -l -p -v +N -N) and DIRSTACK, as bash's pushd.def.

#### pushd pushes and prints the stack with ~
pushd a
pushd ../b
pushd ../c
dirs
dirs -l
## seed: a/ b/ c/

#### dirs -v -p and an index from either end
pushd a >/dev/null; pushd ../b >/dev/null
dirs -v
dirs -p
dirs -l -p
dirs +1
dirs -0
dirs -v -0
dirs -v -l +2
dirs +1 +2
dirs -- -1
## seed: a/ b/

#### pushd +N rotates the stack and changes directory
pushd a >/dev/null; pushd ../b >/dev/null; pushd ../c >/dev/null
pushd +1
pwd
pushd -0
pwd
pushd +0
## seed: a/ b/ c/

#### pushd -n adds or rotates without changing directory
pushd -n a
pushd -n /x
pwd
pushd -n +1
dirs
pushd -n
echo $?
## seed: a/

#### pushd with no argument swaps the top two
pushd a >/dev/null
pushd
pwd
pushd
pwd
## seed: a/

#### popd removes entries by index, -n without cd
pushd a >/dev/null; pushd ../b >/dev/null; pushd ../c >/dev/null
popd -n
popd +1
pwd
popd
pwd
popd
echo $?
## seed: a/ b/ c/

#### popd -N counts from the bottom
pushd -n /p >/dev/null; pushd -n /q >/dev/null; pushd -n /r >/dev/null
popd -0
popd -1
popd +1 -n
## seed: a/

#### DIRSTACK holds the whole stack
pushd a >/dev/null; pushd -n /x >/dev/null
echo "${#DIRSTACK[@]} ${DIRSTACK[0]} ${DIRSTACK[1]} ${DIRSTACK[2]} $DIRSTACK"
echo "${DIRSTACK[@]}"
dirs -c
echo "${#DIRSTACK[@]}"
## seed: a/

#### dirs -c clears, and errors of an empty stack
dirs -c
dirs
popd; echo $?
pushd; echo $?
dirs -5; echo $?
pushd +2; echo $?
popd +3; echo $?
dirs +0

#### index and option errors
pushd -n /x >/dev/null
dirs +9; echo $?
pushd +5; echo $?
popd -4; echo $?
dirs -x; echo $?
dirs -lv; echo $?
dirs a; echo $?
pushd -z; echo $?
popd +x; echo $?
popd x; echo $?

#### pushd and popd report cd's errors under their own name
pushd nosuch; echo $?
pushd a b; echo $?
pushd -n /gone >/dev/null
popd; echo $?
dirs
pushd -n /gone2 >/dev/null
pushd; echo $?
dirs
## seed: a/ b/

#### the stack is a subshell's own
pushd -n /x >/dev/null
( pushd -n /y >/dev/null; dirs )
dirs
echo "$(dirs)"
