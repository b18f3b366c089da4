# [[ =~ ]] against bash 5.2 and glibc: the ERE bash builds from quoted and unquoted parts,
# glibc's errors (status 2), leftmost-longest matches, newlines, GNU escapes, locales.

#### invalid EREs are status 2 and leave BASH_REMATCH as it was
t() { if [[ $1 =~ $2 ]]; then s=0; else s=$?; fi; printf "%s %q %q :" "$s" "$1" "$2"; printf " %q" "${BASH_REMATCH[@]}"; echo; }
t 'a{' 'a{'
t 'a' '['
t 'a' 'a{1'
t 'a-b' 'a[a-]b'
t 'x' '[[:alpha:]'
t 'x' '[[:foo:]]'
t 'a' '[b-a]'
t 'a' 'a)'
t 'a)' 'a)'
t 'a' '(a'
t 'é' '^.$'
t 'x' '^*x'
t 'ab' 'a{1}b'
t a '*a'
t '*a' '*a'
t 'a' '+a'
t '+a' '+a'
t '?a' '?a'
t 'a' 'x|*a'
t 'a' '(+a)'
t 'a' '^+a'
t 'a' 'a$*'
t 'a' 'a{,}'
t 'a' 'a{}'

#### intervals, repeated repetitions and empty alternatives
t() { if [[ $1 =~ $2 ]]; then s=0; else s=$?; fi; printf "%s %q %q :" "$s" "$1" "$2"; printf " %q" "${BASH_REMATCH[@]}"; echo; }
t 'a{1' 'a{1'
t 'a{,2}' 'a{,2}'
t 'a' '+a'
t 'aa' 'a**'
t 'a' '()'
t 'ab' 'a||b'
t 'a' '|a'
t 'a|b' 'a\|b'
t 'a' 'a{1}{2}'
t 'a' 'a{2,1}'
t 'ab' '(a)(b)?(c)?'
t 'aa' '^a{0}$'
t 'ab' 'a\b'
t '' '^$'
t 'x' 'x{0,}'

#### the longest match at the leftmost position, and its groups
t() { if [[ $1 =~ $2 ]]; then s=0; else s=$?; fi; printf "%s %q %q :" "$s" "$1" "$2"; printf " %q" "${BASH_REMATCH[@]}"; echo; }
t 'a' 'a|'
t 'ab' '(a|ab)'
t 'abcd' '(a|ab)(c|bcd)(d*)'
t 'xyz' 'x(y|yz)?'
t 'aaa' 'a+?'
t 'aaa' '(a+?)'
t abcd '(a|ab)(c|bcd)(d*)'
t ab '(a|ab)'
t xyz 'x(y|yz)?'
t aab '(a*)(ab)*'
t ab '(a|ab)(b*)'
t abab '(a|ab)+'
t abc '(ab|a)(bc|c)?'
t ab '((a)|b)+'

#### a newline is an ordinary character: . and [^x] match it, $ is the end only
t() { if [[ $1 =~ $2 ]]; then s=0; else s=$?; fi; printf "%s %q %q :" "$s" "$1" "$2"; printf " %q" "${BASH_REMATCH[@]}"; echo; }
t 'aab' 'a*?b'
t $'a\nb' 'a.b'
t $'a\n' 'a$'
t $'a\nb' 'a[^x]b'

#### GNU escapes and back-references from a variable
t() { if [[ $1 =~ $2 ]]; then s=0; else s=$?; fi; printf "%s %q %q :" "$s" "$1" "$2"; printf " %q" "${BASH_REMATCH[@]}"; echo; }
t 'a' 'a{ 1}'
t 'a' '{1}a'
t 'a' 'x|{1}a'
t 'a' '\a'
t 'aa' '(a)\1'
t 'aa' '\1(a)'
t 'aa' '(a\1)'
t 'ab' 'a\>b'
t 'a b' 'a\>'
t 'a b' '\<b'
t 'ab' '\Ba'
t 'ab' 'a\B'
t 'a' '\`a'
t 'ab' "b\\'"
t 'a_1' '\w+'
t 'a b' '\W'
t 'a b' '\s'
t 'a b' '\S+'
t 'n' '\n'
t 'tab' '\t'
t 'a.b' 'a\.b'
t 'ab' 'a\|b'
t 'a|b' 'a\|b'
t 'a' '\(a\)'
t '(a)' '\(a\)'
t 'a' 'a\{1\}'
t 'a' '(a)\2'
t 'a]' 'a\]'
t 'a}' 'a\}'

#### bracket expressions: classes, collating symbols, equivalence classes, ranges
t() { if [[ $1 =~ $2 ]]; then s=0; else s=$?; fi; printf "%s %q %q :" "$s" "$1" "$2"; printf " %q" "${BASH_REMATCH[@]}"; echo; }
t 'a_b' '\w+'
t 'a]b' 'a[]]b'
t 'a\b' 'a[\]b'
t 'aB' '[[:upper:]]'
t 'b' '(a)?b'
t 'a.' '[.]'
t 'a' '[[.a.]]'
t 'a' '[[=a=]]'
t 'A' '[[:lower:]]'
shopt -s nocasematch; t 'A' '[[:lower:]]'; t 'A' 'a'; shopt -u nocasematch
t 'a' '[[.hyphen.]]'
t '-' '[[.hyphen.]]'
t '-' '[[.-.]]'
t 'a' '[[.ab.]]'
t 'a' '[[=a'
t 'a' '[a-[.z.]]'
t 'x' '[[:alpha:]-z]'
t '-' '[a-c-e]'
t 'a' '[]-a]'
t 'B' '[a-z]'

#### quoted parts are literal outside brackets and copied as they are inside
c() { local s; eval "[[ \$1 =~ $2 ]]"; s=$?; printf "%s %q %s\n" "$s" "$1" "$2"; }
c '\' '["x"]'
c 'x' '["x"]'
c '\' '[".^"]'
c '^' '[".^"]'
c 'b' '["^"a]'
c 'a' '["^"a]'
c '^' '["^"a]'
c '\' '["^"a]'
c '-' '[a"-"c]'
c 'b' '[a"-"c]'
c ']' '[a"]"]'
c 'a]' '[a"]"]'
c 'a' '"["a]'
c '[a]' '"["a]'
c '[a' '"["a]'
c 'x' '["]"x]'
c ']x' '["]"x]'
c 'x' '[x"]"]'
c '\' "[a'b']"
c 'b' "[a'b']"
c 'a' '[[:alpha:]]'
c 'a' '["[:alpha:]"]'
c ':' '["[:alpha:]"]'
c '\' '["[:alpha:]"]'
c 'a' '[\a]'
c '\' '[\a]'
c '\' '[\\]'

#### a C locale matches bytes, a UTF-8 one characters
t() { if [[ $1 =~ $2 ]]; then s=0; else s=$?; fi; printf "%s %q %q :" "$s" "$1" "$2"; printf " %q" "${BASH_REMATCH[@]}"; echo; }
t '\' '[\]'
t 'é' '^.$'
t 'é' '^..$'
t 'é' '^[^a]$'
t 'É' '[[:upper:]]'
t 'é' '\w'
LC_ALL=C.UTF-8
t '\' '[\]'
t 'é' '^.$'
t 'é' '^..$'
t 'é' '^[^a]$'
t 'É' '[[:upper:]]'
t 'é' '\w'

#### a regex in a variable: unquoted it is an ERE, quoted a literal text; mixed parts
re='^([a-z]+)-([0-9]+)$'; [[ abc-12 =~ $re ]]; echo "$? ${BASH_REMATCH[*]}"
[[ abc-12 =~ "$re" ]]; echo "$? ${#BASH_REMATCH[@]}"
re='a.c'; [[ abc =~ $re ]]; echo $?; [[ abc =~ "$re" ]]; echo $?; [[ a.c =~ "$re" ]]; echo $?
[[ 'a.cx' =~ "a."c ]]; echo $?; [[ abc =~ "a."c ]]; echo $?
[[ 'x (y)' =~ ^x\ \((.)\)$ ]]; echo "$? ${BASH_REMATCH[1]}"
[[ 'foo|bar' =~ foo\|bar ]]; echo "$? $BASH_REMATCH"; [[ bar =~ foo|bar ]]; echo "$? $BASH_REMATCH"
[[ 2024-01-15 =~ ^([0-9]{4})-([0-9]{2})-([0-9]{2})$ ]] && echo "${BASH_REMATCH[@]:1}"

#### ^ and $ at a newline the match itself takes (glibc's DFA), never at its start or end
t() { if [[ $1 =~ $2 ]]; then s=0; else s=$?; fi; printf "%s %q %q :" "$s" "$1" "$2"; printf " %q" "${BASH_REMATCH[@]}"; echo; }
t $'b\na' 'b.^a'
t $'b\na' 'b$.a'
t $'xb\na' 'b[^x]^a'
t $'b\na' '^a'
t $'b\na' 'b$'
t $'b\na' '(^|x)a'
t $'b\nab' 'a(^|b)'
t $'a\nb\n' '.^b$.'
t $'ab\n\ncd' 'b.$.^c'
t $'x\n' 'x$|x.'
t $'q\nb\na' '.^(a)'
t $'q\nb\na' '(b).^a{1,2}'

#### with a group, a $ before a taken newline fails the match or its start (glibc's second pass)
t() { if [[ $1 =~ $2 ]]; then s=0; else s=$?; fi; printf "%s %q %q :" "$s" "$1" "$2"; printf " %q" "${BASH_REMATCH[@]}"; echo; }
t $'a\nb\n' 'b$.'
t $'a\nb\n' '(b$.)'
t $'a\nb\n' '(.$)+'
t $'b\n' '(.$)(.$)'
t $'b\nc' '(.$)+c'
t $'b\nx' '(b$.|b)'
t $'b\nx' 'b$.|b'
t $'x\nb\nc' 'x|(b)$.c'
t $'b\nb\n' '(b)$.\1'
t $'b\n0' '^\<(a*)+'

#### a group repeated is not repeated once more on nothing; back-references see their own branch
t() { if [[ $1 =~ $2 ]]; then s=0; else s=$?; fi; printf "%s %q %q :" "$s" "$1" "$2"; printf " %q" "${BASH_REMATCH[@]}"; echo; }
t aa '(a*)+'
t aa '(a*)*'
t aaa '(a?)+'
t abb '((a*)b)+'
t abab '(ab|a)*'
t aa '(a)|\1'
t x '(x)|\1'
t aa '(a)\1|b'
t a 'a|(b)\1'
t xx '((x)|y)\2'
t yx '((x)|y)\2'
t x '(a)(b|\1)'
t aa0 '(a)\10'
t aa0 '(a)\10|b'

#### an anchor in a repeated group: glibc's copies of the group lose it where a copied node follows
t() { if [[ $1 =~ $2 ]]; then s=0; else s=$?; fi; printf "%s %q %q :" "$s" "$1" "$2"; printf " %q" "${BASH_REMATCH[@]}"; echo; }
for re in '(^a)+' '(^a)*' '(^a)+b' '(^a|b)+' '(b|^a)+' '(^a){2}' '(^a){1,2}' '(^a){0,2}' '(^a){2,}' 'x(^a)+' \
    '((^a))+' '(^a+)+' '(^ab)+' '(^a)+(^a)+' '(a$|b)+' '(^a$)+' '(^)+' '(^|b)+a' '(^a|a)+' '(\<a)+' '(\ba|b)+' \
    '(a\>)+' '(\Ba)+' '((^a)+)+' '(^(a))+' '(^a|b)+c'; do
  for s in a aa b ab ba aab 'a a' '' baa aba abab bab abc aac $'aa\n' $'a\na' $'b\na'; do t "$s" "$re"; done
done
