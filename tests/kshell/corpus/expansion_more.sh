# More expansion corners, from the Oils spec tests: joining lists with an empty or
# non-whitespace IFS, empty fields, escaped parentheses and brackets in patterns, lists
# in [[ ]] and case patterns, brace expansion before parameters, tildes after braces,
# nounset in arithmetic, and `$` followed by a line continuation.

#### "$*" and friends join with nothing when IFS is empty
set -- a b
x=(p q)
pre_1=1 pre_2=2
IFS=
printf '<%s>' "$*" "${x[*]}" "${!pre_*}" "${!x[*]}"
echo

#### unquoted ${!prefix*} with IFS empty is one field
gLw_var1=1
gLw_var2=2
IFS=''
printf '<%s>' at ${!gLw_@}
echo
printf '<%s>' star ${!gLw_*}
echo

#### unquoted ${!a[*]} with IFS empty is one field joined by a space
IFS=''
a=(v1 v2 v3)
printf '<%s>' at ${!a[@]}
echo
printf '<%s>' star ${!a[*]}
echo

#### unquoted ${!a[*]} and ${!p*} with a non-blank IFS are joined, then split
a=(x y z)
pre_a=1 pre_b=2
IFS=-
printf '<%s>' ${!a[*]} "${!a[*]}" ${!pre_*} "${!pre_*}" ${!pre_@}
echo
IFS=_
printf '<%s>' ${!pre_*} ${!pre_@} "${!pre_@}"
echo

#### "${*:-x}" tests the IFS-joined string
set -- "" ""
IFS=
echo "argv=${*-minus}"
echo "argv=${*+plus}"
echo "argv=${*:-minus}"
echo "argv=${*:+plus}"
IFS=x
echo "argv=${*:-minus}" "argv=${*:+plus}"

#### ${a[@]:-x} and ${a[*]:-x} with empty elements and IFS empty
t() {
  echo "a[@]: '${a[@]-no-colon}' '${a[@]:-with-colon}'"
  echo "a[*]: '${a[*]-no-colon}' '${a[*]:-with-colon}'"
}
a=()
t
a=("")
t
a=("" "")
t
IFS=
t

#### unquoted ${*:-x} and ${*:+x} test the elements, not the joined string
set -- "" ""
IFS=
printf '<%s>' ${*:-m} ${*:+p} x
echo
set -- ""
printf '<%s>' ${*:-m} ${*:+p} x
echo

#### indirect ${!ref:-x} to a[@] or a[*] tests only for elements when quoted
t() {
  ref='a[@]'
  echo "ref=a[@]: '${!ref-no-colon}' '${!ref:-with-colon}'"
  ref='a[*]'
  echo "ref=a[*]: '${!ref-no-colon}' '${!ref:-with-colon}'"
}
a=()
t
a=("")
t
a=("" "")
t
IFS=
t

#### IFS=zx keeps the empty element of $@ and $*
set -- one '' two
IFS=zx
printf '<%s>' $*
echo
printf '<%s>' "$*"
echo
printf '<%s>' $@
echo
printf '<%s>' "$@"
echo

#### IFS=x and five empty parameters around text
set -- "" "" "" "" ""
printf '<%s>' =$@=
echo
printf '<%s>' =$*=
echo
IFS=
printf '<%s>' =$@=
echo
IFS=x
printf '<%s>' =$@=
echo
printf '<%s>' =$*=
echo

#### IFS=x: splitting $* again loses one empty field each time
IFS=x
set -- "" "" "" "" ""
echo $#
set -- $*
echo $#
set -- $*
echo $#
set -- $*
echo $#
set -- $*
echo $#

#### IFS=x: empty fields from splitting a value
IFS=x
for v in xxaxx x xx ax xa axxb; do
  set -- $v
  printf '%s:%s ' "$v" "$#"
done
echo
v=x
printf '<%s>' $v""
echo
printf '<%s>' ""$v
echo

#### IFS empty: each non-empty element of an unquoted list is one field
set -- 'a b' '' c
IFS=
printf '<%s>' $@
echo
printf '<%s>' $*
echo
a=('' x '')
printf '<%s>' -${a[@]}-
echo

#### an empty quoted string after a blank delimiter makes a field
IFS=' '
v=' '
printf '<%s>' $v"" ""$v $v$v =$v$v=
echo

#### a delimiter can span two expansions
IFS=' x'
b='xa'
w='q '
printf '<%s>' $w$b
echo
w='qx'
printf '<%s>' $w$b
echo
w='qx '
printf '<%s>' $w$b
echo

#### a leading whitespace-then-x delimiter makes an empty field unless the word has $@
IFS=' x'
v=' xa'
set --
printf '<%s>' $v
echo
printf '<%s>' $v$@
echo
printf '<%s>' $v"$*"
echo
a=()
printf '<%s>' $v${a[@]}
echo
printf '<%s>' "$@"$v
echo

#### IFS=x: an element ending in the separator gives an empty field before the next
IFS=x
set -- ax b
printf '<%s>' $@
echo
set -- xa '' b x
printf '<%s>' $@
echo
a=('' '' q)
printf '<%s>' =${a[@]}=
echo

#### IFS with blank and x: elements joined by the blank
IFS=' x'
set -- '' x a
printf '<%s>' $@
echo
set -- ' x'
echo $#
set -- $@
echo $#

#### read -a splits with the same rules
for ifs in x ' x' ': '; do
  IFS=$ifs read -r -a arr <<< 'xxa:b::c x '
  printf '<%s>' "${arr[@]}"
  echo
done

#### escaped parentheses in a strip pattern
x='foo()'
echo 1 ${x%*\(\)}
echo 2 ${x%%*\(\)}
echo 3 ${x#*\(\)}
echo 4 ${x##*\(\)}
y='a(b)c'
echo ${y/\(b\)/-} ${y/'(b)'/+}

#### escaped parentheses in a case pattern, with and without extglob
s='foo()'
case $s in
  *\(\)) echo match ;;
esac
shopt -s extglob
case $s in
  *(foo|bar)'()') echo extglob ;;
esac
case $s in
  *\(\)) echo match2 ;;
esac

#### escaped parentheses in [[ == ]]
if [[ 'foo()' == *\(\) ]]; then echo match1; fi
if [[ 'foo()' == *'()' ]]; then echo match2; fi
if [[ 'foo()' == '*()' ]]; then echo match3; fi
shopt -s extglob
if [[ 'foo()' == *\(\) ]]; then echo match1; fi
if [[ 'foo()' == *'()' ]]; then echo match2; fi

#### a quoted bar inside an extended pattern is literal
shopt -s extglob
for s in 'a|b' a b; do
  case $s in
    @(a'|'b)) echo "$s: one" ;;
    *) echo "$s: other" ;;
  esac
done

#### a backslash from a variable escapes in [[ ]], case and ${x%p} patterns
p='*\(\)'
[[ 'foo()' == $p ]] && echo dm
case 'foo()' in $p) echo cm ;; esac
x='foo()'
echo "${x%$p}|" "${x%"$p"}|"
q='a\*'
[[ 'a*' == $q ]] && echo star1
[[ 'ab' == $q ]] || echo star2

#### an escaped dash in a bracket is literal
## seed: d/foo.- d/c.C d/b.B
echo d/*.[C-D] d/*.[C\-D]
echo d/*.[B"-"D]

#### quoted ! and ^ at the start of a bracket are literal
for s in '!' '^' a b; do
  case $s in
    ["!"a]) echo "$s: bang-or-a" ;;
    [\^b]) echo "$s: caret-or-b" ;;
    *) echo "$s: none" ;;
  esac
done

#### a backslash from an unquoted variable stays when the glob matches nothing
## seed: x/test.a.txt x/test.q.txt
v='*\*.txt'
printf '<%s>\n' x/$v
v='*\a.txt'
printf '<%s>\n' x/$v
v='*\z.txt'
printf '<%s>\n' x/unmatching.$v

#### [[ ]] joins "$@" and "${a[@]}" with spaces
a=('1 3' 5)
b=(1 2 3)
set -- 1 '3 5'
[[ "$@" = "${a[@]}" ]] && echo true1
[[ "$@" = "${b[@]}" ]] || echo false2
[[ '1 3 5' = "${a[@]}" ]] && echo true3
[[ '1 3 4' = "${a[@]}" ]] || echo false4
[[ '1 3 5' == ${a[@]} ]] && echo true5

#### lists in a pattern: @ joins with a space, * with the first IFS character
a=('1 3' 5)
for IFS in x ' ' ''; do
  for s in '1 3 5' '1 3x5' '1 35'; do
    [[ $s = ${a[@]} ]] && echo "d2 [$IFS] $s"
    [[ $s = "${a[*]}" ]] && echo "d3 [$IFS] $s"
    [[ $s = ${a[*]} ]] && echo "d4 [$IFS] $s"
    [[ ${a[*]} = $s ]] && echo "l4 [$IFS] $s"
    case $s in ${a[@]}) echo "c2 [$IFS] $s" ;; esac
    case $s in ${a[*]}) echo "c4 [$IFS] $s" ;; esac
  done
done

#### tilde expansion in the =~ operand
HOME=foo
[[ ~ =~ $HOME ]]
echo regex=$?
[[ $HOME =~ ~ ]]
echo regex=$?
HOME='^a$'
[[ ~ =~ $HOME ]]
echo regex=$?
[[ $HOME =~ ~ ]]
echo regex=$?
HOME=/h
[[ /h/a =~ ~/a ]]
echo regex=$?

#### braces expand before parameters: {$a,b}_c is $a_c
a=A
a_c=Q
echo {$a,b}_{c,d}
echo {_$a,b}_{c,d}
x=1
printf '<%s>' {$x,y}$x {$x,y}{a,b} ${x}{a,b}
echo

#### a tilde prefix made by brace expansion
HOME=/home/bob
echo ~{/src,root}
for x in ~{/src,root}; do
  echo -- $x
done
a=(~{/src,root})
for y in "${a[@]}"; do
  echo "== $y"
done
echo ~{a} ~/{a,b} x~{a,b}

#### a character range across the cases: backslash and backquote are read again
printf '<%s>' {Z..a}
echo
printf '<%s>' x{Z..a}
echo

#### {z..A} makes a backquote that never closes: the line is dropped
echo -{z..A}-; echo same line
echo next line
echo -{z..A..2}-
## status: 1

#### $((undef[0])) under set -u is an unbound variable
set -u
a=()
x=1
echo $(( a[0] )) $(( x[1] )) $(( a[2]=4 ))
echo UNSET $(( undef[0] ))
echo status=$?
## status: 127

#### nounset in let and an associative array's missing key
set -u
declare -A m=([k]=1)
echo $(( m[k] + m[zz] ))
let 'q = undef[0] + 1'
echo "st=$?"
## status: 127

#### $ then a line continuation is still an expansion
echo $\
?
echo $\
{HOME} "$\
?" $\
(echo hi)
echo $\

