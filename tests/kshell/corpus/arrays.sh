# Indexed and associative arrays: a=(x y), ${a[@]}, ${#a[@]}, ${!a[@]}, declare -A, +=.

#### array literal and elements
a=(one two three)
echo ${a[0]} ${a[2]}

#### whole array
a=(one two three)
echo "${a[@]}"

#### element count
a=(x y z)
echo ${#a[@]} ${#a[*]}

#### length of one element
a=(abc defgh)
echo ${#a[1]}

#### bare name is element zero
a=(first second)
echo $a ${a}

#### assigning an element
a=(1 2 3)
a[1]=two
echo "${a[@]}"

#### sparse array and indices
a[2]=x
a[5]=y
a[10]=z
echo "${!a[@]}" ${#a[@]}

#### append elements with +=
a=(1 2)
a+=(3 4)
echo "${a[@]}" ${#a[@]}

#### append to an element string
a=(ab cd)
a[0]+=XY
echo "${a[@]}"

#### quoted array expansion keeps elements with spaces
a=('a b' c)
for e in "${a[@]}"; do echo "<$e>"; done

#### star expansion joins with IFS
a=(a b c)
IFS=-
echo "${a[*]}"

#### negative index counts from the end
a=(1 2 3 4)
echo ${a[-1]} ${a[-2]}

#### index is arithmetic
a=(a b c d)
i=1
echo ${a[i+1]} ${a[$i]}

#### unset an element
a=(a b c)
unset 'a[1]'
echo "${a[@]}" ${#a[@]} "${!a[@]}"

#### unset the whole array
a=(a b)
unset a
echo "[${a[@]}]" ${#a[@]}

#### array slice
a=(a b c d e)
echo "${a[@]:1:3}"
echo "${a[@]:3}"

#### array element with default
a=()
echo "${a[0]:-empty}"

#### empty array expands to nothing
a=()
set -- "${a[@]}"
echo $#

#### array from command substitution splits
a=($(echo x y z))
echo ${#a[@]} ${a[2]}

#### array from a glob
a=(*.txt)
echo ${#a[@]} "${a[@]}"
## seed: b.txt a.txt c.md

#### array with explicit indices in the literal
a=([3]=c [1]=a)
echo "${!a[@]}" "${a[@]}"

#### array literal keeps counting after an explicit index
a=(x [5]=y z)
echo "${!a[@]}"

#### pattern operations apply to each element
a=(file1.txt file2.txt)
echo "${a[@]%.txt}" "${a[@]/file/f}"
echo "${a[@]^^}"

#### indexes of an array
a=(p q r)
for i in "${!a[@]}"; do echo "$i=${a[i]}"; done

#### associative array
declare -A m
m[one]=1
m[two]=2
echo ${m[one]} ${m[two]} ${#m[@]}

#### associative array literal
declare -A m=([red]=ff0000 [green]=00ff00)
echo ${m[green]}

#### associative key with spaces
declare -A m
m["a key"]=value
echo "${m["a key"]}" "${m[a key]}"

#### associative keys of a one-key array
declare -A m=([only]=1)
echo "${!m[@]}"

#### missing associative key is empty
declare -A m
echo "[${m[nokey]}]"

#### test whether a key is set
declare -A m=([k]=v)
[[ -v m[k] ]] && echo has-k
[[ -v m[z] ]] || echo no-z

#### unset an associative key
declare -A m=([a]=1 [b]=2)
unset 'm[a]'
echo "${!m[@]}"

#### associative append with +=
declare -A m=([a]=1)
m+=([b]=2)
m[a]+=0
echo ${m[a]} ${m[b]}

#### associative array key from a variable
declare -A m
k=dyn
m[$k]=val
echo ${m[dyn]}

#### subscript on a non-array variable
s=scalar
echo ${s[0]} "[${s[1]}]"

#### declare -a makes an indexed array
declare -a arr=(5 6)
declare -p arr

#### declare -p of an associative array
declare -A m=([k]=v)
declare -p m

#### declare -p of a scalar
s='a "q" b'
declare -p s

#### array in arithmetic context
a=(5 10)
echo $(( a[0] + a[1] ))
(( a[2] = 15 ))
echo ${a[2]}

#### copying an array
a=(x 'y z')
b=("${a[@]}")
echo ${#b[@]} "${b[1]}"

#### array element assignment with a negative index
a=(1 2 3)
a[-1]=last
echo "${a[@]}"

#### bad array subscript
a=(1 2)
a[-5]=x
echo "status $?"

#### associative array list assignment takes key value pairs
declare -A m
m=(a b c d)
echo "${#m[@]} ${m[a]} ${m[c]}"

#### read -a into an array
read -r -a parts <<< "one two three"
echo ${#parts[@]} ${parts[1]}

#### mapfile-free loop filling an array
a=()
while read -r l; do a+=("$l"); done <<EOF
first line
second line
EOF
echo ${#a[@]} "${a[1]}"

#### length of an element in an associative array
declare -A m=([k]=hello)
echo ${#m[k]}

#### nested expansion as an index
a=(a b c)
b=(2)
echo ${a[${b[0]}]}

#### array expansion in a for loop with indices
a=(x y)
for ((i = 0; i < ${#a[@]}; i++)); do echo "$i:${a[i]}"; done

#### unquoted array expansion splits elements
a=('a b' c)
set -- ${a[@]}
echo $#

#### array element that is an empty string counts
a=('' '')
echo ${#a[@]}

#### ${a[@]} in a string
a=(1 2)
echo "x${a[@]}y"

#### integer array with declare -ai
declare -ai n=(1+1 2*3)
echo "${n[@]}"

#### lowercase conversion on an associative array value
declare -A m=([k]=MiXeD)
echo ${m[k],,}
